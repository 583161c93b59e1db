package dev.threadpool.internal.scheduler;

import dev.threadpool.internal.memory.CacheLine;
import dev.threadpool.internal.memory.Mem;
import dev.threadpool.internal.memory.PoolMemory;
import java.lang.foreign.MemorySegment;

/**
 * OutsideDescCaches: one try-locked, acquire-only descriptor cache per outside admission stripe, so that a thread
 * that is neither a worker nor a registered submitter takes its descriptors from the freelist in batches of up to
 * 64 (one CAS each) instead of one CAS on the freelist head per task (issue 48).
 *
 * <h2>Who uses a stripe's cache</h2>
 * An unregistered outside thread accepts its tasks on the admission stripe its thread id hashes to
 * ({@code PoolCounters.outsideStripeOfCurrentThread}); the cache of the same index is its descriptor cache. Unlike a
 * {@link DescCache} it has no single owner: every outside thread hashed to the stripe uses it, so each use is
 * guarded by a try-lock, a word on the cache's own line. A thread that finds the lock held does not wait for it:
 * it takes its descriptor from the freelist, as it did before these caches ({@link #BUSY}). Any other thread may
 * take the lock to drain the cache back to the freelist ({@link #drain}, {@link #drainAll}), so a stripe whose
 * threads went away strands nothing (Slots, "Descriptor caches", hazard rule 5).
 *
 * <h2>Operations</h2>
 * <pre>
 *   pop(i):       tryLock(i) (one CAS 0 -> 1 on LOCK; held: return BUSY, never spin)
 *                 empty? refill: acquireBatch(up to refill) with ONE CAS on the freelist head, reversed
 *                 idx = slots[--count]; reserve(idx)           (FREE -> gen + 1, RESERVED, as acquire(); a
 *                                                               used-up slot is retired: drop it, pop again)
 *                 unlock(i) (release store of 0)
 *   drain(i):     tryLock(i) (held: BUSY); releaseBatch(all) with ONE CAS; count = 0; unlock(i)
 *   drainAll():   drain(i) for every stripe whose COUNT (opaque) is not 0
 * </pre>
 * The cache never takes a slot back: outside threads only acquire (the workers release), so a refill happens only
 * when the cache is empty and a stripe holds at most one refill. With refills of R, a stripe whose threads
 * submit without pause pays one freelist CAS per R descriptors, plus the lock's CAS and release store on a line
 * only that stripe's threads (and a rare drainer) write.
 *
 * <h2>Ordering</h2>
 * The lock is the only synchronisation of the cache's own words: its CAS (volatile, so an acquire) pairs with the
 * release store of the previous holder's unlock, so every plain write of COUNT and SLOTS by an earlier holder
 * happens-before every access of the next. The slots themselves are handed over the same way: the holder that
 * refilled got them from the freelist by its batch CAS, and a later holder's {@code reserve} reads their control
 * words plain, after its lock CAS (DescriptorTable's rule: the last writer of a FREE slot's word handed it to us
 * through a release). {@code COUNT} is also written opaque and read opaque outside the lock, by drainers deciding
 * which stripes to lock: a hint only (a stale value costs a useless lock or a skipped stripe this time), which
 * opaque makes eventually visible to a drainer polling it (a space waiter).
 *
 * <h2>Sizing</h2>
 * {@code refill} is chosen by Slots ({@link Slots#outsideRefill}): the largest power of two at most
 * {@code min(64, queueCapacity / (4 x stripes))}, so all stripes together hold at most a quarter of the table.
 *
 * <h2>Layout</h2>
 * <pre>
 *   stripe i at STRIDE(refill) * i, one block for all stripes:
 *     LOCK   int @0               0 free, 1 held (CAS to take, release store to give back)
 *     COUNT  int @4               cached slots, in [0, refill]: plain under the lock, stored opaque
 *     SLOTS  int[refill] @8       slots[0] bottom ... slots[count - 1] top
 *     pad to stride(refill) = padUp(8 + 4 x refill): 384 for 64, 256 for 32, 128 for 16 or fewer
 * </pre>
 * LOCK, COUNT and the first slots share a line: a thread that takes the lock then reads COUNT and pops from a line
 * it already holds. No two stripes share a line.
 */
