package dev.threadpool.demo;

import dev.threadpool.PoolConfig;
import dev.threadpool.PoolStats;
import dev.threadpool.SchedulerVariant;
import dev.threadpool.SubmitOptions;
import dev.threadpool.ThreadPool;
import dev.threadpool.WaitGroup;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;

/**
 * A mixed CPU + blocking workload on the three scheduler variants, and LANE_EXTENSION's watchdog at work.
 *
 * <p>Part 1, the mixed workload (also the measurement behind docs/SCHEDULER_DECISION.md): 4 workers;
 * {@value #BLOCKING_TASKS} tasks that sleep 5-20 ms (stand-ins for I/O), submitted with
 * {@link SubmitOptions#BLOCKING}, interleaved with {@value #CPU_TASKS} short CPU tasks (4000 xorshift steps,
 * some microseconds) in the default lane. Reported per variant: the time until everything completed, and the
 * default-lane latency (submit to start of each CPU task, p50 / p99). LANE_EXTENSION reserves 2 of the 4
 * workers for the blocking lane.
 *
 * <p>Part 2, the watchdog: a LANE_EXTENSION pool whose default workers are both held by tasks that block but
 * were not marked BLOCKING, with CPU tasks queued behind them. The watchdog counts the stalls and spawns
 * overflow workers (indices at and above maxThreads), which run the queued tasks and retire once idle.
 *
 * <pre>
 *   java --enable-native-access=ALL-UNNAMED -cp target/classes:target/test-classes dev.threadpool.demo.LaneDemo [rounds]
 * </pre>
 */
public final class LaneDemo {
    static final int THREADS = 4;
    static final int BLOCKING_TASKS = 120;
    static final int CPU_TASKS = 3000;

