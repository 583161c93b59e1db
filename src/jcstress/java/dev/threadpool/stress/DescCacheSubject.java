package dev.threadpool.stress;

import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.scheduler.DescCache;
import dev.threadpool.internal.scheduler.DescriptorTable;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;

/**
 * DescCache + batch freelist: {@code threads} owners, each with its own cache, share a 128-slot descriptor
 * table (so 32-slot refills overcommit it and the freelist is often empty). Each owner moves the number of
 * slots it holds towards a target that changes every 64 rounds (0..40, more than a cache holds, so refills
 * and spills both happen), acquiring mostly through its cache and one time in eight through the single-slot
 * {@code acquire()}, releasing through the cache (or {@code unreserve()} for the single-slot ones) and
 * draining its cache every 1024 rounds. An owner that finds nothing gives back half of what it holds. An
 * item is one acquisition (a ticket 1..N).
 *
 * <p>Checked on every acquisition: the slot is not held by another owner (CAS in an owner map), it is
 * RESERVED, and its generation moved past the one seen at its previous acquisition. A violation counts as
 * a duplicate. After every owner drained its cache: {@code countFree() == capacity} and the freelist holds
 * every slot exactly once.
 */
final class DescCacheSubject implements StressSubject {
    private static final int CAPACITY = 128;
    private static final int HOLD = 40;

    @Override
    public String name() {
        return "desc-cache";
    }

    @Override
    public String run(int items, int threads, Seen seen) throws Exception {
        int owners = Math.max(1, threads);
        try (PoolMemory mem = PoolMemory.create()) {
            DescriptorTable table = new DescriptorTable(mem, CAPACITY);
            DescCache[] caches = DescCache.allocateArray(mem, "stress caches", table, owners);
            AtomicIntegerArray owner = new AtomicIntegerArray(CAPACITY);
            AtomicIntegerArray lastGen = new AtomicIntegerArray(CAPACITY);
            for (int i = 0; i < CAPACITY; i++) owner.set(i, -1);
            AtomicLong ticket = new AtomicLong(1);
            long[] cachePops = new long[owners];
            long[] singles = new long[owners];
            long[] refills = new long[owners];
            long[] spills = new long[owners];
            Thread[] ts = new Thread[owners];
            for (int k = 0; k < owners; k++) {
                final int me = k;
                final DescCache cache = caches[k];
                ts[k] = new Thread(() -> {
                    int[] held = new int[HOLD];
                    boolean[] single = new boolean[HOLD];
                    int n = 0;
                    int target = 1;
                    for (long round = 0; ticket.get() <= items; round++) {
                        if ((round & 63) == 0) {
                            target = (int) ((round * 0x9E3779B97F4A7C15L + me) >>> 58) % (HOLD + 1); // 0..HOLD
                        }
                        if ((round & 1023) == 1023) {
                            cache.drainAll();
                        }
                        if (n < target) {
                            boolean viaSingle = (round & 7) == 5;
                            boolean wasEmpty = cache.count() == 0;
                            int idx = viaSingle ? table.acquire() : cache.pop();
                            if (idx >= 0) {
                                if (!owner.compareAndSet(idx, -1, me)) {
                                    seen.hit(-1); // held by someone else: the freelist handed it out twice
                                }
                                long c = table.ctlAcquire(idx);
                                int gen = (int) DescriptorTable.gen(c); // low bits: the test compares successive values
                                if (DescriptorTable.state(c) != DescriptorTable.RESERVED
                                        || gen - lastGen.get(idx) <= 0) {
                                    seen.hit(-1); // not reserved, or the generation did not move on
                                }
                                lastGen.set(idx, gen);
                                held[n] = idx;
                                single[n] = viaSingle;
                                n++;
                                if (viaSingle) singles[me]++; else cachePops[me]++;
                                if (!viaSingle && wasEmpty) refills[me]++;
                                long tk = ticket.getAndIncrement();
                                if (tk <= items) {
                                    seen.hit(tk);
                                }
                                continue;
                            }
                            // starved (the other owners hold or cache the rest): give back and move on
                            target = n / 2;
                            if (n == 0) {
                                cache.drainAll();
                                Thread.onSpinWait();
                            }
                        }
                        if (n > target) {
                            n--;
                            spills[me] += release(table, cache, owner, me, held[n], single[n], seen);
                        }
                    }
                    while (n > 0) {
                        n--;
                        spills[me] += release(table, cache, owner, me, held[n], single[n], seen);
                    }
                    cache.drainAll();
                }, "cache-owner-" + k);
            }
            for (Thread t : ts) t.start();
            for (Thread t : ts) t.join();
            int free = table.countFree();
            boolean[] back = new boolean[CAPACITY];
            int onList = 0;
            for (int i; (i = table.acquire()) != -1; ) {
                if (back[i]) {
                    throw new IllegalStateException("slot " + i + " twice on the freelist");
                }
                back[i] = true;
                onList++;
            }
            if (free != CAPACITY || onList != CAPACITY) {
                throw new IllegalStateException("accounting broken after drainAll: countFree=" + free
                        + " onFreelist=" + onList + " capacity=" + CAPACITY);
            }
            long cp = 0, sg = 0, rf = 0, sp = 0;
            for (int k = 0; k < owners; k++) {
                cp += cachePops[k];
                sg += singles[k];
                rf += refills[k];
                sp += spills[k];
            }
            return "owners " + owners + "  cache pops " + cp + "  refills " + rf + "  spills " + sp + "  single acquires " + sg
                    + "  countFree " + free + "/" + CAPACITY;
        }
    }

    /** Releases one held slot; returns 1 if the push spilled half the cache to the freelist. */
    private static int release(DescriptorTable table, DescCache cache, AtomicIntegerArray owner, int me, int idx,
            boolean single, Seen seen) {
        if (!owner.compareAndSet(idx, me, -1)) {
            seen.hit(-1);
        }
        if (single) {
            table.unreserve(idx);
            return 0;
        }
        int spill = cache.count() == DescCache.Layout.CAPACITY ? 1 : 0;
        table.freeReserved(idx);
        cache.push(idx);
        return spill;
    }
}
