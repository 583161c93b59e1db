package dev.threadpool.internal.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.PoolConfig;
import dev.threadpool.QueueKind;
import dev.threadpool.SchedulerVariant;
import dev.threadpool.internal.memory.PoolMemory;
import java.lang.reflect.Field;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@link WorkSummary}: the owner-only bits, the rotated pick, and what the pool does with them (issue 48): an
 * idle pool's summary is empty, a stale bit does not keep idle workers from parking, and a child left in the LIFO
 * slot of a worker that then blocks is still found by the others through its HELD bit.
 */
class WorkSummaryTest {
    private static final long WAIT_NANOS = TimeUnit.SECONDS.toNanos(30);
    private final PoolMemory mem = PoolMemory.create();

    @AfterEach
    void closeMemory() {
        mem.close();
    }

    @Test
    void anOwnersMarkAndClearChangeOnlyItsOwnBit() {
        WorkSummary s = new WorkSummary(mem, 64);
        s.mark(WorkSummary.HELD, 3);
        s.mark(WorkSummary.HELD, 63);
        s.mark(WorkSummary.HELD, 3); // already set: no change
        assertEquals((1L << 3) | (1L << 63), s.mask(WorkSummary.HELD));
        assertEquals(0, s.mask(WorkSummary.NONEMPTY), "words are independent");
        assertEquals(0, s.mask(WorkSummary.JOINS));
        s.clear(WorkSummary.HELD, 3);
        s.clear(WorkSummary.HELD, 3); // already clear: no change
        assertEquals(1L << 63, s.mask(WorkSummary.HELD));
        assertTrue(s.isMarked(WorkSummary.HELD, 63));
        assertFalse(s.isMarked(WorkSummary.HELD, 3));
    }

    @Test
    void theSummaryIsOneLineOfItsOwnAndRefusesMoreWorkersThanBits() {
        new WorkSummary(mem, 1);
        PoolMemory.BlockInfo b = mem.memoryMap().getLast();
        assertEquals("workers_nonempty", b.purpose());
        assertEquals(WorkSummary.Layout.LENGTH, b.usableBytes());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new WorkSummary(mem, 65));
        assertTrue(e.getMessage().contains("workers must be in [1, 64]"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new WorkSummary(mem, 0));
    }

    @Test
    void pickFindsTheFirstSetBitAtOrAfterTheStartWrapping() {
        long m = (1L << 2) | (1L << 40);
        assertEquals(2, WorkSummary.pick(m, 0));
        assertEquals(2, WorkSummary.pick(m, 2));
        assertEquals(40, WorkSummary.pick(m, 3));
        assertEquals(2, WorkSummary.pick(m, 41), "wraps past bit 63");
        assertEquals(40, WorkSummary.pick(m, 40 + 64), "the start is taken modulo 64");
        assertEquals(-1, WorkSummary.pick(0, 5));
        assertEquals(63, WorkSummary.pick(1L << 63, 63));
    }

    // ---- in a pool ----------------------------------------------------------------------------------------

    private static PoolCore pool(SchedulerVariant v, QueueKind kind, int workers) {
        return new PoolCore(PoolConfig.builder().maxThreads(workers).schedulerVariant(v).queueKind(kind).build());
    }

    private static ParkingLot parking(PoolCore core) throws ReflectiveOperationException {
        Field f = PoolCore.class.getDeclaredField("parking");
        f.setAccessible(true);
        return (ParkingLot) f.get(core);
    }

    private static void submit(PoolCore core, Runnable r) {
        core.submit(r, 0, null, WaitMode.UNBOUNDED, Long.MAX_VALUE);
    }

    /** Waits, bounded, until at least {@code n} workers have announced themselves idle; returns the mask. */
    private static long awaitIdle(ParkingLot parking, int n, String what) {
        long deadline = System.nanoTime() + WAIT_NANOS;
        long m;
        while (Long.bitCount(m = parking.idleMask()) < n) {
            assertTrue(System.nanoTime() - deadline < 0, what + ": idle mask " + Long.toHexString(m));
            Thread.yield();
        }
        return m;
    }

    private static void await(CountDownLatch l, String what) throws InterruptedException {
        assertTrue(l.await(WAIT_NANOS, TimeUnit.NANOSECONDS), what);
    }

