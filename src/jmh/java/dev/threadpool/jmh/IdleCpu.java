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
 * CPU use of a pool's threads when it has (almost) nothing to do, measured so noise cannot fake it: the CPU
 * time of the pool's own threads ({@link ThreadMXBean#getThreadCpuTime}), summed over the threads the pool
 * started, across an interval, as a percentage of one core. Two modes, each on a fresh pool:
 * <ul>
 *   <li>{@code idle}: warm the pool with a ping-pong of {@link #TASKS} tasks (one in flight, so every worker's
 *       idle window is armed), wait {@link #SETTLE_MILLIS} (longer than any idle window), then measure over
 *       {@code --seconds} (default 2) with nothing submitted. PARK pools should be near 0% (every worker
 *       parked); the {@code _SPIN} pools show what a busy spin costs (about 100% per worker).</li>
 *   <li>{@code sparse}: after the same warm-up, this program's main thread submits one trivial task every
 *       {@link #SPARSE_GAP_NANOS} (20 us) for {@code --seconds}, paced by spinning on {@link System#nanoTime}
 *       (a sleep cannot wait 20 us), and the pool's threads' CPU over that interval is reported, with the
 *       tasks per second actually submitted. The gap is shorter than our PARK idle window (50 us,
 *       {@code PoolConfig.DEFAULT_IDLE_WINDOW_NANOS}): a worker that finishes a task spins for the next one
 *       and finds it before its window runs out, so it never parks. That spin is why a wake is fast (the next
 *       task is taken by a running worker, not by one the kernel must wake), and this row is its price: the
 *       CPU a pool burns between tasks that arrive too far apart to keep it busy and too close for it to park.
 *       The JDK pools park at once and pay a wake per task instead; their row is the other side of that
 *       trade.</li>
 * </ul>
 * The submitting thread is this program's main thread, which is not one of the pool's threads, so its own
 * spinning is not counted. Threads the pool starts during the interval (a JDK pool replacing a worker) count from
 * 0; a thread that ends during it loses its CPU time (the JDK pools' keep-alive is longer than the interval).
 *
 * <p>Output, one line per pool and mode, parsed by run-benchmarks.sh into {@code target/jmh/idle_cpu.csv}:
 * <pre>
 *   idle_cpu,POOL,MODE,PERCENT,threads=N,tasks_per_s=X,seconds=S[,parked=P/W]
 * </pre>
 * ({@code PERCENT} of one core, 3 decimals; {@code tasks_per_s} 0 in {@code idle}; {@code parked}: our pools'
 * parked workers at the end.)
 *
 * <pre>
 *   java --enable-native-access=ALL-UNNAMED -cp target/test-classes:target/classes:$(cat target/cp.txt) \
 *       dev.threadpool.jmh.IdleCpu [--seconds N] [--modes idle,sparse] [POOL ...]
 *       (default: both modes; the three PARK variants, FJP and TPE_ABQ)
 * </pre>
 * Run it under {@code flock /work/bench.lock}: another process's load does not change a thread's own CPU time,
 * but it can delay the settle and the pacing.
 */
public final class IdleCpu {
    static final int TASKS = 20_000;
    static final long SETTLE_MILLIS = 50;
    /** {@code sparse}: the gap between two submits, below the PARK idle window of 50 us. */
    static final long SPARSE_GAP_NANOS = 20_000;
    static final List<String> DEFAULT_POOLS = List.of("GLOBAL_QUEUE", "WORK_STEALING", "LANE_EXTENSION", "FJP",
            "TPE_ABQ");

    private static volatile long started;

    private IdleCpu() {
    }

    public static void main(String[] args) throws InterruptedException {
        long seconds = 2;
        List<String> modes = List.of("idle", "sparse");
        List<String> pools = new ArrayList<>();
        for (int k = 0; k < args.length; k++) {
            switch (args[k]) {
                case "--seconds" -> seconds = Long.parseLong(args[++k]);
                case "--modes" -> modes = List.of(args[++k].split(","));
                default -> pools.add(args[k]);
            }
        }
        for (String mode : modes) {
            if (!mode.equals("idle") && !mode.equals("sparse")) {
                throw new IllegalArgumentException("mode " + mode + ": idle or sparse");
            }
        }
        if (pools.isEmpty()) {
            pools = DEFAULT_POOLS;
        }
        for (String pool : pools) {
            for (String mode : modes) {
                measure(pool, mode, seconds);
            }
        }
    }

    /** One pool, one mode, on a pool of its own; prints the line. */
    private static void measure(String pool, String mode, long seconds) throws InterruptedException {
        int workers = Pools.threads(0);
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        Set<Long> before = threadIds(mx); // main among them: the pacing thread is never counted
        ThreadPool ours = Pools.ours(pool, workers, Pools.FLOOD_QUEUE);
        ExecutorService jdk = ours == null ? Pools.jdk(pool, workers, Pools.FLOOD_QUEUE) : null;
        if (ours == null && jdk == null) {
            throw new IllegalArgumentException("pool=" + pool + " is not a pool this program knows");
        }
        Runnable[] tasks = new Runnable[TASKS + 1];
        for (int i = 1; i <= TASKS; i++) {
            final long n = i;
            tasks[i] = () -> started = n; // volatile write, read by warm()
        }
        warm(pool, ours, jdk, tasks);
        Thread.sleep(SETTLE_MILLIS);
        long[] cpu0 = cpu(mx, newThreads(mx, before));
        long t0 = System.nanoTime();
        long submitted = 0;
        if (mode.equals("idle")) {
            Thread.sleep(TimeUnit.SECONDS.toMillis(seconds));
        } else {
            submitted = paced(ours, jdk, tasks[1], t0 + TimeUnit.SECONDS.toNanos(seconds));
        }
        long[] ids = newThreads(mx, before);
        long cpu1 = sum(mx, ids, cpu0);
        long t1 = System.nanoTime();
        String parked = ours != null ? ",parked=" + ours.statsSnapshot().parkedWorkers() + "/" + workers : "";
        System.out.printf(Locale.ROOT, "idle_cpu,%s,%s,%.3f,threads=%d,tasks_per_s=%.0f,seconds=%d%s%n", pool, mode,
                100.0 * cpu1 / (t1 - t0), ids.length, submitted * 1e9 / (t1 - t0), seconds, parked);
        Pools.close(ours, jdk);
        started = 0;
    }

    /** A ping-pong of {@link #TASKS} tasks, one in flight: every worker has run and armed its idle window. */
    private static void warm(String pool, ThreadPool ours, ExecutorService jdk, Runnable[] tasks) {
        for (int n = 1; n <= TASKS; n++) {
            submit(ours, jdk, tasks[n]);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (started != n) {
                if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException("task " + n + " did not start within 10 s on " + pool);
                }
                Thread.onSpinWait();
            }
        }
    }

    /**
     * Submits {@code task} every {@link #SPARSE_GAP_NANOS} until {@code end}, spinning between submits; returns
     * how many it submitted. The schedule is fixed (submit k is due at start + k gaps), so a submit a little late
     * is followed by a shorter gap and the rate holds; one a whole gap late (this thread was preempted) restarts
     * the schedule a gap after it instead of making up the missed submits in a burst.
     */
    private static long paced(ThreadPool ours, ExecutorService jdk, Runnable task, long end) {
        long submitted = 0;
        long next = System.nanoTime();
        while (next - end < 0) {
            long now;
            while ((now = System.nanoTime()) - next < 0) {
                Thread.onSpinWait();
            }
            submit(ours, jdk, task);
            submitted++;
            next += SPARSE_GAP_NANOS;
            if (now - next >= 0) {
                next = now + SPARSE_GAP_NANOS;
            }
        }
        return submitted;
    }

    private static void submit(ThreadPool ours, ExecutorService jdk, Runnable task) {
        if (ours != null) {
            ours.submit(task);
        } else {
            jdk.execute(task);
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

    /** Pairs of (thread id, CPU ns) at this moment, flattened. */
    private static long[] cpu(ThreadMXBean mx, long[] ids) {
        long[] out = new long[2 * ids.length];
        for (int i = 0; i < ids.length; i++) {
            out[2 * i] = ids[i];
            out[2 * i + 1] = Math.max(0, mx.getThreadCpuTime(ids[i])); // -1 for a thread that has ended
        }
        return out;
    }

    /** The CPU ns the threads {@code ids} used since the reading {@code start}; a thread born since counts from 0. */
    private static long sum(ThreadMXBean mx, long[] ids, long[] start) {
        long total = 0;
        for (long id : ids) {
            long base = 0;
            for (int i = 0; i < start.length; i += 2) {
                if (start[i] == id) {
                    base = start[i + 1];
                }
            }
            total += Math.max(0, Math.max(0, mx.getThreadCpuTime(id)) - base);
        }
        return total;
    }
}
