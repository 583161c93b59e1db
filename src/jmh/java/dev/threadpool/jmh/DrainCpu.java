package dev.threadpool.jmh;

import dev.threadpool.PoolConfig;
import dev.threadpool.SchedulerVariant;
import dev.threadpool.SubmitOptions;
import dev.threadpool.ThreadPool;
import dev.threadpool.WaitGroup;
import dev.threadpool.internal.os.Affinity;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A worker's own CPU per detached task, measured where neither a flood's rounds nor another thread can move it:
 * one worker drains a full ring of no-op carried tasks that were queued while it was held, with nobody else
 * running. The first task (the gate, released once the ring is full) and the last one read the worker's CPU
 * time themselves ({@link ThreadMXBean#getCurrentThreadCpuTime}), so no idle spin, park or wake is in the
 * figure. The submitter and the draining worker are pinned to CPU 0, so no cache line crosses cores: what is
 * left is the worker's path per task (pop, run, counters, the variant's other looks).
 *
 * <p>GLOBAL_QUEUE and WORK_STEALING: a one-worker pool. LANE_EXTENSION: two workers, the blocking one (worker
 * 0, on CPU 1) held by a blocking task for the whole run, so the one watched default worker drains.
 *
 * <p>Prints p10 / p50 / p90 over {@code rounds} drains (after {@code warmup}) of the CPU ns per task. Unpinned,
 * the same drain is bimodal per round (which CPU the worker runs on relative to the one that wrote the cells).
 * Pinned, the p10 of most JVMs agrees within about 2 ns, with now and then a slower JVM (a JIT mode:
 * GLOBAL_QUEUE 22.3-23.5 ns in three JVMs, 33.6 in a fourth); so compare two builds over several interleaved
 * JVMs each, as PERFORMANCE_TRACKING entries 45 and 46 do. One variant per JVM: the worker loop's call sites
 * are profiled by whichever pool a JVM runs first, and a second variant in the same JVM measured 42 ns where
 * its own JVM measured 29.
 *
 * <pre>java --enable-native-access=ALL-UNNAMED -Xms1g -Xmx1g \
 *     -cp target/test-classes:target/classes:$(cat target/cp.txt) \
 *     dev.threadpool.jmh.DrainCpu VARIANT [rounds=300] [warmup=100]</pre>
 * Linux only (pinning, CPUs 0 and 1); run it under {@code flock /work/bench.lock}.
 */
public final class DrainCpu {
    static final int CAPACITY = 16_384;
    /** Tasks per drain: a full ring but for a few cells, so no push ever waits. */
    static final int TASKS = CAPACITY - 64;

    private static volatile long cpuStart;
    private static volatile long cpuEnd;

    private DrainCpu() {
    }

    public static void main(String[] args) throws InterruptedException {
        if (args.length < 1) {
            throw new IllegalArgumentException("usage: DrainCpu VARIANT [rounds=300] [warmup=100]; VARIANT one of "
                    + Arrays.toString(SchedulerVariant.values()));
        }
        SchedulerVariant v = SchedulerVariant.valueOf(args[0]);
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 300;
        int warmup = args.length > 2 ? Integer.parseInt(args[2]) : 100;
        if (rounds < 10 || warmup < 0) {
            throw new IllegalArgumentException("rounds must be >= 10 and warmup >= 0: rounds=" + rounds + ", warmup="
                    + warmup);
        }
        double[] perTask = drain(v, rounds, warmup);
        System.out.printf(Locale.ROOT, "%-15s drain CPU ns per task: p10 %5.1f  p50 %5.1f  p90 %5.1f  (%d rounds)%n",
                v, perTask[rounds / 10], perTask[rounds / 2], perTask[rounds * 9 / 10], rounds);
    }

    /** {@code rounds} drains on a fresh pool of {@code v}; the sorted CPU ns per task of each. */
    static double[] drain(SchedulerVariant v, int rounds, int warmup) throws InterruptedException {
        boolean lanes = v == SchedulerVariant.LANE_EXTENSION;
        ThreadPool pool = ThreadPool.create(PoolConfig.builder().schedulerVariant(v).maxThreads(lanes ? 2 : 1)
                .queueCapacity(CAPACITY).daemon(true)
                .threadNamePrefix("drain-" + v.name().toLowerCase(Locale.ROOT) + "-")
                .workerCpus(lanes ? new int[] {1, 0} : new int[] {0}).build());
        // after create: the pool checks its workerCpus against the creating thread's own affinity
        Affinity.pinCurrentThread(0); // the submitter shares CPU 0 with the draining worker: no line crosses
        CountDownLatch release = new CountDownLatch(1);
        try {
            if (lanes) { // hold the blocking worker (it would help the default lane), so the watched one drains
                CountDownLatch held = new CountDownLatch(1);
                pool.submit(() -> {
                    held.countDown();
                    awaitQuietly(release);
                }, SubmitOptions.BLOCKING);
                check(held.await(30, TimeUnit.SECONDS), "the blocking worker is held");
            }
            ThreadMXBean mx = ManagementFactory.getThreadMXBean();
            Runnable noop = () -> { };
            Runnable last = () -> cpuEnd = mx.getCurrentThreadCpuTime();
            double[] perTask = new double[rounds];
            for (int r = -warmup; r < rounds; r++) {
                CountDownLatch started = new CountDownLatch(1);
                CountDownLatch gate = new CountDownLatch(1);
                WaitGroup group = new WaitGroup();
                pool.submit(() -> {
                    started.countDown();
                    awaitQuietly(gate);
                    cpuStart = mx.getCurrentThreadCpuTime();
                }, group);
                check(started.await(30, TimeUnit.SECONDS), "the gate task started");
                for (int i = 0; i < TASKS - 1; i++) {
                    pool.submit(noop, group);
                }
                pool.submit(last, group);
                gate.countDown();
                check(group.await(Duration.ofSeconds(30)), "the drain finished");
                if (r >= 0) {
                    perTask[r] = (cpuEnd - cpuStart) / (double) TASKS;
                }
            }
            Arrays.sort(perTask);
            return perTask;
        } finally {
            release.countDown();
            pool.close();
        }
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            check(latch.await(30, TimeUnit.SECONDS), "a latch of the drain was released");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void check(boolean ok, String what) {
        if (!ok) {
            throw new IllegalStateException("DrainCpu: not within 30 s: " + what);
        }
    }
}
