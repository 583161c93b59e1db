package dev.threadpool.stress;

import dev.threadpool.PoolConfig;
import dev.threadpool.PoolStats;
import dev.threadpool.SchedulerVariant;
import dev.threadpool.SubmitOptions;
import dev.threadpool.ThreadPool;
import dev.threadpool.WaitGroup;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * {@code pool-lanes}: the whole pool on LANE_EXTENSION (3 workers, 1 blocking, up to 2 overflow workers, a
 * 1 ms watchdog with a 1 ms promotion timeout so overflow workers spawn and retire all through the run).
 * {@code threads} external submitters push the items through a 64-descriptor table, in 16-item chunks that
 * alternate between the lanes and rotate through submitBatch, submit, trySubmit and "from a worker of the
 * other lane"; one item in 2048 sleeps 2 ms inside its task, which stalls a default-lane worker long enough
 * for the watchdog. Checks the accounting after close: every accepted task ended, nothing live, no bytes.
 */
final class LanePoolSubject implements StressSubject {
    private static final int CHUNK = 16;
    private static final int MODES = 4;

    private final String name;
    private final int workers;
    private final int blockingWorkers;
    private final int overflowWorkers;

    LanePoolSubject() {
        this("pool-lanes", 3, 1, 2);
    }

    /**
     * The same workload on {@code workers} workers, {@code blockingWorkers} of them the blocking lane's, and up
     * to {@code overflowWorkers} overflow workers (issue 48: {@code pool-lanes-64}, 64 workers with 16 blocking;
     * {@code maxThreads + maxOverflowWorkers <= 64} leaves it none, so its stalled default workers are covered by
     * the 47 others instead).
     */
    LanePoolSubject(String name, int workers, int blockingWorkers, int overflowWorkers) {
        this.name = name;
        this.workers = workers;
        this.blockingWorkers = blockingWorkers;
        this.overflowWorkers = overflowWorkers;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String run(int items, int threads, Seen seen) throws Exception {
        ThreadPool pool = ThreadPool.create(PoolConfig.builder().schedulerVariant(SchedulerVariant.LANE_EXTENSION)
                .maxThreads(workers).blockingWorkers(blockingWorkers).maxOverflowWorkers(overflowWorkers)
                .queueCapacity(64).localQueueCapacity(16)
                .watchdogInterval(Duration.ofMillis(1)).blockingPromotionTimeout(Duration.ofMillis(1))
                .threadNamePrefix(name + "-").build());
        WaitGroup group = new WaitGroup();
        int submitters = Math.max(1, threads);
        Thread[] ts = new Thread[submitters];
        AtomicLong next = new AtomicLong(1);
        for (int s = 0; s < submitters; s++) {
            ts[s] = new Thread(() -> {
                Runnable[] batch = new Runnable[CHUNK];
                for (;;) {
                    long first = next.getAndAdd(CHUNK);
                    if (first > items) {
                        return;
                    }
                    int n = (int) Math.min(CHUNK, items - first + 1);
                    long chunk = first / CHUNK;
                    SubmitOptions lane = chunk % 2 == 0 ? SubmitOptions.BLOCKING : SubmitOptions.DEFAULT;
                    int mode = (int) ((chunk / 2) % MODES);
                    for (int k = 0; k < n; k++) {
                        final long v = first + k;
                        group.add(1);
                        batch[k] = (v & 2047) == 0
                                ? () -> { LockSupport.parkNanos(2_000_000L); seen.hit(v); group.done(); }
                                : () -> { seen.hit(v); group.done(); };
                    }
                    if (mode == 0) {
                        pool.submitBatch(batch, 0, n, lane);
                    } else if (mode == 1) {
                        for (int k = 0; k < n; k++) pool.submit(batch[k], lane);
                    } else if (mode == 2) {
                        for (int k = 0; k < n; k++) {
                            while (!pool.trySubmit(batch[k], Duration.ZERO, lane)) Thread.onSpinWait();
                        }
                    } else {
                        // from a worker of the other lane: LIFO slot / local queue, blocking ring, or inline
                        final Runnable[] mine = Arrays.copyOf(batch, n);
                        group.add(1);
                        pool.submit(() -> {
                            for (Runnable r : mine) pool.submit(r, lane);
                            group.done();
                        }, lane == SubmitOptions.BLOCKING ? SubmitOptions.DEFAULT : SubmitOptions.BLOCKING);
                    }
                }
            }, "submitter-" + s);
        }
        for (Thread t : ts) t.start();
        for (Thread t : ts) t.join();
        if (!group.await(Duration.ofSeconds(120))) {
            throw new IllegalStateException("tasks did not finish within 120 s: pending=" + group.pending());
        }
        pool.close();
        long expected = items + spawners(items);
        PoolStats after = pool.statsSnapshot();
        if (after.taskDescLive() != 0 || after.liveBytes() != 0 || after.completed() != expected
                || after.submitted() != expected || after.totalAllocBytes() != after.totalFreeBytes()
                || after.overflowLive() != 0 || after.overflowSpawned() != after.overflowRetired()) {
            throw new IllegalStateException("accounting broken after close: " + after);
        }
        long leftThreads = Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith(name + "-")).count();
        if (leftThreads != 0) {
            throw new IllegalStateException(leftThreads + " pool threads alive after close");
        }
        return "workers " + workers + "  submitters " + submitters + "  completed " + after.completed() + "  stalls " + after.stallsSeen()
                + "  overflow spawned/retired " + after.overflowSpawned() + "/" + after.overflowRetired()
                + "  inline " + after.inlineRuns();
    }

    /** How many mode-3 spawner tasks a run of {@code items} submits (one per chunk in mode 3). */
    private static long spawners(int items) {
        long c = 0;
        for (long first = 1; first <= items; first += CHUNK) {
            if (((first / CHUNK) / 2) % MODES == 3) {
                c++;
            }
        }
        return c;
    }
}
