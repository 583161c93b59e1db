package dev.threadpool.stress;

import dev.threadpool.PoolConfig;
import dev.threadpool.PoolStats;
import dev.threadpool.QueueKind;
import dev.threadpool.SchedulerVariant;
import dev.threadpool.ThreadPool;
import dev.threadpool.WaitGroup;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The whole pool (GLOBAL_QUEUE): {@code threads} external submitters push the items as tasks through a small
 * descriptor table (64 cells unless named otherwise, so it is full most of the time) mixing submit, trySubmit and submitBatch; each task
 * records its item. Also checks the accounting: every accepted task ended, no descriptor live, no bytes live
 * after close.
 */
final class PoolSubject implements StressSubject {
    private final String name;
    private final SchedulerVariant variant;
    private final QueueKind queueKind;
    private final int workers;
    private final int queueCapacity;

    PoolSubject() {
        this("pool", SchedulerVariant.GLOBAL_QUEUE);
    }

    /** {@code pool-ws}: the same on WORK_STEALING, a quarter of the items submitted from a worker. */
    PoolSubject(String name, SchedulerVariant variant) {
        this(name, variant, QueueKind.RING, 2);
    }

    /**
     * The same workload on {@code variant} with {@code queueKind} and {@code workers} workers (issue 48: the
     * 64-worker subjects {@code pool-64}, {@code pool-ws-64}, {@code pool-ws-cl-64}).
     */
    PoolSubject(String name, SchedulerVariant variant, QueueKind queueKind, int workers) {
        this(name, variant, queueKind, workers, 64);
    }

    /**
     * The same with {@code queueCapacity} cells: with 64 workers and 4096 ({@code pool-ws-64-q4096}) the carried
     * tasks go through 16 stripes, which the producers' runs spread over (issue 48; CarriedRings).
     */
    PoolSubject(String name, SchedulerVariant variant, QueueKind queueKind, int workers, int queueCapacity) {
        this.name = name;
        this.variant = variant;
        this.queueKind = queueKind;
        this.workers = workers;
        this.queueCapacity = queueCapacity;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String run(int items, int threads, Seen seen) throws Exception {
        ThreadPool pool = ThreadPool.create(PoolConfig.builder().maxThreads(workers).queueCapacity(queueCapacity)
                .schedulerVariant(variant).queueKind(queueKind).build());
        WaitGroup group = new WaitGroup();
        int submitters = Math.max(1, threads);
        Thread[] ts = new Thread[submitters];
        AtomicLong next = new AtomicLong(1);
        for (int s = 0; s < submitters; s++) {
            ts[s] = new Thread(() -> {
                Runnable[] batch = new Runnable[16];
                for (;;) {
                    long first = next.getAndAdd(16);
                    if (first > items) {
                        return;
                    }
                    int n = (int) Math.min(16, items - first + 1);
                    int mode = (int) ((first >>> 4) % (variant == SchedulerVariant.GLOBAL_QUEUE ? 3 : 4));
                    for (int k = 0; k < n; k++) {
                        final long v = first + k;
                        group.add(1);
                        batch[k] = () -> { seen.hit(v); group.done(); };
                    }
                    if (mode == 0) {
                        pool.submitBatch(batch, 0, n);
                    } else if (mode == 1) {
                        for (int k = 0; k < n; k++) pool.submit(batch[k]);
                    } else if (mode == 2) {
                        for (int k = 0; k < n; k++) {
                            while (!pool.trySubmit(batch[k])) Thread.onSpinWait();
                        }
                    } else {
                        // from a worker: LIFO slot, local queue, overflow to inject, or inline when full
                        final Runnable[] mine = java.util.Arrays.copyOf(batch, n);
                        group.add(1);
                        pool.submit(() -> {
                            for (Runnable r : mine) pool.submit(r);
                            group.done();
                        });
                    }
                }
            }, "submitter-" + s);
        }
        for (Thread t : ts) t.start();
        for (Thread t : ts) t.join();
        if (!group.await(Duration.ofSeconds(120))) {
            throw new IllegalStateException("tasks did not finish within 120 s: pending=" + group.pending());
        }
        // The tasks' own group.done() runs inside the task, before the worker counts it: only the snapshot
        // after close (which drains) is exact.
        pool.close();
        long expected = items + (variant == SchedulerVariant.GLOBAL_QUEUE ? 0 : spawners(items));
        PoolStats after = pool.statsSnapshot();
        if (after.taskDescLive() != 0 || after.liveBytes() != 0 || after.completed() != expected
                || after.submitted() != expected || after.totalAllocBytes() != after.totalFreeBytes()) {
            throw new IllegalStateException("accounting broken after close: " + after);
        }
        return "workers " + workers + "  submitters " + submitters + "  completed " + after.completed() + "  parks " + after.parks()
                + "  rejected-tries " + after.rejected();
    }

    /** How many mode-3 spawner tasks a run of {@code items} submits (one per 16-item chunk with mode 3). */
    private static long spawners(int items) {
        long c = 0;
        for (long first = 1; first <= items; first += 16) {
            if (((first >>> 4) % 4) == 3) {
                c++;
            }
        }
        return c;
    }
}
