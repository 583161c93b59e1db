package dev.threadpool.jmh;

import dev.threadpool.ThreadPool;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.ForkJoinPool;

/**
 * Whether a join tree runs at one speed per pool or at one of several: {@code FanoutBench.tree_join_reused}'s
 * tree (a prebuilt binary tree of {@code join}s whose leaves count their runs), on several pools made one after
 * another in one JVM, each pool's median printed on its own. A JMH fork measures one pool, so a per-pool mode shows
 * there as forks of one build that differ by 2x; here it shows as pools that differ inside one JVM, and a
 * build that removes the mode shows every pool at one speed (PERFORMANCE_TRACKING entry 63). Not a JMH
 * benchmark: a main.
 * <ul>
 *   <li>{@code side}: {@code GLOBAL_QUEUE}, {@code WS_RING}, {@code WS_CHASE_LEV}, {@code LANE_EXTENSION} or
 *       {@code FORK_JOIN}: FanoutBench's pools ({@link FanoutBench#ours}: LANE_EXTENSION needs
 *       {@code workers >= 2}, one of them its blocking-lane worker) and its FORK_JOIN tree, prebuilt as ours and
 *       reinitialized as it runs ({@link FanoutBench.FjJoinNode}).</li>
 *   <li>{@code depth}: the tree's depth; a tree below 20 runs {@code 2^(20 - depth)} times per measured run,
 *       so every run has 2^20 leaves (depth 14, about 1 MB of nodes, stays in the L2 caches).</li>
 * </ul>
 * Prints per pool the median ms per run of 2^20 leaves over {@code runs} runs after 10, and each worker's CPU
 * time over the measured runs as a share of the wall time (both near 100 % in either mode: the slow mode is
 * not a worker waiting).
 *
 * <pre>java --enable-native-access=ALL-UNNAMED -cp ... dev.threadpool.jmh.JoinModes [side=WS_RING] [pools=6]
 *     [workers=2] [depth=20] [runs=20]</pre>
 */
public final class JoinModes {
    private static final int LEAVES_LOG2 = 20;
    private static final int WARMUP_RUNS = 10;

    private JoinModes() {
    }

    public static void main(String[] args) throws Exception {
        String side = args.length > 0 ? args[0] : "WS_RING";
        int pools = args.length > 1 ? Integer.parseInt(args[1]) : 6;
        int workers = args.length > 2 ? Integer.parseInt(args[2]) : 2;
        int depth = args.length > 3 ? Integer.parseInt(args[3]) : LEAVES_LOG2;
        int runs = args.length > 4 ? Integer.parseInt(args[4]) : 20;
        if (depth < 1 || depth > LEAVES_LOG2) {
            throw new IllegalArgumentException("depth must be in [1, " + LEAVES_LOG2 + "]: depth=" + depth);
        }
        StringBuilder line = new StringBuilder(side);
        for (int p = 0; p < pools; p++) {
            line.append(side.equals("FORK_JOIN") ? forkJoin(workers, depth, runs) : ours(side, workers, depth, runs));
        }
        System.out.println(line);
    }

    private static String ours(String side, int workers, int depth, int runs) throws Exception {
        int reps = 1 << (LEAVES_LOG2 - depth);
        try (ThreadPool pool = FanoutBench.ours(side, workers)) {
            FanoutBench.JoinNode root = FanoutBench.JoinNode.build(pool, depth);
            for (int i = 0; i < WARMUP_RUNS; i++) {
                for (int k = 0; k < reps; k++) {
                    pool.join(root.left, root.right);
                }
            }
            java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
            Thread[] ws = Thread.getAllStackTraces().keySet().stream()
                    .filter(t -> t instanceof dev.threadpool.internal.scheduler.WorkerThread && t.isAlive())
                    .toArray(Thread[]::new);
            long[] cpu0 = new long[ws.length];
            for (int i = 0; i < ws.length; i++) {
                cpu0[i] = mx.getThreadCpuTime(ws[i].threadId());
            }
            long wall0 = System.nanoTime();
            double[] ms = new double[runs];
            for (int i = 0; i < runs; i++) {
                long t0 = System.nanoTime();
                for (int k = 0; k < reps; k++) {
                    pool.join(root.left, root.right);
                }
                ms[i] = (System.nanoTime() - t0) / 1e6;
            }
            long wall = System.nanoTime() - wall0;
            long expected = (long) (WARMUP_RUNS + runs) * reps << depth;
            if (root.leafRuns() != expected) {
                throw new IllegalStateException(side + ": " + root.leafRuns() + " leaf runs, expected " + expected);
            }
            StringBuilder cpu = new StringBuilder();
            for (int i = 0; i < ws.length; i++) {
                cpu.append(i == 0 ? "" : ",").append(Math.round(100.0 * (mx.getThreadCpuTime(ws[i].threadId()) - cpu0[i])
                        / wall)).append('%');
            }
            Arrays.sort(ms);
            return String.format(Locale.ROOT, " %.1f(%s)", ms[runs / 2], cpu);
        }
    }

    private static String forkJoin(int workers, int depth, int runs) {
        int reps = 1 << (LEAVES_LOG2 - depth);
        ForkJoinPool fj = new ForkJoinPool(workers);
        try {
            FanoutBench.FjJoinNode root = FanoutBench.FjJoinNode.build(depth); // reused as ours' tree is
            for (int i = 0; i < WARMUP_RUNS; i++) {
                for (int k = 0; k < reps; k++) {
                    fj.invoke(root);
                    root.reinitialize(); // its nodes reinitialize their children as they run
                }
            }
            double[] ms = new double[runs];
            for (int i = 0; i < runs; i++) {
                long t0 = System.nanoTime();
                for (int k = 0; k < reps; k++) {
                    fj.invoke(root);
                    root.reinitialize();
                }
                ms[i] = (System.nanoTime() - t0) / 1e6;
            }
            long expected = (long) (WARMUP_RUNS + runs) * reps << depth;
            if (root.leafRuns() != expected) {
                throw new IllegalStateException("FORK_JOIN: " + root.leafRuns() + " leaf runs, expected " + expected);
            }
            Arrays.sort(ms);
            return String.format(Locale.ROOT, " %.1f", ms[runs / 2]);
        } finally {
            fj.shutdown();
        }
    }
}
