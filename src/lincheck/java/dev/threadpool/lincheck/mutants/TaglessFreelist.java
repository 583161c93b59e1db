package dev.threadpool.lincheck.mutants;

import dev.threadpool.internal.memory.CacheLine;
import dev.threadpool.internal.memory.Mem;
import dev.threadpool.internal.memory.PoolMemory;
import java.lang.foreign.MemorySegment;

/**
 * MUTANT of the freelist of {@link dev.threadpool.internal.scheduler.DescriptorTable}, for
 * {@code FreelistLincheck}: the freelist part of the table (head, links, control words; acquire, push,
 * unreserve, reserve, freeReserved, acquireBatch, releaseBatch) copied, with one change: the head holds the
 * top index without its ABA tag. A pop that read {@code top = x, next = y} and was suspended while others
 * popped x and y and pushed x back then swings the head to y, which is in use: y is handed out twice. The
 * Lincheck suite must catch it. Test code only.
 */
public final class TaglessFreelist {

    public static final int FREE = 0;
    public static final int RESERVED = 1;
    public static final int QUEUED = 2;
    public static final int RUNNING = 3;
    public static final int COMPLETED = 4;
    public static final int CANCELLED = 5;
    public static final int FAILED = 6;

    static final long STATE_MASK = 0xFFL;
    static final int OUTCOME_SHIFT = 8;
    static final long OUTCOME_MASK = 0xFFL << OUTCOME_SHIFT;
    static final long WAITABLE_BIT = 1L << 16;


    private static final int NONE = -1;


    /** The part of {@code DescriptorTable.Layout} the freelist uses. */
    public static final class Layout {
        public static final long FREE_HEAD_OFFSET = 0;
        public static final long HEADER_LENGTH = CacheLine.PAD;
        public static final long CTL_OFFSET = 0;
        public static final long NEXT_FREE_OFFSET = 8;
        public static final long WORKER_OFFSET = 40;
        public static final long DESCRIPTOR_STRIDE = CacheLine.LINE;

        private Layout() {}

        public static long tableBytes(int capacity) {
            return DESCRIPTOR_STRIDE * capacity;
        }
    }


    private final MemorySegment header;
    private final MemorySegment table;
    private final int capacity;

    public TaglessFreelist(PoolMemory memory, int capacity) {
        this.capacity = capacity;
        this.header = memory.allocate("descriptor freelist head", Layout.HEADER_LENGTH);
        this.table = memory.allocate("task descriptors", Layout.tableBytes(capacity));
        for (int i = 0; i < capacity; i++) {
            long d = base(i);
            Mem.setIntPlain(table, d + Layout.NEXT_FREE_OFFSET, i + 1 < capacity ? i + 1 : NONE);
            Mem.setIntPlain(table, d + Layout.WORKER_OFFSET, -1);
        }
        Mem.setLongPlain(header, Layout.FREE_HEAD_OFFSET, head(0, 0));
    }

    public int capacity() {
        return capacity;
    }

    private static long base(int idx) {
        return Layout.DESCRIPTOR_STRIDE * idx;
    }

    // ---- control word helpers ------------------------------------------------------------------------
    public static int gen(long ctl) { return (int) (ctl >>> 32); }
    public static int state(long ctl) { return (int) (ctl & STATE_MASK); }
    public static int outcome(long ctl) { return (int) ((ctl & OUTCOME_MASK) >>> OUTCOME_SHIFT); }
    public static boolean waitable(long ctl) { return (ctl & WAITABLE_BIT) != 0; }

    static long ctl(int gen, int state, int outcome, boolean waitable) {
        return ((long) gen << 32) | (waitable ? WAITABLE_BIT : 0) | ((long) outcome << OUTCOME_SHIFT) | state;
    }

    private static long head(int tag, int idx) {
        // MUTATION: the tag is dropped, so the head is the bare top index (the real table packs
        // tag << 32 | idx and every push or pop increments the tag).
        return idx & 0xFFFF_FFFFL;
    }

