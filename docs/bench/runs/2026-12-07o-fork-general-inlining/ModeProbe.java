package dev.threadpool.jmh;

import dev.threadpool.ThreadPool;
import java.util.Arrays;
import java.util.Locale;

/**
 * One JVM's speed of ours' fork-handle {@code fib} against plain recursion on the same JVM (a scratch harness, kept
 * with PERFORMANCE_TRACKING 94): {@code warm} then {@code runs} pairs of one SERIAL {@code fib(37)} on this thread and
 * one ours' on a pool of {@code workers}; prints the median and range of ours / SERIAL and ours' median ms, then
 * each pair. Run with {@code -XX:+UnlockDiagnosticVMOptions -XX:+LogCompilation -XX:LogFile=...} and read the log
 * with {@code modes.py}.
 *
 * <pre>
 * javac -d /tmp/mp -cp "$CP" ModeProbe.java
 * java --enable-native-access=ALL-UNNAMED -Xms1g -Xmx1g -cp /tmp/mp:$CP dev.threadpool.jmh.ModeProbe WS_RING_FORK 2 4 10
 * </pre>
 */
public final class ModeProbe {
    public static void main(String[] a) throws Exception {
        String side = a[0];
        int workers = Integer.parseInt(a[1]);
        int warm = Integer.parseInt(a[2]);
        int runs = Integer.parseInt(a[3]);
        int n = RecursiveShapesBench.Size.LARGE.fibN();
        ThreadPool pool = FanoutBench.ours(side.substring(0, side.length() - 5), workers);
        RecursiveShapesBench.Side s = new RecursiveShapesBench.OursFork(pool);
        RecursiveShapesBench.Side ser = new RecursiveShapesBench.Serial();
        double[] r = new double[runs];
        double[] t = new double[runs];
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < warm + runs; i++) {
            long t0 = System.nanoTime();
            ser.fib(n);
            long t1 = System.nanoTime();
            s.fib(n);
            long t2 = System.nanoTime();
            if (i >= warm) {
                r[i - warm] = (double) (t2 - t1) / (t1 - t0);
                t[i - warm] = (t2 - t1) / 1e6;
                sb.append(String.format(Locale.ROOT, " %.0f/%.2f", t[i - warm], r[i - warm]));
            }
        }
        pool.close();
        Arrays.sort(r);
        Arrays.sort(t);
        System.out.printf(Locale.ROOT, "%s ours/serial median %.2f (%.2f-%.2f) ours ms %.0f |%s%n", side, r[runs / 2], r[0],
                r[runs - 1], t[runs / 2], sb);
    }
}
