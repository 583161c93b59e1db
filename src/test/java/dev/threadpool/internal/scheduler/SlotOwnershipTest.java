package dev.threadpool.internal.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.PoolConfig;
import dev.threadpool.PoolStats;
import dev.threadpool.SchedulerVariant;
import dev.threadpool.ShutdownMode;
import dev.threadpool.TaskCancelledException;
import dev.threadpool.TestSupport;
import dev.threadpool.TimestampMode;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * White-box, deterministic: who may write a slot's references, and who decides what happens to the slot,
 * once a CANCELLED CAS has been won (issue 13, items 1 and 2). The pool's hook runs on the cancelling thread
 * right after its CAS and plays the interleaving that the real race needs a preemption for: the awaiter
 * releases the slot and the next submitter takes it before the canceller goes on.
 *
 * <p>The rule both tests check: a thread writes nothing of a slot after it has given up ownership of it; a
 * cancelled waitable is owned by the awaiter that releases it, which clears the task reference before the
 * release. One worker, two descriptors: a blocker holds the worker and one slot, so the slot under test is
 * the only other one and the freelist hands it straight back.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SlotOwnershipTest {
    private static final long WAIT_NANOS = TestSupport.WAIT.toNanos();

    /** TimestampMode.FULL: every task takes a descriptor (no carried tasks), which is what these tests are about. */
    private static PoolCore onePoolOfTwoSlots() {
        return new PoolCore(PoolConfig.builder().schedulerVariant(SchedulerVariant.GLOBAL_QUEUE).maxThreads(1)
                .queueCapacity(2).recentErrorCapacity(4).timestampMode(TimestampMode.FULL).daemon(true).build());
    }

    /** Occupies the only worker (and one slot) until {@code release} opens. */
    private static void block(PoolCore core, CountDownLatch release) throws InterruptedException {
        CountDownLatch started = new CountDownLatch(1);
        core.submit(() -> {
            started.countDown();
            try {
                release.await(TestSupport.WAIT.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, 0, null, WaitMode.UNBOUNDED, 0L);
        assertTrue(started.await(TestSupport.WAIT.toMillis(), TimeUnit.MILLISECONDS), "blocker started");
    }

    private static int slotOf(PoolCore core, long handle) {
        return core.tableForTest().slotOf(handle);
    }

    @Test
    void cancelWritesNothingOfTheSlotAfterItsCasSoTheNextTaskInTheReusedSlotRuns() throws Exception {
        PoolCore core = onePoolOfTwoSlots();
        CountDownLatch release = new CountDownLatch(1);
        try {
            block(core, release);
            long h1 = core.submitWaitable(() -> { }, 0);
            AtomicBoolean secondRan = new AtomicBoolean();
            long[] h2 = {-1L};
            core.cancelledHookForTest(idx -> {
                // The canceller has just won QUEUED -> CANCELLED. The awaiter sees CANCELLED and releases the
                // slot; the next submit takes it (LIFO) and writes its task reference.
                assertThrows(TaskCancelledException.class, () -> core.await(h1, 0));
                h2[0] = core.submitWaitable(() -> secondRan.set(true), 0);
            });
            assertTrue(core.cancel(h1), "the task was still queued");
            core.cancelledHookForTest(null);
            assertEquals(slotOf(core, h1), slotOf(core, h2[0]), "the second task reused the cancelled one's slot");
            release.countDown();
            // Before the fix: TaskFailedException caused by NullPointerException ("because task is null"): the
            // canceller's late tasks[idx] = null had wiped the second task.
            assertTrue(core.await(h2[0], WAIT_NANOS), "the second task completed");
            assertTrue(secondRan.get(), "and it really ran");
        } finally {
            core.cancelledHookForTest(null);
            release.countDown();
            core.close();
        }
        PoolStats s = core.statsSnapshot();
        assertEquals(0, s.failed(), "nothing failed: " + s);
        assertEquals(0, s.taskDescLive(), "every descriptor came back: " + s);
    }

    @Test
    void theSweepDecidesFromTheWordItsCasReplacedNotFromALaterReadOfTheSlot() throws Exception {
        PoolCore core = onePoolOfTwoSlots();
        DescriptorTable table = core.tableForTest();
        CountDownLatch release = new CountDownLatch(1);
        try {
            block(core, release);
            long h1 = core.submitWaitable(() -> { }, 0);
            int slot = slotOf(core, h1);
            int[] grabbed = {-1};
            core.cancelledHookForTest(idx -> {
                // The CANCEL_PENDING sweep has just cancelled the waitable h1. Its awaiter releases the slot,
                // and a submitter reserves it: acquire() comes before the admission check, so this happens
                // even though admission is closed (that submitter is then refused and unreserves).
                assertThrows(TaskCancelledException.class, () -> core.await(h1, 0));
                grabbed[0] = table.acquire();
            });
            core.cancelQueuedNow();
            core.cancelledHookForTest(null);
            assertEquals(slot, grabbed[0], "the submitter got the swept slot");
            // Before the fix the sweep re-read the control word, saw the new owner's (RESERVED, not waitable)
            // word, took the slot for a cancelled detached task and freed it under its new owner.
            assertEquals(DescriptorTable.RESERVED, DescriptorTable.state(table.ctlAcquire(slot)),
                    "the sweep left the slot to its new owner");
            table.unreserve(slot); // the refused submitter gives it back, once
            int first = table.acquire();
            int second = table.acquire();
            assertEquals(slot, first, "the slot is free once");
            assertEquals(-1, second, "and on the freelist once (the other slot still runs the blocker)");
            table.unreserve(first);
            release.countDown();
            assertTrue(core.shutdown(ShutdownMode.DRAIN, WAIT_NANOS), "shut down");
            PoolStats s = core.statsSnapshot();
            assertEquals(0, s.taskDescLive(), "taskDescLive exact: " + s);
            assertEquals(1, s.cancelled(), "the sweep cancelled h1 once: " + s);
        } finally {
            core.cancelledHookForTest(null);
            release.countDown();
            core.close();
        }
    }
}
