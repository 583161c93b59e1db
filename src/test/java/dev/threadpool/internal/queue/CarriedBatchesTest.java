package dev.threadpool.internal.queue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.internal.memory.PoolMemory;
import java.lang.ref.WeakReference;
import org.junit.jupiter.api.Test;

/**
 * {@link CarriedBatches} and {@link BoundedRing#popManyCarried}, one thread at a time: what a claim takes, in what
 * order the owner and others take it, what is cleared, the memory it counts. The races are jcstress's
 * ({@code CarriedBatchesTest}) and the counting stress subject's ({@code carried-batches}).
 */
class CarriedBatchesTest {
    private static final int MAX = CarriedBatches.MAX_BATCH;

    private static BoundedRing filled(PoolMemory m, int capacity, Object[] tasks) {
        BoundedRing r = new BoundedRing(m, "t", capacity, true);
        for (int i = 0; i < tasks.length; i++) {
            assertTrue(r.tryPushCarried(tasks[i], "g" + i));
        }
        return r;
    }

    private static Object[] tasks(int n) {
        Object[] t = new Object[n];
        for (int i = 0; i < n; i++) {
            t[i] = "t" + i;
        }
        return t;
    }

    @Test
    void aDeepRingIsClaimedInABatchAShallowOneOneAtATime() {
        try (PoolMemory m = PoolMemory.create()) {
            Object[] t = tasks(3 * MAX);
            BoundedRing r = filled(m, 64, t);
            CarriedBatches b = new CarriedBatches(m, 2);
            Object[] taken = new Object[2];
            assertEquals(MAX, b.refill(0, r, taken, MAX), "24 ready >= 2 * 8: a batch of 8");
            assertSame(t[0], taken[0]);
            assertEquals("g0", taken[1]);
            assertEquals(2 * MAX, r.size(), "the claimed cells are freed at once");
            assertEquals(MAX - 1, b.size());
            assertTrue(b.hasStealable(0));
            assertFalse(b.hasStealable(1));
            assertTrue(b.anyStealable());
            for (int i = 1; i < MAX; i++) { // the owner's refill takes its own batch first, in order
                assertEquals(1, b.refill(0, r, taken, MAX));
                assertSame(t[i], taken[0], "batch entry " + i);
                assertEquals("g" + i, taken[1]);
            }
            assertFalse(b.hasStealable(0));
            assertEquals(MAX, b.refill(0, r, taken, MAX), "16 ready: another batch");
            assertSame(t[MAX], taken[0]);
            assertEquals(MAX, r.size());
            for (int i = MAX + 1; i < 2 * MAX; i++) {
                assertTrue(b.take(0, taken), "anyone takes the rest, in order");
                assertSame(t[i], taken[0]);
            }
            assertFalse(b.take(0, taken), "empty");
            assertEquals(1, b.refill(1, r, taken, MAX), "8 ready < 16: one at a time");
            assertSame(t[2 * MAX], taken[0]);
            assertFalse(b.hasStealable(1));
            assertEquals(1, b.refill(1, r, taken, 1), "max 1: never a batch");
            assertSame(t[2 * MAX + 1], taken[0]);
            while (r.tryPop(taken) != QueueEntry.EMPTY) {
                taken[0] = null;
            }
            assertEquals(0, b.refill(0, r, taken, MAX), "nothing in the batch or the ring");
            assertEquals(0, b.size());
        }
    }

    @Test
    void aClaimStopsAtAPlainEntryAndLeavesItForTryPop() {
        try (PoolMemory m = PoolMemory.create()) {
            BoundedRing r = new BoundedRing(m, "t", 64, true);
            assertTrue(r.tryPush(42));
            for (int i = 0; i < 2 * MAX; i++) {
                assertTrue(r.tryPushCarried("t" + i, null));
            }
            Object[] dst = new Object[2 * MAX];
            assertEquals(0, r.popManyCarried(dst, 0, MAX), "the head holds a plain entry");
            assertEquals(42, r.tryPop(dst));
            assertEquals(MAX, r.popManyCarried(dst, 0, MAX));
            assertEquals("t0", dst[0]);
            assertEquals("t7", dst[2 * (MAX - 1)]);
            assertThrows(IllegalStateException.class, () -> new BoundedRing(m, "plain", 4).popManyCarried(dst, 0, 1),
                    "a ring that carries no tasks");
        }
    }

