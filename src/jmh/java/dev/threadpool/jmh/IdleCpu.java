package dev.threadpool.jmh;

import dev.threadpool.ThreadPool;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * CPU use of an idle pool, measured so noise cannot fake it: the CPU time of the pool's own threads
 * ({@link ThreadMXBean#getThreadCpuTime}), summed over the pool's workers, across a quiet interval, as a
 * percentage of one core. Per pool: warm it with a ping-pong of {@link #TASKS} tasks (one in flight, so every
 * worker's idle window is armed), wait {@link #SETTLE_MILLIS} (longer than any idle window), then measure over
 * {@code --seconds} (default 2). PARK pools should be near 0% (every worker parked); the {@code _SPIN} pools
 * show what a busy spin costs (about 100% per worker).
 *
 * <pre>
 *   java --enable-native-access=ALL-UNNAMED -cp target/test-classes:target/classes:$(cat target/cp.txt) \
 *       dev.threadpool.jmh.IdleCpu [--seconds N] [POOL ...]      (default: the three PARK variants and FJP)
 * </pre>
 * Run it under {@code flock /work/bench.lock}: another process's load does not change a thread's own CPU time,
 * but it can delay the settle.
 */
public final class IdleCpu {
    static final int TASKS = 20_000;
    static final long SETTLE_MILLIS = 50;

    private static volatile long started;

    private IdleCpu() {
    }

    public static void main(String[] args) throws InterruptedException {
        long seconds = 2;
        List<String> pools = new ArrayList<>();
        for (int k = 0; k < args.length; k++) {
            if (args[k].equals("--seconds")) {
                seconds = Long.parseLong(args[++k]);
            } else {
                pools.add(args[k]);
            }
        }
        if (pools.isEmpty()) {
            pools = List.of("GLOBAL_QUEUE", "WORK_STEALING", "LANE_EXTENSION", "FJP");
        }
        int workers = Pools.threads(0);
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        for (String pool : pools) {
            Set<Long> before = threadIds(mx);
            ThreadPool ours = Pools.ours(pool, workers, Pools.FLOOD_QUEUE);
            ExecutorService jdk = ours == null ? Pools.jdk(pool, workers, Pools.FLOOD_QUEUE) : null;
            if (ours == null && jdk == null) {
                throw new IllegalArgumentException("pool=" + pool + " is not a pool this program knows");
            }
            for (int i = 1; i <= TASKS; i++) {
                final long n = i;
                Runnable task = () -> started = n; // volatile write, read by the loop below
                if (ours != null) {
                    ours.submit(task);
                } else {
                    jdk.execute(task);
                }
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (started != n) {
                    if (System.nanoTime() - deadline > 0) {
                        throw new IllegalStateException("task " + n + " did not start within 10 s on " + pool);
                    }
                    Thread.onSpinWait();
                }
            }
            Thread.sleep(SETTLE_MILLIS);
            long[] ids = newThreads(mx, before);
            long cpu0 = cpu(mx, ids);
            long t0 = System.nanoTime();
            Thread.sleep(TimeUnit.SECONDS.toMillis(seconds));
            long cpu1 = cpu(mx, ids);
            long t1 = System.nanoTime();
            String parked = ours != null
                    ? ", parkedWorkers " + ours.statsSnapshot().parkedWorkers() + "/" + workers : "";
            System.out.printf(Locale.ROOT, "idle_cpu,%s,%d threads,%.3f %% of one core over %d s%s%n", pool,
                    ids.length, 100.0 * (cpu1 - cpu0) / (t1 - t0), seconds, parked);
            Pools.close(ours, jdk);
            started = 0;
        }
    }

    private static Set<Long> threadIds(ThreadMXBean mx) {
        Set<Long> out = new HashSet<>();
        for (long id : mx.getAllThreadIds()) {
            out.add(id);
        }
        return out;
    }

    /** The threads started since {@code before}: the pool's workers (and nothing else this program starts). */
    private static long[] newThreads(ThreadMXBean mx, Set<Long> before) {
        return Arrays.stream(mx.getAllThreadIds()).filter(id -> !before.contains(id)).toArray();
    }

    private static long cpu(ThreadMXBean mx, long[] ids) {
        long sum = 0;
        for (long id : ids) {
            sum += Math.max(0, mx.getThreadCpuTime(id)); // -1 for a thread that has ended
        }
        return sum;
    }
}