    @ParameterizedTest
    @CsvSource({"WORK_STEALING, RING, 4", "WORK_STEALING, CHASE_LEV, 4", "LANE_EXTENSION, RING, 4",
            "GLOBAL_QUEUE, RING, 4", "WORK_STEALING, RING, 64"})
    void anIdlePoolHasAnEmptySummaryAfterChainsOfOwnSubmitsAndJoins(SchedulerVariant v, QueueKind kind, int workers)
            throws Exception {
        PoolCore core = pool(v, kind, workers);
        try {
            ParkingLot parking = parking(core);
            CountDownLatch done = new CountDownLatch(workers);
            AtomicInteger ran = new AtomicInteger();
            for (int t = 0; t < workers; t++) {
                submit(core, () -> chain(core, 50, ran, done)); // each a chain of 50 own submits, then a join
            }
            await(done, "every chain ran");
            awaitIdle(parking, workers, "every worker parked");
            // every worker ran dry before it parked, so no HELD or JOINS bit is left; no local queue holds anything
            WorkSummary s = parking.work();
            assertEquals(0, s.mask(WorkSummary.HELD), "HELD after every worker ran dry");
            assertEquals(0, s.mask(WorkSummary.JOINS), "JOINS after every worker ran dry");
            assertEquals(0, s.mask(WorkSummary.NONEMPTY), "NONEMPTY with every queue empty");
            assertEquals(workers * 51, ran.get());
        } finally {
            core.close();
        }
    }

    private static void chain(PoolCore core, int left, AtomicInteger ran, CountDownLatch done) {
        ran.incrementAndGet();
        if (left == 0) {
            try {
                core.join(() -> { }, () -> { }); // offers a half on a worker: JOINS set until it runs dry
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return; // done stays open: the test fails on its bounded wait
            }
            done.countDown();
            return;
        }
        submit(core, () -> chain(core, left - 1, ran, done)); // into this worker's LIFO slot: HELD
    }

    @ParameterizedTest
    @CsvSource({"WORK_STEALING, RING", "WORK_STEALING, CHASE_LEV", "LANE_EXTENSION, RING"})
    void aStaleBitDoesNotKeepIdleWorkersFromParking(SchedulerVariant v, QueueKind kind) throws Exception {
        int workers = 4;
        PoolCore core = pool(v, kind, workers);
        CountDownLatch release = new CountDownLatch(1);
        try {
            ParkingLot parking = parking(core);
            awaitIdle(parking, workers, "the pool parked after its start");
            CountDownLatch blocked = new CountDownLatch(1);
            AtomicInteger owner = new AtomicInteger(-1);
            // a task submits a child into its own LIFO slot (HELD) and returns; its worker takes the child and
            // blocks in it: HELD stays set with nothing to take (a thief may take the child instead: then the
            // thief blocks and the owner runs dry, and the test looks at whichever worker holds the bit)
            submit(core, () -> {
                owner.set(((WorkerThread) Thread.currentThread()).index);
                submit(core, () -> {
                    blocked.countDown();
                    try {
                        release.await(WAIT_NANOS, TimeUnit.NANOSECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
            });
            await(blocked, "the child blocked");
            long idle = awaitIdle(parking, workers - 1, "the other workers parked beside a stale bit");
            long held = parking.work().mask(WorkSummary.HELD);
            assertEquals(workers - 1, Long.bitCount(idle), "exactly the blocked worker is not idle");
            assertEquals(0, held & idle, "an idle worker holds no HELD bit (it ran dry first)");
            // the park re-check of an idle worker says no work, whatever stale bit is set
            int looker = Long.numberOfTrailingZeros(idle);
            Scheduler s = core.schedulerForTest();
            assertFalse(s.hasWork(looker), "no work: the stale bit's worker holds nothing");
            assertFalse(s.lookForWork(looker), "no work in a bounded look either");
        } finally {
            release.countDown();
            core.close();
        }
    }

    @ParameterizedTest
    @CsvSource({"WORK_STEALING, RING, 2", "WORK_STEALING, CHASE_LEV, 2", "LANE_EXTENSION, RING, 2",
            "WORK_STEALING, RING, 64", "LANE_EXTENSION, RING, 64"})
    void aChildLeftInTheSlotOfAWorkerThatBlocksIsRunByAnother(SchedulerVariant v, QueueKind kind, int workers)
            throws Exception {
        PoolCore core = pool(v, kind, workers);
        try {
            for (int round = 0; round < 20; round++) {
                CountDownLatch childRan = new CountDownLatch(1);
                CountDownLatch parentDone = new CountDownLatch(1);
                submit(core, () -> {
                    submit(core, childRan::countDown); // into this worker's LIFO slot, HELD marked
                    try {
                        // blocks until the child runs: only another worker, which finds it through HELD, can
                        if (!childRan.await(WAIT_NANOS, TimeUnit.NANOSECONDS)) {
                            return; // parentDone stays open: the test fails below with its message
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return;
                    }
                    parentDone.countDown();
                });
                await(parentDone, "round " + round + ": the child left in the blocked worker's LIFO slot ran");
            }
        } finally {
            core.close();
        }
    }
}