    @Test
    void takenEntriesAreNotKeptReachable() {
        try (PoolMemory m = PoolMemory.create()) {
            BoundedRing r = new BoundedRing(m, "t", 64, true);
            CarriedBatches b = new CarriedBatches(m, 1);
            WeakReference<Object> last = null;
            for (int i = 0; i < 2 * MAX; i++) {
                Object task = new Object();
                if (i == MAX - 1) {
                    last = new WeakReference<>(task);
                }
                assertTrue(r.tryPushCarried(task, null));
            }
            Object[] taken = new Object[2];
            assertEquals(MAX, b.refill(0, r, taken, MAX));
            for (int i = 1; i < MAX; i++) {
                assertTrue(b.take(0, taken));
            }
            taken[0] = null;
            // the batch still holds the taken entries' references until the owner's next refill clears them
            assertEquals(1, b.refill(0, r, taken, MAX), "8 left in the ring: one");
            taken[0] = null;
            for (int i = 0; i < 10 && last.get() != null; i++) {
                System.gc();
            }
            assertNull(last.get(), "the owner's refill cleared the previous batch's references");
            while (r.tryPop(taken) != QueueEntry.EMPTY) {
                taken[0] = null;
            }
        }
    }

    /** steal tries the peers from the thief's next index on, never the thief's own; takeAny starts at worker 0. */
    @Test
    void stealTriesThePeersInTurnAndTakeAnyEveryBatch() {
        try (PoolMemory m = PoolMemory.create()) {
            BoundedRing r = new BoundedRing(m, "t", 64, true);
            CarriedBatches b = new CarriedBatches(m, 3);
            Object[] tasks = new Object[4 * MAX];
            for (int i = 0; i < tasks.length; i++) {
                tasks[i] = new Object();
                assertTrue(r.tryPushCarried(tasks[i], null));
            }
            Object[] taken = new Object[2];
            assertEquals(MAX, b.refill(0, r, taken, MAX)); // worker 0 holds tasks 1..7
            assertEquals(MAX, b.refill(2, r, taken, MAX)); // worker 2 holds tasks 9..15
            assertTrue(b.steal(1, taken));
            assertSame(tasks[MAX + 1], taken[0], "worker 1 tries worker 2 first");
            assertTrue(b.steal(2, taken));
            assertSame(tasks[1], taken[0], "worker 2 tries worker 0 next, not itself");
            assertTrue(b.takeAny(taken));
            assertSame(tasks[2], taken[0], "the sweep starts at worker 0");
            while (b.takeAny(taken)) {
                taken[0] = null;
            }
            assertFalse(b.steal(0, taken), "every batch empty");
            assertEquals(0, b.size());
            while (r.tryPop(taken) != QueueEntry.EMPTY) {
                taken[0] = null;
            }
        }
    }

    @Test
    void argumentsAreValidatedAndTheMemoryIsCounted() {
        try (PoolMemory m = PoolMemory.create()) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new CarriedBatches(m, 0));
            assertEquals("workers must be >= 1, got 0", e.getMessage());
            assertEquals(0, m.totalAllocBytes(), "a refused batch set allocates nothing");
            CarriedBatches b = new CarriedBatches(m, 3);
            assertEquals(PoolMemory.countedSize(CarriedBatches.Layout.byteSize(3)), m.liveBytes());
            BoundedRing r = new BoundedRing(m, "t", 4, true);
            e = assertThrows(IllegalArgumentException.class, () -> b.refill(0, r, new Object[2], MAX + 1));
            assertEquals("max must be in [1, 8], got 9", e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> b.refill(0, r, new Object[2], 0));
        }
    }
}