    /** The control word, read with acquire: pairs with the release stores and CASes of every transition. */
    public long ctlAcquire(int idx) {
        return Mem.getLongAcquire(table, base(idx) + Layout.CTL_OFFSET);
    }


    // ---- freelist --------------------------------------------------------------------------------------

    /**
     * Pops a free slot and moves it to {@code (gen + 1, RESERVED)}; returns its index, or -1 when every
     * descriptor is in use. The caller now owns the slot exclusively.
     */
    public int acquire() {
        final MemorySegment h = header;
        for (;;) {
            // acquire: pairs with the release CAS of push(), so the pushed slot's NEXT_FREE is visible.
            long top = Mem.getLongAcquire(h, Layout.FREE_HEAD_OFFSET);
            int idx = (int) top;
            if (idx == NONE) {
                return -1;
            }
            // May be stale if idx is popped concurrently; the tag makes our CAS fail in that case.
            int next = Mem.getIntOpaque(table, base(idx) + Layout.NEXT_FREE_OFFSET);
            if (Mem.casLong(h, Layout.FREE_HEAD_OFFSET, top, head((int) (top >>> 32) + 1, next))) {
                long d = base(idx) + Layout.CTL_OFFSET;
                long old = Mem.getLongPlain(table, d);
                // volatile: a late await on the old generation re-reads CTL after reading the slot's failure
                // (seqlock style) and must see the new gen before we overwrite anything of the slot.
                Mem.setLongVolatile(table, d, ctl(gen(old) + 1, RESERVED, 0, false));
                return idx;
            }
        }
    }

    /** Pushes a slot that is FREE (and owned by the caller) back onto the freelist. */
    void push(int idx) {
        final MemorySegment h = header;
        for (;;) {
            long top = Mem.getLongAcquire(h, Layout.FREE_HEAD_OFFSET);
            Mem.setIntOpaque(table, base(idx) + Layout.NEXT_FREE_OFFSET, (int) top);
            // CAS (volatile, so also a release): publishes NEXT_FREE and the slot's FREE state to the next
            // acquire(), which reads them after its acquire load of the head.
            if (Mem.casLong(h, Layout.FREE_HEAD_OFFSET, top, head((int) (top >>> 32) + 1, idx))) {
                return;
            }
        }
    }


    /** Gives back a slot that was acquired but never published (the submit was rejected). */
    public void unreserve(int idx) {
        long d = base(idx) + Layout.CTL_OFFSET;
        long c = Mem.getLongPlain(table, d);
        // release: nothing of this generation escaped; pairs with the acquire of a late reader.
        Mem.setLongRelease(table, d, ctl(gen(c), FREE, CANCELLED, false));
        push(idx);
    }


    /**
     * Pops up to {@code max} free slots with one CAS on the freelist head and writes their indices as ints
     * to {@code dst} at {@code dstOffset}, {@code dstOffset + 4}, ... in pop order (the same order
     * {@code max} calls of {@link #acquire()} would return them). Returns how many (0 when the freelist is
     * empty). Unlike {@link #acquire()}, the slots stay FREE: the caller owns them and moves each to
     * RESERVED with {@link #reserve} when it uses it.
     *
     * <p>Walk-then-CAS: from the observed top, follow {@code NEXT_FREE} for up to {@code max} links (O(max)
     * loads), then swing the head past them, tag + 1. If anything pushed or popped meanwhile the tag moved
     * and the CAS fails, so a walk through links that changed under it is never kept. After a failed CAS the
     * walk is halved (down to 1), so a batch under contention degrades to {@link #acquire()}'s window
     * instead of starving behind single pops.
     */
    public int acquireBatch(MemorySegment dst, long dstOffset, int max) {
        if (max < 1) {
            throw new IllegalArgumentException("max must be >= 1: max=" + max);
        }
        final MemorySegment h = header;
        final MemorySegment t = table;
        int want = max;
        for (;;) {
            // acquire: pairs with the release CAS of every push()/releaseBatch() before it (a chain of RMWs
            // on the head), so the NEXT_FREE links of the whole chain below the top are visible.
            long top = Mem.getLongAcquire(h, Layout.FREE_HEAD_OFFSET);
            int cur = (int) top;
            if (cur == NONE) {
                return 0;
            }
            int n = 0;
            while (n < want && cur != NONE) {
                Mem.setIntPlain(dst, dstOffset + 4L * n, cur); // caller-owned buffer
                n++;
                // opaque, as in acquire(): stale if the slot was popped meanwhile; the tag fails our CAS then.
                cur = Mem.getIntOpaque(t, base(cur) + Layout.NEXT_FREE_OFFSET);
            }
            // CAS: the single claim of all n slots; fails iff any push or pop changed the head (tag).
            if (Mem.casLong(h, Layout.FREE_HEAD_OFFSET, top, head((int) (top >>> 32) + 1, cur))) {
                return n;
            }
            want = Math.max(1, want >>> 1);
        }
    }

