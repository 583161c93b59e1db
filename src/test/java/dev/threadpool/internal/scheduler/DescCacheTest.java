package dev.threadpool.internal.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.internal.memory.PoolMemory;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@link DescCache} and the batch freelist of {@link DescriptorTable}: counts, order, exact accounting. */
class DescCacheTest {
    private final PoolMemory mem = PoolMemory.create();

    @AfterEach
    void close() {
        mem.close();
    }

    private DescriptorTable table(int capacity) {
        return new DescriptorTable(mem, capacity);
    }

    /** Acquires every slot left on the global freelist and checks they are distinct; returns them. */
    private static Set<Integer> drainFreelist(DescriptorTable t) {
        Set<Integer> out = new HashSet<>();
        for (int i; (i = t.acquire()) != -1; ) {
            assertTrue(out.add(i), "slot " + i + " twice on the freelist");
        }
        return out;
    }

    @Test
    void refillTakesUpTo64InFreelistOrder() {
        DescriptorTable t = table(200);
        DescCache c = new DescCache(mem, "cache", t);
        assertEquals(0, c.count());
        for (int i = 0; i < 64; i++) {
            assertEquals(i, c.pop(), "the cache pops in the order the freelist would have");
            assertEquals(63 - i, c.count());
        }
        assertEquals(64, t.acquire(), "the freelist resumes after the batch");
        assertEquals(65, c.pop());
        assertEquals(63, c.count());
        assertEquals(200 - 66, t.countFree());
    }

    @Test
    void refillTakesWhatIsLeftAndReportsEmpty() {
        DescriptorTable t = table(5);
        DescCache c = new DescCache(mem, "cache", t);
        assertEquals(0, c.pop());
        assertEquals(4, c.count());
        assertFalse(t.hasFree());
        for (int i = 1; i < 5; i++) assertEquals(i, c.pop());
        assertEquals(-1, c.pop());
        assertEquals(-1, t.acquire());
        assertEquals(0, t.countFree());
    }

    @Test
    void popMakesTheSameTransitionAsAcquire() {
        DescriptorTable t = table(4);
        DescCache c = new DescCache(mem, "cache", t);
        int a = t.acquire();
        long viaAcquire = t.ctlAcquire(a);
        int b = c.pop();
        long viaCache = t.ctlAcquire(b);
        assertEquals(DescriptorTable.RESERVED, DescriptorTable.state(viaAcquire));
        assertEquals(DescriptorTable.RESERVED, DescriptorTable.state(viaCache));
        assertEquals(1, DescriptorTable.gen(viaAcquire));
        assertEquals(1, DescriptorTable.gen(viaCache), "gen + 1, as acquire()");
        t.freeReserved(b);
        assertEquals(DescriptorTable.FREE, DescriptorTable.state(t.ctlAcquire(b)));
        c.push(b);
        assertEquals(b, c.pop());
        assertEquals(2, DescriptorTable.gen(t.ctlAcquire(b)), "every reuse moves the generation");
    }

    @Test
    void pushAndReserveRefuseSlotsThatAreNotFree() {
        DescriptorTable t = table(4);
        DescCache c = new DescCache(mem, "cache", t);
        int a = c.pop();
        IllegalStateException e1 = assertThrows(IllegalStateException.class, () -> c.push(a));
        assertEquals("slot must be FREE to cache: idx=" + a + ", state=" + DescriptorTable.RESERVED, e1.getMessage());
        IllegalStateException e2 = assertThrows(IllegalStateException.class, () -> t.reserve(a));
        assertEquals("slot must be FREE to reserve: idx=" + a + ", state=" + DescriptorTable.RESERVED,
                e2.getMessage());
    }

    @Test
    void fullCacheSpillsItsOldestHalf() {
        DescriptorTable t = table(128);
        DescCache c = new DescCache(mem, "cache", t);
        List<Integer> held = new ArrayList<>();
        for (int i = 0; i < 65; i++) held.add(c.pop()); // 0..63 from the first refill, 64 from the second
        assertEquals(63, c.count());
        c.drainAll();
        assertEquals(128 - 65, t.countFree());
        for (int i = 0; i < 64; i++) {
            t.freeReserved(held.get(i));
            c.push(held.get(i));
        }
        assertEquals(64, c.count());
        int before = t.countFree();
        t.freeReserved(held.get(64));
        c.push(held.get(64));
        assertEquals(17, c.count(), "16 kept (a quarter) + the one pushed");
        assertEquals(before + 1, t.countFree(), "spilling moves slots, it does not free or lose any");
        // the 48 oldest pushes (0..47) went back to the freelist with one CAS, 47 on top
        for (int i = 47; i >= 0; i--) assertEquals(held.get(i), t.acquire());
        // the cache keeps 48..63 and 64, newest on top
        for (int i = 64; i >= 48; i--) assertEquals(held.get(i), c.pop());
    }

