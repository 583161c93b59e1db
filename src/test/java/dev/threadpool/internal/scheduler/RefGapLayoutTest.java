package dev.threadpool.internal.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.internal.memory.CacheLine;
import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.CarriedBatches;
import java.util.HashSet;
import java.util.Set;
import java.util.function.IntUnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * {@link CacheLine#REF_GAP}: the on-heap reference arrays that hold one run of elements per worker (JoinDeques'
 * halves, CarriedBatches' references) keep every run a {@link CacheLine#PAD} from the array's header, from the
 * other runs and from the array's end. The arithmetic is checked exactly, in bytes at the smallest reference
 * size (4, compressed oops), for every size the constructors accept; that the gap is what keeps two-worker join
 * trees out of their slow mode is a measurement (PERFORMANCE_TRACKING entry 63), not a test.
 */
class RefGapLayoutTest {
    /** Smallest reference size (compressed oops): the gap must be a PAD even then. */
    private static final int REF = 4;

    @Test
    void theGapIsAPadOfCompressedReferences() {
        assertTrue(CacheLine.REF_GAP * REF >= CacheLine.PAD, "REF_GAP=" + CacheLine.REF_GAP);
        assertEquals(CacheLine.REF_GAP, JoinDeques.Layout.HALVES_GAP);
    }

    @Test
    void joinHalvesRunsLieAPadApartForEveryFrameCount() {
        for (int shift = 1; shift <= Integer.numberOfTrailingZeros(JoinDeques.MAX_FRAMES); shift++) {
            final int s = shift;
            for (int workers : new int[] {1, 2, 3, 16, 64}) {
                assertRunsApart("halves fpw=" + (1 << s) + " workers=" + workers, workers, 1 << s,
                        idx -> JoinDeques.Layout.halfSlot(idx, s), JoinDeques.Layout.halvesLength(workers, s));
            }
        }
    }

    @Test
    void carriedBatchRunsLieAPadApart() {
        int run = 2 * CarriedBatches.MAX_BATCH;
        for (int workers : new int[] {1, 2, 3, 16, 64}) {
            // element i of worker w's run (task and group references alternate)
            assertRunsApart("carried refs workers=" + workers, workers, run,
                    idx -> CarriedBatches.Layout.refsFirst(idx / run) + idx % run,
                    CarriedBatches.Layout.refsLength(workers));
        }
    }

    /**
     * Worker w's element k (in [0, run)) is at {@code slot(w * run + k)}: each worker's elements contiguous and
     * distinct, at least a PAD of empty elements before worker 0's (past the header), between two workers' and
     * after the last one's.
     */
    private static void assertRunsApart(String what, int workers, int run, IntUnaryOperator slot, int length) {
        Set<Integer> used = new HashSet<>();
        int previousLast = -1; // as if the header ended just before element 0
        for (int w = 0; w < workers; w++) {
            int first = slot.applyAsInt(w * run);
            int last = slot.applyAsInt(w * run + run - 1);
            assertEquals(run - 1, last - first, what + ": worker " + w + "'s run is contiguous");
            assertTrue((first - previousLast - 1) * REF >= CacheLine.PAD,
                    what + ": worker " + w + " starts a PAD after what precedes it (" + previousLast + " -> " + first + ")");
            for (int k = 0; k < run; k++) {
                assertTrue(used.add(slot.applyAsInt(w * run + k)), what + ": one element per slot");
            }
            previousLast = last;
        }
        assertTrue((length - previousLast - 1) * REF >= CacheLine.PAD, what + ": a PAD after the last run");
    }

    @Test
    void framesKeepTheirHalvesApartThroughTheGaps() {
        try (PoolMemory memory = PoolMemory.create()) {
            long before = memory.liveBytes();
            JoinDeques joins = new JoinDeques(memory, 3, 4);
            Runnable[] halves = new Runnable[12];
            for (int w = 0; w < 3; w++) {
                for (int d = 0; d < 4; d++) {
                    int idx = joins.frame(w, d);
                    assertTrue(joins.frameFree(idx));
                    halves[idx] = () -> { };
                    joins.offer(w, idx, halves[idx]);
                }
            }
            for (int idx = 0; idx < 12; idx++) {
                assertSame(halves[idx], joins.half(idx), "frame " + idx + " reads back its own half");
            }
            for (int w = 0; w < 3; w++) {
                for (int d = 3; d >= 0; d--) {
                    int idx = joins.frame(w, d);
                    assertTrue(joins.popBack(w, idx), "the owner takes its newest half back");
                    joins.clear(idx);
                    assertNull(joins.half(idx));
                    assertTrue(joins.frameFree(idx));
                }
            }
            joins.close(); // the deques go back; the words block is the arena's until it closes
            assertEquals(PoolMemory.countedSize(JoinDeques.Layout.wordsLength(12)), memory.liveBytes() - before,
                    "only the completion words are still counted");
        }
    }
}