    /**
     * Pushes {@code n} FREE slots owned by the caller, read as ints from {@code src} at {@code srcOffset},
     * {@code srcOffset + 4}, ..., with one CAS: the result is the same as {@code push(src[0])}, ...,
     * {@code push(src[n - 1])} (so {@code src[n - 1]} ends on top). The links between the batch are written
     * once, O(n); only the bottom link to the old top is rewritten on a CAS retry.
     */
    public void releaseBatch(MemorySegment src, long srcOffset, int n) {
        if (n < 0) {
            throw new IllegalArgumentException("n must be >= 0: n=" + n);
        }
        if (n == 0) {
            return;
        }
        final MemorySegment h = header;
        final MemorySegment t = table;
        int below = Mem.getIntPlain(src, srcOffset);
        final int bottom = below;
        for (int i = 1; i < n; i++) {
            int idx = Mem.getIntPlain(src, srcOffset + 4L * i);
            Mem.setIntOpaque(t, base(idx) + Layout.NEXT_FREE_OFFSET, below); // published by the CAS below
            below = idx;
        }
        final int top = below;
        for (;;) {
            long old = Mem.getLongAcquire(h, Layout.FREE_HEAD_OFFSET);
            Mem.setIntOpaque(t, base(bottom) + Layout.NEXT_FREE_OFFSET, (int) old);
            // CAS (volatile, so also a release): publishes every link written above and the slots' FREE
            // state to the next acquire()/acquireBatch(), which read them after their acquire of the head.
            if (Mem.casLong(h, Layout.FREE_HEAD_OFFSET, old, head((int) (old >>> 32) + 1, top))) {
                return;
            }
        }
    }

    /**
     * FREE -> {@code (gen + 1, RESERVED)} for a slot the caller owns off the freelist (from
     * {@link #acquireBatch}, i.e. a DescCache): exactly the transition {@link #acquire()} makes after its CAS.
     *
     * @throws IllegalStateException if the slot is not FREE (it was handed out twice)
     */
    public void reserve(int idx) {
        long d = base(idx) + Layout.CTL_OFFSET;
        // plain: the last writer of CTL handed the slot to us through a release (the freelist CAS, or our
        // own free), so its value is visible.
        long old = Mem.getLongPlain(table, d);
        if (state(old) != FREE) {
            throw new IllegalStateException("slot must be FREE to reserve: idx=" + idx + ", state=" + state(old));
        }
        // volatile: as in acquire(), a late await on the old generation must see the new gen first.
        Mem.setLongVolatile(table, d, ctl(gen(old) + 1, RESERVED, 0, false));
    }

    /**
     * RESERVED -> FREE (outcome CANCELLED) without touching the freelist: {@link #unreserve} for a slot that
     * goes back to the caller's DescCache instead. The caller still owns the slot afterwards.
     */
    public void freeReserved(int idx) {
        long d = base(idx) + Layout.CTL_OFFSET;
        long c = Mem.getLongPlain(table, d);
        // release: nothing of this generation escaped; pairs with the acquire of a late reader.
        Mem.setLongRelease(table, d, ctl(gen(c), FREE, CANCELLED, false));
    }

}
