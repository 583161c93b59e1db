package dev.threadpool.internal.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.PoolConfig;
import dev.threadpool.TestSupport;
import dev.threadpool.TestSupport.PoolVariant;
import dev.threadpool.internal.memory.PoolMemory;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * White-box, join frames (JoinDeques, "Frames"). An inner join that left its half on the deque (an Error thrown between its offer and its
 * pop-back) does not lose the half: the enclosing join's pop-back takes it first, runs it exactly once and
 * frees its frame, then pops its own half as usual. One worker, so no thief takes either.
 */
class JoinAbandonedHalfTest {

    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.threadpool.TestSupport#oneWorkerVariants")
    @Timeout(60)
    void anAbandonedInnerHalfRunsOnceAndTheOuterJoinCompletes(PoolVariant v) throws Exception {
        PoolConfig config = v.builder().maxThreads(1).queueCapacity(1024).build();
        PoolCore core = new PoolCore(config);
        try {
            AtomicInteger abandoned = new AtomicInteger();
            AtomicInteger right = new AtomicInteger();
            AtomicInteger order = new AtomicInteger();
            long h = core.submitWaitable(() -> {
                WorkerThread self = (WorkerThread) Thread.currentThread();
                Joining j = core.joiningForTest();
                try {
                    core.join(() -> {
                        // what an inner join leaves when an Error escapes between its offer and its pop-back
                        // (its frame is the next one up; its joinDepth is restored by its finally)
                        int idx = j.joinsForTest().frame(self.index, self.joinDepth);
                        j.joinsForTest().offer(self.index, idx, () -> {
                            abandoned.incrementAndGet();
                            order.compareAndSet(0, 1);
                        });
                    }, () -> {
                        right.incrementAndGet();
                        order.compareAndSet(1, 2);
                    });
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
            }, 0);
            assertTrue(core.await(h, TestSupport.WAIT.toNanos()));
            assertEquals(1, abandoned.get(), "the abandoned half ran exactly once");
            assertEquals(1, right.get(), "the outer join's own half ran exactly once");
            assertEquals(2, order.get(), "the abandoned half (newer) before the outer half");
            assertEquals(0, core.joiningForTest().joinsForTest().size(0), "nothing left on the deque");
        } finally {
            core.close();
        }
    }

    /**
     * A join that reaches the depth of an abandoned half while the half still holds its frame (on the deque, or
     * run by a thief) must not offer the frame twice: it runs both halves inline. Once the enclosing join's
     * pop-back ran the abandoned half, the frame is free again and the next join at that depth offers as usual.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.threadpool.TestSupport#oneWorkerVariants")
    @Timeout(60)
    void aJoinAtTheDepthOfAnAbandonedHalfRunsInlineAndTheFrameIsFreedAfter(PoolVariant v) throws Exception {
        PoolConfig config = v.builder().maxThreads(1).queueCapacity(1024).build();
        PoolCore core = new PoolCore(config);
        try {
            AtomicInteger abandoned = new AtomicInteger();
            AtomicInteger inner = new AtomicInteger();
            AtomicInteger right = new AtomicInteger();
            int[] frame = {-1};
            boolean[] heldDuringInner = new boolean[1];
            boolean[] freeAfter = new boolean[1];
            long h = core.submitWaitable(() -> {
                WorkerThread self = (WorkerThread) Thread.currentThread();
                JoinDeques joins = core.joiningForTest().joinsForTest();
                try {
                    core.join(() -> {
                        int idx = joins.frame(self.index, self.joinDepth);
                        frame[0] = idx;
                        joins.offer(self.index, idx, abandoned::incrementAndGet); // left on the deque
                        try {
                            // same depth, frame held: both halves inline, nothing pushed over the abandoned half
                            core.join(inner::incrementAndGet, () -> {
                                heldDuringInner[0] = !joins.frameFree(idx) && joins.size(self.index) == 2;
                                inner.incrementAndGet();
                            });
                        } catch (InterruptedException e) {
                            throw new AssertionError(e);
                        }
                    }, right::incrementAndGet);
                    freeAfter[0] = joins.frameFree(frame[0]);
                    core.join(inner::incrementAndGet, inner::incrementAndGet); // depth 0 again, frame free
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
            }, 0);
            assertTrue(core.await(h, TestSupport.WAIT.toNanos()));
            assertEquals(1, abandoned.get(), "the abandoned half ran exactly once");
            assertEquals(4, inner.get(), "both inner joins ran both halves once");
            assertEquals(1, right.get(), "the outer join's own half ran exactly once");
            assertTrue(heldDuringInner[0], "the frame was held (ours and the outer half on the deque, nothing more)");
            assertTrue(freeAfter[0], "the enclosing pop-back freed the abandoned frame");
            assertEquals(0, core.joiningForTest().joinsForTest().size(0), "nothing left on the deque");
        } finally {
            core.close();
        }
    }

    /**
     * An abandoned half that a thief stole holds its frame until the thief is done: tryReclaim refuses while the
     * word is STOLEN and frees the frame (word OFFERED, failure dropped) once it is DONE.
     */
    @Test
    void aStolenAbandonedFrameIsReclaimedOnlyAfterItsThiefIsDone() {
        PoolMemory memory = PoolMemory.createGcManaged();
        JoinDeques joins = new JoinDeques(memory, 2, 4);
        int idx = joins.frame(1, 1);
        assertEquals(5, idx, "frame(w, d) = w * framesPerWorker + d");
        assertTrue(joins.frameFree(idx));
        joins.offer(1, idx, () -> { });
        assertFalse(joins.frameFree(idx));
        assertFalse(joins.tryReclaim(idx), "still on the deque: not reclaimable");
        assertEquals(idx, joins.steal(1));
        joins.markStolen(idx, 0);
        assertFalse(joins.tryReclaim(idx), "its thief runs it: not reclaimable");
        joins.complete(idx, 1, new RuntimeException("nobody to report to"));
        assertTrue(joins.tryReclaim(idx), "DONE: reclaimed");
        assertTrue(joins.frameFree(idx));
        assertEquals(JoinDeques.OFFERED, joins.word(idx));
        assertNull(joins.finishStolen(idx), "the failure was dropped with the reclaim");
        assertThrows(IllegalArgumentException.class, () -> new JoinDeques(memory, 1, 3), "not a power of two");
        assertThrows(IllegalArgumentException.class, () -> new JoinDeques(memory, 1, JoinDeques.MAX_FRAMES * 2));
        joins.close();
    }
}
