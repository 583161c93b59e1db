package dev.threadpool.examples;

import java.util.Arrays;
import java.util.Locale;

/**
 * The examples' comparison table: the same latency samples of several runners (this pool, in one or more forms,
 * and ForkJoinPool), percentiles side by side and each of ours' ratio to ForkJoinPool.
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
        return table(what, new String[] {OURS}, new String[] {"ours / FJP"}, new long[][] {ours}, fjp);
    }

    /**
     * The table for several of ours' runners ({@code names[i]}: {@code ours[i]}) and ForkJoinPool, then one ratio
     * row per runner of ours against ForkJoinPool ({@code ratioNames[i]}).
     */
    static String table(String what, String[] names, String[] ratioNames, long[][] ours, long[] fjp) {
        if (names.length != ours.length || ratioNames.length != ours.length) {
            throw new IllegalArgumentException("one name and one ratio name per runner: names=" + names.length
                    + ", ratioNames=" + ratioNames.length + ", runners=" + ours.length);
        }
        int width = what.length(); // the first column: 18 wide, or as wide as its longest entry
        for (int r = 0; r < ours.length; r++) {
            width = Math.max(width, Math.max(names[r].length(), ratioNames[r].length()));
        }
        String first = "  %-" + Math.max(18, width) + "s";
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, first + " %10s %10s %10s %10s%n", what, "p50", "p90", "p99", "max"));
        double[][] p = new double[ours.length][];
        for (int r = 0; r < ours.length; r++) {
            p[r] = row(sb, first, names[r], sorted(ours[r]));
        }
        double[] pf = row(sb, first, FJP, sorted(fjp));
        for (int r = 0; r < ours.length; r++) {
            sb.append(String.format(Locale.ROOT, first, ratioNames[r]));
            for (int i = 0; i < FRACTIONS.length; i++) {
                sb.append(String.format(Locale.ROOT, " %9.2fx", p[r][i] / pf[i]));
            }
            sb.append(System.lineSeparator());
        }
        return sb.toString();
    }

    private static long[] sorted(long[] samples) {
        long[] a = samples.clone();
        Arrays.sort(a);
        return a;
    }

    private static double[] row(StringBuilder sb, String first, String name, long[] sorted) {
        double[] p = new double[FRACTIONS.length];
        sb.append(String.format(Locale.ROOT, first, name));
        for (int i = 0; i < FRACTIONS.length; i++) {
            p[i] = Args.percentileMicros(sorted, FRACTIONS[i]);
            sb.append(String.format(Locale.ROOT, " %,10.1f", p[i]));
        }
        sb.append(System.lineSeparator());
        return p;
    }
}
