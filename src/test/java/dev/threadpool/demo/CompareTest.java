package dev.threadpool.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.parallel.Isolated;

/** The demo's warm comparison: round schedule, labels, and that a wrong round fails it. No timing is asserted. */
@Isolated // captures System.out
@Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class CompareTest {
    private static final int ROUNDS = 1 + Compare.WARMUP_ROUNDS + Compare.BEST_OF;

    private static String capture(ThrowingRunnable r) throws Exception {
        PrintStream old = System.out;
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        System.setOut(new PrintStream(buf, true, StandardCharsets.UTF_8));
        try {
            r.run();
        } finally {
            System.setOut(old);
        }
        return buf.toString(StandardCharsets.UTF_8);
    }

    interface ThrowingRunnable {
        void run() throws Exception;
    }

    @Test
    void coldRoundOursFirstThenTheSidesAlternate() throws Exception {
        List<String> order = new ArrayList<>();
        Compare.Result[] result = new Compare.Result[1];
        String out = capture(() -> result[0] = Compare.run("  ", () -> order.add("ours"), () -> order.add("fjp")));
        assertTrue(result[0].ok());
        assertEquals(2 * ROUNDS, order.size(), order.toString());
        assertEquals(List.of("ours", "fjp"), order.subList(0, 2), "the cold round: ours, then ForkJoinPool");
        for (int r = 1; r < ROUNDS; r++) {
            String first = (r & 1) == 0 ? "ours" : "fjp";
            assertEquals(first, order.get(2 * r), "round " + r + " starts with " + first + ": " + order);
            assertTrue(!order.get(2 * r).equals(order.get(2 * r + 1)), "both sides run in round " + r);
        }
        assertTrue(out.contains("cold (JIT not warmed)") && out.contains("warm best")
                && out.contains(Compare.WARMUP_ROUNDS + " warm-up rounds per side, then best of " + Compare.BEST_OF)
                && out.contains("thread-pool") && out.contains("ForkJoinPool"), out);
        assertTrue(result[0].oursBestNanos() >= 0 && result[0].fjpBestNanos() >= 0);
    }

    @Test
    void aWrongRoundOnEitherSideFailsTheComparison() throws Exception {
        int[] calls = new int[1];
        Compare.Result[] result = new Compare.Result[1];
        capture(() -> result[0] = Compare.run("", () -> true, () -> ++calls[0] != ROUNDS)); // the last FJP round
        assertFalse(result[0].ok());
        capture(() -> result[0] = Compare.run("", () -> ++calls[0] != ROUNDS + 2, () -> true)); // a warm-up round
        assertFalse(result[0].ok());
    }

    @Test
    void serialSumIsTheLoopsSum() throws Exception {
        long expect = 0;
        for (long i = 0; i < 1000; i++) {
            expect += Demo.mix(i);
        }
        long[] got = new long[1];
        String out = capture(() -> got[0] = Compare.serialSum("  ", 1000));
        assertEquals(expect, got[0]);
        assertTrue(out.contains("serial loop, one thread: cold") && out.contains("warm best"), out);
    }
}
