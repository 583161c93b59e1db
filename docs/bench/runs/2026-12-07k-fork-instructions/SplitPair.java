package dev.threadpool.jmh;

import dev.threadpool.ThreadPool;
import java.util.*;
import java.util.concurrent.ForkJoinPool;

/**
 * Several SplitCost sides in ONE JVM, one op of each in turn (5 ms apart, so the last pool's worker has parked),
 * so the box's drift over seconds hits every side alike. Prints each side's median ns a split and the median of
 * its per-round ratio to the first side. A scratch harness kept with the run that used it (PERFORMANCE_TRACKING
 * 92): copy it into src/jmh/java/dev/threadpool/jmh to build it with the test class path.
 * <pre>
 * java --enable-native-access=ALL-UNNAMED -Xms1g -Xmx1g -cp ... dev.threadpool.jmh.SplitPair fib 30 FORK_JOIN WS_RING_FORK SERIAL
 * </pre>
 */
public final class SplitPair {
    public static void main(String[] a) throws Exception {
        String shape = a[0];
        int rounds = Integer.parseInt(a[1]);
        String[] sides = Arrays.copyOfRange(a, 2, a.length);
        RecursiveShapesBench.Size size = RecursiveShapesBench.Size.LARGE;
        long splits = shape.equals("fib") ? RecursiveShapesBench.Splits.fib(30)
                : RecursiveShapesBench.Splits.quadrature(size.quadEps());
        RecursiveShapesBench.Side[] s = new RecursiveShapesBench.Side[sides.length];
        List<AutoCloseable> close = new ArrayList<>();
        for (int i = 0; i < sides.length; i++) {
            String side = sides[i];
            boolean fork = side.endsWith("_FORK");
            switch (side) {
                case "SERIAL" -> s[i] = new RecursiveShapesBench.Serial();
                case "FORK_JOIN" -> { ForkJoinPool fj = new ForkJoinPool(1); close.add(fj::shutdown); s[i] = new RecursiveShapesBench.ForkJoin(fj); }
                default -> {
                    ThreadPool p = FanoutBench.ours(fork ? side.substring(0, side.length() - 5) : side, 1);
                    close.add(p::close);
                    s[i] = fork ? new RecursiveShapesBench.OursFork(p) : new RecursiveShapesBench.Ours(p);
                }
            }
        }
        double[][] ns = new double[sides.length][rounds];
        for (int r = -20; r < rounds; r++) {
            for (int i = 0; i < sides.length; i++) {
                Thread.sleep(5);
                long t0 = System.nanoTime();
                long got = shape.equals("fib") ? s[i].fib(30) : Double.doubleToRawLongBits(s[i].quadrature(size.quadEps()));
                long t = System.nanoTime() - t0;
                if (got == 42) System.out.print("");
                if (r >= 0) ns[i][r] = (double) t / splits;
            }
        }
        for (AutoCloseable c : close) c.close();
        StringBuilder sb = new StringBuilder(shape);
        for (int i = 0; i < sides.length; i++) {
            double[] x = ns[i].clone(); Arrays.sort(x);
            double[] ratio = new double[rounds];
            for (int r = 0; r < rounds; r++) ratio[r] = ns[i][r] / ns[0][r];
            Arrays.sort(ratio);
            sb.append(String.format(Locale.ROOT, " | %s %.2f ns (min %.2f) x%s=%.3f", sides[i], x[rounds / 2], x[0], sides[0], ratio[rounds / 2]));
        }
        System.out.println(sb);
    }
}
