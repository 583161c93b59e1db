package dev.threadpool.jmh;

import dev.threadpool.PoolStats;
import dev.threadpool.ThreadPool;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.ForkJoinPool;

/**
 * What a side's scheduling does in one op of a RecursiveShapesBench shape, counted (a scratch harness, kept with the
 * run of PERFORMANCE_TRACKING 93): ops of the LARGE size on a pool of {@code workers}, after {@code warm} ops, each
 * op's steals, parks and wakeups from ours' {@code statsSnapshot} (FJP: {@code getStealCount}); prints the median
 * and the range over the measured ops, and the median ms an op (a time from this noisy box: a scale, not a figure).
 *
 * <pre>
 * javac -d /tmp/sc -cp "$CP" ShapeCounts.java
 * java --enable-native-access=ALL-UNNAMED -Xms1g -Xmx1g -cp /tmp/sc:$CP dev.threadpool.jmh.ShapeCounts \
 *     WS_RING_FORK queens 2 10 20
 * </pre>
 * (side: FORK_JOIN or a RecursiveShapesBench pool of ours; shape; workers; warm-up ops; measured ops)
 */
public final class ShapeCounts {
    public static void main(String[] args) throws Exception {
        String side = args[0];
        RecursiveShapesBench.Shape shape = RecursiveShapesBench.Shape.of(args[1]);
        int workers = Integer.parseInt(args[2]);
        int warm = Integer.parseInt(args[3]);
        int runs = Integer.parseInt(args[4]);
        RecursiveShapesBench.Problem problem = new RecursiveShapesBench.Problem(RecursiveShapesBench.Size.LARGE);
        ForkJoinPool fj = side.equals("FORK_JOIN") ? new ForkJoinPool(workers) : null;
        boolean fork = side.endsWith("_FORK");
        ThreadPool pool = fj != null ? null
                : FanoutBench.ours(fork ? side.substring(0, side.length() - "_FORK".length()) : side, workers);
        RecursiveShapesBench.Side s = fj != null ? new RecursiveShapesBench.ForkJoin(fj)
                : fork ? new RecursiveShapesBench.OursFork(pool) : new RecursiveShapesBench.Ours(pool);
        long[][] c = new long[4][runs]; // ms (as ns), steals, parks, wakeups
        try {
            for (int i = 0; i < warm + runs; i++) {
                PoolStats b = pool != null ? pool.statsSnapshot() : null;
                long fs = fj != null ? fj.getStealCount() : 0;
                long t0 = System.nanoTime();
                RecursiveShapesBench.run(shape, s, problem);
                long t = System.nanoTime() - t0;
                if (i < warm) {
                    continue;
                }
                int k = i - warm;
                c[0][k] = t;
                if (pool != null) {
                    PoolStats e = pool.statsSnapshot();
                    c[1][k] = e.steals() - b.steals();
                    c[2][k] = e.parks() - b.parks();
                    c[3][k] = e.wakeups() - b.wakeups();
                } else {
                    c[1][k] = fj.getStealCount() - fs;
                    c[2][k] = -1;
                    c[3][k] = -1;
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
        for (long[] a : c) {
            Arrays.sort(a);
        }
        System.out.printf(Locale.ROOT, "%-20s %-10s %d workers, %d ops: %8.1f ms (%.1f-%.1f) | steals %s | parks %s |"
                        + " wakeups %s%n", side, args[1], workers, runs, c[0][runs / 2] / 1e6, c[0][0] / 1e6,
                c[0][runs - 1] / 1e6, med(c[1]), med(c[2]), med(c[3]));
    }

    private static String med(long[] a) {
        return a[0] < 0 ? "n/a" : a[a.length / 2] + " (" + a[0] + "-" + a[a.length - 1] + ")";
    }
}
