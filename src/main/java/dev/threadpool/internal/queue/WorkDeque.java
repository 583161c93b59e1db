package dev.threadpool.internal.queue;

import dev.threadpool.internal.memory.CacheLine;
import dev.threadpool.internal.memory.Capacity;
import dev.threadpool.internal.memory.Mem;
import dev.threadpool.internal.memory.PoolMemory;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;

/**
 * Chase–Lev work-stealing deque of queue entries: the local queue of a work-stealing worker. One owner
 * thread pushes and takes at the bottom (LIFO, cache-hot); any thread may steal at the top (FIFO, the
 * oldest and, in divide-and-conquer work, the biggest entry).
 *
 * <h2>Algorithm</h2>
 * D. Chase, Y. Lev, "Dynamic Circular Work-Stealing Deque", SPAA 2005, with the C11 orderings of
 * N. M. Lê, A. Pop, A. Cohen, F. Zappa Nardelli, "Correct and Efficient Work-Stealing for Weak Memory
 * Models", PPoPP 2013 (the form in seed 002), mapped one to one onto {@code VarHandle} modes:
 * <pre>
 *   push(x)  owner  b = bottom; t = top (acquire); grow if b - t == capacity;
 *                   buf[b] = x; RELEASE FENCE; bottom = b + 1
 *   take()   owner  b = bottom - 1; bottom = b; FULL FENCE; t = top
 *                   t &lt; b   mine, no CAS
 *                   t == b  last entry: CAS top t -&gt; t + 1 against the thieves; bottom = b + 1
 *                   t &gt; b   was empty: bottom = b + 1
 *   steal()  any    t = top (acquire); FULL FENCE; b = bottom (acquire)
 *                   t &lt; b: array (acquire); x = buf[t]; CAS top t -&gt; t + 1, or ABORT
 * </pre>
 * Entries live in {@code [top, bottom)}; index {@code i} is in slot {@code i & (capacity - 1)}. Indices are
 * signed 64-bit: {@code take()} on an empty deque computes {@code b = -1} and {@code t <= b} stays false
 * (with unsigned indices it would wrap and "find" an entry, seed 002 Case 4). At 10^9 pushes a second they
 * last about 292 years.
 *
 * <h2>Why each ordering (details in native-notes/MEMORY_ORDERING.md, section work-deque)</h2>
 * <ul>
 *   <li>The full fence in {@code take} and the one in {@code steal} form a Dekker pair: of the owner (store
 *       bottom, load top) and a thief (load top, load bottom), at least one sees the other. Without the
 *       owner's fence, x86 lets the top load pass the buffered bottom store and one entry comes out twice
 *       (seed 002 Case 3, reproduced by {@code mutants.NoFenceDequeTest}).</li>
 *   <li>The CAS on {@code top} decides every steal and the owner's last entry: {@code top} only grows, so
 *       the 64-bit CAS has no ABA.</li>
 *   <li>The release fence in {@code push} publishes the slot before any later store of {@code bottom}
 *       (the push's own and the next take's), read by the thief's acquire load.</li>
 * </ul>
 *
 * <h2>Growth and retirement</h2>
 * When full, {@code push} doubles the buffer: a fresh off-heap array, entries {@code [top, bottom)} copied to
 * the same indices, then published. A thief may have loaded the old array and not yet read from it, so the
 * old array is retired, not freed: every array ever used stays allocated until {@link #close()}, which frees
 * them all and the control block, so {@link PoolMemory#liveBytes()} returns to exactly its value before the
 * deque existed. Retired arrays cost at most the current one's size again (2 + 4 + ... + n/2 &lt; n). Push
 * allocates only when it grows; a latency-sensitive user sizes {@code initialCapacity} so it never does.
 *
 * <p>A growth that fails (the allocation throws, or the deque is at {@link Layout#MAX_CAPACITY}) throws out of
 * {@code push} before anything is written: the deque is unchanged and the value was not pushed, so the caller
 * still holds it and can place it elsewhere (the pool's local queues put it on the inject ring).
 *
 * <h2>The array "pointer"</h2>
 * Java cannot keep a reference to a segment in off-heap memory. The off-heap {@code ARRAY} word holds the
 * <em>generation</em> {@code g} of the current array; the arrays themselves sit in {@link #generations}, an
 * on-heap array allocated once with one slot per possible generation, each slot written once (plain) before
 * its generation is published with a release store of {@code ARRAY}. A thief's acquire load of {@code ARRAY}
 * followed by a plain read of {@code generations[g]} is the seed's
 * {@code atomic_load_explicit(&q->array, memory_order_acquire)}, and grow's
 * {@code generations[g+1] = n; setLongRelease(ARRAY, g+1)} is its
 * {@code atomic_store_explicit(&q->array, n, memory_order_release)}. Array {@code g} has
 * {@code initialCapacity << g} slots, so the mask follows from {@code g} too. The owner, which writes
 * {@code ARRAY}, keeps a plain copy of the current array's segment, address and mask in fields of its own and
 * never loads {@code ARRAY} back: a push and a take cost about 1.5 ns less than through {@code ARRAY} and
 * {@code generations} (PERFORMANCE_TRACKING entry 75).
 *
 * <h2>Access: raw addresses for the owner's and the thieves' operations</h2>
 * {@code push}, {@code take}, {@code steal} and growth reach the control block and the arrays by their raw
 * addresses ({@link Mem#getLongPlainAt} and siblings, through one segment constant) where {@link Mem#RAW}, and by
 * segment and offset otherwise. A segment held in a field is not a constant to the JIT, and every fence of
 * this algorithm (and every acquire load) makes it reload the segment's address, size and session and redo
 * its checks at each access: a push and a take cost 12 to 16 ns that way against about 5.5 ns by raw address
 * (PERFORMANCE_TRACKING entry 32). The price is that nothing checks the block is still allocated, so these
 * four operations must never run after {@link #close()}: the pool calls them from its workers (owner and
 * thieves) and from lifecycle paths inside its arena-caller region, and closes its deques only after every
 * worker has been joined (native-notes/FFM.md, "Raw addresses"). {@link #size()}, {@link #isEmpty()} and
 * {@link #capacity()}, which any thread may call (a stats snapshot, a depth sample), keep the checked
 * segment accesses.
 *
 * <h2>Values</h2>
 * Any long except the two sentinels: {@link QueueEntry#EMPTY} ({@code -1}, nothing there) and {@link #ABORT}
 * ({@code 0xFFFF_FFFF_FFFF_FFFE}, steal lost a race). A real entry's low word is a descriptor index below
 * {@code 2^24}, so it is never {@code 0xFFFF_FFFF} or {@code 0xFFFF_FFFE}; {@code push} rejects both anyway.
 *
 * <h2>Invariants</h2>
 * [top never decreases] [only the owner writes bottom and ARRAY] [every pushed entry is returned by at most
 * one take or steal] [bottom - top in [-1, capacity] at all times, -1 only inside take on an empty deque]
 * [an array is freed only by close(), never while the deque is in use].
 *
 * <h2>Contract</h2>
 * An unbounded deque (the array grows), with two weaknesses, both lost races and never losses:
 * <ul>
 *   <li><b>steal may ABORT</b> although the deque is not empty, exactly when another thief, or the
 *       owner's take of the last entry, won the CAS on top after this steal loaded top. Never spuriously.
 *       The pool's callers ({@code ChaseLevLocalQueues}) retry at once.</li>
 *   <li><b>Taking the last entry is two steps.</b> The store of bottom reserves it: a steal that loads
 *       bottom from then on returns EMPTY. The CAS on top then claims it, against thieves that loaded
 *       bottom before; if one of them wins, take returns EMPTY. So a steal may return EMPTY while the
 *       deque holds one entry that the owner is taking, and the next steal, which loaded top before the
 *       owner's CAS, may then ABORT. Whoever wins the CAS runs the entry, so nothing is lost; a worker
 *       that parks on such an EMPTY has not missed work it could have had.</li>
 * </ul>
 * Otherwise every operation is one atomic step: push appends at the bottom, take removes the newest, a
 * successful steal the oldest. {@code WorkDequeLincheck} checks this contract and shows both weaknesses.
 *
 * <h2>Threads</h2>
 * {@link #push} and {@link #take} only from the owner (one thread at a time; a hand-over needs a
 * happens-before edge, such as the start of the owner thread). {@link #steal} from any thread, and like
 * {@code push} and {@code take} only before {@link #close} (see "Access"). {@link #size}, {@link #isEmpty}
 * and {@link #capacity} from any thread, at any time. {@link #close} once nobody uses the deque.
 */
