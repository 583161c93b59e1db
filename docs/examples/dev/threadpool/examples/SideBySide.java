package dev.threadpool.examples;

import java.util.Arrays;
import java.util.Locale;

/**
 * The examples' comparison table: the same latency samples of two runners (this pool and ForkJoinPool),
 * percentiles side by side and their ratio.
 *
 * <pre>
 *   frame time (us)        p50       p90       p99       max
 *   thread-pool          241.6     310.2     702.9   1,250.6
 *   ForkJoinPool         250.3     330.0     810.4   2,300.1
 *   ours / FJP           0.97x     0.94x     0.87x     0.54x
 * </pre>
 */
final class SideBySide {
    static final String OURS = "thread-pool";
    static final String FJP = "ForkJoinPool";
    private static final double[] FRACTIONS = {0.50, 0.90, 0.99, 1.0};

    private SideBySide() {}

    /** The table for {@code ours} and {@code fjp} (nanosecond samples, any order), headed by {@code what}. */
    static String table(String what, long[] ours, long[] fjp) {
        long[] a = ours.clone();
        long[] b = fjp.clone();
        Arrays.sort(a);
        Arrays.sort(b);
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "  %-18s %10s %10s %10s %10s%n", what, "p50", "p90", "p99", "max"));
        double[] pa = row(sb, OURS, a);
        double[] pb = row(sb, FJP, b);
        sb.append(String.format(Locale.ROOT, "  %-18s", "ours / FJP"));
        for (int i = 0; i < FRACTIONS.length; i++) {
            sb.append(String.format(Locale.ROOT, " %9.2fx", pa[i] / pb[i]));
        }
        return sb.append(System.lineSeparator()).toString();
    }

    private static double[] row(StringBuilder sb, String name, long[] sorted) {
        double[] p = new double[FRACTIONS.length];
        sb.append(String.format(Locale.ROOT, "  %-18s", name));
        for (int i = 0; i < FRACTIONS.length; i++) {
            p[i] = Args.percentileMicros(sorted, FRACTIONS[i]);
            sb.append(String.format(Locale.ROOT, " %,10.1f", p[i]));
        }
        sb.append(System.lineSeparator());
        return p;
    }
}