    @Test
    void aSizedCacheRefillsSpillsAndHoldsAtMostItsLimit() {
        DescriptorTable t = table(64);
        DescCache c = DescCache.allocateArray(mem, "sized", t, 1, 8, 8)[0];
        assertEquals(8, c.limit());
        List<Integer> held = new ArrayList<>();
        held.add(c.pop());
        assertEquals(7, c.count(), "a refill takes at most the limit");
        assertEquals(63, t.countFree(), "the 7 cached slots count as free, the one popped does not");
        for (int i = 1; i < 9; i++) held.add(c.pop()); // the ninth comes from a second refill
        c.drainAll();
        for (int i = 0; i < 8; i++) {
            t.freeReserved(held.get(i));
            c.push(held.get(i));
        }
        assertEquals(8, c.count());
        int before = t.countFree();
        t.freeReserved(held.get(8));
        c.push(held.get(8));
        assertEquals(3, c.count(), "a full cache of 8 spills its oldest 6, keeps 2, then takes the one pushed");
        assertEquals(before + 1, t.countFree(), "spilling moves slots, it does not free or lose any");
        for (int i = 5; i >= 0; i--) assertEquals(held.get(i), t.acquire(), "the oldest three quarters, one CAS");
        for (int i = 8; i >= 6; i--) assertEquals(held.get(i), c.pop());
    }

    @Test
    void sizedCachesValidateTheirLimit() {
        DescriptorTable t = table(64);
        IllegalArgumentException notPow2 = assertThrows(IllegalArgumentException.class,
                () -> DescCache.allocateArray(mem, "bad", t, 1, 4, 12));
        assertEquals("limit must be a power of two in [2, 64]: limit=12", notPow2.getMessage());
        assertThrows(IllegalArgumentException.class, () -> DescCache.allocateArray(mem, "bad", t, 1, 4, 128));
        IllegalArgumentException refill = assertThrows(IllegalArgumentException.class,
                () -> DescCache.allocateArray(mem, "bad", t, 1, 16, 8));
        assertEquals("refillMax must be in [1, limit=8]: refillMax=16", refill.getMessage());
    }

    /** Issue 48's cliff: worker caches shrink with capacity over workers instead of switching off at 33. */
    @Test
    void workerCachesShrinkWithCapacityOverWorkersWithoutACliff() {
        assertEquals(64, Slots.workerCacheLimit(4096, 2));
        assertEquals(64, Slots.workerCacheLimit(4096, 16));
        assertEquals(32, Slots.workerCacheLimit(4096, 17), "4096 past 16 workers: one step smaller");
        assertEquals(32, Slots.workerCacheLimit(4096, 32));
        assertEquals(16, Slots.workerCacheLimit(4096, 33), "no cliff at 33 workers");
        assertEquals(16, Slots.workerCacheLimit(4096, 64));
        assertEquals(64, Slots.workerCacheLimit(16384, 64), "the default capacity at 64 workers: full caches");
        assertEquals(8, Slots.workerCacheLimit(4096, 128));
        assertEquals(0, Slots.workerCacheLimit(4096, 129), "below 8 a slot each is not worth a cache");
        assertEquals(8, Slots.workerCacheLimit(64, 2));
        assertEquals(0, Slots.workerCacheLimit(63, 2));
        for (int workers = 1; workers <= 256; workers++) {
            int limit = Slots.workerCacheLimit(4096, workers);
            assertTrue((long) limit * workers * 4 <= 4096, "all worker caches hold at most a quarter: " + workers);
            assertTrue(limit == 0 || limit >= Slots.workerCacheLimit(4096, workers + 1),
                    "the limit never grows with the workers");
        }
    }

    @Test
    void drainAllKeepsCountFreeExact() {
        DescriptorTable t = table(40);
        DescCache[] caches = DescCache.allocateArray(mem, "caches", t, 3);
        List<int[]> held = new ArrayList<>();
        int reserved = 0;
        for (int round = 0; round < 200; round++) {
            DescCache c = caches[round % 3];
            int idx = (round % 5 == 4) ? t.acquire() : c.pop();
            if (idx >= 0) {
                held.add(new int[] {idx, round % 3});
                reserved++;
            }
            if (round % 3 == 2 && !held.isEmpty()) {
                int[] h = held.removeFirst();
                t.freeReserved(h[0]);
                if (h[1] == 0) {
                    t.unreserve(h[0]); // unreserve of a FREE slot is a plain push: global path
                } else {
                    caches[h[1]].push(h[0]);
                }
                reserved--;
            }
            assertEquals(40 - reserved, t.countFree(), "round " + round);
        }
        for (int[] h : held) {
            t.freeReserved(h[0]);
            caches[0].push(h[0]);
        }
        for (DescCache c : caches) {
            c.drainAll();
            assertEquals(0, c.count());
        }
        assertEquals(40, t.countFree());
        assertEquals(40, drainFreelist(t).size(), "every slot back on the freelist exactly once");
    }

