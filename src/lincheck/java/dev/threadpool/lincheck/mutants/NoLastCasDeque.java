package dev.threadpool.lincheck.mutants;

import dev.threadpool.internal.memory.CacheLine;
import dev.threadpool.internal.memory.Capacity;
import dev.threadpool.internal.memory.Mem;
import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.QueueEntry;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;

/**
 * MUTANT of {@link dev.threadpool.internal.queue.WorkDeque}, for {@code WorkDequeLincheck}: a copy with one
 * change, in {@link #take}: the last entry is taken without the CAS on top, so a thief that already read
 * top and the slot claims it too and the entry comes out twice. The Lincheck suite must catch it. Test
 * code only.
 */
public final class NoLastCasDeque implements AutoCloseable {

    /** Returned by {@link #steal()} when it lost the CAS on top to another thief or to the owner; retry. */
    public static final long ABORT = 0xFFFF_FFFF_FFFF_FFFEL;

    /**
     * Off-heap layout. The control block holds the three shared words, each on its own
     * {@link CacheLine#PAD}-byte line: thieves CAS {@code TOP}, the owner writes {@code BOTTOM} on every
     * operation, {@code ARRAY} changes only on growth and is read by every steal.
     * <pre>
     *   control block (3 * PAD bytes):
     *   0        TOP     (long)  next index to steal; only grows; CAS by thieves and by take's last entry
     *   PAD      BOTTOM  (long)  next index to push; written by the owner only
     *   2*PAD    ARRAY   (long)  generation g of the current array (its capacity: initialCapacity &lt;&lt; g)
     *
     *   array of generation g (capacity * SLOT_LENGTH bytes, one releasable block each):
     *   0        slot 0  (long)
     *   8        slot 1  (long)   index i lives in slot i &amp; (capacity - 1)
     *   ...
     * </pre>
     */
    public static final class Layout {
        public static final long TOP_OFFSET = 0;
        public static final long BOTTOM_OFFSET = CacheLine.PAD;
        public static final long ARRAY_OFFSET = 2L * CacheLine.PAD;
        public static final long CONTROL_LENGTH = 3L * CacheLine.PAD;
        public static final long SLOT_LENGTH = Long.BYTES;
        public static final int MIN_CAPACITY = 2;
        public static final int MAX_CAPACITY = 1 << 26;

        private Layout() {}

        /** Byte size of an array of {@code capacity} slots. */
        public static long arrayByteSize(long capacity) {
            return SLOT_LENGTH * capacity;
        }

        /** Byte offset of index {@code i} in an array whose capacity is {@code mask + 1}. */
        public static long slotOffset(long i, long mask) {
            return (i & mask) * SLOT_LENGTH;
        }

        public static int checkCapacity(String name, int capacity) {
            return Capacity.checkPowerOfTwo(name, capacity, MIN_CAPACITY, MAX_CAPACITY);
        }

        /** How many generations an array starting at {@code initialCapacity} can reach, the first included. */
        public static int generations(int initialCapacity) {
            return Integer.numberOfTrailingZeros(MAX_CAPACITY) - Integer.numberOfTrailingZeros(initialCapacity) + 1;
        }
    }

    private final PoolMemory memory;
    private final String purpose;
    private final MemorySegment ctl;
    private final int initialCapacity;
    /** Array of each generation; slot g is written once by the owner before ARRAY = g is released. */
    private final MemorySegment[] generations;
    private boolean closed; // guarded by this (close only)

    /**
     * Creates an empty deque with an array of {@code initialCapacity} slots.
     *
     * @param initialCapacity power of two in [{@link Layout#MIN_CAPACITY}, {@link Layout#MAX_CAPACITY}]
     */
    public NoLastCasDeque(PoolMemory memory, String purpose, int initialCapacity) {
        this.initialCapacity = Layout.checkCapacity("initialCapacity", initialCapacity);
        this.memory = memory;
        this.purpose = purpose;
        this.generations = new MemorySegment[Layout.generations(initialCapacity)];
        this.ctl = memory.allocateReleasable(purpose + " control", Layout.CONTROL_LENGTH);
        try {
            generations[0] = memory.allocateReleasable(purpose + " array 0",
                    Layout.arrayByteSize(initialCapacity));
        } catch (RuntimeException | Error e) {
            memory.release(ctl);
            throw e;
        }
        // TOP, BOTTOM and ARRAY start at 0 (blocks are zeroed). Publication of the deque to thieves happens
        // through whatever publishes this object (a final field written before the workers start).
    }

