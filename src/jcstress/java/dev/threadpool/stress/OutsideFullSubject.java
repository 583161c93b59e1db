package dev.threadpool.stress;

import dev.threadpool.PoolConfig;
import dev.threadpool.PoolStats;
import dev.threadpool.SchedulerVariant;
import dev.threadpool.ThreadPool;
import dev.threadpool.TimestampMode;
import dev.threadpool.WaitGroup;
import dev.threadpool.internal.stats.PoolCounters;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Many unregistered outside threads on {@code TimestampMode.FULL} (so every task, detached ones too, takes a
 * descriptor): they share the outside stripes' try-locked descriptor caches (issue 48, OutsideDescCaches), four
 * threads per {@code threads}, so several a stripe. The table is small enough that the pool is full often: each
 * thread, per chunk of 16 items, submits them detached, by {@code trySubmit} in a spin, as a batch, as waitables
 * awaited one by one, or as 16 waitables held and then awaited (16 x threads of them fill the table, so acquirers
 * meet an empty freelist, drain the other stripes' caches and wait as space waiters). Each task records its item.
 * Afterwards the accounting after close: every accepted task ended, no descriptor and no byte live.
 */
final class OutsideFullSubject implements StressSubject {
    private final String name;
    private final SchedulerVariant variant;
    private final int workers;
    /** 0: the default capacity for {@code workers}; else this many descriptors. */
    private final int queueCapacity;

    /**
     * {@code pool-outside-full}: 4 workers, WORK_STEALING, refills of 16 per stripe (a table of 64 x stripes
     * descriptors, so the outside caches may hold a quarter of it).
     */
    OutsideFullSubject() {
        this("pool-outside-full", SchedulerVariant.WORK_STEALING, 4, 64 * PoolCounters.OUTSIDE_STRIPES);
    }

    OutsideFullSubject(String name, SchedulerVariant variant, int workers, int queueCapacity) {
        this.name = name;
        this.variant = variant;
        this.workers = workers;
        this.queueCapacity = queueCapacity;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String run(int items, int threads, Seen seen) throws Exception {
        PoolConfig.Builder b = PoolConfig.builder().maxThreads(workers).schedulerVariant(variant)
                .timestampMode(TimestampMode.FULL);
        if (queueCapacity > 0) {
            b.queueCapacity(queueCapacity);
        }
        ThreadPool pool = ThreadPool.create(b.build());
        WaitGroup group = new WaitGroup();
        int submitters = Math.max(2, threads * 4);
        Thread[] ts = new Thread[submitters];
        AtomicLong next = new AtomicLong(1);
        AtomicLong waitables = new AtomicLong();
        Throwable[] failure = new Throwable[1];
        for (int s = 0; s < submitters; s++) {
            ts[s] = new Thread(() -> {
                Runnable[] batch = new Runnable[16];
                long[] handles = new long[16];
                try {
                    for (;;) {
                        long first = next.getAndAdd(16);
                        if (first > items) {
                            return;
                        }
                        int n = (int) Math.min(16, items - first + 1);
                        int mode = (int) ((first >>> 4) % 5);
                        for (int k = 0; k < n; k++) {
                            final long v = first + k;
                            if (mode < 3) {
                                group.add(1);
                                batch[k] = () -> { seen.hit(v); group.done(); };
                            } else {
                                batch[k] = () -> seen.hit(v);
                            }
                        }
                        switch (mode) {
                            case 0 -> { for (int k = 0; k < n; k++) pool.submit(batch[k]); }
                            case 1 -> {
                                for (int k = 0; k < n; k++) {
                                    while (!pool.trySubmit(batch[k])) Thread.onSpinWait();
                                }
                            }
                            case 2 -> {
                                for (int done = 0; done < n; ) {
                                    done += pool.submitBatch(batch, done, n);
                                }
                            }
                            case 3 -> {
                                for (int k = 0; k < n; k++) {
                                    pool.await(pool.submitWaitable(batch[k]));
                                }
                                waitables.addAndGet(n);
                            }
                            default -> {
                                for (int k = 0; k < n; k++) handles[k] = pool.submitWaitable(batch[k]);
                                for (int k = 0; k < n; k++) pool.await(handles[k]);
                                waitables.addAndGet(n);
                            }
                        }
                    }
                } catch (Throwable e) {
                    synchronized (failure) {
                        if (failure[0] == null) {
                            failure[0] = e;
                        }
                    }
                }
            }, "outside-" + s);
        }
        for (Thread t : ts) t.start();
        for (Thread t : ts) t.join();
        if (failure[0] != null) {
            pool.close();
            throw new IllegalStateException("an outside submitter failed", failure[0]);
        }
        if (!group.await(Duration.ofSeconds(120))) {
            throw new IllegalStateException("tasks did not finish within 120 s: pending=" + group.pending());
        }
        pool.close();
        PoolStats after = pool.statsSnapshot();
        if (after.taskDescLive() != 0 || after.liveBytes() != 0 || after.completed() != items
                || after.submitted() != items || after.totalAllocBytes() != after.totalFreeBytes()) {
            throw new IllegalStateException("accounting broken after close: " + after);
        }
        return "workers " + workers + "  outside threads " + submitters + "  stripes " + PoolCounters.OUTSIDE_STRIPES
                + "  waitables " + waitables.get() + "  completed " + after.completed() + "  parks " + after.parks()
                + "  rejected-tries " + after.rejected();
    }
}
