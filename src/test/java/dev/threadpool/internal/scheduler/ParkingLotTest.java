package dev.threadpool.internal.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.stats.WorkerTimes;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What {@link ParkingLot}'s javadoc promises: the idle mask records announcements; a waker claims one announced
 * bit with its RMW and wakes exactly that worker (one waker per bit, also under a race), starting from a
 * rotating hint; {@code wakeOneOf} wakes only inside its mask, lowest index first; {@code retract} tells
 * whether a waker came first; {@code wakeAll} wakes every registered thread; a parked thread is really unparked,
 * and a wake that comes before the park is not lost (the permit). Every wait is bounded.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ParkingLotTest {
    /** How long a thread may take to return from park after its wake, before the test calls it lost. */
    private static final long WAKE_BOUND_SECONDS = 10;

    private final PoolMemory mem = PoolMemory.create();
    private final List<Thread> started = new ArrayList<>();

    @AfterEach
    void close() throws InterruptedException {
        for (Thread t : started) {
            t.interrupt(); // a thread still parked after a failed assertion: park returns on interrupt
            t.join(TimeUnit.SECONDS.toMillis(WAKE_BOUND_SECONDS));
        }
        mem.close();
        assertEquals(0, mem.liveBytes(), "every block freed with the memory");
    }

    private Thread start(String name, Runnable body) {
        Thread t = new Thread(body, name);
        t.setDaemon(true);
        started.add(t);
        t.start();
        return t;
    }

    private static void within(String what, BooleanSupplier cond) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAKE_BOUND_SECONDS);
        while (!cond.getAsBoolean()) {
            assertTrue(System.nanoTime() - deadline < 0, "not within " + WAKE_BOUND_SECONDS + " s: " + what);
            LockSupport.parkNanos(100_000L);
        }
    }

    private static void joined(Thread t, String what) throws InterruptedException {
        t.join(TimeUnit.SECONDS.toMillis(WAKE_BOUND_SECONDS));
        assertFalse(t.isAlive(), what + ": still parked after " + WAKE_BOUND_SECONDS + " s (the wake was lost)");
    }

    @Test
    void theIdleMaskIsOneLineOfItsOwn() {
        new ParkingLot(mem, 4);
        PoolMemory.BlockInfo b = mem.memoryMap().stream().filter(i -> i.purpose().equals("idle mask")).findFirst()
                .orElseThrow();
        assertEquals(ParkingLot.Layout.LENGTH, b.usableBytes());
        assertTrue(ParkingLot.Layout.WAKE_HINT_OFFSET + Long.BYTES <= ParkingLot.Layout.LENGTH);
        // its other half, the summary of where work is (WorkSummary), is a line of its own too
        PoolMemory.BlockInfo summary = mem.memoryMap().getLast();
        assertEquals("workers_nonempty", summary.purpose());
        assertEquals(WorkSummary.Layout.LENGTH, summary.usableBytes());
        assertTrue(WorkSummary.Layout.JOINS_OFFSET + Long.BYTES <= WorkSummary.Layout.LENGTH);
    }

    @Test
    void announceAndRetractSetAndClearTheWorkersBit() {
        ParkingLot lot = new ParkingLot(mem, 4);
        assertEquals(0, lot.idleMask());
        lot.announce(2);
        lot.announce(0);
        assertEquals(0b0101, lot.idleMask());
        assertTrue(lot.retract(2), "nobody woke worker 2: its bit was still set");
        assertEquals(0b0001, lot.idleMask());
        assertFalse(lot.retract(2), "a second retract finds the bit clear");
        lot.announce(0); // announcing twice is one bit
        assertEquals(0b0001, lot.idleMask());
    }

    @Test
    void wakeOneClaimsTheBitOnceAndReturnsMinusOneWhenNobodyIsIdle() {
        ParkingLot lot = new ParkingLot(mem, 4);
        assertEquals(-1, lot.wakeOne(), "nobody announced");
        lot.announce(3);
        assertEquals(3, lot.wakeOne());
        assertEquals(0, lot.idleMask(), "the waker cleared the bit it woke with");
        assertEquals(-1, lot.wakeOne(), "nobody idle any more: no second wake for the same announcement");
    }

    @Test
    void retractReturnsFalseAfterAWakerClaimedTheBit() {
        ParkingLot lot = new ParkingLot(mem, 2);
        lot.announce(1);
        assertEquals(1, lot.wakeOne());
        assertFalse(lot.retract(1), "worker 1 was chosen: it counts a wakeup, not a spurious return");
    }

    /** The hint rotates: after waking i the next wake starts at i + 1, wrapping past the last slot. */
    @Test
    void wakeOneRotatesTheFirstWorkerTried() {
        ParkingLot lot = new ParkingLot(mem, 3);
        lot.announce(0);
        lot.announce(1);
        lot.announce(2);
        assertEquals(0, lot.wakeOne());
        lot.announce(0);
        assertEquals(1, lot.wakeOne(), "starts after the last woken, not at 0 again");
        assertEquals(2, lot.wakeOne());
        assertEquals(0, lot.wakeOne(), "wraps around");
        assertEquals(-1, lot.wakeOne());
    }

    /** 64 slots: every bit of the long, the sign bit included, is announced and woken exactly once. */
    @Test
    void sixtyFourSlotsEachWokenOnce() {
        ParkingLot lot = new ParkingLot(mem, ParkingLot.Layout.SLOTS);
        for (int i = 0; i < ParkingLot.Layout.SLOTS; i++) {
            lot.announce(i);
        }
        assertEquals(-1L, lot.idleMask(), "all 64 bits");
        Set<Integer> woken = new HashSet<>();
        for (int k = 0; k < ParkingLot.Layout.SLOTS; k++) {
            int i = lot.wakeOne();
            assertTrue(i >= 0 && i < ParkingLot.Layout.SLOTS, "an index in range: " + i);
            assertTrue(woken.add(i), "woken twice: " + i);
        }
        assertEquals(0, lot.idleMask());
        assertEquals(-1, lot.wakeOne());
        lot.announce(63);
        assertEquals(Long.MIN_VALUE, lot.idleMask(), "bit 63 is the sign bit");
        assertEquals(63, lot.wakeOneOf(Long.MIN_VALUE));
        assertEquals(0, lot.idleMask());
    }

    @Test
    void wakeOneOfWakesOnlyInsideItsMaskLowestFirst() {
        ParkingLot lot = new ParkingLot(mem, 8);
        lot.announce(1);
        lot.announce(4);
        lot.announce(6);
        assertEquals(-1, lot.wakeOneOf(0b0000_1101), "none of 0, 2, 3 is idle");
        assertEquals(0b0101_0010, lot.idleMask(), "a miss changes nothing");
        assertEquals(4, lot.wakeOneOf(0b0111_0000), "lowest eligible index first");
        assertEquals(0b0100_0010, lot.idleMask(), "only the woken bit is cleared");
        assertEquals(6, lot.wakeOneOf(0b0111_0000));
        assertEquals(-1, lot.wakeOneOf(0b0111_0000));
        assertEquals(0b0000_0010, lot.idleMask(), "worker 1, outside the mask, still sleeps");
    }

    @Test
    void wakeAllClearsTheMaskAndUnparksEveryRegisteredThread() throws Exception {
        int n = 3;
        ParkingLot lot = new ParkingLot(mem, n + 1); // slot n stays unregistered: wakeAll skips it
        CountDownLatch parked = new CountDownLatch(n);
        AtomicBoolean stop = new AtomicBoolean();
        Thread[] ts = new Thread[n];
        for (int i = 0; i < n; i++) {
            final int me = i;
            ts[i] = start("wake-all-" + i, () -> {
                if (me != 0) {
                    lot.announce(me); // worker 0 parks without announcing: wakeAll wakes it anyway
                }
                parked.countDown();
                while (!stop.get()) { // a spurious return parks again
                    lot.park();
                }
            });
            lot.register(i, ts[i]);
        }
        assertTrue(parked.await(WAKE_BOUND_SECONDS, TimeUnit.SECONDS));
        within("workers 1 and 2 announced", () -> lot.idleMask() == 0b0110);
        for (Thread t : ts) {
            within(t.getName() + " parked", () -> t.getState() == Thread.State.WAITING);
        }
        stop.set(true);
        lot.wakeAll();
        assertEquals(0, lot.idleMask());
        for (Thread t : ts) {
            joined(t, t.getName());
        }
    }

    /** A real thread: announces, parks until its bit is cleared; wakeOne's unpark must end the park. */
    @Test
    void aParkedThreadIsUnparkedByWakeOne() throws Exception {
        ParkingLot lot = new ParkingLot(mem, 2);
        AtomicInteger returns = new AtomicInteger();
        Thread t = start("parked", () -> {
            lot.announce(1);
            while ((lot.idleMask() & 0b10) != 0) { // a spurious return parks again
                lot.park();
                returns.incrementAndGet();
            }
        });
        lot.register(1, t);
        within("the thread announced", () -> lot.idleMask() == 0b10);
        within("the thread is parked", () -> t.getState() == Thread.State.WAITING);
        assertEquals(1, lot.wakeOne());
        joined(t, "the woken thread");
        assertTrue(returns.get() >= 1);
    }

    /** A wake that comes before the park leaves the permit: the next park returns at once. */
    @Test
    void aWakeBeforeTheParkIsNotLost() throws Exception {
        ParkingLot lot = new ParkingLot(mem, 1);
        AtomicBoolean woken = new AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread t = start("late parker", () -> {
            lot.announce(0);
            // Spin, not a latch: a blocking wait parks too and would consume the permit under test.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAKE_BOUND_SECONDS);
            while (!woken.get()) {
                if (System.nanoTime() - deadline > 0) {
                    failure.set(new AssertionError("the test never woke us"));
                    break;
                }
                Thread.onSpinWait();
            }
            lot.park(); // one park, no loop: only the permit can end it (the test's interrupt if it is lost)
        });
        lot.register(0, t);
        within("the late parker announced", () -> lot.idleMask() == 1);
        assertEquals(0, lot.wakeOne(), "woken while not yet parked");
        woken.set(true);
        joined(t, "the late parker");
        assertNull(failure.get());
    }

    /** registerLate replaces a slot's thread: the new thread is the one a wake reaches. */
    @Test
    void aLateRegisteredThreadIsTheOneWoken() throws Exception {
        ParkingLot lot = new ParkingLot(mem, 1);
        Thread old = new Thread(() -> { }, "exited");
        lot.register(0, old);
        Thread t = start("replacement", () -> {
            lot.announce(0);
            while ((lot.idleMask() & 1) != 0) {
                lot.park();
            }
        });
        lot.registerLate(0, t);
        within("the replacement announced", () -> lot.idleMask() == 1);
        assertEquals(0, lot.wakeOne());
        joined(t, "the replacement thread");
    }

    /** Many wakers, one announced worker: exactly one waker wins the bit, the others see -1. */
    @Test
    void racingWakersWakeTheWorkerOnce() throws Exception {
        int wakers = 4;
        ParkingLot lot = new ParkingLot(mem, 8);
        for (int round = 0; round < 50; round++) { // thread starts per round: enough to race, cheap on two cores
            lot.announce(5);
            CyclicBarrier go = new CyclicBarrier(wakers);
            AtomicInteger wins = new AtomicInteger();
            AtomicInteger misses = new AtomicInteger();
            Thread[] ts = new Thread[wakers];
            for (int k = 0; k < wakers; k++) {
                ts[k] = new Thread(() -> {
                    try {
                        go.await(WAKE_BOUND_SECONDS, TimeUnit.SECONDS);
                    } catch (Exception e) {
                        return;
                    }
                    int i = lot.wakeOne();
                    (i == 5 ? wins : misses).incrementAndGet();
                });
                ts[k].start();
            }
            for (Thread t : ts) {
                joined(t, "waker");
            }
            assertEquals(1, wins.get(), "round " + round + ": one waker per bit");
            assertEquals(wakers - 1, misses.get(), "round " + round + ": the others found nobody idle");
            assertEquals(0, lot.idleMask());
        }
    }

    /** The worker's retract and a waker race for one bit: exactly one of them gets it, every round. */
    @Test
    void retractAndWakeOneNeverBothWin() throws Exception {
        int rounds = 5_000;
        ParkingLot lot = new ParkingLot(mem, 2);
        CyclicBarrier[] go = {new CyclicBarrier(2)};
        AtomicInteger wakerWins = new AtomicInteger();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread waker = start("waker", () -> {
            try {
                for (int r = 0; r < rounds; r++) {
                    go[0].await(WAKE_BOUND_SECONDS, TimeUnit.SECONDS); // worker announced
                    if (lot.wakeOne() == 1) {
                        wakerWins.incrementAndGet();
                    }
                    go[0].await(WAKE_BOUND_SECONDS, TimeUnit.SECONDS); // round over
                }
            } catch (Exception e) {
                failure.set(e);
            }
        });
        int retractWins = 0;
        for (int r = 0; r < rounds; r++) {
            lot.announce(1);
            go[0].await(WAKE_BOUND_SECONDS, TimeUnit.SECONDS);
            if (lot.retract(1)) {
                retractWins++;
            }
            go[0].await(WAKE_BOUND_SECONDS, TimeUnit.SECONDS);
            assertEquals(0, lot.idleMask(), "round " + r + ": the bit is gone either way");
        }
        joined(waker, "the waker");
        assertNull(failure.get());
        assertEquals(rounds, retractWins + wakerWins.get(), "each announcement claimed exactly once");
    }

    /** stampWakesInto: a wake stamps the woken worker's wake word before its unpark. */
    @Test
    void aWakeIsStampedForTheWokenWorker() {
        ParkingLot lot = new ParkingLot(mem, 2);
        WorkerTimes times = new WorkerTimes(mem, 2);
        lot.stampWakesInto(times);
        long before = System.nanoTime();
        lot.announce(1);
        assertEquals(1, lot.wakeOne());
        long stamp = times.takeWakeStamp(1);
        assertTrue(stamp >= before && stamp <= System.nanoTime(), "stamped at the wake: " + stamp);
        assertEquals(0, times.takeWakeStamp(0), "worker 0 was not woken");
    }
}
