package dev.threadpool.internal.scheduler;

import dev.threadpool.internal.memory.CacheLine;
import dev.threadpool.internal.memory.Mem;
import dev.threadpool.internal.memory.PoolMemory;
import java.lang.foreign.MemorySegment;

/**
 * A LIFO of up to 64 free descriptor slots owned by one thread (one per worker, one per registered
 * submitter), so that most acquires and releases of a descriptor touch no shared word at all.
 *
 * <h2>Ownership</h2>
 * Only the owner calls any method, so every access to the cache's own block is plain. The slots in the
 * cache are FREE (their control word says so; {@link DescriptorTable#countFree()} counts them) but off the
 * global freelist: nobody else can hand them out. The cache therefore must be emptied with {@link #drainAll()}
 * whenever its owner goes away (worker exit, submitter release, pool close), or the slots are stranded.
 * It lives off-heap, in a block of the pool's {@link PoolMemory}, like all pool-owned state.
 *
 * <h2>Operations</h2>
 * <pre>
 *   pop():      empty? refill: acquireBatch(up to refillMax, at most 64) with ONE CAS on the freelist head
 *               idx = slots[--count]; reserve(idx)            (FREE -> gen + 1, RESERVED, as acquire();
 *                                                              a used-up slot is retired: drop it, pop again)
 *   push(idx):  idx FREE and owned by the caller
 *               full (limit, 64 unless sized smaller)? spill: releaseBatch(oldest three quarters) with ONE
 *               CAS, keep the newest quarter (at least one)
 *               slots[count++] = idx
 *   drainAll(): releaseBatch(all) with ONE CAS; count = 0
 * </pre>
 * Spilling three quarters rather than all (or one) gives hysteresis: after a spill the cache can absorb
 * 3 x limit / 4 releases and serve limit / 4 acquires before it touches the freelist again, so an owner that
 * alternates around the boundary does not pay a shared CAS per operation. Three quarters rather than half
 * because the owner that fills its cache is one that gives back more than it takes (a worker running tasks
 * submitted from outside): it spills again after 3 x limit / 4 more releases, so each spill's CAS is shared by
 * that many, 48 at the full 64 (issue 48: 1/48 of a freelist CAS per task released; half was 1/32). The oldest
 * slots are spilled because the newest are the ones still in this core's cache. Refill reverses the batch, so
 * the cache pops slots in the same order the freelist would have.
 *
 * <h2>Batch freelist: walk-then-CAS on the existing tagged Treiber stack</h2>
 * The refill must be one atomic operation and O(64), and the single-slot {@code acquire()}/{@code push()}
 * used by {@link PoolCore} must keep working unchanged beside it. Three designs were weighed:
 * <ul>
 *   <li><b>Exchange the whole chain</b> ({@code getAndSet(head, EMPTY)}), keep 64, push the rest back.
 *       Rejected: pushing the remainder back needs its tail (O(n) walk) unless nothing was pushed meanwhile,
 *       and, worse, while the chain is detached the freelist looks empty: a concurrent {@code acquire()}
 *       returns -1 and {@code hasFree()} says false with thousands of slots free, so a submitter would be
 *       rejected or parked spuriously. That changes acquire()'s behaviour, which is not ours to change.</li>
 *   <li><b>A stack of 64-slot magazines.</b> O(1) refill and spill, but the single-slot acquire() and
 *       push() would have to split and rebuild magazines: a change of the existing freelist.</li>
 *   <li><b>Walk-then-CAS</b> (chosen, {@link DescriptorTable#acquireBatch}). Read the tagged head, follow
 *       up to 64 {@code NEXT_FREE} links, then CAS the head from the value read to {tag + 1, the 65th}. The
 *       tag is what makes this ABA-safe: a link can change only after its slot was popped, and any pop or
 *       push increments the tag, so a walk through a list that changed fails its CAS. One atomic operation,
 *       64 dependent loads, and acquire()/push() are untouched: they see an ordinary pop of 64.
 *       {@link DescriptorTable#releaseBatch} links the batch privately and splices it on with one CAS,
 *       rewriting only its bottom link on a retry.</li>
 * </ul>
 * The cost of walk-then-CAS is a wider window (up to 64 loads instead of 1) for a competing single pop or push to
 * fail the CAS. After each failure the walk is halved, so under contention a refill degrades to single pops
 * instead of starving.
 *
 * <h2>Contract (with the freelist)</h2>
 * The freelist is a linearizable stack: {@code acquire}, {@code push} and {@code releaseBatch} are each one
 * atomic step (a batch release pushes its slots in order, the last one on top). {@code acquireBatch}, and
 * so a refill, is two steps, its first load of the head and its claim, and is weaker in one way: after a
 * lost CAS it halves its walk, so under contention it may take fewer slots than are free at its claim,
 * down to one; each halving is paid for by another thread's successful change of the head in between, and
 * it returns 0 only when the freelist is empty. A cached slot is FREE but off the freelist, so another
 * owner's acquire may return -1 while slots sit in caches. The pool tolerates both: a short refill only
 * brings the next refill closer, and a producer that finds no slot waits as a space waiter; while it waits,
 * releases bypass the caches and signal, idle workers flush theirs, and its park is capped (the caching
 * hazard in {@link Slots}). {@code FreelistLincheck} checks this with one DescCache per
 * thread beside single and batch operations on the table: no slot handed out twice, lost, or out of stack
 * order.
 *
 * <h2>Layout</h2>
 * <pre>
 *   COUNT  int @0               number of cached slots, in [0, limit]
 *   SLOTS  int[limit] @8        slots[0] oldest ... slots[count - 1] top; limit <= CAPACITY = 64
 *   pad to stride(limit) = padUp(8 + 4 x limit): 384 (three PAD units) for a full cache of 64, 256 for
 *   32, 128 for 16 or fewer: the block shares no line with another owner's data
 * </pre>
 * Several caches may share one block ({@link #allocateArray}), each at a multiple of {@link Layout#stride}
 * of their limit; a cache of its own takes {@link Layout#STRIDE}, the stride of a full one. Issue 48 raised
 * CAPACITY from 32 to 64: at 64 workers with the default capacity (16384 there) a worker cache of 64 spills 48
 * with one CAS, 1/48 of a freelist CAS per task released, where the 16-slot caches of 4096 descriptors
 * spilled 8 (1/8).
 */
