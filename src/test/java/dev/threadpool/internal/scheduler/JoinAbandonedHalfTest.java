package dev.threadpool.internal.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.PoolConfig;
import dev.threadpool.TestSupport;
import dev.threadpool.TestSupport.PoolVariant;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * White-box: an inner join that left its half on the deque (an Error thrown between its offer and its
 * pop-back) does not lose the half: the enclosing join's pop-back takes it first, runs it exactly once and
 * gives its slot back, then pops its own half as usual. One worker, so no thief takes either.
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
                        int idx = j.slotsForTest().acquireJoinSlot(self);
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
}
