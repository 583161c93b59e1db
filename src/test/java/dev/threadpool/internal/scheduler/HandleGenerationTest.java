package dev.threadpool.internal.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.InvalidHandleException;
import dev.threadpool.PoolConfig;
import dev.threadpool.PoolStats;
import dev.threadpool.SchedulerVariant;
import dev.threadpool.TaskCancelledException;
import dev.threadpool.TaskFailedException;
import dev.threadpool.TestSupport;
import dev.threadpool.WaitGroup;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * White-box: handles and generations over a slot's whole life (issue 13, item 3). The table's test hook
 * sets a slot's generation as if it had been reused that often, so the wrap of the old 32-bit generation
 * and the end of a slot's generations are reached in a unit test.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class HandleGenerationTest {
    private static final long WAIT_NANOS = TestSupport.WAIT.toNanos();

    private static PoolCore onePoolOfTwoSlots() {
        return new PoolCore(PoolConfig.builder().schedulerVariant(SchedulerVariant.GLOBAL_QUEUE).maxThreads(1)
                .queueCapacity(2).recentErrorCapacity(4).daemon(true).build());
    }

    private static PoolStats quiescent(PoolCore core) {
        PoolStats[] last = new PoolStats[1];
        TestSupport.eventually("quiescent pool", () -> {
            PoolStats s = core.statsSnapshot();
            last[0] = s;
            return s.queuedTasks() == 0 && s.activeTasks() == 0 && s.taskDescLive() == 0;
        }, () -> String.valueOf(last[0]));
        TestSupport.assertQuiescentAccounting(last[0]);
        return last[0];
    }

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

    /**
     * Before the fix the generation was 32 bits: after 2^32 reuses of its slot an old handle equalled the new
     * task's and {@code cancel(old)} cancelled the new task (seen: both handles were 0x100000001).
     */
    @Test
    void aStaleHandleIsRefusedAfterItsSlotWasReused2To32Times() throws Exception {
        PoolCore core = onePoolOfTwoSlots();
        DescriptorTable table = core.tableForTest();
        CountDownLatch release = new CountDownLatch(1);
        try {
            block(core, release);
            long h = core.submitWaitable(() -> { }, 0);
            assertTrue(core.cancel(h));
            assertThrows(TaskCancelledException.class, () -> core.await(h, 0));
            int slot = table.slotOf(h);
            table.setGenerationForTest(slot, table.genOf(h) + (1L << 32) - 1);
            AtomicBoolean ran = new AtomicBoolean();
            long h2 = core.submitWaitable(() -> ran.set(true), 0); // the 2^32-th reuse of the slot
            assertEquals(slot, table.slotOf(h2));
            assertNotEquals(h, h2, "a new handle");
            InvalidHandleException e = assertThrows(InvalidHandleException.class, () -> core.cancel(h));
            assertTrue(e.getMessage().contains("has been reused"), e.getMessage());
            assertThrows(InvalidHandleException.class, () -> core.await(h, 0), "nor may it await the new task");
            release.countDown();
            assertTrue(core.await(h2, WAIT_NANOS), "the new task was not cancelled by the old handle");
            assertTrue(ran.get());
        } finally {
            release.countDown();
            core.close();
        }
    }

    @Test
    void aSlotIsRetiredWhenItsGenerationsAreUsedUpAndTheAccountingStaysExact() throws Exception {
        PoolCore core = onePoolOfTwoSlots();
        DescriptorTable table = core.tableForTest();
        try {
            long h = core.submitWaitable(() -> { }, 0);
            assertTrue(core.await(h, WAIT_NANOS));
            int slot = table.slotOf(h);
            PoolStats before = quiescent(core);
            table.setGenerationForTest(slot, table.maxGen() - 1);

            RuntimeException boom = new RuntimeException("the last generation");
            long last = core.submitWaitable(() -> { throw boom; }, 0);
            assertEquals(slot, table.slotOf(last));
            assertEquals(table.maxGen(), table.genOf(last), "the slot's last generation");
            TaskFailedException f = assertThrows(TaskFailedException.class, () -> core.await(last, WAIT_NANOS));
            assertEquals(boom, f.getCause());
            assertEquals(boom, assertThrows(TaskFailedException.class, () -> core.await(last, 0)).getCause(),
                    "its handle stays valid until the slot's next acquire");

            long next = core.submitWaitable(() -> { }, 0); // the next acquire retires the slot and takes the other
            assertNotEquals(slot, table.slotOf(next));
            assertTrue(core.await(next, WAIT_NANOS));
            InvalidHandleException stale = assertThrows(InvalidHandleException.class, () -> core.await(last, 0));
            assertTrue(stale.getMessage().contains("retired"), stale.getMessage());
            assertThrows(InvalidHandleException.class, () -> core.cancel(last));

            // the pool runs on with one descriptor: every path still works
            WaitGroup wg = new WaitGroup();
            AtomicInteger ran = new AtomicInteger();
            for (int i = 0; i < 100; i++) {
                core.submit(ran::incrementAndGet, 0, wg, WaitMode.UNBOUNDED, 0L);
            }
            assertTrue(wg.await(TestSupport.WAIT), "the detached tasks ran");
            assertEquals(100, ran.get());
            for (int i = 0; i < 10; i++) {
                long w = core.submitWaitable(() -> { }, 0);
                assertNotEquals(slot, table.slotOf(w), "the retired slot is never handed out again");
                assertTrue(core.await(w, WAIT_NANOS));
            }

            PoolStats after = quiescent(core);
            assertEquals(1, table.countRetired());
            assertEquals(1, table.countFree(), "2 descriptors: 1 retired, 1 free");
            assertEquals(0, after.taskDescLive(), "taskDescLive exact: " + after);
            assertEquals(before.liveBytes(), after.liveBytes(), "retirement frees or allocates nothing");
            assertEquals(before.totalAllocBytes(), after.totalAllocBytes());
        } finally {
            core.close();
        }
        PoolStats closed = core.statsSnapshot();
        assertEquals(0, closed.liveBytes(), "closed: " + closed);
    }

    @Test
    void invalidHandleMessagesNameTheRanges() throws Exception {
        PoolCore core = onePoolOfTwoSlots();
        DescriptorTable table = core.tableForTest();
        try {
            String range = "(a handle is gen << 1 | slot, with slot in [0, 2) and gen in [1, " + table.maxGen() + "])";
            for (long bad : new long[] {-1L, 0L, 1L, Long.MIN_VALUE, table.handle(0, table.maxGen() + 1)}) {
                InvalidHandleException e = assertThrows(InvalidHandleException.class, () -> core.await(bad, 0));
                assertEquals("not a task handle of this pool: handle=0x" + Long.toHexString(bad) + " " + range,
                        e.getMessage());
                assertThrows(InvalidHandleException.class, () -> core.cancel(bad));
            }
            long h = core.submitWaitable(() -> { }, 0);
            assertTrue(core.await(h, WAIT_NANOS));
            long future = table.handle(table.slotOf(h), table.genOf(h) + 5);
            InvalidHandleException notYet = assertThrows(InvalidHandleException.class, () -> core.await(future, 0));
            assertTrue(notYet.getMessage().startsWith("not a task handle of this pool"), notYet.getMessage());
            assertTrue(notYet.getMessage().contains("has not been issued"), notYet.getMessage());
            assertTrue(notYet.getMessage().contains("handle gen " + (table.genOf(h) + 5) + ", slot gen "
                    + table.genOf(h)), notYet.getMessage());
            core.await(core.submitWaitable(() -> { }, 0), WAIT_NANOS); // reuses h's slot
            InvalidHandleException reused = assertThrows(InvalidHandleException.class, () -> core.await(h, 0));
            assertTrue(reused.getMessage().startsWith("stale handle 0x" + Long.toHexString(h) + ": slot "
                    + table.slotOf(h) + " has been reused"), reused.getMessage());
        } finally {
            core.close();
        }
    }
}