    // =====================================================================================================
    // Owner only: push, take, grow
    // =====================================================================================================

    /**
     * Pushes {@code value} at the bottom. Owner only. Allocates only when the array is full and doubles.
     *
     * @throws IllegalArgumentException if {@code value} is {@link QueueEntry#EMPTY} or {@link #ABORT}
     * @throws IllegalStateException if the deque already holds {@link Layout#MAX_CAPACITY} entries
     */
    public void push(long value) {
        if ((value | 1L) == -1L) { // exactly the two sentinels, -1 and -2
            throw new IllegalArgumentException("value must not be EMPTY (-1) or ABORT (-2): value=" + value);
        }
        final MemorySegment c = ctl;
        long b = Mem.getLongPlain(c, Layout.BOTTOM_OFFSET); // plain: only the owner writes bottom
        // acquire: pairs with the successful CAS on top of a thief (or of our own last-entry take); the
        // thief's read of slot t happens-before we reuse that slot for index t + capacity.
        long t = Mem.getLongAcquire(c, Layout.TOP_OFFSET);
        long g = Mem.getLongPlain(c, Layout.ARRAY_OFFSET); // plain: only the owner writes ARRAY
        MemorySegment a = generations[(int) g];
        long mask = capacityOf(g) - 1;
        if (b - t > mask) {
            g = grow(a, g, t, b);
            a = generations[(int) g];
            mask = capacityOf(g) - 1;
        }
        // opaque (C11 relaxed): a thief that read a stale top may read this slot concurrently; it then
        // fails its CAS and discards what it read.
        Mem.setLongOpaque(a, Layout.slotOffset(b, mask), value);
        // release fence: the slot write above is ordered before every later store of bottom, this push's
        // and the next take's. Pairs with the thief's acquire load of bottom, whichever of those stores it
        // reads. (A release *store* of bottom would cover only this push's store.)
        VarHandle.releaseFence();
        Mem.setLongOpaque(c, Layout.BOTTOM_OFFSET, b + 1); // relaxed; published by the fence above
    }

    /**
     * Takes the newest entry at the bottom, or {@link QueueEntry#EMPTY}. Owner only. Never blocks; the
     * only CAS is on the last entry.
     */
    public long take() {
        final MemorySegment c = ctl;
        long b = Mem.getLongPlain(c, Layout.BOTTOM_OFFSET) - 1; // plain: only the owner writes bottom
        long g = Mem.getLongPlain(c, Layout.ARRAY_OFFSET); // plain: only the owner writes ARRAY
        // relaxed store: reserve index b before looking at top. Read by the thief's acquire load of bottom
        // after its full fence.
        Mem.setLongOpaque(c, Layout.BOTTOM_OFFSET, b);
        // FULL FENCE, pairs with the full fence in steal(): either this thread's top load sees the thief's
        // CAS, or the thief's bottom load sees our store above. Without it the top load may complete while
        // the bottom store still sits in the store buffer (x86-TSO allows store->load reordering): we read
        // a stale top, a thief reads a stale bottom, and both take index b (seed 002 Case 3).
        VarHandle.fullFence();
        long t = Mem.getLongOpaque(c, Layout.TOP_OFFSET); // relaxed; ordered after the store by the fence
        if (t > b) { // was empty: undo the reservation
            Mem.setLongOpaque(c, Layout.BOTTOM_OFFSET, b + 1);
            return QueueEntry.EMPTY;
        }
        MemorySegment a = generations[(int) g];
        long x = Mem.getLongPlain(a, Layout.slotOffset(b, capacityOf(g) - 1)); // plain: we wrote it
        if (t == b) { // the last entry: the thieves may be after it too, so the CAS decides
            // CAS (seq_cst): competes with the thieves' CAS on top for index t; exactly one succeeds.
            // MUTATION: no CAS on top for the last entry (the real deque competes with the thieves here).
            // relaxed: the deque is now empty with top == bottom == b + 1
            Mem.setLongOpaque(c, Layout.BOTTOM_OFFSET, b + 1);
        }
        return x;
    }

