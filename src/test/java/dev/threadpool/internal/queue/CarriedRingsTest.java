package dev.threadpool.internal.queue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.threadpool.PoolConfig;
import dev.threadpool.internal.memory.PoolMemory;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * {@link CarriedRings}: how many stripes a pool gets, where a push lands and overflows, where a worker's pop
 * starts, the shared bound and low-water mark, the close that sums the stripes' counts and refuses from the first
 * closed stripe on, the memory it counts; then producers and consumers at once, every task out exactly once. The
 * close's races are jcstress's ({@code AdmissionTest}'s striped tests) and the counting stress subject's
 * ({@code carried-close}).
 */
class CarriedRingsTest {

    @Test
    void aPoolGetsAStripePerWorkerUpToSixtyFourAndNoStripeUnderSixtyFourCells() {
        assertEquals(PoolConfig.MAX_THREADS, CarriedRings.MAX_STRIPES, "a home stripe for every worker a pool has");
        assertEquals(1, CarriedRings.stripesFor(1, 4096), "one worker: one ring, as before stripes");
        assertEquals(2, CarriedRings.stripesFor(2, 256));
        assertEquals(2, CarriedRings.stripesFor(2, 128), "two stripes of 64");
        assertEquals(1, CarriedRings.stripesFor(2, 64), "two stripes of 32 would be under the minimum");
        assertEquals(4, CarriedRings.stripesFor(3, 4096), "rounded up to a power of two");
        assertEquals(8, CarriedRings.stripesFor(8, 1 << 16), "a stripe per worker up to eight");
        assertEquals(8, CarriedRings.stripesFor(16, 1 << 16), "past eight, a quarter of the workers, at least eight");
        assertEquals(8, CarriedRings.stripesFor(32, 1 << 16));
        assertEquals(16, CarriedRings.stripesFor(33, 1 << 16), "33 rounds up to 64: a quarter is 16");
        assertEquals(16, CarriedRings.stripesFor(64, 4096), "64 workers, the default capacity: 16 stripes of 256");
        assertEquals(CarriedRings.MAX_STRIPES, CarriedRings.stripesFor(1 << 12, 1 << 20), "at most MAX_STRIPES");
        assertEquals(8, CarriedRings.stripesFor(64, 512), "512 / 16 = 32 cells: halved until 64");
        assertEquals(4, CarriedRings.stripesFor(8, 256), "256 / 8 = 32 cells: halved until 64");
        assertEquals(1, CarriedRings.stripesFor(0, 4096), "no workers counted: one");
        for (int workers = 1; workers <= 70; workers++) {
            for (int cap = 2; cap <= 1 << 16; cap <<= 1) {
                int k = CarriedRings.stripesFor(workers, cap);
                assertTrue(k >= 1 && k <= CarriedRings.MAX_STRIPES && Integer.bitCount(k) == 1, "stripes " + k);
                assertTrue(k == 1 || cap / k >= CarriedRings.MIN_STRIPE_CAPACITY, cap + " cells in " + k + " stripes");
                int wanted = Integer.highestOneBit(workers) <= CarriedRings.PER_WORKER_UP_TO
                        ? Integer.highestOneBit(workers)
                        : Math.max(CarriedRings.PER_WORKER_UP_TO,
                                Integer.highestOneBit(workers) / CarriedRings.WORKERS_PER_STRIPE);
                assertTrue(k >= Math.min(wanted, cap / CarriedRings.MIN_STRIPE_CAPACITY),
                        "a stripe per worker up to 8, then per 4 workers, where the cells allow: " + workers
                                + " workers, " + cap + " cells");
                if (cap <= 4096 && (workers <= 9 || workers == 64)) {
                    try (PoolMemory m = PoolMemory.create()) {
                        assertEquals(k, new CarriedRings(m, cap, k).stripes(), "every answer is accepted");
                    }
                }
            }
        }
    }

    @Test
    void badArgumentsAreRefusedByNameAndAllocateNothing() {
        try (PoolMemory m = PoolMemory.create()) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new CarriedRings(m, 64, 3));
            assertEquals("stripes must be a power of two in [1, 32], got 3", e.getMessage());
            e = assertThrows(IllegalArgumentException.class, () -> new CarriedRings(m, 64, 64));
            assertEquals("stripes must be a power of two in [1, 32], got 64", e.getMessage());
            e = assertThrows(IllegalArgumentException.class, () -> new CarriedRings(m, 1 << 16, 128));
            assertEquals("stripes must be a power of two in [1, 64], got 128", e.getMessage());
            e = assertThrows(IllegalArgumentException.class, () -> new CarriedRings(m, 4, 4));
            assertEquals("stripes must be a power of two in [1, 2], got 4", e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> new CarriedRings(m, 4, 0));
            e = assertThrows(IllegalArgumentException.class, () -> new CarriedRings(m, 96, 2));
            assertTrue(e.getMessage().startsWith("capacity"), e.getMessage());
            assertEquals(0, m.totalAllocBytes(), "a refused construction allocates nothing");
        }
        try (PoolMemory m = PoolMemory.create()) {
            CarriedRings r = new CarriedRings(m, 256, 4);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> r.hasReadyEntry(0, -1));
            assertEquals("count must be >= 0, got -1", e.getMessage());
        }
    }

    @Test
    void everyStripeIsCountedAndFreedWithThePoolMemory() {
        PoolMemory m = PoolMemory.create();
        CarriedRings r = new CarriedRings(m, 256, 4);
        assertEquals(4 * PoolMemory.countedSize(BoundedRing.Layout.byteSize(64)), m.liveBytes());
        assertEquals(256, r.capacity());
        for (int i = 0; i < 4; i++) {
            assertEquals(64, r.ring(i).capacity());
            assertTrue(r.ring(i).carriesTasks());
        }
        m.close();
        assertEquals(0, m.liveBytes());
    }

    @Test
    void aPushStartsAtItsHomeStripeAndOverflowsBeforeItFails() {
        try (PoolMemory m = PoolMemory.create()) {
            CarriedRings r = new CarriedRings(m, 8, 2); // two stripes of 4
            for (int i = 0; i < 4; i++) {
                assertTrue(r.tryPushFrom(1, "t" + i, "g" + i));
            }
            assertEquals(4, r.ring(1).size(), "home stripe 1 first");
            assertEquals(0, r.ring(0).size());
            assertTrue(r.atMostHalfFull(), "4 of 8 together, although stripe 1 is full");
            for (int i = 4; i < 8; i++) {
                assertTrue(r.tryPushFrom(1, "t" + i, "g" + i), "overflows into stripe 0");
            }
            assertEquals(4, r.ring(0).size());
            assertEquals(8, r.size());
            assertFalse(r.atMostHalfFull());
            assertFalse(r.tryPushFrom(0, "t8", null), "every stripe full");
            assertFalse(r.closed(), "full, not closed");
            assertTrue(r.hasReadyEntry());
            assertFalse(r.isEmpty());
            assertEquals(8, r.accepted());

            Object[] taken = new Object[2];
            assertEquals(1, r.popManyFor(1, taken, 0, CarriedBatches.MAX_BATCH), "a shallow stripe: one at a time");
            assertEquals("t0", taken[0], "worker 1 starts at stripe 1: its oldest");
            assertEquals("g0", taken[1]);
            assertEquals(1, r.popManyFor(2, taken, 0, 1));
            assertEquals("t4", taken[0], "worker 2 (home 2 & 1 = 0) starts at stripe 0");
            Set<Object> rest = new HashSet<>();
            while (r.tryPop(taken) == QueueEntry.CARRIED) {
                assertTrue(rest.add(taken[0]));
            }
            assertEquals(Set.of("t1", "t2", "t3", "t5", "t6", "t7"), rest, "the sweep takes the rest, once each");
            assertTrue(r.isEmpty());
            assertFalse(r.hasReadyEntry());
            assertEquals(0, r.popManyFor(0, taken, 0, 1));
            assertEquals(0, r.size());
        }
    }

    @Test
    void aPushThatOverflowedMovesTheHomeOnSoTheNextGoesStraightThere() {
        try (PoolMemory m = PoolMemory.create()) {
            CarriedRings r = new CarriedRings(m, 8, 2); // two stripes of 4
            int home = r.homeOfCurrentThread();
            assertEquals((int) Thread.currentThread().threadId() & 1, home, "no rotation yet: the thread id's low bit");
            for (int i = 0; i < 4; i++) {
                assertTrue(r.tryPush(i, null));
            }
            assertEquals(4, r.ring(home).size(), "the home stripe first");
            assertEquals(home, r.homeOfCurrentThread(), "nothing overflowed yet");
            assertTrue(r.tryPush(4, null));
            assertEquals(1, r.ring(home ^ 1).size(), "the full home stripe overflowed into the other");
            assertEquals(home ^ 1, r.homeOfCurrentThread(), "the rotation moved the home to where the push went");
            assertTrue(r.tryPush(5, null));
            assertEquals(2, r.ring(home ^ 1).size(), "straight there");
            Object[] taken = new Object[2];
            assertEquals(1, r.popManyFor(home, taken, 0, 1), "room again in the first stripe");
            assertEquals(0, taken[0]);
            assertTrue(r.tryPush(6, null));
            assertEquals(3, r.ring(home ^ 1).size(), "the home stays where it moved while that stripe has room");
            assertEquals(7, r.accepted());
        }
    }

    @Test
    void oneAndTwoStripesKeepOneRotationAndDoNotSpread() {
        try (PoolMemory m = PoolMemory.create()) {
            CarriedRings r = new CarriedRings(m, 128, 2); // two stripes of 64
            assertFalse(r.spreads());
            int home = r.homeOfCurrentThread();
            for (int i = 0; i < 64; i++) {
                assertTrue(r.tryPush(i, null));
            }
            assertEquals(64, r.ring(home).size(), "the home stripe takes every push until it is full");
            assertEquals(home, r.homeOfCurrentThread(), "runs of SPREAD move nothing");
        }
        try (PoolMemory m = PoolMemory.create()) {
            assertFalse(new CarriedRings(m, 4096, 1).spreads());
            assertTrue(new CarriedRings(m, 256, CarriedRings.SPREAD_MIN_STRIPES).spreads());
        }
    }

    /** Stripe counts that spread, each stripe 64 cells: a lone producer's pushes reach every one of them. */
    @Test
    void aLoneProducersPushesReachEveryStripeWithinStripesTimesSpread() {
        for (int stripes = CarriedRings.SPREAD_MIN_STRIPES; stripes <= CarriedRings.MAX_STRIPES; stripes <<= 1) {
            try (PoolMemory m = PoolMemory.create()) {
                CarriedRings r = new CarriedRings(m, stripes * 64, stripes);
                assertTrue(r.spreads());
                int home = r.homeOfCurrentThread();
                assertEquals((int) Thread.currentThread().threadId() & (stripes - 1), home, "no push yet");
                int pushes = stripes * CarriedRings.SPREAD;
                for (int i = 0; i < pushes; i++) {
                    assertTrue(r.tryPush(i, null));
                    assertEquals((home + (i + 1) / CarriedRings.SPREAD) & (stripes - 1), r.homeOfCurrentThread(),
                            "the home moves on by one at the end of each run of SPREAD, after push " + i);
                }
                for (int s = 0; s < stripes; s++) {
                    assertEquals(CarriedRings.SPREAD, r.ring(s).size(), stripes + " stripes: stripe " + s);
                }
                // Each worker's claim comes from its home stripe: the run pushed there, in the producer's order.
                Object[] taken = new Object[2];
                for (int w = 0; w < stripes; w++) {
                    int run = (r.homeOfWorker(w) - home) & (stripes - 1); // the stripe's run, counted from home
                    assertEquals(1, r.popManyFor(w, taken, 0, 1));
                    assertEquals(run * CarriedRings.SPREAD, taken[0], stripes + " stripes: worker " + w);
                }
                assertEquals(pushes, r.accepted());
                assertEquals(pushes, r.close(), "the close counts every push, wherever it went");
            }
        }
    }

    @Test
    void aProducersSpreadMovesOnlyTheHomeOfItsOwnThreads() throws Exception {
        try (PoolMemory m = PoolMemory.create()) {
            CarriedRings r = new CarriedRings(m, 64 * 64, 64);
            int mine = (int) Thread.currentThread().threadId() & 63;
            for (int i = 0; i < 3 * CarriedRings.SPREAD; i++) {
                assertTrue(r.tryPush(i, null));
            }
            assertEquals((mine + 3) & 63, r.homeOfCurrentThread(), "three runs: three stripes on");
            AtomicInteger otherId = new AtomicInteger();
            AtomicInteger otherHome = new AtomicInteger();
            do { // a thread of another home: ids grow by one per thread, so the first one almost always is
                Thread other = new Thread(() -> {
                    otherId.set((int) Thread.currentThread().threadId() & 63);
                    otherHome.set(r.homeOfCurrentThread());
                });
                other.start();
                other.join(TimeUnit.SECONDS.toMillis(30));
                assertFalse(other.isAlive());
            } while (otherId.get() == mine);
            assertEquals(otherId.get(), otherHome.get(), "another home's offset did not move");
        }
    }

    @Test
    void aFullStripeStillOverflowsWhereTheStripesSpread() {
        try (PoolMemory m = PoolMemory.create()) {
            CarriedRings r = new CarriedRings(m, 256, 4); // four stripes of 64
            int home = r.homeOfCurrentThread();
            for (int i = 0; i < 64; i++) {
                assertTrue(r.tryPushFrom(home, "full" + i, null));
            }
            assertEquals(home, r.homeOfCurrentThread(), "tryPushFrom moves no home");
            assertTrue(r.tryPush("over", null));
            assertEquals(1, r.ring((home + 1) & 3).size(), "the full home stripe overflowed into the next");
            assertEquals((home + 1) & 3, r.homeOfCurrentThread(), "and the home moved to where the push went");
            for (int i = 1; i < CarriedRings.SPREAD; i++) {
                assertTrue(r.tryPush("run" + i, null));
            }
            assertEquals(CarriedRings.SPREAD, r.ring((home + 1) & 3).size(), "a run there");
            assertEquals((home + 2) & 3, r.homeOfCurrentThread(), "then on, past the run's end");
            int accepted = 64 + CarriedRings.SPREAD;
            while (r.tryPush(accepted, null)) {
                accepted++;
            }
            assertEquals(256, accepted, "one producer fills every stripe before it is refused");
            for (int s = 0; s < 4; s++) {
                assertEquals(64, r.ring(s).size());
            }
            assertFalse(r.closed(), "full, not closed");
            assertEquals(256, r.close());
        }
    }

    /**
     * Four producers spreading over 16 stripes while two consumers drain, and a close at a random moment: the
     * close counts exactly the pushes that returned true, every one of them comes out once, and every push after
     * the close is refused.
     */
    @Test
    void theCloseCountsExactlyWhileProducersSpread() throws Exception {
        final int producers = 4;
        for (int round = 0; round < 20; round++) {
            try (PoolMemory m = PoolMemory.create()) {
                CarriedRings r = new CarriedRings(m, 16 * 64, 16);
                assertTrue(r.spreads());
                final long closeAt = ThreadLocalRandom.current().nextLong(4_000);
                AtomicLong pushed = new AtomicLong();
                AtomicLong popped = new AtomicLong();
                AtomicLong counted = new AtomicLong(-1);
                AtomicInteger producing = new AtomicInteger(producers);
                AtomicReference<Throwable> failure = new AtomicReference<>();
                Set<Object> seen = ConcurrentHashMap.newKeySet();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                List<Thread> threads = new ArrayList<>();
                for (int p = 0; p < producers; p++) {
                    final long first = (long) p << 40;
                    threads.add(new Thread(() -> {
                        for (long v = first; failure.get() == null; v++) {
                            if (r.tryPush(v, null)) {
                                pushed.incrementAndGet();
                            } else if (r.closed()) {
                                break; // refused by the close: not accepted, and not counted
                            } else if (System.nanoTime() - deadline > 0) {
                                failure.compareAndSet(null, new AssertionError("full, never closed"));
                            } else {
                                Thread.onSpinWait(); // full: the consumers make room
                            }
                        }
                        producing.decrementAndGet();
                    }));
                }
                for (int c = 0; c < 2; c++) {
                    final int worker = c;
                    threads.add(new Thread(() -> {
                        Object[] dst = new Object[2 * CarriedBatches.MAX_BATCH];
                        while (producing.get() > 0 && failure.get() == null) {
                            int n = r.popManyFor(worker, dst, 0, CarriedBatches.MAX_BATCH);
                            for (int i = 0; i < n; i++) {
                                if (!seen.add(dst[2 * i])) {
                                    failure.compareAndSet(null, new AssertionError(dst[2 * i] + " came out twice"));
                                }
                            }
                            popped.addAndGet(n);
                        }
                    }));
                }
                threads.add(new Thread(() -> {
                    while (pushed.get() < closeAt && failure.get() == null) {
                        if (System.nanoTime() - deadline > 0) {
                            failure.compareAndSet(null, new AssertionError("stalled at " + pushed.get()));
                        }
                        Thread.onSpinWait(); // pacing only: the close lands somewhere among the pushes
                    }
                    counted.set(r.close());
                }));
                threads.forEach(Thread::start);
                for (Thread t : threads) {
                    t.join(TimeUnit.SECONDS.toMillis(90));
                    if (t.isAlive()) {
                        failure.compareAndSet(null, new AssertionError("a thread did not finish"));
                    }
                }
                if (failure.get() != null) {
                    fail(failure.get());
                }
                Object[] taken = new Object[2];
                while (r.tryPop(taken) == QueueEntry.CARRIED) { // the shutdown sweep's part
                    assertTrue(seen.add(taken[0]), taken[0] + " came out twice");
                    popped.incrementAndGet();
                }
                assertEquals(pushed.get(), counted.get(), "round " + round + ": the close counts every push accepted");
                assertEquals(pushed.get(), popped.get(), "round " + round + ": and each came out once");
                assertEquals(pushed.get(), r.accepted());
                assertFalse(r.tryPush("late", null), "refused after the close");
            }
        }
    }

    @Test
    void aBoundedLookReadsAtMostCountStripesFromItsStartWrapping() {
        try (PoolMemory m = PoolMemory.create()) {
            CarriedRings r = new CarriedRings(m, 8 * 64, 8);
            assertFalse(r.hasReadyEntry(0, 8));
            assertTrue(r.tryPushFrom(5, "in5", null));
            assertFalse(r.hasReadyEntry(0, 5), "stripes 0 to 4");
            assertTrue(r.hasReadyEntry(0, 6), "stripes 0 to 5");
            assertTrue(r.hasReadyEntry(5, 1));
            assertFalse(r.hasReadyEntry(6, 7), "6, 7, then 0 to 4");
            assertTrue(r.hasReadyEntry(6, 8), "6, 7, then 0 to 5");
            assertTrue(r.hasReadyEntry(6, 100), "at most every stripe, once");
            assertTrue(r.hasReadyEntry(13, 1), "from 13 & 7 = 5");
            assertTrue(r.hasReadyEntry(-3, 1), "from -3 & 7 = 5");
            assertFalse(r.hasReadyEntry(5, 0), "a look at no stripe");
            assertTrue(r.hasReadyEntry());
            Object[] taken = new Object[2];
            assertEquals(1, r.popManyFor(5, taken, 0, 1));
            assertFalse(r.hasReadyEntry(0, 8));
        }
    }

    @Test
    void aWorkerFindsEntriesInAnyStripeHomeFirst() {
        try (PoolMemory m = PoolMemory.create()) {
            CarriedRings r = new CarriedRings(m, 256, 4);
            assertTrue(r.tryPushFrom(3, "in3", null));
            Object[] taken = new Object[2];
            assertEquals(1, r.popManyFor(0, taken, 0, 1), "worker 0 looks at stripe 3 last, but looks");
            assertSame("in3", taken[0]);
            for (int i = 0; i < 24; i++) { // deep enough in stripe 2 for a batch
                assertTrue(r.tryPushFrom(2, i, null));
            }
            Object[] dst = new Object[2 * CarriedBatches.MAX_BATCH];
            assertEquals(CarriedBatches.MAX_BATCH, r.popManyFor(6, dst, 0, CarriedBatches.MAX_BATCH),
                    "worker 6 (home 2) claims a batch from its deep home stripe");
            assertEquals(0, dst[0]);
            assertEquals(7, dst[14]);
        }
    }

    @Test
    void theCloseSumsTheStripesWhereverAPushWent() {
        try (PoolMemory m = PoolMemory.create()) {
            CarriedRings r = new CarriedRings(m, 256, 4);
            for (int i = 0; i < 3; i++) {
                assertTrue(r.tryPushFrom(0, "a" + i, null));
            }
            assertTrue(r.tryPushFrom(1, "b", null));
            assertTrue(r.tryPushFrom(3, "c", null));
            assertEquals(5, r.accepted());
            assertEquals(5, r.close(), "every stripe's claims");
            assertTrue(r.closed());
            for (int home = 0; home < 4; home++) {
                assertFalse(r.tryPushFrom(home, "late", null), "refused from home " + home);
            }
            assertEquals(5, r.close(), "idempotent");
            assertEquals(5, r.accepted());
            assertEquals(5, r.size(), "the close takes nothing out: the shutdown runs or cancels what it counted");
        }
        try (PoolMemory m = PoolMemory.create()) {
            CarriedRings r = new CarriedRings(m, 256, 4);
            r.ring(0).closeToPushes(); // the close begins with stripe 0
            assertTrue(r.closed());
            assertTrue(r.tryPushFrom(0, "x", null), "its home stripe is closed: on to stripe 1, not closed yet");
            assertEquals(1, r.ring(1).size());
            assertTrue(r.tryPushFrom(2, "y", null), "stripe 2 is not closed yet: accepted there");
            assertEquals(2, r.close(), "both counted by their stripes' closes");
            assertFalse(r.tryPushFrom(1, "z", null), "every stripe closed: refused");
        }
    }

    @Test
    void oneStripeIsTheRingItself() {
        try (PoolMemory m = PoolMemory.create()) {
            CarriedRings r = new CarriedRings(m, 4, 1);
            assertEquals(0, r.homeOfCurrentThread());
            assertEquals(0, r.homeOfWorker(5));
            for (int i = 0; i < 4; i++) {
                assertTrue(r.tryPush(i, null));
            }
            assertFalse(r.tryPush(4, null));
            assertFalse(r.atMostHalfFull());
            Object[] taken = new Object[2];
            assertEquals(1, r.popManyFor(3, taken, 0, 1));
            assertEquals(0, taken[0]);
            assertEquals(1, r.popManyFor(3, taken, 0, 1));
            assertTrue(r.atMostHalfFull(), "2 of 4");
            assertEquals(4, r.close());
        }
    }

    /** Four producers on their own home stripes, two consumers from theirs, 200,000 tasks: each out once. */
    @Test
    void producersAndConsumersAtOnceMoveEveryTaskExactlyOnce() throws Exception {
        final int items = 200_000;
        final int producers = 4;
        try (PoolMemory m = PoolMemory.create()) {
            CarriedRings r = new CarriedRings(m, 256, 4);
            AtomicIntegerArray seen = new AtomicIntegerArray(items);
            AtomicInteger consumed = new AtomicInteger();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            List<Thread> threads = new ArrayList<>();
            for (int p = 0; p < producers; p++) {
                final int home = p;
                threads.add(new Thread(() -> {
                    for (int v = home; v < items; v += producers) {
                        Integer task = v;
                        while (!r.tryPushFrom(home, task, -v - 1)) {
                            Thread.onSpinWait(); // full: the consumers make room
                        }
                    }
                }));
            }
            for (int c = 0; c < 2; c++) {
                final int worker = c;
                threads.add(new Thread(() -> {
                    Object[] dst = new Object[2 * CarriedBatches.MAX_BATCH];
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                    while (consumed.get() < items && failure.get() == null) {
                        int n = r.popManyFor(worker, dst, 0, CarriedBatches.MAX_BATCH);
                        for (int i = 0; i < n; i++) {
                            int v = (Integer) dst[2 * i];
                            if ((Integer) dst[2 * i + 1] != -v - 1) {
                                failure.compareAndSet(null, new AssertionError("task " + v + " with another's group"));
                            }
                            if (seen.getAndIncrement(v) != 0) {
                                failure.compareAndSet(null, new AssertionError("task " + v + " came out twice"));
                            }
                            consumed.incrementAndGet();
                        }
                        if (n == 0 && System.nanoTime() - deadline > 0) {
                            failure.compareAndSet(null, new AssertionError("stalled at " + consumed.get()));
                        }
                    }
                }));
            }
            threads.forEach(Thread::start);
            for (Thread t : threads) {
                t.join(TimeUnit.SECONDS.toMillis(90));
                if (t.isAlive()) {
                    failure.compareAndSet(null, new AssertionError("a thread did not finish"));
                }
            }
            if (failure.get() != null) {
                fail(failure.get());
            }
            for (int v = 0; v < items; v++) {
                assertEquals(1, seen.get(v), "task " + v);
            }
            assertEquals(items, r.accepted());
            assertTrue(r.isEmpty());
        }
    }
}
