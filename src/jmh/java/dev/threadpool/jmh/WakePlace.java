package dev.threadpool.jmh;

import dev.threadpool.ThreadPool;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Where an idle pool's woken worker runs, and what that does to {@code LatencyBench.wake_latency}
 * (PERFORMANCE_TRACKING 71). A probe every {@link LatencyBench#IDLE_PAUSE_NANOS}, as in the benchmark: the
 * submitting thread notes its CPU, stamps, submits; the probe stamps its start and notes its own CPU; the
 * submitting thread waits for it with {@code Thread.onSpinWait} up to a budget of spins, then
 * {@code Thread.yield} ({@code wake_latency}'s waiter until PERFORMANCE_TRACKING 72, with the budget
 * {@link LatencyBench#SPINS_BEFORE_YIELD}; it now parks instead); budget 0 parks for
 * the pause first and checks after. Prints, for the probes that ran on the submitter's CPU and for the others,
 * their count and the p50 / p90 / p99 of submit-to-start. Linux only: the CPU comes from
 * {@code /proc/thread-self/stat} (field 39), read after the stamps, so the read is not in the latency; but it
 * adds some 20 us to each probe's run, which can change how the kernel treats the worker at its next wake,
 * so compare pools and budgets within this harness, not with {@code LatencyBench}'s figures.
 *
 * <pre>
 *   java --enable-native-access=ALL-UNNAMED -cp target/test-classes:target/classes:$(cat target/cp.txt) \
 *       dev.threadpool.jmh.WakePlace POOL [PROBES [BUDGET]]      (defaults 10000 and 4096)
 * </pre>
 * One pool per JVM; run it under {@code flock /work/bench.lock}.
 */
public final class WakePlace {
    static final int WARMUP_PROBES = 2_000;
    static final long PROBE_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(10);

    private static volatile long start;
    /** The probe's CPU; {@link #NOT_STARTED} until it has run. */
    private static volatile int taskCpu;
    private static final int NOT_STARTED = -2;

    private WakePlace() {
    }

    /** The calling thread's CPU, or -1 where /proc does not say. */
    static int cpu() {
        try {
            String s = Files.readString(Path.of("/proc/thread-self/stat"));
            String[] rest = s.substring(s.lastIndexOf(')') + 2).split(" ");
            return Integer.parseInt(rest[36]); // field 39 of the line; rest starts at field 3
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    public static void main(String[] args) throws InterruptedException {
        if (args.length < 1) {
            throw new IllegalArgumentException("usage: WakePlace POOL [PROBES [BUDGET]]");
        }
        String pool = args[0];
        int probes = args.length > 1 ? Integer.parseInt(args[1]) : 10_000;
        int budget = args.length > 2 ? Integer.parseInt(args[2]) : LatencyBench.SPINS_BEFORE_YIELD;
        if (probes < 1 || budget < 0) {
            throw new IllegalArgumentException("PROBES must be >= 1 and BUDGET >= 0, got " + probes + " and " + budget);
        }
        int workers = Pools.threads(0);
        ThreadPool ours = Pools.ours(pool, workers, Pools.FLOOD_QUEUE);
        ExecutorService jdk = ours == null ? Pools.jdk(pool, workers, Pools.FLOOD_QUEUE) : null;
        if (ours == null && jdk == null) {
            throw new IllegalArgumentException("pool=" + pool + " is not a pool this harness knows");
        }
        Runnable probe = () -> {
            start = System.nanoTime();
            taskCpu = cpu(); // volatile write last: the waiting thread reads it first
        };
        long[] same = new long[probes];
        long[] other = new long[probes];
        int nSame = 0;
        int nOther = 0;
        for (int i = 0; i < probes + WARMUP_PROBES; i++) {
            taskCpu = NOT_STARTED;
            int submitterCpu = cpu();
            long t0 = System.nanoTime();
            if (ours != null) {
                ours.submit(probe);
            } else {
                jdk.execute(probe);
            }
            if (budget == 0) {
                LockSupport.parkNanos(LatencyBench.IDLE_PAUSE_NANOS); // go idle at once, the pause first
            }
            int spins = 0;
            while (taskCpu == NOT_STARTED) {
                if (++spins < budget) {
                    Thread.onSpinWait();
                } else {
                    Thread.yield();
                }
                if ((spins & 0xFFFF) == 0 && System.nanoTime() - t0 > PROBE_TIMEOUT_NANOS) {
                    throw new IllegalStateException("probe did not start within 10 s on " + pool);
                }
            }
            long latency = start - t0;
            if (i >= WARMUP_PROBES) {
                if (taskCpu == submitterCpu) {
                    same[nSame++] = latency;
                } else {
                    other[nOther++] = latency;
                }
            }
            if (budget != 0) {
                LockSupport.parkNanos(LatencyBench.IDLE_PAUSE_NANOS);
            }
        }
        System.out.printf(Locale.ROOT, "%s, budget %d: on the submitter's CPU %d (%s), on another %d (%s)%n",
                pool, budget, nSame, percentiles(same, nSame), nOther, percentiles(other, nOther));
        Pools.close(ours, jdk);
    }

    /** "p50 / p90 / p99 us" of the first {@code n} values, or "-". */
    static String percentiles(long[] values, int n) {
        if (n == 0) {
            return "-";
        }
        long[] v = Arrays.copyOf(values, n);
        Arrays.sort(v);
        return String.format(Locale.ROOT, "p50 %.1f p90 %.1f p99 %.1f us", v[n / 2] / 1e3, v[(int) (n * 0.9)] / 1e3,
                v[(int) (n * 0.99)] / 1e3);
    }
}
