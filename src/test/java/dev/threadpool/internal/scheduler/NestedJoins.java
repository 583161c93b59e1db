package dev.threadpool.internal.scheduler;

/** Joins nested in their left halves, for the tests of join's offer rule (Joining, "Offer on demand"). */
final class NestedJoins {
    private NestedJoins() {}

    /**
     * {@code levels} joins of {@code core} nested in their left halves (each right half does nothing), and
     * {@code innermost} inside them all, on the calling worker.
     */
    static void nested(PoolCore core, int levels, Runnable innermost) {
        if (levels == 0) {
            innermost.run();
            return;
        }
        try {
            core.join(() -> nested(core, levels - 1, innermost), () -> { });
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }
}
