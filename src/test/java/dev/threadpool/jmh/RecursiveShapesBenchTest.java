package dev.threadpool.jmh;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.jmh.RecursiveShapesBench.Problem;
import dev.threadpool.jmh.RecursiveShapesBench.Serial;
import dev.threadpool.jmh.RecursiveShapesBench.Shape;
import dev.threadpool.jmh.RecursiveShapesBench.Size;
import dev.threadpool.jmh.RecursiveShapesBench.Splits;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.openjdk.jmh.annotations.Param;

/**
 * {@link RecursiveShapesBench} at its small size: every shape on every side once (twice, so the per-invocation check
 * compares two runs) gives the serial recursion's result; the serial recursion itself against plain loops and known
 * values; the result check catches a wrong or an unsteady side; the split counts agree with their closed forms and
 * with the table bench_charts.py divides the allocation by. The fairness of the large size is BenchFairnessTest's.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class RecursiveShapesBenchTest {
    static List<String> pools() throws NoSuchFieldException {
        return List.of(RecursiveShapesBench.class.getField("pool").getAnnotation(Param.class).value());
    }

    private static RecursiveShapesBench small(String pool) {
        RecursiveShapesBench b = new RecursiveShapesBench();
        b.pool = pool;
        b.threads = 2; // LANE_EXTENSION needs two (one is its blocking worker), whatever this machine has
        b.size = "SMALL";
        b.setUp();
        return b;
    }

    @ParameterizedTest
    @MethodSource("pools")
    void everyShapeOnThisSideGivesTheSerialResult(String pool) throws Exception {
        RecursiveShapesBench b = small(pool);
        try {
            for (int k = 0; k < 2; k++) {
                assertEquals(987, b.fib());
                assertEquals(92, b.queens());
                b.quadrature();
                b.reduce();
                b.stencil();
                b.matmul();
            }
            b.checkResults(); // throws unless every invocation gave the serial digest
        } finally {
            b.tearDown();
        }
    }

    @Test
    void theSerialRecursionAgreesWithPlainLoops() throws InterruptedException {
        Size sz = Size.SMALL;
        Problem p = new Problem(sz);
        Serial s = new Serial();
        assertEquals(987, s.fib(16));
        assertEquals(832040, Serial.fibOf(30));
        assertEquals(92, s.queens(8, 2));
        assertEquals(92, s.queens(8, 7));
        assertEquals(2680, s.queens(11, 3));
        long sum = 0;
        for (long v : p.values) {
            sum += v;
        }
        assertEquals(sum, s.reduce(p.values, sz.reduceLeaf()));
        assertEquals(stencilLoop(p), p.stencil(s));
        assertEquals(matmulLoop(p), p.matmul(s));
        double q = s.quadrature(sz.quadEps());
        double fine = compositeSimpson(1 << 22);
        assertTrue(Math.abs(q - fine) <= 1e-6 * fine, "adaptive " + q + " against composite Simpson " + fine);
    }

    private static long fibLoop(int n) {
        long a = 0;
        long b = 1;
        for (int i = 0; i < n; i++) {
            long t = a + b;
            a = b;
            b = t;
        }
        return a;
    }

    /** The stencil by plain loops over the whole array, step by step: its last array's digest. */
    private static long stencilLoop(Problem p) {
        double[] cur = p.stencilStart.clone();
        double[] next = p.stencilStart.clone();
        int n = p.size.stencilLength();
        for (int step = 0; step < p.size.stencilSteps(); step++) {
            for (int i = 1; i <= n; i++) {
                next[i] = (cur[i - 1] + cur[i] + cur[i + 1]) / 3;
            }
            double[] t = cur;
            cur = next;
            next = t;
        }
        return Problem.digest(cur);
    }

    /** C = A x B by the textbook loop (k ascending for every element, as the blocks add up): C's digest. */
    private static long matmulLoop(Problem p) {
        int n = p.size.matN();
        double[] c = new double[n * n];
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                double s = 0.0;
                for (int k = 0; k < n; k++) {
                    s += p.matA[i * n + k] * p.matB[k * n + j];
                }
                c[i * n + j] = s;
            }
        }
        return Problem.digest(c);
    }

    private static double compositeSimpson(int intervals) {
        double h = (RecursiveShapesBench.Quad.B - RecursiveShapesBench.Quad.A) / intervals;
        double s = RecursiveShapesBench.Quad.f(RecursiveShapesBench.Quad.A)
                + RecursiveShapesBench.Quad.f(RecursiveShapesBench.Quad.B);
        for (int i = 1; i < intervals; i++) {
            s += (i % 2 == 1 ? 4 : 2) * RecursiveShapesBench.Quad.f(RecursiveShapesBench.Quad.A + i * h);
        }
        return s * h / 3;
    }

    /** A side that gives the serial results plus {@code skew}, and every other call one more when {@code unsteady}. */
    private static final class Wrong extends RecursiveShapesBench.Side {
        private final Serial serial = new Serial();
        private final long skew;
        private final boolean unsteady;
        private long calls;

        Wrong(long skew, boolean unsteady) {
            this.skew = skew;
            this.unsteady = unsteady;
        }

        @Override
        long fib(int n) {
            return serial.fib(n) + skew + (unsteady && calls++ % 2 == 1 ? 1 : 0);
        }

        @Override
        double quadrature(double eps) {
            return serial.quadrature(eps);
        }

        @Override
        long queens(int n, int splitRows) {
            return serial.queens(n, splitRows);
        }

        @Override
        long reduce(long[] values, int leaf) {
            return serial.reduce(values, leaf);
        }

        @Override
        void stencilStep(Problem p, int parity) {
            serial.stencilStep(p, parity);
        }

        @Override
        void matmul(Problem p) {
            serial.matmul(p);
        }
    }

    @Test
    void theCheckCatchesAWrongAndAnUnsteadySide() throws Exception {
        for (Wrong w : List.of(new Wrong(1, false), new Wrong(0, true))) {
            RecursiveShapesBench b = small("SERIAL");
            try {
                b.side = w;
                b.fib();
                b.fib();
                IllegalStateException e = assertThrows(IllegalStateException.class, b::checkResults);
                assertTrue(e.getMessage().contains("fib"), e.getMessage());
            } finally {
                b.tearDown();
            }
        }
        RecursiveShapesBench ok = small("SERIAL");
        try {
            ok.fib();
            ok.checkResults();
            ok.checkResults(); // nothing ran since: nothing to check
        } finally {
            ok.tearDown();
        }
    }

    @Test
    void splitCountsFollowTheirClosedForms() {
        assertEquals(fibLoop(17) - 1, Splits.fib(16));
        assertEquals(countFibSplits(20), Splits.fib(20));
        assertEquals(3 * (1 + 8), Splits.matmul(64, 16));
        assertEquals(0, Splits.matmul(16, 16));
        // queens(n) at one split row: the root's candidates halved down to single columns, n - 1 splits
        assertEquals(7, Splits.queens(8, 1));
        assertTrue(Splits.quadrature(1.0) >= (1 << RecursiveShapesBench.Quad.MIN_DEPTH) - 1);
        assertEquals(RecursiveShapesBench.splits(Shape.REDUCE, Size.SMALL), Size.SMALL.reduceLength()
                / Size.SMALL.reduceLeaf() - 1);
    }

    private static long countFibSplits(int n) {
        return n < 2 ? 0 : 1 + countFibSplits(n - 1) + countFibSplits(n - 2);
    }

    /** bench_charts.py's SPLITS divides LARGE's gc.alloc.rate.norm into bytes per split: the same numbers. */
    @Test
    void theChartScriptsSplitTableIsTheBenchmarks() throws IOException {
        String py = Files.readString(Path.of("src/jmh/bench_charts.py"));
        for (Shape s : Shape.values()) {
            Matcher m = Pattern.compile("\\(\"RecursiveShapesBench\", \"" + s.method + "\"\\): ([0-9_]+)").matcher(py);
            assertTrue(m.find(), "bench_charts.py SPLITS has no row for " + s.method);
            assertEquals(RecursiveShapesBench.splits(s, Size.LARGE), Long.parseLong(m.group(1).replace("_", "")),
                    "bench_charts.py SPLITS for " + s.method);
        }
    }

    @Test
    void badSizesAreRefusedByName() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Size.of("HUGE"));
        assertTrue(e.getMessage().contains("size=HUGE"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> new Size("X", 10, 1.0, 16, 2, 1 << 10, 1 << 4, 1 << 10, 1 << 4, 1, 64, 16));
        assertTrue(e.getMessage().contains("queensN=16"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> new Size("X", 10, 1.0, 8, 2, 1000, 1 << 4, 1 << 10, 1 << 4, 1, 64, 16));
        assertTrue(e.getMessage().contains("reduceLength=1000"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> new Size("X", 10, 0.0, 8, 2, 1 << 10, 1 << 4, 1 << 10, 1 << 4, 1, 64, 16));
        assertTrue(e.getMessage().contains("quadEps=0.0"), e.getMessage());
    }

    /**
     * SplitCost's floors (SplitFloor) run ours' code over a stand-in pool: they must still compute what the serial
     * recursion does, or the floor would time other work. Both sizes' tolerances, fib of several n.
     */
    @Test
    void theSplitFloorsGiveTheSerialResults() throws Exception {
        Serial s = new Serial();
        for (RecursiveShapesBench.Side floor : List.of(new SplitFloor.JoinFloor(), new SplitFloor.ForkFloor())) {
            for (int n : new int[] {0, 1, 2, 16, 25}) {
                assertEquals(Serial.fibOf(n), floor.fib(n), floor.getClass().getSimpleName() + " fib(" + n + ")");
            }
            for (Size sz : List.of(Size.SMALL, Size.LARGE)) {
                for (int k = 0; k < 2; k++) { // the second run starts from the stacks the first one left
                    assertEquals(Double.doubleToRawLongBits(s.quadrature(sz.quadEps())),
                            Double.doubleToRawLongBits(floor.quadrature(sz.quadEps())),
                            floor.getClass().getSimpleName() + " quadrature at " + sz.name());
                }
            }
            assertThrows(UnsupportedOperationException.class, () -> floor.queens(8, 2));
        }
    }
}
