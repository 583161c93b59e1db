package dev.threadpool.lincheck.mutants;

import dev.threadpool.internal.memory.CacheLine;
import dev.threadpool.internal.memory.Mem;
import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.QueueEntry;
import java.lang.foreign.MemorySegment;

/**
 * MUTANT of {@link dev.threadpool.internal.queue.LifoSlot}, for {@code LifoSlotLincheck}: a copy with one
 * change, in {@link #take}: the claim is a load and a store of EMPTY instead of one exchange, so a put that
 * lands in between is wiped out and the entry it displaced comes out twice. The Lincheck suite must catch
 * it. Test code only.
 */
public final class PlainTakeSlot {

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

    public PlainTakeSlot(PoolMemory memory, String purpose, int slots) {
        this.slots = Layout.checkSlots("slots", slots);
        this.seg = memory.allocate(purpose, Layout.byteSize(slots));
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

    /** Empties slot {@code slot} and returns its entry, or EMPTY. Safe from any thread. */
    public long take(int slot) {
        final long off = offset(slot);
        // opaque: the empty fast path; may miss a concurrent put, which the next take sees.
        if (Mem.getLongOpaque(seg, off) == QueueEntry.EMPTY) {
            return QueueEntry.EMPTY;
        }
        // MUTATION: load, then store EMPTY (the real slot claims with one getAndSet).
        long v = Mem.getLongVolatile(seg, off);
        Mem.setLongVolatile(seg, off, QueueEntry.EMPTY);
        return v;
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