public final class DescCache {

    /** Off-heap layout of one cache (see the class comment). */
    public static final class Layout {
        public static final int CAPACITY = 64;
        public static final long COUNT_OFFSET = 0;
        public static final long SLOTS_OFFSET = 8;
        public static final long SLOT_LENGTH = 4;
        /** Bytes of a cache of {@link #CAPACITY} slots, padded: 384. */
        public static final long STRIDE = stride(CAPACITY);

        private Layout() {}

        /** Bytes of one cache of at most {@code limit} slots, padded to whole PAD units. */
        public static long stride(int limit) {
            return CacheLine.padUp(SLOTS_OFFSET + SLOT_LENGTH * limit);
        }

        public static long slot(int i) {
            return SLOTS_OFFSET + SLOT_LENGTH * i;
        }
    }

    private final DescriptorTable table;
    private final MemorySegment seg;
    /** Most slots one refill takes from the freelist, in [1, limit]. */
    private final int refillMax;
    /**
     * Most slots this cache holds, a power of two in [2, CAPACITY]: a push that finds it full spills all but
     * the newest quarter ({@link #keptAfterSpill}).
     */
    private final int limit;

    private DescCache(DescriptorTable table, MemorySegment seg, int refillMax, int limit) {
        this.table = table;
        this.seg = seg;
        this.refillMax = refillMax;
        this.limit = limit;
    }

    /** One cache in its own block. */
    public DescCache(PoolMemory memory, String purpose, DescriptorTable table) {
        this(table, memory.allocate(purpose, Layout.STRIDE), Layout.CAPACITY, Layout.CAPACITY);
    }

    /** {@code count} caches in one block (one allocation for all workers or all submitter slots). */
    public static DescCache[] allocateArray(PoolMemory memory, String purpose, DescriptorTable table, int count) {
        return allocateArray(memory, purpose, table, count, Layout.CAPACITY);
    }

    /**
     * As {@link #allocateArray(PoolMemory, String, DescriptorTable, int)}, with refills of at most
     * {@code refillMax} slots: an owner that only acquires (a submitter) then holds at most that many.
     */
    public static DescCache[] allocateArray(PoolMemory memory, String purpose, DescriptorTable table, int count,
            int refillMax) {
        return allocateArray(memory, purpose, table, count, refillMax, Layout.CAPACITY);
    }

    /**
     * As {@link #allocateArray(PoolMemory, String, DescriptorTable, int, int)}, each cache holding at most
     * {@code limit} slots (a power of two in [2, {@link Layout#CAPACITY}]; a full one spills all but
     * {@code limit / 4}): smaller caches for many owners of a small table (Slots, "worker caches sized by capacity over workers").
     */
    public static DescCache[] allocateArray(PoolMemory memory, String purpose, DescriptorTable table, int count,
            int refillMax, int limit) {
        if (count < 1) {
            throw new IllegalArgumentException("count must be >= 1: count=" + count);
        }
        if (limit < 2 || limit > Layout.CAPACITY || Integer.bitCount(limit) != 1) {
            throw new IllegalArgumentException("limit must be a power of two in [2, " + Layout.CAPACITY + "]: limit="
                    + limit);
        }
        if (refillMax < 1 || refillMax > limit) {
            throw new IllegalArgumentException("refillMax must be in [1, limit=" + limit + "]: refillMax="
                    + refillMax);
        }
        final long stride = Layout.stride(limit);
        MemorySegment block = memory.allocate(purpose, stride * count);
        DescCache[] out = new DescCache[count];
        for (int i = 0; i < count; i++) {
            out[i] = new DescCache(table, block.asSlice(stride * i, stride), refillMax, limit);
        }
        return out;
    }

