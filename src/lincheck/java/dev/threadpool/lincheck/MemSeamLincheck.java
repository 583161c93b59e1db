package dev.threadpool.lincheck;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * Proof that the off-heap seam ({@link Checks#offHeapSwitchPoints()}) is what lets the model checker see
 * races at {@code Mem} accesses: a known-broken queue (a RingQueue whose steal claims with a store instead
 * of the CAS, {@link RingQueueLincheck.PlainClaimSteal}), model-checked on the one scenario that breaks it
 * (an owner pop against a steal of the same entry), passes without the seam, since every operation then
 * runs from call to return without a switch, and fails with it. If a later
 * Lincheck learns to switch at {@code MemorySegment} accesses by itself, the first half fails and says so.
 */
public class MemSeamLincheck {

    @Test
    void aBrokenOffHeapQueuePassesWithoutTheSeamAndFailsWithIt() {
        Checks.timed("Mem seam: broken queue without the seam passes", () ->
                RingQueueLincheck.popVsStealOnly(false).check(RingQueueLincheck.PlainClaimSteal.class));
        Checks.timed("Mem seam: broken queue with the seam fails", () -> {
            String report = Checks.assertFails(RingQueueLincheck.popVsStealOnly(true),
                    RingQueueLincheck.PlainClaimSteal.class);
            // the interleaving switches at an off-heap access, and the trace names it
            assertTrue(report.contains("Mem."), "the failing trace shows the Mem accesses:\n" + report);
        });
    }
}
