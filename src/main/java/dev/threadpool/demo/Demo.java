package dev.threadpool.demo;

import dev.threadpool.MemoryBlock;
import dev.threadpool.PoolConfig;
import dev.threadpool.PoolStats;
import dev.threadpool.SchedulerVariant;
import dev.threadpool.TaskFailedException;
import dev.threadpool.ThreadPool;
import dev.threadpool.WaitGroup;
import dev.threadpool.WorkerStats;
import dev.threadpool.internal.os.Platform;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The main job: runs a real workload on the pool and verifies it.
 * <ol>
 *   <li>a flood of one million small tasks (single submits and batches), every one counted;</li>
 *   <li>a divide-and-conquer sum over 2^24 elements with leaves of 4096 (seed 002's wsum), checked against
 *       the serial loop;</li>
 *   <li>seed 002's wsum on a WORK_STEALING pool and on ForkJoinPool ({@link Wsum});</li>
 *   <li>a task that throws, awaited through its handle;</li>
 * </ol>
 * then prints the stats and the memory accounting before and after close. Exits 1 if any check fails.
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
        System.out.println("thread-pool demo on " + Platform.describe());
        System.out.println(config);
        boolean ok = true;
        ThreadPool pool = ThreadPool.create(config);
        try {
            printMemory("at create", pool);
            ok &= Progress.during("flood", () -> String.format(Locale.ROOT, "%,d tasks done",
                    pool.statsSnapshot().completed()), () -> flood(pool));
            ok &= divideAndConquer(pool, threads);
            ok &= Wsum.run(threads); // the same wsum on WORK_STEALING and on ForkJoinPool (docs/WSUM.md)
            ok &= failureIsContained(pool);
            ok &= LaneDemo.run(1); // mixed CPU + blocking workload on every variant; the watchdog at work
            printStats(pool.statsSnapshot());
            StatsPrinter.print(pool.statsSnapshot(), ThreadPool.processMemory()); // docs/OBSERVABILITY.md
        } finally {
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

    /** One million tiny tasks: half one by one, half in batches of 256. */
    private static boolean flood(ThreadPool pool) throws InterruptedException {
        System.out.println();
        System.out.println("1. flood: " + FLOOD_TASKS + " small tasks");
        AtomicLong sum = new AtomicLong();
        WaitGroup wg = new WaitGroup();
        long t0 = System.nanoTime();
        int half = FLOOD_TASKS / 2;
        for (int i = 0; i < half; i++) {
            long v = i;
            pool.submit(() -> sum.addAndGet(v), wg);
            if ((i + 1) % 250_000 == 0) {
                System.out.printf(Locale.ROOT, "   submitted %,d%n", i + 1);
            }
        }
        Runnable[] batch = new Runnable[256];
        for (int i = half; i < FLOOD_TASKS; i += batch.length) {
            int n = Math.min(batch.length, FLOOD_TASKS - i);
            for (int k = 0; k < n; k++) {
                long v = i + k;
                batch[k] = () -> {
                    sum.addAndGet(v);
                    wg.done();
                };
            }
            wg.add(n);
            int accepted = pool.submitBatch(batch, 0, n);
            if (accepted != n) {
                System.out.println("   batch accepted only " + accepted + " of " + n);
                return false;
            }
            if ((i + n) % 250_000 == 0) {
                System.out.printf(Locale.ROOT, "   submitted %,d%n", i + n);
            }
        }
        if (!wg.await(Duration.ofMinutes(2))) {
            System.out.println("   flood did not finish within 2 minutes");
            return false;
        }
        double secs = (System.nanoTime() - t0) / 1e9;
        long expect = (long) FLOOD_TASKS * (FLOOD_TASKS - 1) / 2;
        boolean ok = sum.get() == expect;
        System.out.printf(Locale.ROOT, "   %,d tasks in %.2f s (%,.0f tasks/s); sum %s%n", FLOOD_TASKS, secs,
                FLOOD_TASKS / secs, ok ? "matches" : "WRONG: " + sum.get() + " != " + expect);
        return ok;
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

    /** Split [lo, hi): submit the right half, keep the left; leaves of 4096 are summed serially. */
    private record Sum(ThreadPool pool, WaitGroup wg, AtomicLong total, AtomicLongArray leavesPerWorker,
            long lo, long hi) implements Runnable {
        @Override
        public void run() {
            long l = lo;
            long h = hi;
            while (h - l > LEAF) {
                long mid = (l + h) >>> 1;
                pool.submit(new Sum(pool, wg, total, leavesPerWorker, mid, h), wg);
                h = mid;
            }
            long s = 0;
            for (long i = l; i < h; i++) {
                s += mix(i);
            }
            total.addAndGet(s);
            leavesPerWorker.incrementAndGet(Math.max(0, pool.currentWorkerIndex()));
        }
    }

    private static boolean divideAndConquer(ThreadPool pool, int threads) throws InterruptedException {
        System.out.println();
        System.out.println("2. divide and conquer: sum of mix(i) over 2^24 elements, leaves of " + LEAF);
        long serialStart = System.nanoTime();
        long expect = 0;
        for (long i = 0; i < SUM_ELEMENTS; i++) {
            expect += mix(i);
        }
        double serialMs = (System.nanoTime() - serialStart) / 1e6;
        AtomicLong total = new AtomicLong();
        AtomicLongArray leaves = new AtomicLongArray(threads);
        WaitGroup wg = new WaitGroup();
        long t0 = System.nanoTime();
        pool.submit(new Sum(pool, wg, total, leaves, 0, SUM_ELEMENTS), wg);
        if (!wg.await(Duration.ofMinutes(2))) {
            System.out.println("   did not finish within 2 minutes");
            return false;
        }
        double ms = (System.nanoTime() - t0) / 1e6;
        boolean ok = total.get() == expect;
        System.out.printf(Locale.ROOT, "   pool %.1f ms, serial loop %.1f ms; sum %s%n", ms, serialMs,
                ok ? "matches serial" : "WRONG");
        for (int w = 0; w < threads; w++) {
            System.out.printf(Locale.ROOT, "   w%-2d leaves %6d%n", w, leaves.get(w));
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