    /** Most slots this cache holds. */
    public int limit() {
        return limit;
    }

    /**
     * Slots cached, read by another thread (acquire: pairs with the release store of {@link #drainAll}); only
     * for quiescent checks such as {@code purgeWorkerCaches}, never a decision on the hot path.
     */
    public int countAcquire() {
        return Mem.getIntAcquire(seg, Layout.COUNT_OFFSET);
    }

    /** Slots currently cached. */
    public int count() {
        return Mem.getIntPlain(seg, Layout.COUNT_OFFSET);
    }

    /**
     * Takes a slot and moves it to {@code (gen + 1, RESERVED)}, exactly like {@link DescriptorTable#acquire()};
     * returns its index, or -1 when the cache and the freelist are both empty. A slot whose generations are
     * used up is retired by {@code reserve} and dropped here; the next one is taken.
     */
    public int pop() {
        final MemorySegment s = seg;
        for (;;) {
            int n = Mem.getIntPlain(s, Layout.COUNT_OFFSET);
            if (n == 0) {
                n = refill();
                if (n == 0) {
                    return -1;
                }
            }
            n--;
            int idx = Mem.getIntPlain(s, Layout.slot(n));
            Mem.setIntPlain(s, Layout.COUNT_OFFSET, n);
            if (table.reserve(idx)) {
                return idx;
            }
        }
    }

    /** One CAS for up to refillMax slots; reverses them so the first one popped from the freelist is on top. */
    private int refill() {
        final MemorySegment s = seg;
        int n = refillReversed(table, s, Layout.SLOTS_OFFSET, refillMax);
        Mem.setIntPlain(s, Layout.COUNT_OFFSET, n);
        return n;
    }

    /**
     * A refill's two steps, shared with {@link OutsideDescCaches}: up to {@code max} slots from the freelist with
     * one CAS ({@link DescriptorTable#acquireBatch}) into the int array at {@code slots} of {@code s}, then reversed
     * so that the first one the freelist would have handed out is on top. Plain accesses: the caller owns the
     * array (its owner, or the holder of its stripe's lock). Returns how many, 0 when the freelist is empty.
     */
    static int refillReversed(DescriptorTable table, MemorySegment s, long slots, int max) {
        int n = table.acquireBatch(s, slots, max);
        for (int i = 0, j = n - 1; i < j; i++, j--) {
            long lo = slots + Layout.SLOT_LENGTH * i;
            long hi = slots + Layout.SLOT_LENGTH * j;
            int a = Mem.getIntPlain(s, lo);
            Mem.setIntPlain(s, lo, Mem.getIntPlain(s, hi));
            Mem.setIntPlain(s, hi, a);
        }
        return n;
    }

    /**
     * Caches a slot that is FREE and owned by the caller (after {@code freeReserved}, or a won
     * {@code tryReleaseWaitable}). When the cache is full its oldest three quarters go back to the freelist first
     * (one CAS), the newest quarter stays.
     *
     * @throws IllegalStateException if the slot is not FREE
     */
    public void push(int idx) {
        long c = table.ctlAcquire(idx);
        if (DescriptorTable.state(c) != DescriptorTable.FREE) {
            throw new IllegalStateException("slot must be FREE to cache: idx=" + idx + ", state="
                    + DescriptorTable.state(c));
        }
        final MemorySegment s = seg;
        int n = Mem.getIntPlain(s, Layout.COUNT_OFFSET);
        final int full = limit;
        if (n == full) {
            final int spill = full - keptAfterSpill(full);
            table.releaseBatch(s, Layout.SLOTS_OFFSET, spill); // one CAS for the oldest three quarters
            MemorySegment.copy(s, Layout.slot(spill), s, Layout.SLOTS_OFFSET, Layout.SLOT_LENGTH * (full - spill));
            n = full - spill;
        }
        Mem.setIntPlain(s, Layout.slot(n), idx);
        Mem.setIntPlain(s, Layout.COUNT_OFFSET, n + 1);
    }

    /** Slots a full cache of {@code limit} keeps when it spills: the newest quarter, at least one. */
    static int keptAfterSpill(int limit) {
        return Math.max(1, limit >>> 2);
    }

    /** Returns every cached slot to the freelist with one CAS; afterwards {@link #count()} is 0. */
    public void drainAll() {
        final MemorySegment s = seg;
        int n = Mem.getIntPlain(s, Layout.COUNT_OFFSET);
        if (n > 0) {
            table.releaseBatch(s, Layout.SLOTS_OFFSET, n); // slots[n - 1], the top, ends on top
            // release: a quiescence check in another thread (countAcquire) that reads 0 also sees the slots
            // back on the freelist (the CAS above precedes this store).
            Mem.setIntRelease(s, Layout.COUNT_OFFSET, 0);
        }
    }
}
