package dev.threadpool.demo;

import java.util.Locale;

/**
 * The demo's warm comparisons: one workload on this pool and on ForkJoinPool, timed the same way.
 *
 * <pre>
 *   round 0            cold: ours, then ForkJoinPool (the JIT has not compiled the paths yet; shown, labelled)
 *   WARMUP_ROUNDS      not timed, the sides alternating
 *   BEST_OF rounds     timed, the sides alternating, the first side swapped every round; best of each side
 * </pre>
 * Every round checks its own result; a wrong result in any round fails the comparison.
 */
final class Compare {
    /** Untimed rounds per side after the cold one. */
    static final int WARMUP_ROUNDS = 2;
    /** Timed rounds per side; the best is reported. */
    static final int BEST_OF = 3;

    private Compare() {}

    /**
     * The serial loop both sums are checked against, timed the same way (a cold pass, then the warm-up
     * passes, then the best of {@link #BEST_OF}); prints one line and returns the sum.
     */
    static long serialSum(String indent, long elements) {
        long sum = 0;
        long cold = 0;
        long best = Long.MAX_VALUE;
        for (int r = 0; r < 1 + WARMUP_ROUNDS + BEST_OF; r++) {
            long t0 = System.nanoTime();
            long s = 0;
            for (long i = 0; i < elements; i++) {
                s += Demo.mix(i);
            }
            long t = System.nanoTime() - t0;
            sum = s;
            if (r == 0) {
                cold = t;
            } else if (r > WARMUP_ROUNDS) {
                best = Math.min(best, t);
            }
        }
        System.out.printf(Locale.ROOT, "%sserial loop, one thread: cold %.1f ms, warm best %.1f ms%n", indent,
                cold / 1e6, best / 1e6);
        return sum;
    }

    /** One round of one side; returns whether its result checked out. */
    @FunctionalInterface
    interface Round {
        boolean run() throws Exception;
    }

    /** What a comparison found: whether every round checked, and each side's warm best (ours, FJP). */
    record Result(boolean ok, long oursBestNanos, long fjpBestNanos) {}

    /** Runs both sides as described above and prints the table under {@code indent}. */
    static Result run(String indent, Round ours, Round fjp) throws Exception {
        long[] cold = new long[2];
        long[] best = {Long.MAX_VALUE, Long.MAX_VALUE};
        Round[] side = {ours, fjp};
        boolean ok = true;
        for (int r = 0; r < 1 + WARMUP_ROUNDS + BEST_OF; r++) {
            int first = r == 0 ? 0 : r & 1; // cold: ours first; then alternate who goes first
            for (int k = 0; k < 2; k++) {
                int s = first ^ k;
                long t0 = System.nanoTime();
                ok &= side[s].run();
                long t = System.nanoTime() - t0;
                if (r == 0) {
                    cold[s] = t;
                } else if (r > WARMUP_ROUNDS) {
                    best[s] = Math.min(best[s], t);
                }
            }
        }
        Table t = new Table("", "cold (JIT not warmed) ms", "warm best ms");
        t.row("thread-pool", cold[0] / 1e6, best[0] / 1e6);
        t.row("ForkJoinPool", cold[1] / 1e6, best[1] / 1e6);
        System.out.print(t.render(indent));
        System.out.printf(Locale.ROOT, "%swarm: %d warm-up rounds per side, then best of %d (sides alternating);"
                + " thread-pool takes %.2fx ForkJoinPool's time%n", indent, WARMUP_ROUNDS, BEST_OF,
                (double) best[0] / best[1]);
        return new Result(ok, best[0], best[1]);
    }
}