public final class WorkDeque implements AutoCloseable {

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
    /** Address of the control block ({@link #ctl}), for the raw accesses ("Access" in the class comment). */
    private final long ctlAddr;
    /** Address of each generation's array, written with {@link #generations}, published the same way. */
    private final long[] generationAddr;
    private boolean closed; // guarded by this (close only)
    /*
     * The owner's copy of the current array: its segment, its address (RAW) and its mask. Owner-only plain
     * fields, written by the constructor and by grow (the owner), read by push and take (the owner): the owner
     * wrote ARRAY itself, so it need not load it back, nor the array's address from generations behind it.
     * Thieves keep the acquire load of ARRAY. A hand-over of the owner role needs a happens-before edge
     * ("Threads"), which carries these fields too. PERFORMANCE_TRACKING 75: about 1.5 ns a push-and-take.
     */
    private MemorySegment ownerArray;
    private long ownerArrayAddr;
    private long ownerMask;

    /**
     * Creates an empty deque with an array of {@code initialCapacity} slots.
     *
     * @param initialCapacity power of two in [{@link Layout#MIN_CAPACITY}, {@link Layout#MAX_CAPACITY}]
     */
    public WorkDeque(PoolMemory memory, String purpose, int initialCapacity) {
        this.initialCapacity = Layout.checkCapacity("initialCapacity", initialCapacity);
        this.memory = memory;
        this.purpose = purpose;
        this.generations = new MemorySegment[Layout.generations(initialCapacity)];
        this.generationAddr = new long[generations.length];
        this.ctl = memory.allocateReleasable(purpose + " control", Layout.CONTROL_LENGTH);
        this.ctlAddr = ctl.address();
        try {
            generations[0] = memory.allocateReleasable(purpose + " array 0",
                    Layout.arrayByteSize(initialCapacity));
            generationAddr[0] = generations[0].address();
            ownerArray = generations[0];
            ownerArrayAddr = generationAddr[0];
            ownerMask = initialCapacity - 1;
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
     * Returns how many entries the deque held before, as of the top this push read (thieves may have taken
     * some since): 0 tells a caller that wakes thieves that the deque was empty (FJP signals work only then).
     *
     * @throws IllegalArgumentException if {@code value} is {@link QueueEntry#EMPTY} or {@link #ABORT}
     * @throws IllegalStateException if the deque already holds {@link Layout#MAX_CAPACITY} entries
     * @throws OutOfMemoryError if the array had to grow and the new one could not be allocated (after any of
     *         these the deque is unchanged: nothing is written before the growth has succeeded)
     */
    public long push(long value) {
        if ((value | 1L) == -1L) { // exactly the two sentinels, -1 and -2
            throw new IllegalArgumentException("value must not be EMPTY (-1) or ABORT (-2): value=" + value);
        }
        final MemorySegment c = ctl;
        final long cAddr = ctlAddr;
        long b = Mem.getLongPlainAt(c, cAddr, Layout.BOTTOM_OFFSET); // plain: only the owner writes bottom
        // acquire: pairs with the successful CAS on top of a thief (or of our own last-entry take); the
        // thief's read of slot t happens-before we reuse that slot for index t + capacity.
        long t = Mem.getLongAcquireAt(c, cAddr, Layout.TOP_OFFSET);
        if (b - t > ownerMask) {
            grow(t, b); // updates the owner's copy of the array (ownerArray, ownerArrayAddr, ownerMask)
        }
        // opaque (C11 relaxed): a thief that read a stale top may read this slot concurrently; it then
        // fails its CAS and discards what it read.
        ownerSlotSetOpaque(Layout.slotOffset(b, ownerMask), value);
        // release fence: the slot write above is ordered before every later store of bottom, this push's
        // and the next take's. Pairs with the thief's acquire load of bottom, whichever of those stores it
        // reads. (A release *store* of bottom would cover only this push's store.)
        VarHandle.releaseFence();
        Mem.setLongOpaqueAt(c, cAddr, Layout.BOTTOM_OFFSET, b + 1); // relaxed; published by the fence above
        return b - t;
    }

    /**
     * Takes the newest entry at the bottom, or {@link QueueEntry#EMPTY}. Owner only. Never blocks; the
     * only CAS is on the last entry.
     */
    public long take() {
        final MemorySegment c = ctl;
        final long cAddr = ctlAddr;
        long b = Mem.getLongPlainAt(c, cAddr, Layout.BOTTOM_OFFSET) - 1; // plain: only the owner writes bottom
        // relaxed store: reserve index b before looking at top. Read by the thief's acquire load of bottom
        // after its full fence.
        Mem.setLongOpaqueAt(c, cAddr, Layout.BOTTOM_OFFSET, b);
        // FULL FENCE, pairs with the full fence in steal(): either this thread's top load sees the thief's
        // CAS, or the thief's bottom load sees our store above. Without it the top load may complete while
        // the bottom store still sits in the store buffer (x86-TSO allows store->load reordering): we read
        // a stale top, a thief reads a stale bottom, and both take index b (seed 002 Case 3).
        VarHandle.fullFence();
        long t = Mem.getLongOpaqueAt(c, cAddr, Layout.TOP_OFFSET); // relaxed; ordered after the store by the fence
        if (t > b) { // was empty: undo the reservation
            Mem.setLongOpaqueAt(c, cAddr, Layout.BOTTOM_OFFSET, b + 1);
            return QueueEntry.EMPTY;
        }
        long x = ownerSlotGetPlain(Layout.slotOffset(b, ownerMask)); // plain: we wrote it
        if (t == b) { // the last entry: the thieves may be after it too, so the CAS decides
            // CAS (seq_cst): competes with the thieves' CAS on top for index t; exactly one succeeds.
            if (!Mem.casLongAt(c, cAddr, Layout.TOP_OFFSET, t, t + 1)) {
                x = QueueEntry.EMPTY; // a thief won it
            }
            // relaxed: the deque is now empty with top == bottom == b + 1
            Mem.setLongOpaqueAt(c, cAddr, Layout.BOTTOM_OFFSET, b + 1);
        }
        return x;
    }

    /**
     * Doubles the array: copies {@code [t, b)} to the same indices of a fresh array and publishes it. The old
     * array stays allocated (retired) until {@link #close()}, and the owner's copy names the new one. Owner
     * only; cold.
     * Throws, with nothing changed, if the deque is at its maximum or the allocation fails: both come first.
     */
    private void grow(long t, long b) {
        long g = Mem.getLongPlainAt(ctl, ctlAddr, Layout.ARRAY_OFFSET); // plain: only the owner writes ARRAY
        MemorySegment old = generations[(int) g];
        long oldAddr = generationAddr[(int) g];
        long oldCap = capacityOf(g);
        if (oldCap >= Layout.MAX_CAPACITY) {
            throw new IllegalStateException("work deque full: it holds " + (b - t) + " entries, the maximum"
                    + " capacity is " + Layout.MAX_CAPACITY + " (" + purpose + ")");
        }
        long newCap = oldCap * 2;
        long oldMask = oldCap - 1;
        long newMask = newCap - 1;
        MemorySegment n = memory.allocateReleasable(purpose + " array " + (g + 1), Layout.arrayByteSize(newCap));
        long nAddr = n.address();
        for (long i = t; i < b; i++) {
            // plain both sides: the old slots were written by this thread, the new array is not yet shared.
            long v = Mem.getLongPlainAt(old, oldAddr, Layout.slotOffset(i, oldMask));
            Mem.setLongPlainAt(n, nAddr, Layout.slotOffset(i, newMask), v);
        }
        generations[(int) (g + 1)] = n; // plain, write-once; published by the release store below
        generationAddr[(int) (g + 1)] = nAddr; // likewise
        // release: the copied slots and generations[g + 1] are visible to any thread whose acquire load of
        // ARRAY reads g + 1 (steal). Seed: atomic_store_explicit(&q->array, n, memory_order_release).
        Mem.setLongReleaseAt(ctl, ctlAddr, Layout.ARRAY_OFFSET, g + 1);
        ownerArray = n; // the owner's copy (plain, owner-only)
        ownerArrayAddr = nAddr;
        ownerMask = newMask;
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
        final long cAddr = ctlAddr;
        // acquire: pairs with the CAS of the previous winner on top.
        long t = Mem.getLongAcquireAt(c, cAddr, Layout.TOP_OFFSET);
        // FULL FENCE, pairs with the full fence in take(): both fences are in one total order, so either
        // take's top load sees every top CAS made before our fence, or our bottom load sees take's lowered
        // bottom. Without it the bottom load may be satisfied before the top load (ARM/POWER reorder loads;
        // so may the JIT): we pair a new top with an old bottom and steal the index take just reserved.
        VarHandle.fullFence();
        // acquire: pairs with push's release fence (via the bottom store of that push or of a later take),
        // so the slot at t is visible, and so is any array published before it (see ARRAY below).
        long b = Mem.getLongAcquireAt(c, cAddr, Layout.BOTTOM_OFFSET);
        if (t >= b) {
            return QueueEntry.EMPTY;
        }
        // acquire, after the bottom load: pairs with grow's release store; we see the array that holds
        // index t as of the bottom we read, or a newer one with the same entry copied in.
        long g = Mem.getLongAcquireAt(c, cAddr, Layout.ARRAY_OFFSET);
        // slotGetOpaque reads generations[g] or generationAddr[g], plain: written before the release of ARRAY == g
        // opaque (C11 relaxed): if the owner is concurrently reusing this slot, top has moved past t and the
        // CAS below fails, so a stale value is never returned.
        long x = slotGetOpaque((int) g, Layout.slotOffset(t, capacityOf(g) - 1));
        // CAS (seq_cst): claims index t against other thieves and the owner's last-entry CAS.
        if (!Mem.casLongAt(c, cAddr, Layout.TOP_OFFSET, t, t + 1)) {
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

    // slots of array generation g: only the address (RAW) or only the segment is loaded, never both

    private long slotGetOpaque(int g, long off) {
        return Mem.RAW ? Mem.getLongOpaqueAt(generationAddr[g] + off) : Mem.getLongOpaque(generations[g], off);
    }

    private long ownerSlotGetPlain(long off) {
        return Mem.RAW ? Mem.getLongPlainAt(ownerArrayAddr + off) : Mem.getLongPlain(ownerArray, off);
    }

    private void ownerSlotSetOpaque(long off, long v) {
        if (Mem.RAW) {
            Mem.setLongOpaqueAt(ownerArrayAddr + off, v);
        } else {
            Mem.setLongOpaque(ownerArray, off, v);
        }
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