    @Test
    void batchApiMatchesSequentialSinglesAndValidates() {
        DescriptorTable t = table(10);
        MemorySegment buf = MemorySegment.ofArray(new int[16]);
        assertEquals(4, t.acquireBatch(buf, 0, 4));
        for (int i = 0; i < 4; i++) assertEquals(i, buf.getAtIndex(ValueLayout.JAVA_INT, i));
        assertEquals(4, t.acquire());
        assertEquals(5, t.acquireBatch(buf, 16, 32), "only 5 left, at offset 16");
        assertEquals(0, t.acquireBatch(buf, 0, 8));
        // release 0..3 as one batch: same as push(0), push(1), push(2), push(3)
        t.releaseBatch(buf, 0, 4);
        for (int i = 3; i >= 0; i--) assertEquals(i, t.acquire());
        t.releaseBatch(buf, 0, 0);
        assertEquals(-1, t.acquire());
        IllegalArgumentException e1 = assertThrows(IllegalArgumentException.class, () -> t.acquireBatch(buf, 0, 0));
        assertEquals("max must be >= 1: max=0", e1.getMessage());
        IllegalArgumentException e2 = assertThrows(IllegalArgumentException.class, () -> t.releaseBatch(buf, 0, -1));
        assertEquals("n must be >= 0: n=-1", e2.getMessage());
        IllegalArgumentException e3 = assertThrows(IllegalArgumentException.class,
                () -> DescCache.allocateArray(mem, "x", t, 0));
        assertEquals("count must be >= 1: count=0", e3.getMessage());
    }

    @Test
    void cachesLiveOffHeapOnePaddedBlockEach() {
        DescriptorTable t = table(4);
        new DescCache(mem, "one cache", t);
        assertEquals(DescCache.Layout.STRIDE, mem.memoryMap().getLast().usableBytes());
        DescCache.allocateArray(mem, "caches", t, 5);
        assertEquals(DescCache.Layout.STRIDE * 5, mem.memoryMap().getLast().usableBytes());
        assertEquals(384, DescCache.Layout.STRIDE, "8 + 4 x 64 bytes, padded to three PAD units");
        DescCache.allocateArray(mem, "caches of 32", t, 3, 32, 32);
        assertEquals(256 * 3, mem.memoryMap().getLast().usableBytes(), "a stride sized by the limit");
        DescCache.allocateArray(mem, "caches of 16", t, 3, 16, 16);
        assertEquals(128 * 3, mem.memoryMap().getLast().usableBytes());
        assertEquals(16, Slots.submitterLimit(16));
        assertEquals(4, Slots.submitterLimit(3));
        assertEquals(2, Slots.submitterLimit(2));
        assertEquals(64, Slots.submitterLimit(64));
    }

    /**
     * Two cache owners and one single-slot thread share a small table; an owner map proves no slot is ever
     * held twice, and after drainAll every slot is back. Bounded by a deadline, no sleeps.
     */
    @Test
    void concurrentOwnersNeverShareASlot() throws Exception {
        final int cap = 48;
        DescriptorTable t = table(cap);
        DescCache[] caches = DescCache.allocateArray(mem, "caches", t, 2);
        AtomicIntegerArray owner = new AtomicIntegerArray(cap);
        for (int i = 0; i < cap; i++) owner.set(i, -1);
        AtomicReference<String> failure = new AtomicReference<>();
        long deadline = System.nanoTime() + 30_000_000_000L;
        Thread[] ts = new Thread[3];
        for (int k = 0; k < 3; k++) {
            final int me = k;
            ts[k] = new Thread(() -> {
                int[] held = new int[8];
                int n = 0;
                for (int it = 0; it < 100_000 && System.nanoTime() < deadline; it++) {
                    if (n < held.length) {
                        int idx = me < 2 ? caches[me].pop() : t.acquire();
                        if (idx >= 0) {
                            if (!owner.compareAndSet(idx, -1, me)) {
                                failure.compareAndSet(null, "slot " + idx + " held by " + owner.get(idx)
                                        + " handed to " + me);
                            }
                            held[n++] = idx;
                            continue;
                        }
                    }
                    if (n > 0) {
                        int idx = held[--n];
                        owner.set(idx, -1);
                        if (me < 2) {
                            t.freeReserved(idx);
                            caches[me].push(idx);
                        } else {
                            t.unreserve(idx);
                        }
                    }
                    if (me < 2 && (it & 1023) == 0) caches[me].drainAll();
                }
                while (n > 0) {
                    int idx = held[--n];
                    owner.set(idx, -1);
                    t.unreserve(idx);
                }
                if (me < 2) caches[me].drainAll();
            });
            ts[k].start();
        }
        for (Thread th : ts) {
            th.join(Math.max(1, (deadline - System.nanoTime()) / 1_000_000 + 1000));
            assertFalse(th.isAlive(), "owner thread did not finish in time");
        }
        assertEquals(null, failure.get());
        assertEquals(cap, t.countFree());
        assertEquals(cap, drainFreelist(t).size());
    }
}
