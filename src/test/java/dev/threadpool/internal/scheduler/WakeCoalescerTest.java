package dev.threadpool.internal.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.internal.memory.PoolMemory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link WakeCoalescer}'s rule as its javadoc states it, on a real {@link ParkingLot}: a submit wakes a parked
 * worker when nobody searches; while somebody searches it wakes only every {@code wakeCoalesceBatch}-th such
 * submit (counting only submits that found a worker parked and one searching); the pass-on wakes one parked
 * worker iff a published entry is left, and looks for one only while a worker is parked; the chained wake
 * ({@code wakeOneIfIdle}) wakes regardless of searchers. "Parked" is an announced bit (announced slots with
 * no thread: the unpark is a no-op and the idle mask says who was woken), plus one real parked thread.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class WakeCoalescerTest {
    private static final int BATCH = 4;

    private final PoolMemory mem = PoolMemory.create();
    private final ParkingLot lot = new ParkingLot(mem, 4);
    private final WakeCoalescer wake = new WakeCoalescer(mem, lot, BATCH);

    @AfterEach
    void close() {
        mem.close();
        assertEquals(0, mem.liveBytes(), "every block freed with the memory");
    }

    @Test
    void theCountersTakeTwoLinesOfTheirOwn() {
        PoolMemory.BlockInfo b = mem.memoryMap().getLast();
        assertEquals("wake coalescer", b.purpose());
        assertEquals(WakeCoalescer.Layout.LENGTH, b.usableBytes());
    }

    @Test
    void nobodyParkedMeansNoWake() {
        assertFalse(wake.signalWork());
        wake.beginSearch();
        assertFalse(wake.signalWork());
        assertEquals(0, lot.idleMask());
    }

    @Test
    void nobodySearchingWakesAtOnce() {
        lot.announce(2);
        assertTrue(wake.signalWork(), "a parked worker and no searcher: wake it");
        assertEquals(0, lot.idleMask(), "worker 2 was woken");
        assertFalse(wake.signalWork(), "nobody parked any more");
    }

    @Test
    void whileSomebodySearchesEveryBatchThSubmitWakes() {
        lot.announce(1);
        lot.announce(2);
        wake.beginSearch();
        for (int k = 1; k < BATCH; k++) {
            assertFalse(wake.signalWork(), "submit " + k + " coalesced on the searcher");
            assertEquals(0b110, lot.idleMask());
        }
        assertTrue(wake.signalWork(), "submit " + BATCH + " wakes anyway");
        assertEquals(1, Long.bitCount(lot.idleMask()), "exactly one woken");
        for (int k = 1; k < BATCH; k++) {
            assertFalse(wake.signalWork(), "the count starts again: submit " + k);
        }
        assertTrue(wake.signalWork());
        assertEquals(0, lot.idleMask());
    }

    /** Submits that found nobody parked, or nobody searching, are not counted towards the batch. */
    @Test
    void onlySubmitsThatFindBothAParkedAndASearchingWorkerCount() {
        wake.beginSearch();
        for (int k = 0; k < 2 * BATCH; k++) {
            assertFalse(wake.signalWork(), "nobody parked");
        }
        wake.endSearch();
        lot.announce(0);
        assertTrue(wake.signalWork(), "nobody searching: woken, not counted");
        lot.announce(0);
        wake.beginSearch();
        for (int k = 1; k < BATCH; k++) {
            assertFalse(wake.signalWork(), "submit " + k + " of a fresh count");
        }
        assertTrue(wake.signalWork());
    }

    @Test
    void theEndOfTheSearchEndsTheCoalescing() {
        lot.announce(3);
        wake.beginSearch();
        wake.beginSearch();
        assertFalse(wake.signalWork());
        wake.endSearch();
        assertFalse(wake.signalWork(), "one of two searchers left: still coalesced");
        wake.endSearch();
        assertTrue(wake.signalWork(), "nobody searches: the next submit wakes");
        assertEquals(0, lot.idleMask());
    }

    @Test
    void aBatchOfOneNeverCoalesces() {
        WakeCoalescer every = new WakeCoalescer(mem, lot, 1);
        every.beginSearch();
        lot.announce(0);
        lot.announce(1);
        assertTrue(every.signalWork());
        assertTrue(every.signalWork());
        assertFalse(every.signalWork(), "nobody parked any more");
    }

    @Test
    void passOnWakesOneParkedWorkerIffWorkIsLeft() {
        AtomicInteger looks = new AtomicInteger();
        AtomicInteger lookedFor = new AtomicInteger(-1);
        assertFalse(wake.passOn(w -> { looks.incrementAndGet(); return true; }, 0), "nobody parked");
        assertEquals(0, looks.get(), "with nobody parked the queues are not even looked at");

        lot.announce(1);
        lot.announce(2);
        assertFalse(wake.passOn(w -> { lookedFor.set(w); return false; }, 3), "nothing left: no wake");
        assertEquals(3, lookedFor.get(), "the look is for the passing worker");
        assertEquals(0b110, lot.idleMask());

        wake.beginSearch(); // a searcher does not stop the pass-on: it is not coalesced
        assertTrue(wake.passOn(w -> true, 0), "work left and a worker parked: wake one");
        assertEquals(1, Long.bitCount(lot.idleMask()), "exactly one of the two woken");
    }

    @Test
    void wakeOneIfIdleWakesWhetherOrNotSomebodySearches() {
        wake.wakeOneIfIdle();
        assertEquals(0, lot.idleMask(), "nobody parked: nothing to do");
        lot.announce(0);
        lot.announce(1);
        wake.beginSearch();
        wake.wakeOneIfIdle();
        assertEquals(1, Long.bitCount(lot.idleMask()), "one woken although a worker searches");
    }

    /** A real thread parked in the lot is unparked by a submit's signalWork (bounded wait). */
    @Test
    void signalWorkUnparksAParkedThread() throws Exception {
        Thread t = new Thread(() -> {
            lot.announce(1);
            while ((lot.idleMask() & 0b10) != 0) { // a spurious return parks again
                lot.park();
            }
        }, "parked worker");
        t.setDaemon(true);
        lot.register(1, t);
        t.start();
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (lot.idleMask() != 0b10 || t.getState() != Thread.State.WAITING) {
                assertTrue(System.nanoTime() - deadline < 0, "the thread did not park within 10 s");
                LockSupport.parkNanos(100_000L);
            }
            assertTrue(wake.signalWork());
            t.join(TimeUnit.SECONDS.toMillis(10));
            assertFalse(t.isAlive(), "still parked 10 s after the wake");
        } finally {
            t.interrupt();
            t.join(TimeUnit.SECONDS.toMillis(10));
        }
    }
}
