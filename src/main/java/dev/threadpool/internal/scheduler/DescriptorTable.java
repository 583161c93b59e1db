package dev.threadpool.internal.scheduler;

import dev.threadpool.internal.memory.CacheLine;
import dev.threadpool.internal.memory.Mem;
import dev.threadpool.internal.memory.PoolMemory;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The bounded, preallocated table of task descriptors, its lock-free freelist, the descriptor state
 * machine, and the packing of handles. One descriptor per queued or running task; {@code queueCapacity} of
 * them, allocated at pool start and never more, which is what bounds the pool.
 *
 * <h2>State machine</h2>
 * <pre>
 *   FREE --acquire--> RESERVED --publish(release)--> QUEUED --start--> RUNNING --finish--> COMPLETED | FAILED
 *                                                       |                                   |
 *                                                       +--CAS (cancel)--> CANCELLED        |
 *   detached: RUNNING --finish--> FREE (+ outcome)  at once, then onto the freelist
 *   waitable: COMPLETED | FAILED | CANCELLED --CAS (first await)--> FREE (+ outcome), then onto the freelist
 *   FREE --acquire, generations used up--> RETIRED  (never handed out again)
 * </pre>
 * The whole state lives in one 64-bit control word, so every transition is one CAS that also checks the
 * generation:
 * <pre>
 *   bits 63..7  gen       57 bits; incremented at every acquire; handles and queue entries carry it
 *   bit  6      WAITABLE  a handle was returned for this generation
 *   bits  5..3  outcome   in FREE: how the last generation ended (COMPLETED, FAILED or CANCELLED)
 *   bits  2..0  state     FREE .. FAILED, RETIRED
 * </pre>
 * A worker runs an entry {gen, idx} only if it finds {@code (gen, QUEUED)}: stale entries (older gen) and
 * cancelled tasks are dropped. For a waitable task the move to RUNNING is a CAS (its awaiter and a cancel
 * through its handle race the worker); for a detached one the queue's exactly-once pop already decides and it
 * is a release store (see {@link #tryStart}). Either way dispatch is exactly-once.
 *
 * <h2>Handles and queue entries</h2>
 * A handle (what {@code submitWaitable} returns; queue entries are the same value) packs a slot's index and
 * generation: {@code gen << idxBits | idx}, with {@code idxBits = ceil(log2(capacity))} (at least 1), so
 * {@code log2(queueCapacity)} for a pool. A slot's generations run from 1 to {@code maxGen = 2^genBits - 1}
 * with {@code genBits = min(56, 63 - idxBits)}: 56 for a pool of up to 128 descriptors, 39 for the largest
 * ({@code 2^24}). A handle is therefore in {@code [2^idxBits, 2^63)}: never negative, so never
 * {@code QueueEntry.EMPTY} or a queue's other sentinel, and never 0.
 *
 * <p><b>A generation never repeats; handles never repeat.</b> When an acquire would move a slot past
 * {@code maxGen} it <em>retires</em> the slot instead: state RETIRED, gen {@code maxGen + 1} (which no handle
 * can carry: that is why gen has one bit more than {@code genBits}), and takes another slot. A retired slot
 * is never handed out again, so a handle of this pool names one task forever: a stale handle is refused, never
 * taken for a live one, however long the pool runs. The price is one descriptor per {@code 2^genBits}
 * reuses of one slot: a slot of a {@code 2^24}-descriptor pool reused ten million times a second retires
 * after 15 hours (2^39 reuses); one of a pool of up to 128 after 228 years (2^56). Retired slots are neither
 * free nor live ({@link #countFree()} and {@code taskDescLive} do not count them, {@link #countRetired()}
 * does). A pool runs out of descriptors this way only after {@code 2^genBits} uses of every one of its
 * slots: {@code 2^63} tasks for the largest pool, {@code 2^57} for the smallest (45 years at 10^8 a second).
 *
 * <h2>Freelist</h2>
 * The FREE slots not held by a {@link DescCache} are on a {@link Freelist}, a tagged Treiber stack threaded
 * through each descriptor's {@code NEXT_FREE} word. A slot on it is always FREE; a slot in a DescCache is
 * FREE too, but off the freelist: {@link #countFree()} counts it, {@link #hasFree()} does not.
 *
 * <h2>References and who may write them</h2>
 * Java references cannot live off-heap: the task and its group sit in on-heap arrays of the pool, and a
 * waitable task's failure in {@link #failures} here, indexed by slot. Only the slot's current owner writes
 * them: the submitter between acquire and publish, the worker between its start CAS and finish, the awaiter
 * that wins the release CAS, a canceller only of a detached slot it cancelled (nobody else can release
 * that one). Whoever gives a slot up (a publish, a finish, a release, a cancel) writes nothing of it
 * afterwards; the owner that releases a slot clears what must be cleared before the release.
 *
 * <p>A finished waitable task's failure stays in its slot after the release, for later awaits of the same
 * handle, until the slot's next acquire (or retirement) clears it: that is the only reference the table
 * keeps, and the handle is stale from then on. A detached task's failure is never stored.
 *
 * <h2>The failure seqlock</h2>
 * A late await (the slot already released, FREE with outcome FAILED) reads the failure without owning the
 * slot, while the next owner may be reusing it. It is a seqlock read, with the generation as the sequence:
 * read the control word (gen g), read the failure, re-read the control word; the value is gen g's only if
 * the generation is still g. For that, a reader that sees a failure (or null) written under a later
 * generation must also see that generation on its re-read. Writer side: every store of a failure (the
 * worker's, or the clear by the next owner) is a <em>release</em> store, and it follows that owner's
 * generation store in program order or in happens-before. Reader side: the failure load is an
 * <em>acquire</em> load, so the re-read comes after it. If the acquire load reads a release store made under
 * generation g' > g, it synchronizes with it, the store of g' happens-before the re-read, and the re-read sees
 * g' or later. A release store (acquire load) is a release (acquire) fence joined to the one access it
 * orders; the classic seqlock needs the fence only because its data are many plain words, ours is one
 * reference. The generation store itself needs no ordering of its own (it is opaque); what matters is that
 * the writes after it are ordered after it, and a release store orders what comes <em>before</em> it, never
 * what follows, so a volatile generation store alone would not do.
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
    /** Generations used up: never handed out again (see the class comment). */
    public static final int RETIRED = 7;

    static final long STATE_MASK = 0x7L;
    static final int OUTCOME_SHIFT = 3;
    static final long OUTCOME_MASK = 0x7L << OUTCOME_SHIFT;
    static final long WAITABLE_BIT = 1L << 6;
    static final int GEN_SHIFT = 7;
    /** The generation field of the control word: one bit more than the widest {@code genBits}. */
    static final int CTL_GEN_BITS = 64 - GEN_SHIFT;
    /** The most generation bits a handle carries; {@code maxGen + 1} must still fit {@link #CTL_GEN_BITS}. */
    static final int MAX_GEN_BITS = CTL_GEN_BITS - 1;

    /** Descriptor flags (the {@code FLAGS} int). */
    public static final int FLAG_LANE_BLOCKING = 1;
    /**
     * The task is in argument form ({@code submit(fn, ctx, arg)}): {@code Slots} holds its function and context
     * instead of a {@code Runnable}, and {@code ARG} holds its {@code long}. Written with the other flags before
     * the publish, read by whoever runs, sweeps or reports the task after observing {@code (gen, QUEUED)}.
     */
    public static final int FLAG_ARGUMENT = 2;

    private static final VarHandle FAILURES = MethodHandles.arrayElementVarHandle(Throwable[].class);

    /**
     * Off-heap layout (the freelist's head is {@link Freelist}'s own block).
     * <pre>
     *   descriptor i at DESCRIPTOR_STRIDE * i in the table block (one 64-byte line each):
     *     CTL        long @0    control word (see class comment)
     *     NEXT_FREE  int  @8    freelist link, -1 = end (written by Freelist)
     *     FLAGS      int  @12   lane and option bits (FLAG_LANE_BLOCKING, FLAG_ARGUMENT)
     *     SUBMIT_NS  long @16   System.nanoTime() at publish   (TimestampMode.FULL)
     *     START_NS   long @24   at QUEUED -> RUNNING (FULL)
     *     END_NS     long @32   when the task returned or threw (FULL)
     *     WORKER     int  @40   index of the worker that ran it, -1 before
     *     (4 bytes free @44)
     *     ARG        long @48   the task's long argument (FLAG_ARGUMENT only; stale otherwise, never read)
     *     pad to 64
     * </pre>
     * ARG is written and read under the same rule as FLAGS: plain, by the submitter before the publishing release
     * store, by the taker after its acquire of {@code (gen, QUEUED)}. It holds no reference, so nothing clears it.
     */
    public static final class Layout {
        public static final long CTL_OFFSET = 0;
        public static final long NEXT_FREE_OFFSET = 8;
        public static final long FLAGS_OFFSET = 12;
        public static final long SUBMIT_NS_OFFSET = 16;
        public static final long START_NS_OFFSET = 24;
        public static final long END_NS_OFFSET = 32;
        public static final long WORKER_OFFSET = 40;
        public static final long ARG_OFFSET = 48;
        public static final long DESCRIPTOR_STRIDE = CacheLine.LINE;

        private Layout() {}

        public static long tableBytes(int capacity) {
            return DESCRIPTOR_STRIDE * capacity;
        }
    }

    private final MemorySegment table;
    private final Freelist freelist;
    private final int capacity;
    /** Index bits of a handle: {@code ceil(log2(capacity))}, at least 1. */
    private final int idxBits;
    private final long idxMask;
    /** The last generation a slot may have, {@code 2^genBits - 1}; the acquire after it retires the slot. */
    private final long maxGen;
    /**
     * A finished waitable task's failure, per slot (on-heap: a reference). Written only by the slot's owner,
     * always with a release store; kept until the slot's next acquire. See "The failure seqlock".
     */
    private final Throwable[] failures;

    public DescriptorTable(PoolMemory memory, int capacity) {
        if (capacity < 1 || capacity > 1 << 30) {
            throw new IllegalArgumentException("capacity must be in [1, 2^30]: capacity=" + capacity);
        }
        this.capacity = capacity;
        this.idxBits = Math.max(1, 32 - Integer.numberOfLeadingZeros(capacity - 1));
        this.idxMask = (1L << idxBits) - 1;
        int genBits = Math.min(MAX_GEN_BITS, 63 - idxBits);
        this.maxGen = (1L << genBits) - 1;
        this.failures = new Throwable[capacity];
        this.table = memory.allocate("task descriptors", Layout.tableBytes(capacity));
        for (int i = 0; i < capacity; i++) {
            Mem.setIntPlain(table, base(i) + Layout.WORKER_OFFSET, -1);
        }
        // every slot on the stack, 0 on top (links written plain: published with the pool, see Freelist)
        this.freelist = new Freelist(memory, table, Layout.DESCRIPTOR_STRIDE, Layout.NEXT_FREE_OFFSET, capacity);
    }

    public int capacity() {
        return capacity;
    }

    private static long base(int idx) {
        return Layout.DESCRIPTOR_STRIDE * idx;
    }

    // ---- control word helpers ------------------------------------------------------------------------
    public static long gen(long ctl) { return ctl >>> GEN_SHIFT; }
    public static int state(long ctl) { return (int) (ctl & STATE_MASK); }
    public static int outcome(long ctl) { return (int) ((ctl & OUTCOME_MASK) >>> OUTCOME_SHIFT); }
    public static boolean waitable(long ctl) { return (ctl & WAITABLE_BIT) != 0; }

    static long ctl(long gen, int state, int outcome, boolean waitable) {
        return (gen << GEN_SHIFT) | (waitable ? WAITABLE_BIT : 0) | ((long) outcome << OUTCOME_SHIFT) | state;
    }

    // ---- handles (and queue entries) -------------------------------------------------------------------

    /** The handle (and queue entry) of generation {@code gen} of slot {@code idx}: {@code gen << idxBits | idx}. */
    public long handle(int idx, long gen) {
        return (gen << idxBits) | idx;
    }

    /** The slot of a handle or queue entry (for a valid one; see {@link #isValidHandle}). */
    public int slotOf(long handle) {
        return (int) (handle & idxMask);
    }

    /** The generation of a handle or queue entry. */
    public long genOf(long handle) {
        return handle >>> idxBits;
    }

    /** True when {@code handle} has a form this table can issue: slot below capacity, gen in [1, maxGen]. */
    public boolean isValidHandle(long handle) {
        long gen = genOf(handle);
        return handle >= 0 && slotOf(handle) < capacity && gen >= 1 && gen <= maxGen;
    }

    /** Index bits of a handle. */
    public int idxBits() {
        return idxBits;
    }

    /** The last generation a slot may have before it is retired. */
    public long maxGen() {
        return maxGen;
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
     * descriptor is in use. The caller now owns the slot exclusively. A popped slot whose generations are
     * used up is retired instead (see the class comment) and the next one is popped.
     */
    public int acquire() {
        for (;;) {
            int idx = freelist.pop(); // the CAS that makes the slot ours
            if (idx == Freelist.NONE) {
                return -1;
            }
            if (nextGeneration(idx)) {
                return idx;
            }
        }
    }

    /**
     * FREE -> {@code (gen + 1, RESERVED)} of a slot the caller owns off the freelist, and the clear of the
     * previous generation's failure; or, when {@code gen == maxGen}, FREE -> {@code (maxGen + 1, RETIRED)}
     * (returns false: the slot is dropped for good).
     */
    private boolean nextGeneration(int idx) {
        long d = base(idx) + Layout.CTL_OFFSET;
        // plain: the last writer of CTL handed the slot to us through a release (the freelist CAS, or our own
        // free), and nobody else writes the word of a FREE slot (every CAS on it expects another state).
        long old = Mem.getLongPlain(table, d);
        long gen = gen(old);
        boolean retire = gen >= maxGen;
        // opaque: atomic, and ordered before nothing by itself. The failure seqlock needs our *later* writes to
        // this slot's failure cell ordered after it: clearFailure's release store does that (class comment).
        Mem.setLongOpaque(table, d, retire ? ctl(maxGen + 1, RETIRED, 0, false) : ctl(gen + 1, RESERVED, 0, false));
        clearFailure(idx);
        return !retire;
    }

    /** The new owner drops the previous generation's failure (a plain read first: rarely is there one). */
    private void clearFailure(int idx) {
        // plain read: only owners write the cell, and the previous owner's write happens-before our ownership
        if (failures[idx] != null) {
            // release: the seqlock writer; orders our generation store before this store, so a late await whose
            // acquire load of the cell returns null sees the new generation on its re-read (failureOf).
            FAILURES.setRelease(failures, idx, (Throwable) null);
        }
    }

    /**
     * Acquires up to {@code max} slots with one CAS on the freelist ({@link Freelist#popBatch(long[], int)}) and
     * moves each to {@code (gen + 1, RESERVED)}, as {@link #acquire()} does; writes their indices to
     * {@code dst[0..n)} and returns {@code n}: 0 only when every descriptor is in use. May take fewer than are
     * free (a lost CAS halves the walk). Retired slots are dropped, as in {@link #acquire()}.
     */
    public int acquireMany(long[] dst, int max) {
        for (;;) {
            int n = freelist.popBatch(dst, max); // the CAS that makes the n slots ours
            if (n == 0) {
                return 0;
            }
            int kept = 0;
            for (int i = 0; i < n; i++) {
                int idx = (int) dst[i];
                if (nextGeneration(idx)) {
                    dst[kept++] = idx;
                }
            }
            if (kept > 0) {
                return kept;
            }
            // every popped slot had used up its generations and is retired: pop again
        }
    }

    /** Pushes a slot that is FREE (and owned by the caller) back onto the freelist. */
    void push(int idx) {
        freelist.push(idx); // its CAS (a release) publishes the slot's FREE state to the next pop
    }

    /** True when the freelist looks non-empty (a volatile read: the half of the space-wait handshake). */
    public boolean hasFree() {
        return freelist.hasFree();
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

    /**
     * Writes the long argument of a RESERVED slot whose task is in argument form ({@link #FLAG_ARGUMENT}); plain,
     * published by {@link #publish} with the flags.
     */
    public void setArg(int idx, long arg) {
        Mem.setLongPlain(table, base(idx) + Layout.ARG_OFFSET, arg);
    }

    /**
     * The long argument of a slot in argument form, plain: for the thread that owns it after an acquire of
     * {@code (gen, QUEUED)} (the worker after {@link #tryStart}, the sweep before its cancel CAS, kept only if
     * that CAS wins), as {@link #flags}.
     */
    public long arg(int idx) {
        return Mem.getLongPlain(table, base(idx) + Layout.ARG_OFFSET);
    }

    /** RESERVED -> QUEUED; returns the generation. */
    public long publish(int idx, boolean waitable) {
        long d = base(idx) + Layout.CTL_OFFSET;
        long gen = gen(Mem.getLongPlain(table, d));
        // release: publishes the task reference (or function and context), group, flags, argument and timestamp
        // written before; pairs with the worker's acquire in tryStart and with cancel()/await() reads.
        Mem.setLongRelease(table, d, ctl(gen, QUEUED, 0, waitable));
        return gen;
    }

    /**
     * (gen, QUEUED) -> (gen, RUNNING) for the thread that took entry {gen, idx} from a queue (or holds it
     * unpushed): the dispatch point. False for a stale entry (the slot has moved to another generation) or a
     * cancelled task.
     *
     * <p>A waitable task may also be started by its awaiter (which runs its own task while the entry is still
     * queued) and cancelled through its handle, so the transition is a CAS: exactly one of them wins. A
     * <em>detached</em> entry has no such rival: no handle names it ({@link #tryCancel} with
     * {@code waitableOnly} refuses it), and the only other thread that may end it, the CANCEL_PENDING sweep,
     * cancels only entries it popped itself. Every queue returns an entry to exactly one taker (Scheduler's
     * contract), so whoever holds a detached entry is its only dispatcher, and the transition is a release store
     * instead: one locked instruction less per task. jcstress {@code DescriptorTableTest.DetachedPopThenStart}
     * and {@code DetachedSweepVsStart} check the claim through a real ring.
     */
    public boolean tryStart(int idx, long gen, int worker) {
        long d = base(idx) + Layout.CTL_OFFSET;
        // acquire: pairs with publish's release store of (gen, QUEUED), making the submitter's plain writes (task,
        // group, flags, timestamp) visible to us
        long c = Mem.getLongAcquire(table, d);
        if (gen(c) != gen || state(c) != QUEUED) {
            return false;
        }
        if (!waitable(c)) {
            // release (a plain store on x86): only the holder of the entry writes a detached (gen, QUEUED) slot (see
            // above); a snapshot scanning states sees RUNNING after the reads above
            Mem.setLongRelease(table, d, (c & ~STATE_MASK) | RUNNING);
        } else if (!Mem.casLong(table, d, c, (c & ~STATE_MASK) | RUNNING)) {
            // CAS (volatile): races the awaiter running its own task and a cancel through the handle
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
     * already have moved it to another generation.
     */
    public long tryCancel(int idx, long gen, boolean waitableOnly) {
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
     * RUNNING -> FREE (+ outcome) for a detached task that ran, and back onto the freelist.
     *
     * @throws IllegalStateException if the slot is waitable (that one ends with {@link #finishWaitable})
     */
    public void finish(int idx, boolean failed) {
        long d = base(idx) + Layout.CTL_OFFSET;
        long c = Mem.getLongPlain(table, d); // RUNNING: only we write it now
        if (waitable(c)) {
            throw new IllegalStateException("finish is for detached slots; slot " + idx + " is waitable");
        }
        // release: a late reader of this generation sees FREE with the outcome; then push publishes further.
        Mem.setLongRelease(table, d, ctl(gen(c), FREE, failed ? FAILED : COMPLETED, false));
        push(idx);
    }

    /**
     * RUNNING -> COMPLETED, or FAILED with {@code failure} kept in the slot for its awaits, for a waitable
     * task that ran. The slot stays terminal until its first await releases it.
     */
    public void finishWaitable(int idx, Throwable failure) {
        long d = base(idx) + Layout.CTL_OFFSET;
        long c = Mem.getLongPlain(table, d); // RUNNING: only we write it now
        if (failure != null) {
            // release: the seqlock writer (class comment); it follows, in happens-before, the store of this
            // generation (publish -> our start CAS). The awaiters that release the slot see it through the
            // volatile store below.
            FAILURES.setRelease(failures, idx, failure);
        }
        // volatile: publishes the outcome (and the failure reference) to awaiters, and orders this store
        // before our read of the slot's signal (Dekker pair with SlotSignal's enqueue-then-recheck).
        Mem.setLongVolatile(table, d, (c & ~STATE_MASK) | (failure != null ? FAILED : COMPLETED));
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
     * if it lost (or the task is not terminal, or the generation moved on). The winner owns the slot until
     * it pushes it ({@link #pushReleased}, or a cache).
     */
    public long tryReleaseWaitable(int idx, long gen) {
        long d = base(idx) + Layout.CTL_OFFSET;
        long c = Mem.getLongVolatile(table, d);
        int st = state(c);
        if (gen(c) != gen || (st != COMPLETED && st != FAILED && st != CANCELLED)) {
            return 0;
        }
        // CAS: the release is claimed once; concurrent awaiters cannot both push the slot.
        if (!Mem.casLong(table, d, c, ctl(gen, FREE, st, true))) {
            return 0;
        }
        return c;
    }

    /** Pushes a slot whose waitable release CAS the caller won (after it read what it needs of the slot). */
    public void pushReleased(int idx) {
        push(idx);
    }

    /**
     * The failure of the generation that last ran in a slot the caller owns (it won
     * {@link #tryReleaseWaitable}): plain, the worker's store happens-before the terminal state our CAS read.
     */
    public Throwable failure(int idx) {
        return failures[idx];
    }

    /**
     * The seqlock read of a late await (class comment): the failure of generation {@code gen} of a slot the
     * caller saw FREE with outcome FAILED in that generation, or null when the slot has since moved to another
     * generation (the caller's handle is stale then; the value read may be the next owner's).
     */
    public Throwable failureOf(int idx, long gen) {
        // acquire: pairs with the release store of whoever wrote the cell; also orders the re-read below
        // after this load (the reader's half of the seqlock).
        Throwable t = (Throwable) FAILURES.getAcquire(failures, idx);
        long c = Mem.getLongAcquire(table, base(idx) + Layout.CTL_OFFSET);
        return gen(c) == gen ? t : null;
    }

    /**
     * White-box hook for tests in this package: sets the generation of a slot that is FREE and on the
     * freelist or owned by the caller, as if it had been reused that often (e.g. near {@link #maxGen}).
     */
    void setGenerationForTest(int idx, long gen) {
        if (gen < 0 || gen > maxGen) {
            throw new IllegalArgumentException("gen must be in [0, " + maxGen + "]: gen=" + gen);
        }
        long d = base(idx) + Layout.CTL_OFFSET;
        long c = Mem.getLongVolatile(table, d);
        if (state(c) != FREE) {
            throw new IllegalStateException("slot must be FREE: idx=" + idx + ", state=" + state(c));
        }
        Mem.setLongVolatile(table, d, (c & ((1L << GEN_SHIFT) - 1)) | (gen << GEN_SHIFT));
    }

    // ---- timestamps (TimestampMode.FULL) ----------------------------------------------------------------
    /** The flags of a slot, plain: for the thread that prepared it, or after an acquire of (gen, QUEUED). */
    public int flags(int idx) { return Mem.getIntPlain(table, base(idx) + Layout.FLAGS_OFFSET); }
    public void setStartNanos(int idx, long t) { Mem.setLongPlain(table, base(idx) + Layout.START_NS_OFFSET, t); }
    public void setEndNanos(int idx, long t) { Mem.setLongPlain(table, base(idx) + Layout.END_NS_OFFSET, t); }
    public long submitNanos(int idx) { return Mem.getLongPlain(table, base(idx) + Layout.SUBMIT_NS_OFFSET); }
    public long startNanos(int idx) { return Mem.getLongPlain(table, base(idx) + Layout.START_NS_OFFSET); }
    public long endNanos(int idx) { return Mem.getLongPlain(table, base(idx) + Layout.END_NS_OFFSET); }

    /** Counts FREE slots by scanning the table (stats, tests; not a hot path). Retired slots are not free. */
    public int countFree() {
        return countState(FREE);
    }

    /** Counts RETIRED slots (generations used up, never handed out again) by scanning the table. */
    public int countRetired() {
        return countState(RETIRED);
    }

    private int countState(int state) {
        int n = 0;
        for (int i = 0; i < capacity; i++) {
            if (state(ctlAcquire(i)) == state) {
                n++;
            }
        }
        return n;
    }

    // ---- slots held by a DescCache ------------------------------------------------------------------------

    /**
     * Pops up to {@code max} free slots with one CAS and writes their indices as ints to {@code dst} at
     * {@code dstOffset}, {@code dstOffset + 4}, ... ({@link Freelist#popBatch}). The slots stay FREE: the
     * caller owns them and moves each to RESERVED with {@link #reserve} when it uses it.
     */
    public int acquireBatch(MemorySegment dst, long dstOffset, int max) {
        return freelist.popBatch(dst, dstOffset, max);
    }

    /** Pushes {@code n} FREE slots owned by the caller with one CAS ({@link Freelist#pushBatch}). */
    public void releaseBatch(MemorySegment src, long srcOffset, int n) {
        freelist.pushBatch(src, srcOffset, n);
    }

    /**
     * FREE -> {@code (gen + 1, RESERVED)} for a slot the caller owns off the freelist (from
     * {@link #acquireBatch}, i.e. a DescCache): exactly the transition {@link #acquire()} makes after its CAS.
     * Returns false when the slot's generations are used up: it is retired instead, and the caller drops it
     * and takes another.
     *
     * @throws IllegalStateException if the slot is not FREE (it was handed out twice)
     */
    public boolean reserve(int idx) {
        long d = base(idx) + Layout.CTL_OFFSET;
        long old = Mem.getLongPlain(table, d); // see nextGeneration
        if (state(old) != FREE) {
            throw new IllegalStateException("slot must be FREE to reserve: idx=" + idx + ", state=" + state(old));
        }
        return nextGeneration(idx);
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
