package dev.threadpool.internal.scheduler;

import dev.threadpool.internal.memory.CacheLine;
import dev.threadpool.internal.memory.Mem;
import dev.threadpool.internal.memory.PoolMemory;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;

/**
 * The bounded, preallocated table of task descriptors, its lock-free freelist, and the descriptor state
 * machine. One descriptor per queued or running task; {@code queueCapacity} of them, allocated at pool start
 * and never more, which is what bounds the pool.
 *
 * <h2>State machine</h2>
 * <pre>
 *   FREE --acquire--> RESERVED --publish(release)--> QUEUED --CAS--> RUNNING --finish--> COMPLETED | FAILED
 *                                                       |                                   |
 *                                                       +--CAS (cancel)--> CANCELLED        |
 *   detached: RUNNING --finish--> FREE (+ outcome)  at once, then onto the freelist
 *   waitable: COMPLETED | FAILED | CANCELLED --CAS (first await)--> FREE (+ outcome), then onto the freelist
 * </pre>
 * The whole state lives in one 64-bit control word, so every transition is one CAS that also checks the
 * generation:
 * <pre>
 *   bits 63..32  gen       incremented at every acquire; queue entries and handles carry it
 *   bit  16      WAITABLE  a handle was returned for this generation
 *   bits 15..8   outcome   in FREE: how the last generation ended (COMPLETED, FAILED or CANCELLED)
 *   bits  7..0   state
 * </pre>
 * A worker runs an entry {gen, idx} only if its CAS {@code (gen, QUEUED) -> (gen, RUNNING)} wins: stale
 * entries (older gen) and cancelled tasks fail the CAS, so dispatch is exactly-once.
 *
 * <h2>Freelist</h2>
 * A Treiber stack threaded through {@code NEXT_FREE}. The head packs a 32-bit ABA tag with the top index;
 * every successful push or pop increments the tag, so a pop that read {@code next} of a slot that was popped
 * and pushed back in between fails its CAS. (The tag would have to wrap 2^32 times inside one pop for ABA
 * to return.)
 *
 * <h2>References</h2>
 * Java references cannot live off-heap: the task, its group and its failure sit in on-heap arrays of the
 * pool indexed by slot. They are written with plain stores by the submitter (or worker) that owns the slot
 * and published by the release store of the control word (and the queue's own release).
 */
public final class DescriptorTable {

    // ---- states -------------------------------------------------------------------------------------
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

    /** Descriptor flags (the {@code FLAGS} int). */
    public static final int FLAG_LANE_BLOCKING = 1;

    private static final int NONE = -1;

    /**
     * Off-heap layout.
     * <pre>
     *   header block (PAD bytes):  FREE_HEAD (long) @0 = tag(32) | top index(32), index 0xFFFF_FFFF = empty
     *   descriptor i at DESCRIPTOR_STRIDE * i in the table block (one 64-byte line each):
     *     CTL        long @0    control word (see class comment)
     *     NEXT_FREE  int  @8    freelist link, -1 = end
     *     FLAGS      int  @12   lane and option bits
     *     SUBMIT_NS  long @16   System.nanoTime() at publish   (TimestampMode.FULL)
     *     START_NS   long @24   at the winning QUEUED -> RUNNING CAS (FULL)
     *     END_NS     long @32   when the task returned or threw (FULL)
     *     WORKER     int  @40   index of the worker that ran it, -1 before
     *     pad to 64
     * </pre>
     */
    public static final class Layout {
        public static final long FREE_HEAD_OFFSET = 0;
        public static final long HEADER_LENGTH = CacheLine.PAD;

        public static final long CTL_OFFSET = 0;
        public static final long NEXT_FREE_OFFSET = 8;
        public static final long FLAGS_OFFSET = 12;
        public static final long SUBMIT_NS_OFFSET = 16;
        public static final long START_NS_OFFSET = 24;
        public static final long END_NS_OFFSET = 32;
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

    public DescriptorTable(PoolMemory memory, int capacity) {
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
        return ((long) tag << 32) | (idx & 0xFFFF_FFFFL);
    }

    /** The control word, read with acquire: pairs with the release stores and CASes of every transition. */
    public long ctlAcquire(int idx) {
        return Mem.getLongAcquire(table, base(idx) + Layout.CTL_OFFSET);
    }

