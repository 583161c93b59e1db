package dev.threadpool.internal.queue;

import dev.threadpool.internal.memory.CacheLine;
import dev.threadpool.internal.memory.Mem;
import dev.threadpool.internal.memory.PoolMemory;
import java.lang.foreign.MemorySegment;

/**
 * The LIFO slots of a pool: one single-entry slot per worker, all in one off-heap block. A task submitted
 * from worker {@code w} goes into slot {@code w} first, so a worker that spawns a task and then looks for
 * work runs it next, while its data is still in cache; the entry it displaces goes to the worker's
 * {@link RingQueue}.
 *
 * <h2>Protocol</h2>
 * A slot is one long: {@link QueueEntry#EMPTY} or a queue entry. No {@code {gen, idx}} entry equals EMPTY
 * (see {@link QueueEntry}), so the sentinel needs no extra bit.
 * <pre>
 *   put(w, e):  prev = getAndSet(slot[w], e)        returns prev (EMPTY or the displaced entry)
 *   take(w):    if slot[w] == EMPTY (opaque) return EMPTY
 *               return getAndSet(slot[w], EMPTY)
 * </pre>
 * In the design only worker {@code w} touches slot {@code w}, which plain accesses would serve. Both
 * operations are atomic exchanges anyway, so that a future thief may {@code take} a slot of a busy worker
 * without a protocol change: every value stored into a slot is returned by exactly one exchange (the one
 * that replaces it), which is the whole exactly-once argument. The empty fast path of {@code take} is a
 * read, not a claim; it may miss an entry being put at that moment, which only delays it (the next take
 * finds it), and it saves the owner an atomic on its busiest check.
 *
 * <h2>Contract: linearizable</h2>
 * Each slot is a register holding one entry or EMPTY; put and take are each one atomic exchange, so every
 * entry put is returned exactly once, by a take or as the value a later put displaced. A take that returns
 * EMPTY from the fast path takes effect at that load, before the put it missed: no weakness to document.
 * {@code LifoSlotLincheck} checks this (stress and model checking).
 *
 * <h2>Layout</h2>
 * <pre>
 *   slot w at SLOT_STRIDE * w:  ENTRY (long) @0, rest of its PAD line unused
 * </pre>
 * One {@link CacheLine#PAD} line per slot: a slot is written on every local submit and every local
 * dispatch of its worker, so it must not share a line with a neighbour's.
 */
public final class LifoSlot {

    /** Off-heap layout (see the class comment). */
    public static final class Layout {
        public static final long ENTRY_OFFSET = 0;
        public static final long SLOT_STRIDE = CacheLine.PAD;
        public static final int MIN_SLOTS = 1;
        /** Workers, overflow workers included, are capped at {@code PoolConfig.MAX_THREADS} = 64. */
        public static final int MAX_SLOTS = 64;

        private Layout() {}

        public static long byteSize(int slots) {
            return SLOT_STRIDE * slots;
        }

        public static int checkSlots(String name, int slots) {
            if (slots < MIN_SLOTS || slots > MAX_SLOTS) {
                throw new IllegalArgumentException(name + " must be in [" + MIN_SLOTS + ", " + MAX_SLOTS + "]: "
                        + name + "=" + slots);
            }
            return slots;
        }
    }

    private final MemorySegment seg;
    private final int slots;
    /**
     * The block's address for {@link #take}'s empty test by raw address ({@link Mem#RAW}; native-notes/FFM.md,
     * "Raw addresses": takes run on workers, or in the sweep inside its arena-caller region), else 0.
     */
    private final long base;

    public LifoSlot(PoolMemory memory, String purpose, int slots) {
        this.slots = Layout.checkSlots("slots", slots);
        this.seg = memory.allocate(purpose, Layout.byteSize(slots));
        this.base = Mem.RAW ? seg.address() : 0L;
        for (int w = 0; w < slots; w++) {
            // zero is a valid entry {gen 0, idx 0}: every slot starts as EMPTY explicitly. Published to the
            // workers by whatever publishes this object (a final field, written before the threads start).
            Mem.setLongPlain(seg, offset(w), QueueEntry.EMPTY);
        }
    }

    public int slots() {
        return slots;
    }

    private static long offset(int slot) {
        return Layout.SLOT_STRIDE * slot + Layout.ENTRY_OFFSET;
    }

    /**
     * Stores {@code entry} in slot {@code slot} and returns what it displaced: EMPTY, or an entry the caller
     * must push to its local queue. Owner of the slot only.
     */
    public long put(int slot, long entry) {
        if (entry == QueueEntry.EMPTY) {
            throw new IllegalArgumentException("entry must not be QueueEntry.EMPTY: that would be a take");
        }
        // getAndSet (volatile): the displaced value is returned to us alone; the release half also publishes
        // anything written before the put to a thread whose exchange later returns this entry.
        return Mem.getAndSetLong(seg, offset(slot), entry);
    }

    /**
     * Empties slot {@code slot} and returns its entry, or EMPTY. Any thread, but only while the block is
     * allocated (its empty test goes by raw address): the pool calls it on workers and in the sweep.
     */
    public long take(int slot) {
        final long off = offset(slot);
        // opaque: the empty fast path; may miss a concurrent put, which the next take sees.
        if (Mem.getLongOpaqueAt(seg, base, off) == QueueEntry.EMPTY) {
            return QueueEntry.EMPTY;
        }
        // getAndSet (volatile): claims the entry; pairs with the put's exchange (acquire half of ours).
        return Mem.getAndSetLong(seg, off, QueueEntry.EMPTY);
    }

    /** The slot's current value without claiming it (opaque: stats, victim scans). */
    public long peek(int slot) {
        return Mem.getLongOpaque(seg, offset(slot));
    }

    /**
     * The slot's current value with a volatile (seq_cst) load: the park re-check of the work-stealing
     * scheduler, which must be ordered after the worker's seq_cst announcement (see {@code ParkingLot}).
     */
    public long peekVolatile(int slot) {
        return Mem.getLongVolatile(seg, offset(slot));
    }
}
