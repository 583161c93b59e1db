package dev.threadpool.jmh;

import dev.threadpool.ThreadPool;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.ForkJoinPool;

/**
 * What one split of {@link RecursiveShapesBench}'s {@code fib} or {@code quadrature} costs on ONE worker, each side
 * as the benchmark writes it: nothing is stolen, so what differs is each side's own bookkeeping per split (a fork's
 * record, a join's frame, FJP's task object), not two workers' interference. Wall time per op divided by the shape's
 * splits; the median over {@code runs} ops after 20. Not a JMH benchmark: a main, one JVM per line (issue 43's
 * modes differ between JVMs: run each side several times, interleaved).
 * <ul>
 *   <li>{@code side}: {@code SERIAL} (plain recursion), {@code FORK_JOIN} ({@code ForkJoinPool(1)}), a pool name of
 *       {@link FanoutBench#ours} with one worker ({@code WS_RING}, ...: {@code join(fn, ctx, l, r)}), or the same
 *       with {@code _FORK} (fork handles); or {@code FLOOR_JOIN} / {@code FLOOR_FORK}: ours' code of either form
 *       over a stand-in that does nothing a pool must do ({@link SplitFloor}), on the calling thread: what no pool
 *       of this API can go below.</li>
 *   <li>{@code shape}: {@code fib} ({@code fib(30)}, threshold 2) or {@code quadrature} (LARGE's eps).</li>
 * </ul>
 * PERFORMANCE_TRACKING 82 measured with it what a fork costs against a join and FJP's task; 86 the floors.
 *
 * <pre>
 * java --enable-native-access=ALL-UNNAMED -Xms1g -Xmx1g -cp ... dev.threadpool.jmh.SplitCost WS_RING_FORK fib [runs=30]
 * </pre>
 */
public final class SplitCost {
    private static final int WARMUP = 20;
    private static final int FIB_N = 30;

    private SplitCost() {
    }

    public static void main(String[] args) throws Exception {
        String side = args.length > 0 ? args[0] : "WS_RING_FORK";
        String shape = args.length > 1 ? args[1] : "fib";
        int runs = args.length > 2 ? Integer.parseInt(args[2]) : 30;
        RecursiveShapesBench.Size size = RecursiveShapesBench.Size.LARGE;
        long splits = switch (shape) {
            case "fib" -> RecursiveShapesBench.Splits.fib(FIB_N);
            case "quadrature" -> RecursiveShapesBench.Splits.quadrature(size.quadEps());
            default -> throw new IllegalArgumentException("shape must be fib or quadrature, not " + shape);
        };
        ForkJoinPool fj = side.equals("FORK_JOIN") ? new ForkJoinPool(1) : null;
        boolean floor = side.startsWith("FLOOR_");
        boolean fork = side.endsWith("_FORK");
        ThreadPool pool = fj == null && !floor && !side.equals("SERIAL")
                ? FanoutBench.ours(fork ? side.substring(0, side.length() - "_FORK".length()) : side, 1) : null;
        RecursiveShapesBench.Side s = switch (side) {
            case "SERIAL" -> new RecursiveShapesBench.Serial();
            case "FORK_JOIN" -> new RecursiveShapesBench.ForkJoin(fj);
            case "FLOOR_JOIN" -> new SplitFloor.JoinFloor();
            case "FLOOR_FORK" -> new SplitFloor.ForkFloor();
            default -> fork ? new RecursiveShapesBench.OursFork(pool) : new RecursiveShapesBench.Ours(pool);
        };
        long want = shape.equals("fib") ? new RecursiveShapesBench.Serial().fib(FIB_N)
                : Double.doubleToRawLongBits(new RecursiveShapesBench.Serial().quadrature(size.quadEps()));
        double[] ns = new double[runs];
        try {
            for (int i = 0; i < WARMUP + runs; i++) {
                long t0 = System.nanoTime();
                long got = shape.equals("fib") ? s.fib(FIB_N)
                        : Double.doubleToRawLongBits(s.quadrature(size.quadEps()));
                long t = System.nanoTime() - t0;
                if (got != want) {
                    throw new IllegalStateException(side + " " + shape + " gave " + got + ", the serial one " + want);
                }
                if (i >= WARMUP) {
                    ns[i - WARMUP] = (double) t / splits;
                }
            }
        } finally {
            if (pool != null) {
                pool.close();
            }
            if (fj != null) {
                fj.shutdown();
            }
        }
        Arrays.sort(ns);
        System.out.printf(Locale.ROOT, "%s %s: %.2f ns a split (min %.2f, max %.2f, %d ops of %d splits)%n", side,
                shape, ns[runs / 2], ns[0], ns[runs - 1], runs, splits);
    }
}
