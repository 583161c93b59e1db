package dev.threadpool.lincheck.mutants;

import dev.threadpool.internal.memory.CacheLine;
import dev.threadpool.internal.memory.Mem;
import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.BoundedRing;
import java.lang.foreign.MemorySegment;

/**
 * MUTANT of {@link dev.threadpool.internal.queue.CarriedBatches}, for {@code CarriedBatchesLincheck}: a copy with
 * one change, in {@link #take}: the claim of an entry is a load of the state word and a plain store of
 * {@code next + 1} instead of a CAS, so two takers can both take one entry. The Lincheck suite must catch it.
 * Test code only.
 */
public final class PlainTakeBatches {
    /** The most entries one claim takes from the ring; the first is run by the claimer, the rest may be stolen. */
    public static final int MAX_BATCH = 8;

    private static final long NEXT_MASK = 0xFFL;
    private static final int END_SHIFT = 8;
    private static final int GEN_SHIFT = 16;

    /** Off-heap layout: one state word per worker, each on its own {@link CacheLine#PAD}-byte line. */
    public static final class Layout {
        public static final long STATE_OFFSET = 0;

        private Layout() {}

        public static long stateOffset(int w) {
            return (long) w * CacheLine.PAD + STATE_OFFSET;
        }

        public static long byteSize(int workers) {
            return (long) workers * CacheLine.PAD;
        }
    }

    private final MemorySegment seg;
    private final int workers;
    /** Worker w's entries at [(w * MAX_BATCH) * 2, (w + 1) * MAX_BATCH * 2). Plain accesses, ordered by STATE. */
    private final Object[] refs;

    public PlainTakeBatches(PoolMemory memory, int workers) {
        if (workers < 1) {
            throw new IllegalArgumentException("workers must be >= 1, got " + workers);
        }
        this.workers = workers;
        this.seg = memory.allocate("carried batches", Layout.byteSize(workers));
        this.refs = new Object[workers * MAX_BATCH * 2];
        // every STATE starts 0 (next == end == 0: empty); the allocation is zeroed. Published to the workers by
        // whatever publishes this object (a final field of the pool, written before the workers start).
    }

    public int workers() {
        return workers;
    }

    /**
     * Owner {@code w} only: the next carried task for worker {@code w}, into {@code taken[0]} (task) and
     * {@code taken[1]} (group). While its batch holds entries, the next of them ({@link #take}); once it is empty,
     * a claim of up to {@code max} (at most {@link #MAX_BATCH}) from {@code ring} with one CAS
     * ({@link BoundedRing#popManyCarried}), the first for the caller, the rest published for the owner's later
     * takes and for thieves. Returns how many were taken or claimed (0: the batch and the ring's head had nothing).
     *
     * @throws IllegalArgumentException if {@code max} is not in [1, MAX_BATCH]
     */
    public int refill(int w, BoundedRing ring, Object[] taken, int max) {
        if (max < 1 || max > MAX_BATCH) {
            throw new IllegalArgumentException("max must be in [1, " + MAX_BATCH + "], got " + max);
        }
        final long off = Layout.stateOffset(w);
        long s;
        for (;;) {
            // acquire: pairs with the takers' CASes of this batch (the last one made next == end), so their reads
            // of the references happen-before the overwrites below
            s = Mem.getLongAcquire(seg, off);
            if ((s & NEXT_MASK) >= end(s)) {
                break; // empty: ours to refill (nobody else writes an empty word)
            }
            if (take(w, taken)) {
                return 1; // older than anything in the ring
            }
        }
        int oldEnd = end(s);
        final int first = w * MAX_BATCH * 2;
        int n = ring.popManyCarried(refs, first, max);
        for (int i = Math.max(n, 1); i < oldEnd; i++) { // the previous batch's references left past the new one
            refs[first + 2 * i] = null;
            refs[first + 2 * i + 1] = null;
        }
        if (n == 0) {
            if (oldEnd > 1) { // slot 0 was the owner's own entry, cleared at that refill
                Mem.setLongRelease(seg, off, state(gen(s) + 1, 0, 0)); // empty; nobody else writes an empty word
            }
            return 0;
        }
        taken[0] = refs[first];
        taken[1] = refs[first + 1];
        refs[first] = null; // the owner's own entry: never published (next starts at 1)
        refs[first + 1] = null;
        if (n > 1) {
            // seq_cst: publishes the references (release) and is the Dekker half against a parking worker's
            // announce-then-hasStealable (class comment). Nobody else can write an empty word: a plain store
            // would do for the value, the RMW is for the ordering.
            Mem.getAndSetLong(seg, off, state(gen(s) + 1, n, 1));
        } else if (oldEnd > 1) {
            Mem.setLongRelease(seg, off, state(gen(s) + 1, 0, 0)); // leave no stale [next, end) behind
        }
        return n;
    }

    /**
     * Takes the next entry of worker {@code w}'s batch into {@code taken[0]} (task) and {@code taken[1]} (group);
     * false when it has none. Any thread: the owner, a thief, the shutdown sweep.
     */
    public boolean take(int w, Object[] taken) {
        final long off = Layout.stateOffset(w);
        final int first = w * MAX_BATCH * 2;
        for (;;) {
            // acquire: pairs with the owner's publishing getAndSet, making the batch's references visible
            long s = Mem.getLongAcquire(seg, off);
            int next = (int) (s & NEXT_MASK);
            if (next >= end(s)) {
                return false;
            }
            Object task = refs[first + 2 * next]; // plain; kept only if the CAS below wins (class comment)
            Object group = refs[first + 2 * next + 1];
            Mem.setLongVolatile(seg, off, s + 1); // MUTANT: a store, not a CAS: two takers can claim one entry
            taken[0] = task;
            taken[1] = group;
            return true;
        }
    }

    /** Whether worker {@code w}'s batch has an entry left (a volatile load: the parking re-check's half). */
    public boolean hasStealable(int w) {
        long s = Mem.getLongVolatile(seg, Layout.stateOffset(w));
        return (s & NEXT_MASK) < end(s);
    }

    /** Whether any worker's batch has an entry left (volatile loads; a hint unless ordered by the caller). */
    public boolean anyStealable() {
        for (int w = 0; w < workers; w++) {
            if (hasStealable(w)) {
                return true;
            }
        }
        return false;
    }

    /** Entries left in every batch (volatile loads; a snapshot for gauges and tests). */
    public int size() {
        int n = 0;
        for (int w = 0; w < workers; w++) {
            long s = Mem.getLongVolatile(seg, Layout.stateOffset(w));
            n += Math.max(0, end(s) - (int) (s & NEXT_MASK));
        }
        return n;
    }

    private static int end(long s) {
        return (int) ((s >>> END_SHIFT) & NEXT_MASK);
    }

    private static long gen(long s) {
        return s >>> GEN_SHIFT;
    }

    private static long state(long gen, int end, int next) {
        return gen << GEN_SHIFT | (long) end << END_SHIFT | next;
    }
}
