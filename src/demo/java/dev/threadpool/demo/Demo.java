package dev.threadpool.demo;

import dev.threadpool.MemoryBlock;
import dev.threadpool.PoolConfig;
import dev.threadpool.PoolStats;
import dev.threadpool.SchedulerVariant;
import dev.threadpool.TaskFailedException;
import dev.threadpool.ThreadPool;
import dev.threadpool.WaitGroup;
import dev.threadpool.WorkerStats;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RecursiveAction;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The main job: runs a real workload on the pool and verifies it.
 * <ol>
 *   <li>a flood of one million small tasks, one by one and in batches, every one counted;</li>
 *   <li>a divide-and-conquer sum over 2^24 elements with leaves of 4096 (seed 002's wsum), checked against
 *       the serial loop;</li>
 *   <li>seed 002's wsum on a WORK_STEALING pool ({@link Wsum});</li>
 *   <li>a task that throws, awaited through its handle;</li>
 * </ol>
 * then prints the stats and the memory accounting before and after close. Exits 1 if any check fails.
 * Each of the first three runs the same work on a {@link ForkJoinPool} of the same parallelism and prints
 * both sides warm ({@link Compare}: a cold first round, labelled so, then warm-up rounds, then the best of
 * N, the sides alternating), so the figures are the pool's steady speed, not the JIT's first pass.
 *
 * <pre>mvn -q -DskipTests package exec:exec@demo</pre>
 */
public final class Demo {
    private static final int FLOOD_TASKS = 1_000_000;
    private static final long SUM_ELEMENTS = 1L << 24;
    private static final long LEAF = 4096;

    private Demo() {}

    public static void main(String[] args) throws Exception {
        int threads = Math.max(2, Math.min(Runtime.getRuntime().availableProcessors(), 8));
        PoolConfig config = PoolConfig.builder()
                .maxThreads(threads)
                .queueCapacity(4096)
                .schedulerVariant(SchedulerVariant.GLOBAL_QUEUE)
                .build();
        System.out.println("thread-pool demo on " + System.getProperty("os.name") + " " + System.getProperty("os.arch") + ", "
                + Runtime.getRuntime().availableProcessors() + " CPUs, Java " + Runtime.version());
        System.out.println(config);
        boolean ok = true;
        ThreadPool pool = ThreadPool.create(config);
        ForkJoinPool fj = new ForkJoinPool(threads); // the peer of every comparison, same parallelism
        try {
            printMemory("at create", pool);
            ok &= Progress.during("flood", () -> String.format(Locale.ROOT, "%,d tasks done",
                    pool.statsSnapshot().completed()), () -> flood(pool, fj));
            ok &= divideAndConquer(pool, fj, threads);
            ok &= Wsum.run(threads); // the same wsum on WORK_STEALING and on ForkJoinPool (docs/WSUM.md)
            ok &= failureIsContained(pool);
            ok &= LaneDemo.run(1); // mixed CPU + blocking workload on every variant; the watchdog at work
            printStats(pool.statsSnapshot());
            StatsPrinter.print(pool.statsSnapshot(), ThreadPool.processMemory()); // docs/OBSERVABILITY.md
        } finally {
            fj.shutdown();
            pool.close();
        }
        PoolStats fin = pool.statsSnapshot();
        System.out.println();
        System.out.println("after close:");
        System.out.printf(Locale.ROOT, "  totalAllocBytes %,d  totalFreeBytes %,d  liveBytes %,d  peakLiveBytes %,d%n",
                fin.totalAllocBytes(), fin.totalFreeBytes(), fin.liveBytes(), fin.peakLiveBytes());
        boolean clean = fin.liveBytes() == 0 && fin.totalAllocBytes() == fin.totalFreeBytes()
                && fin.taskDescLive() == 0 && fin.submitted() == fin.completed() + fin.failed() + fin.cancelled();
        System.out.println("  accounting " + (clean ? "exact: every byte returned, every task ended" : "BROKEN"));
        ok &= clean;
        System.out.println(ok ? "demo: all checks passed" : "demo: CHECK FAILED");
        System.exit(ok ? 0 : 1);
    }

    /**
     * One million tiny tasks, here and on ForkJoinPool, warm (see {@link Compare}): first one by one, then in
     * batches of {@link #FLOOD_BATCH}. Both sides do the same work (docs/BENCHMARKS.md, "Fair comparison"): the
     * same task body (add its index to a sum), one capturing lambda or task object per task from the user's code,
     * and the same counting, one {@code done()} per task on a {@link WaitGroup}. Batched, each side uses its own
     * batching idiom: ours {@code submitBatch}, ForkJoinPool one task per batch that forks its children inside
     * the pool.
     */
    private static boolean flood(ThreadPool pool, ForkJoinPool fj) throws Exception {
        System.out.println();
        System.out.printf(Locale.ROOT, "1. flood: %,d small tasks per round, every one counted on a WaitGroup on"
                + " both sides%n   a) one by one (ours: submit(task, group); ForkJoinPool: execute)%n", FLOOD_TASKS);
        Compare.Result single = Compare.run("   ", () -> floodOurs(pool), () -> floodFjp(fj));
        printFlood(single);
        System.out.printf(Locale.ROOT, "   b) in batches of %d (ours: submitBatch; ForkJoinPool: one task per batch"
                + " that forks its %d children inside the pool)%n", FLOOD_BATCH, FLOOD_BATCH);
        Compare.Result batched = Compare.run("   ", () -> floodOursBatched(pool), () -> floodFjpBatched(fj));
        printFlood(batched);
        return single.ok() && batched.ok();
    }

    private static void printFlood(Compare.Result r) {
        System.out.printf(Locale.ROOT, "   warm best: thread-pool %,.0f tasks/s, ForkJoinPool %,.0f tasks/s; sums %s%n",
                FLOOD_TASKS / (r.oursBestNanos() / 1e9), FLOOD_TASKS / (r.fjpBestNanos() / 1e9),
                r.ok() ? "match in every round on both sides" : "WRONG");
    }

    private static final long FLOOD_SUM = (long) FLOOD_TASKS * (FLOOD_TASKS - 1) / 2;
    private static final int FLOOD_BATCH = 256;

    /** One round on this pool, one by one; true when every task ran once. */
    private static boolean floodOurs(ThreadPool pool) throws InterruptedException {
        AtomicLong sum = new AtomicLong();
        WaitGroup wg = new WaitGroup();
        for (int i = 0; i < FLOOD_TASKS; i++) {
            long v = i;
            pool.submit(() -> sum.addAndGet(v), wg); // the pool calls wg.done() after the task
        }
        return awaitFlood("thread-pool", wg) && checkFlood("thread-pool", sum.get());
    }

    /** One round on ForkJoinPool, one by one, counted as ours is; true when every task ran once. */
    private static boolean floodFjp(ForkJoinPool fj) throws InterruptedException {
        AtomicLong sum = new AtomicLong();
        WaitGroup wg = new WaitGroup();
        wg.add(FLOOD_TASKS);
        for (int i = 0; i < FLOOD_TASKS; i++) {
            long v = i;
            fj.execute(() -> {
                sum.addAndGet(v);
                wg.done();
            });
        }
        return awaitFlood("ForkJoinPool", wg) && checkFlood("ForkJoinPool", sum.get());
    }

    /** One round on this pool in batches; true when every task ran once. */
    private static boolean floodOursBatched(ThreadPool pool) throws InterruptedException {
        AtomicLong sum = new AtomicLong();
        WaitGroup wg = new WaitGroup();
        Runnable[] batch = new Runnable[FLOOD_BATCH];
        for (int i = 0; i < FLOOD_TASKS; i += batch.length) {
            int n = Math.min(batch.length, FLOOD_TASKS - i);
            for (int k = 0; k < n; k++) {
                long v = i + k;
                batch[k] = () -> sum.addAndGet(v);
            }
            int accepted = pool.submitBatch(batch, 0, n, wg); // adds to wg; the pool calls done() per task
            if (accepted != n) {
                System.out.println("   batch accepted only " + accepted + " of " + n);
                return false;
            }
        }
        return awaitFlood("thread-pool", wg) && checkFlood("thread-pool", sum.get());
    }

    /** One round on ForkJoinPool in batches: its idiom, one task per batch forking the children inside the pool. */
    private static boolean floodFjpBatched(ForkJoinPool fj) throws InterruptedException {
        AtomicLong sum = new AtomicLong();
        WaitGroup wg = new WaitGroup();
        wg.add(FLOOD_TASKS);
        for (int i = 0; i < FLOOD_TASKS; i += FLOOD_BATCH) {
            int from = i;
            int to = Math.min(i + FLOOD_BATCH, FLOOD_TASKS);
            fj.execute(new RecursiveAction() {
                @Override
                protected void compute() {
                    for (int k = from; k < to; k++) {
                        long v = k;
                        new RecursiveAction() {
                            @Override
                            protected void compute() {
                                sum.addAndGet(v);
                                wg.done();
                            }
                        }.fork();
                    }
                }
            });
        }
        return awaitFlood("ForkJoinPool", wg) && checkFlood("ForkJoinPool", sum.get());
    }

    private static boolean awaitFlood(String side, WaitGroup wg) throws InterruptedException {
        if (!wg.await(Duration.ofMinutes(2))) {
            System.out.println("   " + side + " flood did not finish within 2 minutes");
            return false;
        }
        return true;
    }

    private static boolean checkFlood(String side, long sum) {
        if (sum != FLOOD_SUM) {
            System.out.println("   " + side + " flood sum WRONG: " + sum + " != " + FLOOD_SUM);
            return false;
        }
        return true;
    }

    /** The mixing function of seed 002's wsum: every element contributes a scrambled value. */
    static long mix(long x) {
        x ^= x >>> 33;
        x *= 0xff51afd7ed558ccdL;
        x ^= x >>> 33;
        x *= 0xc4ceb9fe1a85ec53L;
        x ^= x >>> 33;
        return x;
    }

    /** One divide-and-conquer sum: where the leaves' sums go, and who summed how many leaves. */
    private record SumJob(ThreadPool pool, AtomicLong total, AtomicLongArray leavesPerWorker) {}

    /**
     * The recursion's body: split {@code [lo, hi)} in halves down to leaves of {@link #LEAF}, each split one
     * {@link ThreadPool#join}: the right half is offered to idle workers, the left runs here, and the right runs
     * here too unless a worker took it (ForkJoinPool's {@code invokeAll(left, right)}).
     */
    private static void split(SumJob job, long lo, long hi) {
        if (hi - lo <= LEAF) {
            leaf(job, lo, hi);
            return;
        }
        long mid = (lo + hi) >>> 1;
        try {
            job.pool().join(() -> split(job, lo, mid), () -> split(job, mid, hi));
        } catch (InterruptedException e) { // only an outside caller's wait throws it: never on a worker
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted inside the split", e);
        }
    }

    /** A leaf: the serial sum of mix(i) over {@code [lo, hi)}, added to the total. */
    private static void leaf(SumJob job, long lo, long hi) {
        long s = 0;
        for (long i = lo; i < hi; i++) {
            s += mix(i);
        }
        job.total().addAndGet(s);
        job.leavesPerWorker().incrementAndGet(Math.max(0, job.pool().currentWorkerIndex()));
    }

    private static boolean divideAndConquer(ThreadPool pool, ForkJoinPool fj, int threads) throws Exception {
        System.out.println();
        System.out.println("2. divide and conquer: sum of mix(i) over 2^24 elements, leaves of " + LEAF
                + " (ours: ThreadPool.join per split; ForkJoinPool: the same split as a RecursiveTask)");
        long expected = Compare.serialSum("   ", SUM_ELEMENTS);
        AtomicLongArray[] lastLeaves = new AtomicLongArray[1];
        boolean ok = Compare.run("   ", () -> {
            SumJob job = new SumJob(pool, new AtomicLong(), new AtomicLongArray(threads));
            long mid = SUM_ELEMENTS >>> 1;
            pool.join(() -> split(job, 0, mid), () -> split(job, mid, SUM_ELEMENTS)); // handed over, we wait
            lastLeaves[0] = job.leavesPerWorker();
            return job.total().get() == expected;
        }, () -> fj.invoke(new Wsum.FjSum(0, SUM_ELEMENTS)) == expected).ok();
        System.out.println("   sum " + (ok ? "matches the serial loop in every round on both sides" : "WRONG"));
        for (int w = 0; w < threads; w++) {
            System.out.printf(Locale.ROOT, "   w%-2d leaves %6d (last round)%n", w, lastLeaves[0].get(w));
        }
        return ok;
    }

    private static boolean failureIsContained(ThreadPool pool) throws InterruptedException {
        System.out.println();
        System.out.println("3. a task that throws");
        long h = pool.submitWaitable(() -> {
            throw new IllegalStateException("deliberate failure");
        });
        try {
            pool.await(h);
            System.out.println("   await returned normally: WRONG");
            return false;
        } catch (TaskFailedException e) {
            System.out.println("   await threw TaskFailedException, cause: " + e.getCause());
        }
        long ok = pool.submitWaitable(() -> { });
        pool.await(ok);
        System.out.println("   the worker survived; recent errors kept: " + pool.recentErrors().size());
        return true;
    }

    private static void printMemory(String when, ThreadPool pool) {
        PoolStats s = pool.statsSnapshot();
        System.out.println();
        System.out.println("memory " + when + ": " + String.format(Locale.ROOT, "%,d", s.liveBytes())
                + " bytes live in one arena");
        System.out.printf(Locale.ROOT, "   %-26s %12s %12s%n", "block", "usable", "counted");
        for (MemoryBlock b : pool.memoryMap()) {
            System.out.printf(Locale.ROOT, "   %-26s %,12d %,12d%n", b.purpose(), b.usableBytes(), b.countedBytes());
        }
    }

    private static void printStats(PoolStats s) {
        System.out.println();
        System.out.println("stats:");
        System.out.printf(Locale.ROOT, "   %-14s %,14d   %-14s %,14d%n", "submitted", s.submitted(), "started", s.started());
        System.out.printf(Locale.ROOT, "   %-14s %,14d   %-14s %,14d%n", "completed", s.completed(), "failed", s.failed());
        System.out.printf(Locale.ROOT, "   %-14s %,14d   %-14s %,14d%n", "cancelled", s.cancelled(), "rejected", s.rejected());
        System.out.printf(Locale.ROOT, "   %-14s %,14d   %-14s %,14d%n", "queued", s.queuedTasks(), "active", s.activeTasks());
        System.out.printf(Locale.ROOT, "   %-14s %,14d   %-14s %,14d%n", "inlineRuns", s.inlineRuns(), "taskDescLive",
                s.taskDescLive());
        System.out.printf(Locale.ROOT, "   %-14s %,14d   %-14s %,14d%n", "parks", s.parks(), "wakeups", s.wakeups());
        System.out.printf(Locale.ROOT, "   %-14s %,14d   %-14s %,14d%n", "liveBytes", s.liveBytes(), "peakLiveBytes",
                s.peakLiveBytes());
        System.out.printf(Locale.ROOT, "   %-14s %,14d   %-14s %,14d%n", "totalAlloc", s.totalAllocBytes(), "totalFree",
                s.totalFreeBytes());
        System.out.println("   accountingSkewDetected " + s.accountingSkewDetected());
        Table perWorker = new Table("worker", "started", "completed", "failed", "parks", "wakeups");
        for (WorkerStats w : s.workers()) {
            perWorker.row(w.index(), w.started(), w.completed(), w.failed(), w.parks(), w.wakeups());
        }
        System.out.print(perWorker.render("   "));
    }
}
