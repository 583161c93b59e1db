package dev.threadpool.jmh;

import dev.threadpool.ThreadPool;
import dev.threadpool.WaitGroup;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RecursiveAction;

/**
 * What one join costs, on one worker, by that worker's CPU time: {@code FanoutBench.tree_join_fresh}'s tree (its
 * own {@code FreshNode} and {@code FjFreshNode}: 2^20 leaves, nodes created as the recursion goes, each node sums
 * its children's counts) run inside one task, so
 * nothing is stolen and nothing else runs there. CPU time, not wall time, so a busy box (a build beside it)
 * moves it little; and one worker, so what differs between JVMs is the worker's own code, not two workers'
 * interference. Not a JMH benchmark: a main, one JVM per line, printing the median over {@code runs} trees
 * after 20.
 * <ul>
 *   <li>{@code side}: {@code GLOBAL_QUEUE}, {@code WS_RING}, {@code WS_CHASE_LEV} ({@link FanoutBench#ours}
 *       with one worker), {@code FORK_JOIN} (parallelism 1, {@code invokeAll}), or {@code SERIAL}: the same
 *       recursion as plain calls, the floor (the user's node allocation and calls). Not LANE_EXTENSION: it has
 *       at least two workers, and its blocking worker steals halves too.</li>
 * </ul>
 * PERFORMANCE_TRACKING 75 found with it that the pool's join ran at one of three speeds by JVM (22, 27, 34 ns),
 * C2's recursive inlining of the user's node through the join, and measured what each part of a join costs.
 *
 * <pre>java --enable-native-access=ALL-UNNAMED -Xms1g -Xmx1g -cp ... dev.threadpool.jmh.JoinCost WS_RING [runs=60]</pre>
 */
public final class JoinCost {
    private static final int DEPTH = 20;
    private static final int WARMUP = 20;
    private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();

    private JoinCost() {
    }

    public static void main(String[] args) throws Exception {
        String side = args.length > 0 ? args[0] : "WS_RING";
        int runs = args.length > 1 ? Integer.parseInt(args[1]) : 60;
        double[] ms = new double[runs];
        switch (side) {
            case "SERIAL" -> {
                for (int i = 0; i < WARMUP + runs; i++) {
                    long c0 = MX.getCurrentThreadCpuTime();
                    SerialNode n = new SerialNode(DEPTH);
                    n.run();
                    record(ms, i, MX.getCurrentThreadCpuTime() - c0, n.count);
                }
            }
            case "FORK_JOIN" -> {
                ForkJoinPool fj = new ForkJoinPool(1);
                try {
                    for (int i = 0; i < WARMUP + runs; i++) {
                        long[] cpu = new long[2];
                        fj.invoke(new RecursiveAction() {
                            @Override
                            protected void compute() {
                                long c0 = MX.getCurrentThreadCpuTime();
                                FanoutBench.FjFreshNode n = new FanoutBench.FjFreshNode(DEPTH);
                                n.compute(); // on this worker, as the measurements of entry 75 ran it
                                cpu[0] = MX.getCurrentThreadCpuTime() - c0;
                                cpu[1] = n.leaves;
                            }
                        });
                        record(ms, i, cpu[0], cpu[1]);
                    }
                } finally {
                    fj.shutdown();
                }
            }
            case "LANE_EXTENSION" -> throw new IllegalArgumentException("side=LANE_EXTENSION has no one-worker pool");
            default -> {
                try (ThreadPool pool = FanoutBench.ours(side, 1)) {
                    for (int i = 0; i < WARMUP + runs; i++) {
                        long[] cpu = new long[2];
                        WaitGroup done = new WaitGroup();
                        pool.submit(() -> {
                            long c0 = MX.getCurrentThreadCpuTime();
                            FanoutBench.FreshNode n = new FanoutBench.FreshNode(pool, DEPTH);
                            n.run();
                            cpu[0] = MX.getCurrentThreadCpuTime() - c0;
                            cpu[1] = n.leaves;
                        }, done);
                        if (!done.await(Duration.ofSeconds(60))) {
                            throw new IllegalStateException(side + ": a tree did not end within 60 s");
                        }
                        record(ms, i, cpu[0], cpu[1]);
                    }
                }
            }
        }
        Arrays.sort(ms);
        System.out.printf(Locale.ROOT, "%s: %.2f ms a tree (%.1f ns a join), min %.2f, max %.2f, %d trees%n", side,
                ms[runs / 2], ms[runs / 2] * 1e6 / (1 << DEPTH), ms[0], ms[runs - 1], runs);
    }

    private static void record(double[] ms, int i, long cpuNanos, long count) {
        if (count != 1L << DEPTH) {
            throw new IllegalStateException("the tree counted " + count + " leaves, not " + (1L << DEPTH));
        }
        if (i >= WARMUP) {
            ms[i - WARMUP] = cpuNanos / 1e6;
        }
    }

    /** The floor: the same nodes and calls, no pool. */
    private static final class SerialNode {
        final int depth;
        long count;

        SerialNode(int depth) {
            this.depth = depth;
        }

        void run() {
            if (depth == 0) {
                count = 1;
                return;
            }
            SerialNode l = new SerialNode(depth - 1);
            SerialNode r = new SerialNode(depth - 1);
            l.run();
            r.run();
            count = l.count + r.count;
        }
    }
}