    private LaneDemo() {}

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        System.exit(run(rounds) ? 0 : 1);
    }

    /** Both parts; {@code rounds} runs of the mixed workload per variant (the median is printed). */
    public static boolean run(int rounds) throws Exception {
        System.out.println();
        System.out.println("lanes: " + BLOCKING_TASKS + " blocking tasks (sleep 5-20 ms) + " + CPU_TASKS
                + " CPU tasks (4000 xorshift steps), " + THREADS + " workers, median of " + rounds + " round(s)");
        boolean ok = true;
        double[][] results = new double[SchedulerVariant.values().length][];
        for (SchedulerVariant v : SchedulerVariant.values()) {
            double[] total = new double[rounds];
            double[] p50 = new double[rounds];
            double[] p99 = new double[rounds];
            for (int r = 0; r < rounds; r++) {
                double[] m = mixed(v);
                if (m == null) {
                    ok = false;
                    continue;
                }
                total[r] = m[0];
                p50[r] = m[1];
                p99[r] = m[2];
            }
            results[v.ordinal()] = new double[] {median(total), median(p50), median(p99)};
            System.out.printf(Locale.ROOT, "  %-15s all done in %7.1f ms   default-lane latency p50 %8.3f ms  p99 %8.3f ms%n",
                    v, results[v.ordinal()][0], results[v.ordinal()][1], results[v.ordinal()][2]);
        }
        double[] lanes = results[SchedulerVariant.LANE_EXTENSION.ordinal()];
        for (SchedulerVariant v : new SchedulerVariant[] {SchedulerVariant.GLOBAL_QUEUE, SchedulerVariant.WORK_STEALING}) {
            double[] o = results[v.ordinal()];
            System.out.printf(Locale.ROOT, "  LANE_EXTENSION vs %-13s completion x%.2f   default-lane p50 x%.3f  p99 x%.3f%n",
                    v, lanes[0] / o[0], lanes[1] / o[1], lanes[2] / o[2]);
        }
        ok &= watchdog();
        return ok;
    }

    private static double median(double[] a) {
        double[] s = a.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }

    /** One round; returns {total ms, p50 ms, p99 ms}, or null if a task was lost. */
    static double[] mixed(SchedulerVariant v) throws InterruptedException {
        PoolConfig config = PoolConfig.builder().schedulerVariant(v).maxThreads(THREADS).blockingWorkers(2)
                .queueCapacity(4096).threadNamePrefix("lane-demo-" + v.name().toLowerCase(Locale.ROOT) + "-")
                .build();
        long[] latency = new long[CPU_TASKS];
        WaitGroup wg = new WaitGroup();
        long t0;
        long t1;
        try (ThreadPool pool = ThreadPool.create(config)) {
            int perBlocking = CPU_TASKS / BLOCKING_TASKS;
            int cpu = 0;
            t0 = System.nanoTime();
            for (int b = 0; b < BLOCKING_TASKS; b++) {
                long sleep = 5_000_000L + (b * 7919L % 16) * 1_000_000L; // 5..20 ms, spread evenly
                pool.submit(() -> LockSupport.parkNanos(sleep), wg, SubmitOptions.BLOCKING);
                for (int k = 0; k < perBlocking && cpu < CPU_TASKS; k++, cpu++) {
                    final int id = cpu;
                    final long submitted = System.nanoTime();
                    pool.submit(() -> {
                        latency[id] = System.nanoTime() - submitted;
                        spin(id);
                    }, wg);
                }
            }
            if (!wg.await(Duration.ofMinutes(2))) {
                System.out.println("  " + v + ": tasks did not finish: pending " + wg.pending());
                return null;
            }
            t1 = System.nanoTime();
        }
        Arrays.sort(latency);
        return new double[] {(t1 - t0) / 1e6, latency[CPU_TASKS / 2] / 1e6, latency[CPU_TASKS * 99 / 100] / 1e6};
    }

    static volatile long sink;

    /** 4000 xorshift steps: a few microseconds of arithmetic. */
    static void spin(long seed) {
        long x = seed | 1;
        for (int i = 0; i < 4000; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
        }
        sink = x;
    }

    /** Part 2: default workers stalled by unmarked blocking tasks; overflow workers keep the lane moving. */
    static boolean watchdog() throws InterruptedException {
        PoolConfig config = PoolConfig.builder().schedulerVariant(SchedulerVariant.LANE_EXTENSION)
                .maxThreads(THREADS).blockingWorkers(2).maxOverflowWorkers(2)
                .blockingPromotionTimeout(Duration.ofMillis(20)).watchdogInterval(Duration.ofMillis(5))
                .threadNamePrefix("lane-demo-watchdog-").build();
        System.out.println("watchdog: " + THREADS + " workers (2 blocking), maxOverflowWorkers 2, promotion after"
                + " 20 ms, watchdog every 5 ms");
        AtomicLongArray ranOn = new AtomicLongArray(PoolConfig.MAX_THREADS);
        ThreadPool pool = ThreadPool.create(config);
        boolean ok;
        try {
            WaitGroup wg = new WaitGroup();
            // The blocking lane is busy with real blocking work, so its workers cannot help the default lane...
            for (int k = 0; k < 2; k++) {
                pool.submit(() -> LockSupport.parkNanos(400_000_000L), wg, SubmitOptions.BLOCKING);
            }
            // ...and two tasks that block but were not marked BLOCKING hold both default workers.
            for (int k = 0; k < 2; k++) {
                pool.submit(() -> LockSupport.parkNanos(400_000_000L), wg);
            }
            LockSupport.parkNanos(2_000_000L); // demo pacing only: let the sleepers start first
            WaitGroup cpuDone = new WaitGroup();
            for (int k = 0; k < 500; k++) {
                final int id = k;
                pool.submit(() -> { ranOn.incrementAndGet(pool.currentWorkerIndex()); spin(id); }, cpuDone);
            }
            ok = cpuDone.await(Duration.ofMinutes(1));
            PoolStats mid = pool.statsSnapshot();
            StringBuilder where = new StringBuilder();
            for (int w = 0; w < pool.workerSlots(); w++) {
                if (ranOn.get(w) > 0) {
                    where.append(" worker ").append(w).append(w >= THREADS ? " (overflow)" : "").append(": ")
                            .append(ranOn.get(w));
                }
            }
            System.out.println("  500 CPU tasks queued behind the stalled default workers ran on:" + where);
            System.out.printf(Locale.ROOT, "  while stalled: stallsSeen %d  overflowSpawned %d  overflowRetired %d"
                    + "  overflowLive %d%n", mid.stallsSeen(), mid.overflowSpawned(), mid.overflowRetired(),
                    mid.overflowLive());
            ok &= wg.await(Duration.ofMinutes(1));
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (pool.statsSnapshot().overflowLive() > 0 && System.nanoTime() < deadline) {
                LockSupport.parkNanos(5_000_000L); // overflow workers retire after 2 * watchdogInterval idle
            }
            PoolStats end = pool.statsSnapshot();
            System.out.printf(Locale.ROOT, "  once idle:     stallsSeen %d  overflowSpawned %d  overflowRetired %d"
                    + "  overflowLive %d%n", end.stallsSeen(), end.overflowSpawned(), end.overflowRetired(),
                    end.overflowLive());
            ok &= mid.overflowSpawned() > 0 && end.overflowLive() == 0;
        } finally {
            pool.close();
        }
        System.out.println("  watchdog " + (ok ? "check passed" : "CHECK FAILED"));
        return ok;
    }
}