public final class OutsideDescCaches {

    /** Off-heap layout of one stripe's cache (see the class comment). */
    public static final class Layout {
        /** Most slots one stripe's cache holds (its largest refill). */
        public static final int CAPACITY = 64;
        public static final long LOCK_OFFSET = 0;
        public static final long COUNT_OFFSET = 4;
        public static final long SLOTS_OFFSET = 8;
        public static final long SLOT_LENGTH = 4;

        private Layout() {}

        /** Bytes of one stripe's cache with refills of {@code refill}, padded to whole PAD units. */
        public static long stride(int refill) {
            return CacheLine.padUp(SLOTS_OFFSET + SLOT_LENGTH * refill);
        }

        static long slot(int i) {
            return SLOTS_OFFSET + SLOT_LENGTH * i;
        }
    }

    /** {@link #pop} and {@link #drain}: another thread holds the stripe's lock; nothing was done. */
    public static final int BUSY = -2;

    private static final int FREE = 0;
    private static final int HELD = 1;

    private final DescriptorTable table;
    /** The whole block; accesses stay on this checked segment, since an outside thread may race the pool's close. */
    private final MemorySegment seg;
    private final int stripes;
    private final int refill;
    private final long stride;

    /**
     * {@code stripes} caches with refills of {@code refill} slots, in one block of {@code memory}.
     *
     * @throws IllegalArgumentException if {@code stripes < 1} or {@code refill} is not in [1, 64]
     */
    public OutsideDescCaches(PoolMemory memory, String purpose, DescriptorTable table, int stripes, int refill) {
        if (stripes < 1) {
            throw new IllegalArgumentException("stripes must be >= 1: stripes=" + stripes);
        }
        if (refill < 1 || refill > Layout.CAPACITY) {
            throw new IllegalArgumentException("refill must be in [1, " + Layout.CAPACITY + "]: refill=" + refill);
        }
        this.table = table;
        this.stripes = stripes;
        this.refill = refill;
        this.stride = Layout.stride(refill);
        this.seg = memory.allocate(purpose, stride * stripes); // zeroed: every lock free, every cache empty
    }

    public int stripes() {
        return stripes;
    }

    public int refill() {
        return refill;
    }

    /**
     * Takes a slot from stripe {@code i}'s cache (refilling it from the freelist when empty) and moves it to
     * {@code (gen + 1, RESERVED)}, exactly like {@link DescriptorTable#acquire()}; returns its index, -1 when the
     * cache and the freelist are both empty, or {@link #BUSY} when another thread holds the stripe's lock.
     */
    public int pop(int i) {
        final MemorySegment s = seg;
        final long b = base(i);
        if (!tryLock(s, b)) {
            return BUSY;
        }
        try {
            for (;;) {
                int n = Mem.getIntPlain(s, b + Layout.COUNT_OFFSET); // plain: under the lock (class comment)
                if (n == 0) {
                    n = refill(s, b);
                    if (n == 0) {
                        return -1;
                    }
                }
                n--;
                int idx = Mem.getIntPlain(s, b + Layout.slot(n)); // plain: under the lock
                // opaque: the drainers' hint (class comment); the lock orders it for the next holder
                Mem.setIntOpaque(s, b + Layout.COUNT_OFFSET, n);
                if (table.reserve(idx)) {
                    return idx;
                }
            }
        } finally {
            unlock(s, b);
        }
    }

