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
    void theCountersTakeALineEachOfTheirOwn() {
        PoolMemory.BlockInfo b = mem.memoryMap().getLast();
        assertEquals("wake coalescer", b.purpose());
        assertEquals(WakeCoalescer.Layout.LENGTH, b.usableBytes());
        assertEquals(dev.threadpool.internal.memory.CacheLine.PAD * (1L + WakeCoalescer.Layout.STRIPES),
                b.usableBytes(), "SEARCHING, then one line per coalesced-submit stripe");
        assertTrue(WakeCoalescer.Layout.STRIPES >= 4 && Integer.bitCount(WakeCoalescer.Layout.STRIPES) == 1);
    }

    /**
     * A worker a submit wakes counts as searching from the wake (ParkingLot, "A woken worker is searching from
     * its wake"): the next submits coalesce on it, not wake a second worker, until it ends that search when it
     * runs (its retract finds the bit cleared).
     */
    @Test
    void aWokenWorkerCountsAsSearchingUntilItRuns() {
        lot.announce(1);
        lot.announce(2);
        assertTrue(wake.signalWork(), "nobody searching: wake one");
        int woken = (lot.idleMask() & 0b10) == 0 ? 1 : 2;
        assertEquals(1, wake.searchers(), "the woken worker is counted as searching");
        for (int k = 1; k < BATCH; k++) {
            assertFalse(wake.signalWork(), "submit " + k + " coalesced on the woken worker");
        }
        assertEquals(1, Long.bitCount(lot.idleMask()), "the other worker still parked");
        // the woken worker runs: its bit was cleared by the waker, so it ends the counted search
        assertFalse(lot.retract(woken), "a waker cleared the bit");
        wake.endSearch();
        assertEquals(0, wake.searchers());
        assertTrue(wake.signalWork(), "nobody searching again: the next submit wakes the other worker");
        assertEquals(0, lot.idleMask());
        assertEquals(1, wake.searchers());
    }

    /** Every kind of wake counts what it woke: the pass-on, the chained wake, a wake of a subset, wakeAll. */
    @Test
    void everyWakeCountsTheWorkersItWoke() {
        lot.announce(0);
        lot.announce(1);
        lot.announce(2);
        lot.announce(3);
        assertTrue(wake.passOn(w -> true, 0));
        assertEquals(1, wake.searchers(), "the pass-on's wake");
        wake.wakeOneIfIdle();
        assertEquals(2, wake.searchers(), "the chained wake");
        long left = lot.idleMask();
        assertEquals(2, Long.bitCount(left));
        int one = lot.wakeOneOf(left & -left);
        assertEquals(Long.numberOfTrailingZeros(left), one);
        assertEquals(3, wake.searchers(), "a wake of an eligible subset");
        lot.wakeAll();
        assertEquals(4, wake.searchers(), "wakeAll counts the one bit it cleared, not every worker");
        lot.wakeAll();
        assertEquals(4, wake.searchers(), "nothing left to clear: nothing counted");
        assertEquals(-1, lot.wakeOne(), "nobody parked");
        assertEquals(4, wake.searchers());
    }

    /** A thread's coalesced submits count on its own stripe: two threads' counts do not share a line. */
    @Test
    void coalescedSubmitsCountOnTheSubmittingThreadsStripe() throws Exception {
        lot.announce(1);
        lot.announce(2);
        wake.beginSearch();
        for (int k = 1; k < BATCH; k++) {
            assertFalse(wake.signalWork(), "this thread's submit " + k);
        }
        // another thread hashed to another stripe starts its own count
        long me = Thread.currentThread().threadId() & (WakeCoalescer.Layout.STRIPES - 1);
        boolean[] woke = new boolean[BATCH];
        Thread other = null;
        for (int attempt = 0; attempt < 64; attempt++) {
            Thread t = new Thread(() -> {
                for (int k = 0; k < BATCH; k++) {
                    woke[k] = wake.signalWork();
                }
            });
            if ((t.threadId() & (WakeCoalescer.Layout.STRIPES - 1)) != me) {
                other = t;
                break;
            }
        }
        assertTrue(other != null, "a thread on another stripe");
        other.start();
        other.join(TimeUnit.SECONDS.toMillis(10));
        assertFalse(other.isAlive());
        for (int k = 0; k < BATCH - 1; k++) {
            assertFalse(woke[k], "the other thread's submit " + (k + 1) + " coalesced");
        }
        assertTrue(woke[BATCH - 1], "the other thread's own " + BATCH + "-th coalesced submit wakes");
        assertTrue(wake.signalWork(), "and this thread's " + BATCH + "-th wakes on its own count");
        assertEquals(0, lot.idleMask());
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