    /** The control word, read seq_cst: used by the await/finish handshake (see {@code SlotSignal}). */
    public long ctlVolatile(int idx) {
        return Mem.getLongVolatile(table, base(idx) + Layout.CTL_OFFSET);
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

    /** True when the freelist looks non-empty (a volatile read: the half of the space-wait handshake). */
    public boolean hasFree() {
        return (int) Mem.getLongVolatile(header, Layout.FREE_HEAD_OFFSET) != NONE;
    }

    /** Gives back a slot that was acquired but never published (the submit was rejected). */
    public void unreserve(int idx) {
        long d = base(idx) + Layout.CTL_OFFSET;
        long c = Mem.getLongPlain(table, d);
        // release: nothing of this generation escaped; pairs with the acquire of a late reader.
        Mem.setLongRelease(table, d, ctl(gen(c), FREE, CANCELLED, false));
        push(idx);
    }

    // ---- transitions -----------------------------------------------------------------------------------

    /** Writes flags and the submit timestamp of a RESERVED slot; plain, published by {@link #publish}. */
    public void prepare(int idx, int flags, long submitNanos) {
        long d = base(idx);
        Mem.setIntPlain(table, d + Layout.FLAGS_OFFSET, flags);
        Mem.setLongPlain(table, d + Layout.SUBMIT_NS_OFFSET, submitNanos);
        Mem.setIntPlain(table, d + Layout.WORKER_OFFSET, -1);
    }

    /** RESERVED -> QUEUED; returns the generation. */
    public int publish(int idx, boolean waitable) {
        long d = base(idx) + Layout.CTL_OFFSET;
        int gen = gen(Mem.getLongPlain(table, d));
        // release: publishes the task reference, group, flags and timestamp written before; pairs with the
        // worker's CAS in tryStart and with cancel()/await() reads.
        Mem.setLongRelease(table, d, ctl(gen, QUEUED, 0, waitable));
        return gen;
    }

    /**
     * (gen, QUEUED) -> (gen, RUNNING): the exactly-once dispatch point. False for a stale entry (the slot has
     * moved to another generation) or a cancelled task.
     */
    public boolean tryStart(int idx, int gen, int worker) {
        long d = base(idx) + Layout.CTL_OFFSET;
        long c = Mem.getLongAcquire(table, d);
        if (gen(c) != gen || state(c) != QUEUED) {
            return false;
        }
        // CAS (volatile): its acquire half makes the submitter's plain writes visible to us.
        if (!Mem.casLong(table, d, c, (c & ~STATE_MASK) | RUNNING)) {
            return false;
        }
        Mem.setIntPlain(table, base(idx) + Layout.WORKER_OFFSET, worker);
        return true;
    }

    /**
     * (gen, QUEUED) -> (gen, CANCELLED), only while still queued. With {@code waitableOnly} a detached task
     * is never cancelled (a forged handle must not strand a slot nobody will release). Returns the control
     * word the CAS replaced (never 0: its state is QUEUED), or 0 if nothing was cancelled.
     *
     * <p>What happens to the slot next must be decided from the returned word, never from a re-read: a
     * cancelled waitable belongs to whoever awaits it, who may release it at once, and the next acquire may
     * already have moved it to another generation (issue 13, item 2).
     */
    public long tryCancel(int idx, int gen, boolean waitableOnly) {
        long d = base(idx) + Layout.CTL_OFFSET;
        for (;;) {
            long c = Mem.getLongAcquire(table, d);
            if (gen(c) != gen || state(c) != QUEUED || (waitableOnly && !waitable(c))) {
                return 0;
            }
            // CAS: races the worker's tryStart; exactly one of the two wins.
            if (Mem.casLong(table, d, c, (c & ~STATE_MASK) | CANCELLED)) {
                return c;
            }
        }
    }

    /**
     * RUNNING -> terminal for a task that ran. A detached slot goes straight to FREE and back onto the
     * freelist (returns true: the caller counts a release); a waitable slot stays COMPLETED/FAILED until its
     * first await.
     */
    public boolean finish(int idx, boolean failed) {
        long d = base(idx) + Layout.CTL_OFFSET;
        long c = Mem.getLongPlain(table, d); // RUNNING: only we write it now
        int terminal = failed ? FAILED : COMPLETED;
        if (waitable(c)) {
            // volatile: publishes the outcome (and the failure reference) to awaiters, and orders this store
            // before our read of the slot's signal (Dekker pair with SlotSignal's enqueue-then-recheck).
            Mem.setLongVolatile(table, d, (c & ~STATE_MASK) | terminal);
            return false;
        }
        // release: a late reader of this generation sees FREE with the outcome; then push publishes further.
        Mem.setLongRelease(table, d, ctl(gen(c), FREE, terminal, false));
        push(idx);
        return true;
    }

    /**
     * Releases a cancelled detached slot (shutdown's sweep won the CAS): CANCELLED -> FREE, onto the freelist.
     */
    public void releaseCancelledDetached(int idx) {
        long d = base(idx) + Layout.CTL_OFFSET;
        long c = Mem.getLongPlain(table, d);
        Mem.setLongRelease(table, d, ctl(gen(c), FREE, CANCELLED, false));
        push(idx);
    }

    /**
     * The first await of a finished waitable: (gen, terminal) -> (gen, FREE + outcome), then onto the
     * freelist. Exactly one of several concurrent awaiters wins; returns the control word it replaced, or 0
     * if it lost (or the task is not terminal, or the generation moved on).
     */
    public long tryReleaseWaitable(int idx, int gen) {
        long d = base(idx) + Layout.CTL_OFFSET;
        long c = Mem.getLongVolatile(table, d);
        int st = state(c);
        if (gen(c) != gen || (st != COMPLETED && st != FAILED && st != CANCELLED)) {
            return 0;
        }
        // CAS: the SEC-018 guard; concurrent awaiters cannot both push the slot.
        if (!Mem.casLong(table, d, c, ctl(gen, FREE, st, true))) {
            return 0;
        }
        return c;
    }

    /** Pushes a slot whose waitable release CAS the caller won (after it read what it needs of the slot). */
    public void pushReleased(int idx) {
        push(idx);
    }

    /** Full fence for the seqlock-style read of a slot's failure reference (see {@code PoolCore.await}). */
    public static void loadLoadFence() {
        VarHandle.acquireFence();
    }

    // ---- timestamps (TimestampMode.FULL) ----------------------------------------------------------------
    /** The flags of a slot, plain: for the thread that prepared it, or after an acquire of (gen, QUEUED). */
    public int flags(int idx) { return Mem.getIntPlain(table, base(idx) + Layout.FLAGS_OFFSET); }
    public void setStartNanos(int idx, long t) { Mem.setLongPlain(table, base(idx) + Layout.START_NS_OFFSET, t); }
    public void setEndNanos(int idx, long t) { Mem.setLongPlain(table, base(idx) + Layout.END_NS_OFFSET, t); }
    public long submitNanos(int idx) { return Mem.getLongPlain(table, base(idx) + Layout.SUBMIT_NS_OFFSET); }
    public long startNanos(int idx) { return Mem.getLongPlain(table, base(idx) + Layout.START_NS_OFFSET); }
    public long endNanos(int idx) { return Mem.getLongPlain(table, base(idx) + Layout.END_NS_OFFSET); }

    /** Counts FREE slots by scanning the table (stats, tests; not a hot path). */
    public int countFree() {
        int n = 0;
        for (int i = 0; i < capacity; i++) {
            if (state(ctlAcquire(i)) == FREE) {
                n++;
            }
        }
        return n;
    }

    // ==== batch freelist for DescCache ====================================================================
    //
    // Added for DescCache (see its class comment for the design and the alternatives rejected). Nothing
    // above changes: acquire()/push() and these methods share the one tagged Treiber head, every successful
    // change of it (single or batch) increments the tag by one, and a slot on the freelist is always FREE.
    // A slot held in a DescCache is FREE too, but off the freelist: countFree() counts it, hasFree() does not.

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
            // acquire: every change of the head is a volatile CAS (acquire and release at once), so each push
            // below the top synchronizes with the next change of the head and, by transitivity, happens-before
            // this load: the NEXT_FREE links of the whole chain are visible. (No release sequence is needed;
            // see native-notes/MEMORY_ORDERING.md, "Release sequences".)
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

    /**
     * RUNNING -> FREE (+ outcome) for a detached task that ran, without touching the freelist: {@link #finish}
     * for a slot that goes to the finishing worker's DescCache instead. The caller still owns the slot.
     * Only for detached slots (the caller checked {@code waitable} is clear).
     */
    public void finishDetachedHeld(int idx, boolean failed) {
        long d = base(idx) + Layout.CTL_OFFSET;
        long c = Mem.getLongPlain(table, d); // RUNNING: only we write it now
        // release: as in finish(), a late reader of this generation sees FREE with the outcome.
        Mem.setLongRelease(table, d, ctl(gen(c), FREE, failed ? FAILED : COMPLETED, false));
    }
}