    /** Under the lock: one CAS for up to {@code refill} slots, reversed so the freelist's first is on top. */
    private int refill(MemorySegment s, long b) {
        int n = DescCache.refillReversed(table, s, b + Layout.SLOTS_OFFSET, refill); // plain: under the lock
        Mem.setIntOpaque(s, b + Layout.COUNT_OFFSET, n); // opaque: the drainers' hint, as in pop
        return n;
    }

    /**
     * Returns every slot cached in stripe {@code i} to the freelist with one CAS; returns how many, or
     * {@link #BUSY} when another thread holds the stripe's lock (nothing was done).
     */
    public int drain(int i) {
        final MemorySegment s = seg;
        final long b = base(i);
        if (!tryLock(s, b)) {
            return BUSY;
        }
        try {
            int n = Mem.getIntPlain(s, b + Layout.COUNT_OFFSET); // plain: under the lock
            if (n > 0) {
                table.releaseBatch(s, b + Layout.SLOTS_OFFSET, n); // the top, slots[n - 1], ends on top
                Mem.setIntOpaque(s, b + Layout.COUNT_OFFSET, 0); // opaque: the drainers' hint
            }
            return n;
        } finally {
            unlock(s, b);
        }
    }

    /**
     * Drains every stripe that looks non-empty and whose lock is free (one CAS each to lock, one to release its
     * slots); returns the slots moved to the freelist. A stripe held by another thread is skipped: its holder
     * is taking a slot from it right now.
     */
    public int drainAll() {
        int moved = 0;
        for (int i = 0; i < stripes; i++) {
            if (count(i) != 0) {
                int n = drain(i);
                if (n > 0) {
                    moved += n;
                }
            }
        }
        return moved;
    }

    /**
     * Slots cached in stripe {@code i}, read without the lock (opaque: pairs with the holders' opaque stores, see
     * the class comment): a hint for drainers and quiescent checks, exact only while nobody uses the stripe.
     */
    public int count(int i) {
        return Mem.getIntOpaque(seg, base(i) + Layout.COUNT_OFFSET);
    }

    /** Slots cached in all stripes ({@link #count} of each): tests and quiescent checks. */
    public int countAll() {
        int n = 0;
        for (int i = 0; i < stripes; i++) {
            n += count(i);
        }
        return n;
    }

    /** Whether stripe {@code i}'s lock is held right now (opaque load): tests and the purge's wait. */
    public boolean isLocked(int i) {
        return Mem.getIntOpaque(seg, base(i) + Layout.LOCK_OFFSET) != FREE;
    }

    /**
     * White-box hook for tests: takes stripe {@code i}'s lock as {@link #pop} would; false when it is held. The
     * caller must {@link #unlockForTest} it.
     */
    public boolean tryLockForTest(int i) {
        return tryLock(seg, base(i));
    }

    /** White-box hook for tests: gives back a lock taken with {@link #tryLockForTest}. */
    public void unlockForTest(int i) {
        unlock(seg, base(i));
    }

    private long base(int i) {
        if (i < 0 || i >= stripes) {
            throw new IllegalArgumentException("i must be in [0, " + stripes + "): i=" + i);
        }
        return stride * i;
    }

    private static boolean tryLock(MemorySegment s, long b) {
        // opaque pre-check: a held lock is seen without an RMW that would take the line from its holder; the CAS
        // below decides
        if (Mem.getIntOpaque(s, b + Layout.LOCK_OFFSET) != FREE) {
            return false;
        }
        // CAS (volatile, hence acquire): pairs with the previous holder's release store in unlock, so its plain
        // writes of COUNT and SLOTS, and the FREE states of the slots it left, happen-before our accesses
        return Mem.casInt(s, b + Layout.LOCK_OFFSET, FREE, HELD);
    }

    private static void unlock(MemorySegment s, long b) {
        // release: publishes our writes of COUNT and SLOTS (and the refill's claim) to the next holder's lock CAS
        Mem.setIntRelease(s, b + Layout.LOCK_OFFSET, FREE);
    }
}