    /**
     * Doubles the array: copies {@code [t, b)} to the same indices of a fresh array and publishes it. The old
     * array stays allocated (retired) until {@link #close()}. Returns the new generation. Owner only; cold.
     */
    private long grow(MemorySegment old, long g, long t, long b) {
        long oldCap = capacityOf(g);
        if (oldCap >= Layout.MAX_CAPACITY) {
            throw new IllegalStateException("work deque full: it holds " + (b - t) + " entries, the maximum"
                    + " capacity is " + Layout.MAX_CAPACITY + " (" + purpose + ")");
        }
        long newCap = oldCap * 2;
        long oldMask = oldCap - 1;
        long newMask = newCap - 1;
        MemorySegment n = memory.allocateReleasable(purpose + " array " + (g + 1), Layout.arrayByteSize(newCap));
        for (long i = t; i < b; i++) {
            // plain both sides: the old slots were written by this thread, the new array is not yet shared.
            Mem.setLongPlain(n, Layout.slotOffset(i, newMask), Mem.getLongPlain(old, Layout.slotOffset(i, oldMask)));
        }
        generations[(int) (g + 1)] = n; // plain, write-once; published by the release store below
        // release: the copied slots and generations[g + 1] are visible to any thread whose acquire load of
        // ARRAY reads g + 1 (steal). Seed: atomic_store_explicit(&q->array, n, memory_order_release).
        Mem.setLongRelease(ctl, Layout.ARRAY_OFFSET, g + 1);
        return g + 1;
    }

    // =====================================================================================================
    // Any thread: steal
    // =====================================================================================================

    /**
     * Steals the oldest entry at the top. Returns it, {@link QueueEntry#EMPTY} when the deque looked empty,
     * or {@link #ABORT} when another thief or the owner's last-entry take won the CAS (the caller may retry
     * or try another victim). Any thread; never blocks, never allocates.
     */
    public long steal() {
        final MemorySegment c = ctl;
        // acquire: pairs with the CAS of the previous winner on top.
        long t = Mem.getLongAcquire(c, Layout.TOP_OFFSET);
        // FULL FENCE, pairs with the full fence in take(): both fences are in one total order, so either
        // take's top load sees every top CAS made before our fence, or our bottom load sees take's lowered
        // bottom. Without it the bottom load may be satisfied before the top load (ARM/POWER reorder loads;
        // so may the JIT): we pair a new top with an old bottom and steal the index take just reserved.
        VarHandle.fullFence();
        // acquire: pairs with push's release fence (via the bottom store of that push or of a later take),
        // so the slot at t is visible, and so is any array published before it (see ARRAY below).
        long b = Mem.getLongAcquire(c, Layout.BOTTOM_OFFSET);
        if (t >= b) {
            return QueueEntry.EMPTY;
        }
        // acquire, after the bottom load: pairs with grow's release store; we see the array that holds
        // index t as of the bottom we read, or a newer one with the same entry copied in.
        long g = Mem.getLongAcquire(c, Layout.ARRAY_OFFSET);
        MemorySegment a = generations[(int) g]; // plain: written before the release of ARRAY == g
        // opaque (C11 relaxed): if the owner is concurrently reusing this slot, top has moved past t and the
        // CAS below fails, so a stale value is never returned.
        long x = Mem.getLongOpaque(a, Layout.slotOffset(t, capacityOf(g) - 1));
        // CAS (seq_cst): claims index t against other thieves and the owner's last-entry CAS.
        if (!Mem.casLong(c, Layout.TOP_OFFSET, t, t + 1)) {
            return ABORT;
        }
        return x;
    }

    // =====================================================================================================
    // Any thread: observers
    // =====================================================================================================

    /**
     * {@code bottom - top} from two volatile loads, top first, clamped at 0 (take lowers bottom below top for
     * a moment on an empty deque). Exact only when the deque is quiescent.
     */
    public long size() {
        long t = Mem.getLongVolatile(ctl, Layout.TOP_OFFSET);
        long b = Mem.getLongVolatile(ctl, Layout.BOTTOM_OFFSET);
        return Math.max(0, b - t);
    }

    /** {@code size() == 0}; volatile loads, as for {@link BoundedRing#isEmpty()}. */
    public boolean isEmpty() {
        return size() == 0;
    }

    /** Slots in the current array. */
    public long capacity() {
        // acquire: pairs with grow's release store of ARRAY.
        return capacityOf(Mem.getLongAcquire(ctl, Layout.ARRAY_OFFSET));
    }

    private long capacityOf(long g) {
        return (long) initialCapacity << g;
    }

    // =====================================================================================================
    // Shutdown
    // =====================================================================================================

    /**
     * Frees the current array, every retired one and the control block. Only once no thread uses the deque
     * (the pool calls it after its workers have stopped). Idempotent; a no-op if the pool memory was closed
     * first (which freed everything already).
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (memory.isClosed()) {
            return;
        }
        for (MemorySegment a : generations) {
            if (a != null) {
                memory.release(a);
            }
        }
        memory.release(ctl);
    }
}
