package dev.threadpool.internal.stats;

import dev.threadpool.internal.memory.CacheLine;
import dev.threadpool.internal.memory.Mem;
import dev.threadpool.internal.memory.PoolMemory;
import java.lang.foreign.MemorySegment;

/**
 * The pool's lifecycle and activity counters, off-heap, laid out so that no two writers share a line.
 *
 * <h2>Who writes what</h2>
 * <ul>
 *   <li>Admission (see {@code Lifecycle}): every task that takes a descriptor, and every inline run, is accepted
 *       by a CAS on one of several admission words, each {@code count (low 63 bits) | CLOSED_BIT}, and none of
 *       them is written by every submitting thread (issue 48): a worker accepts on its own {@code ADMITTED} word
 *       in its block ({@link #tryAcceptOnWorker}; a line only it and the shutdown write), a registered submitter
 *       on its slot's word ({@link #tryAcceptOnSubmitter}), and any other thread on the outside stripe its
 *       thread id hashes to ({@link #tryAcceptOutside}; a line shared only by the outside threads hashed there,
 *       see "Outside stripes"). {@code SUBMITTED} counts nothing any more: it is the admission bit alone, the one
 *       word a waiting submitter reads to learn that shutdown began ({@link #admissionClosed}), written only by
 *       the close. {@link #closeAdmission} closes SUBMITTED, then every stripe, worker word and submitter word,
 *       and sums their counts; {@code taskDescLive} counts from the same sum ({@link #submittedWithDescriptor}).
 *       A task carried by its ring cell with no descriptor (a detached submit from outside the pool) is
 *       accepted by its push instead: the carried ring's tail is its counter and its admission word
 *       ({@code BoundedRing}, "Closing to pushes"), closed by shutdown right after these words.</li>
 *   <li>The cold counters ({@code CANCELLED}, {@code REJECTED}, {@code RELEASED_OTHER}) are written with
 *       atomic adds by whoever cancels, rejects or releases a waitable slot: rare events.</li>
 *   <li>Each worker owns one block and is its only writer: plain read of its own value and a release
 *       store ({@link #add}), no read-modify-write on the hot path; by raw address where {@link Mem#RAW}, since
 *       only that worker writes it and the arena outlives every worker (see {@code base}).</li>
 * </ul>
 * Readers load with acquire. A snapshot reads the worker blocks <em>before</em> the global words, so the
 * monotonic relations {@code finished <= started <= submitted} hold in every snapshot even while the pool
 * runs (each counter is incremented only after the event it counts and after the counters it follows).
 *
 * <h2>Outside stripes</h2>
 * Before issue 48's stripes, every task with a descriptor from an unregistered outside thread (waitables,
 * {@code TimestampMode.FULL}, the blocking lane, submits where the scheduler carries nothing) did its CAS on
 * SUBMITTED, one line every such thread wrote: an all-shared write per task ({@code SharedWriteBudgetTest}).
 * Now such a thread accepts on stripe {@code threadId & (OUTSIDE_STRIPES - 1)}, one {@link CacheLine#PAD} line
 * each: threads with consecutive ids (threads made one after another, as a feeding pool's are) never share a
 * stripe until there are more of them than stripes. {@link #OUTSIDE_STRIPES} is the processors rounded up to a
 * power of two, in [4, 64], fixed for the JVM: only running threads contend on a line, and at most one runs per
 * processor, so a stripe per processor is enough for threads that rarely meet on one, whatever the worker count
 * (a pool's workers never use the stripes); at least 4 so that a small machine still spreads its few outside
 * threads (and the tests exercise several stripes); at most 64, 8 KiB, so the close and every snapshot walk a
 * bounded list. Fixed per JVM rather than per pool, so the layout's offsets are constants (the counting tool
 * classes each line by its offset alone). Exactness is as for the worker words: each accept is a CAS on its
 * stripe, totally ordered with the close's getAndOr of CLOSED_BIT on that stripe, so it is counted in the value
 * that close read or it sees the bit and is refused (jcstress {@code AdmissionTest.OutsideAcceptVsClose}).
 * The stripe is chosen by the thread, not the task: a thread's tasks all go to one stripe.
 */
public final class PoolCounters {

    /**
     * Off-heap layout: the admission word, the cold shared counters, the outside stripes, then one block per
     * worker and one word per registered submitter slot, each on its own PAD line (no two writers share a line,
     * but for the shutdown's one getAndOr on each admission word, and the outside threads hashed to one stripe).
     * <pre>
     *   SUBMITTED         long @0          the admission bit: CLOSED_BIT (admission closed; set first by the
     *                                      close), low 63 bits 0 (no task is accepted on it since issue 48)
     *   pad to PAD                         (carried tasks: the carried ring's tail, BoundedRing)
     *   cold block @PAD (rare atomic adds by any thread):
     *     CANCELLED         long @PAD + 0
     *     REJECTED          long @PAD + 8
     *     RELEASED_OTHER    long @PAD + 16   slots freed by others: a waitable one by its first awaiter, a
     *                                        cancelled detached one by the canceller
     *     STALLS_SEEN       long @PAD + 24   LANE_EXTENSION watchdog: long-running default-lane tasks seen
     *     OVERFLOW_SPAWNED  long @PAD + 32   LANE_EXTENSION watchdog: overflow workers started
     *     OVERFLOW_RETIRED  long @PAD + 40   LANE_EXTENSION watchdog: overflow workers that exited
     *     pad to PAD
     *   outside stripe i at OUTSIDE_STRIPES_OFFSET + PAD * i (= 2 * PAD + PAD * i), i < OUTSIDE_STRIPES:
     *     ADMITTED          long @0          tasks accepted with a descriptor by the unregistered outside threads
     *                                        whose id hashes to stripe i (low 63 bits) | CLOSED_BIT: their CAS,
     *                                        the shutdown's getAndOr
     *     pad to PAD
     *   worker block w at WORKER_BLOCKS_OFFSET + WORKER_BLOCK_LENGTH * w
     *   (= (2 + OUTSIDE_STRIPES) * PAD + PAD * w), owner-written:
     *     STARTED           long @0
     *     COMPLETED         long @8
     *     FAILED            long @16
     *     RELEASED          long @24         detached slots this worker freed when their task ended
     *     INLINE_RUNS       long @32         tasks run inline because the pool was full (caller-runs)
     *     PARKS             long @40
     *     WAKEUPS           long @48         parks ended by a waker that claimed the worker's idle bit
     *     STEALS            long @56         WORK_STEALING: successful steals (peer local queue or LIFO slot)
     *     STEAL_FAILURES    long @64         WORK_STEALING: victims tried in vain
     *     YIELDS            long @72         CPU yields after a run of carried tasks (WorkerLoop.CARRIED_YIELD_EVERY)
     *     ADMITTED          long @80         tasks this worker accepted with a descriptor or ran inline (low 63
     *                                        bits) | CLOSED_BIT: CAS by the owner, getAndOr by the shutdown
     *     pad to PAD
     *   submitter word s at submitterBlocksOffset(workers) + PAD * s, one PAD line each:
     *     ADMITTED          long @0          as a worker's, for registered submitter slot s (its thread's CAS)
     * </pre>
     */
    public static final class Layout {
        public static final long SUBMITTED_OFFSET = 0;

        public static final long COLD_BLOCK_OFFSET = CacheLine.PAD;
        public static final long CANCELLED_OFFSET = COLD_BLOCK_OFFSET;
        public static final long REJECTED_OFFSET = COLD_BLOCK_OFFSET + 8;
        public static final long RELEASED_OTHER_OFFSET = COLD_BLOCK_OFFSET + 16;
        public static final long STALLS_SEEN_OFFSET = COLD_BLOCK_OFFSET + 24;
        public static final long OVERFLOW_SPAWNED_OFFSET = COLD_BLOCK_OFFSET + 32;
        public static final long OVERFLOW_RETIRED_OFFSET = COLD_BLOCK_OFFSET + 40;

        /**
         * Outside stripes: the processors rounded up to a power of two, in [4, 64], fixed for the JVM (class
         * comment, "Outside stripes", says why). Here, so that the offsets below depend on nothing outside Layout.
         */
        public static final int OUTSIDE_STRIPES = Math.clamp(
                Integer.highestOneBit(Math.max(1, Runtime.getRuntime().availableProcessors() * 2 - 1)), 4, 64);
        /** Where the outside stripes start: after the cold block, {@link #OUTSIDE_STRIPES} lines. */
        public static final long OUTSIDE_STRIPES_OFFSET = 2L * CacheLine.PAD;
        /** Bytes of one outside stripe: one admission word on a PAD line of its own. */
        public static final long OUTSIDE_STRIPE_LENGTH = CacheLine.PAD;

        public static final long WORKER_BLOCKS_OFFSET = OUTSIDE_STRIPES_OFFSET
                + OUTSIDE_STRIPE_LENGTH * OUTSIDE_STRIPES;
        public static final long STARTED_OFFSET = 0;
        public static final long COMPLETED_OFFSET = 8;
        public static final long FAILED_OFFSET = 16;
        public static final long RELEASED_OFFSET = 24;
        public static final long INLINE_RUNS_OFFSET = 32;
        public static final long PARKS_OFFSET = 40;
        public static final long WAKEUPS_OFFSET = 48;
        public static final long STEALS_OFFSET = 56;
        public static final long STEAL_FAILURES_OFFSET = 64;
        public static final long YIELDS_OFFSET = 72;
        public static final long ADMITTED_OFFSET = 80;
        public static final long WORKER_BLOCK_LENGTH = CacheLine.PAD;

        private Layout() {}

        /** The whole block for {@code workers} worker slots and no submitter words. */
        public static long bytes(int workers) {
            return bytes(workers, 0);
        }

        /** The whole block for {@code workers} worker slots and {@code submitters} submitter slots. */
        public static long bytes(int workers, int submitters) {
            return submitterBlocksOffset(workers) + CacheLine.PAD * (long) submitters;
        }

        /** Where the submitter words start: after the last worker block. */
        public static long submitterBlocksOffset(int workers) {
            return WORKER_BLOCKS_OFFSET + WORKER_BLOCK_LENGTH * workers;
        }

        static long outsideStripeOffset(int i) {
            return OUTSIDE_STRIPES_OFFSET + OUTSIDE_STRIPE_LENGTH * i;
        }

        static long workerFieldOffset(int w, long field) {
            return WORKER_BLOCKS_OFFSET + WORKER_BLOCK_LENGTH * w + field;
        }
    }

    // ---- per-worker fields, as passed to increment / add / get / sum: their offsets in a worker block ----
    public static final long STARTED = Layout.STARTED_OFFSET;
    public static final long COMPLETED = Layout.COMPLETED_OFFSET;
    public static final long FAILED = Layout.FAILED_OFFSET;
    public static final long RELEASED = Layout.RELEASED_OFFSET;
    public static final long INLINE_RUNS = Layout.INLINE_RUNS_OFFSET;
    public static final long PARKS = Layout.PARKS_OFFSET;
    public static final long WAKEUPS = Layout.WAKEUPS_OFFSET;
    public static final long STEALS = Layout.STEALS_OFFSET;
    public static final long STEAL_FAILURES = Layout.STEAL_FAILURES_OFFSET;
    public static final long YIELDS = Layout.YIELDS_OFFSET;
    /** A worker's admission word (not a plain counter: {@link #tryAcceptOnWorker}, {@link #closeAdmission}). */
    public static final long ADMITTED = Layout.ADMITTED_OFFSET;

    /** The admission bit of every admission word: set once shutdown begins; the low 63 bits count tasks. */
    public static final long CLOSED_BIT = Long.MIN_VALUE;

    /** Outside stripes ({@link Layout#OUTSIDE_STRIPES}): a power of two in [4, 64], fixed for the JVM. */
    public static final int OUTSIDE_STRIPES = Layout.OUTSIDE_STRIPES;
    private static final int OUTSIDE_STRIPE_MASK = OUTSIDE_STRIPES - 1;

    private final MemorySegment seg;
    /**
     * The block's address where the owners' increments go by raw address ({@link Mem#RAW}), else 0. Sound for
     * {@link #increment}, {@link #add} and {@link #tryAcceptOnWorker} only: their callers are the block's owner, a
     * worker, and the pool frees its arena only after every worker is joined (native-notes/FFM.md, "Raw addresses"). Every read
     * ({@link #get}: snapshots, which may race a close) stays on the checked segment.
     */
    private final long base;
    private final int workers;
    /** Registered submitter slots with an admission word of their own ({@link #tryAcceptOnSubmitter}). */
    private final int submitters;

    /** Counters for {@code workers} worker slots, no submitter words (white-box tests, schedulers alone). */
    public PoolCounters(PoolMemory memory, int workers) {
        this(memory, workers, 0);
    }

    /** Counters for {@code workers} worker slots and {@code submitters} registered submitter slots. */
    public PoolCounters(PoolMemory memory, int workers, int submitters) {
        this.workers = workers;
        this.submitters = submitters;
        this.seg = memory.allocate("counters", Layout.bytes(workers, submitters));
        this.base = Mem.RAW ? seg.address() : 0L;
    }

    private long submitterWord(int s) {
        return Layout.submitterBlocksOffset(workers) + (long) CacheLine.PAD * s;
    }

    public int workers() {
        return workers;
    }

    // ---- admission + submitted -------------------------------------------------------------------------

    /** The outside stripe of the calling thread: the low bits of its thread id ("Outside stripes"). */
    public static int outsideStripeOfCurrentThread() {
        return (int) Thread.currentThread().threadId() & OUTSIDE_STRIPE_MASK;
    }

    /**
     * Accepts {@code n} tasks from a thread that is neither a worker of the pool nor a registered submitter, unless
     * shutdown has begun: on the calling thread's outside stripe ({@link #tryAcceptOnStripe}).
     */
    public boolean tryAcceptOutside(long n) {
        return tryAcceptOnStripe(outsideStripeOfCurrentThread(), n);
    }

    /**
     * Accepts {@code n} tasks on outside stripe {@code i} unless its admission bit is set. A CAS loop rather than an
     * add-then-undo, so the count is never inflated by a refused submitter, even for an instant. Any thread may
     * call it; {@link #tryAcceptOutside} picks the calling thread's stripe (tests pick one).
     *
     * @throws IllegalArgumentException if {@code i} is not in [0, OUTSIDE_STRIPES)
     */
    public boolean tryAcceptOnStripe(int i, long n) {
        if (i < 0 || i >= OUTSIDE_STRIPES) {
            throw new IllegalArgumentException("i must be in [0, " + OUTSIDE_STRIPES + "): i=" + i);
        }
        // on the checked segment (base 0, not by raw address): an outside thread is not a worker, and may race the
        // pool's close, which frees the arena; the FFM check then throws instead of touching freed memory
        return tryAcceptAt(0L, Layout.outsideStripeOffset(i), n);
    }

    /**
     * The accept on one admission word at {@code off} (by raw address from {@code base} where Mem.RAW and
     * {@code base} is not 0, else on the checked segment): a CAS loop rather than an add-then-undo, so the count is
     * never inflated by a refused submitter, even for an instant.
     */
    private boolean tryAcceptAt(long base, long off, long n) {
        for (;;) {
            // plain: the value only seeds the CAS below, which fails on any newer one, admission bit included
            long v = Mem.getLongPlainAt(seg, base, off);
            if ((v & CLOSED_BIT) != 0) {
                return false;
            }
            // CAS (volatile): the acceptance point, totally ordered with closeAdmission's getAndOr of CLOSED_BIT on
            // this word: the task is counted in the value the shutdown read there, or it sees the bit and is refused
            if (Mem.casLongAt(seg, base, off, v, v + n)) {
                return true;
            }
        }
    }

    /**
     * Accepts {@code n} tasks for worker {@code w} unless admission closed, on the worker's own ADMITTED word: only
     * the owner and the shutdown write that line, so a worker's accepts write nothing every worker writes. Only on
     * worker {@code w}'s thread.
     */
    public boolean tryAcceptOnWorker(int w, long n) {
        // our own word, written otherwise only by the shutdown's getAndOr, which the CAS checks; by raw address
        // where Mem.RAW: the caller is a worker, which the arena outlives (see base)
        return tryAcceptAt(base, Layout.workerFieldOffset(w, ADMITTED), n);
    }

    /**
     * Accepts {@code n} tasks for registered submitter slot {@code s} unless admission closed, on the slot's own
     * ADMITTED word: the feed threads of a pool write no line in common to accept (their slot's word, one line
     * each). Any thread may call it (a CAS); its slot's thread is the only one that does in a correct program.
     */
    public boolean tryAcceptOnSubmitter(int s, long n) {
        if (s < 0 || s >= submitters) {
            throw new IllegalArgumentException("s must be in [0, " + submitters + "): s=" + s);
        }
        // on the checked segment (base 0): a submitter is not a worker, and may race the pool's close
        return tryAcceptAt(0L, submitterWord(s), n);
    }

    /**
     * Sets the admission bit on SUBMITTED, then on every outside stripe, every worker's ADMITTED word and every
     * submitter slot's, in index order; returns the tasks accepted on them before (stable from now on). Each accept
     * is a CAS on one of these words, totally ordered with the getAndOr on that word: before it, and counted in the
     * value read there, or after it, and refused (jcstress {@code AdmissionTest.WorkerAcceptVsClose},
     * {@code OutsideAcceptVsClose}). An accept on a word that is still open after SUBMITTED closed is counted by
     * that word's close, as a carried push into a stripe that is still open ({@code CarriedRings}, "Admission").
     * SUBMITTED goes first, so {@link #admissionClosed} is true before any word refuses. Carried tasks are closed
     * and counted by their rings, which the lifecycle closes right after.
     */
    public long closeAdmission() {
        // getAndOr (volatile): sets the bit admissionClosed reads; nothing is accepted on SUBMITTED, so its count
        // is 0 and is not added
        Mem.getAndOrLong(seg, Layout.SUBMITTED_OFFSET, CLOSED_BIT);
        long total = 0;
        for (int i = 0; i < OUTSIDE_STRIPES; i++) {
            // getAndOr (volatile): pairs with tryAcceptOnStripe's CAS on the same stripe
            total += Mem.getAndOrLong(seg, Layout.outsideStripeOffset(i), CLOSED_BIT) & ~CLOSED_BIT;
        }
        for (int w = 0; w < workers; w++) {
            // getAndOr (volatile): pairs with tryAcceptOnWorker's CAS on the same word
            total += Mem.getAndOrLong(seg, Layout.workerFieldOffset(w, ADMITTED), CLOSED_BIT) & ~CLOSED_BIT;
        }
        for (int sub = 0; sub < submitters; sub++) {
            // getAndOr (volatile): pairs with tryAcceptOnSubmitter's CAS on the same word
            total += Mem.getAndOrLong(seg, submitterWord(sub), CLOSED_BIT) & ~CLOSED_BIT;
        }
        return total;
    }

    /**
     * Whether shutdown has begun closing admission: SUBMITTED's bit, the first the close sets. A volatile load,
     * read by submitters waiting for room (never written by them: the waiters poll a line only the close writes).
     */
    public boolean admissionClosed() {
        return (Mem.getLongVolatile(seg, Layout.SUBMITTED_OFFSET) & CLOSED_BIT) != 0;
    }

    /**
     * Tasks accepted with a descriptor or run inline (every outside stripe and every ADMITTED word): what
     * {@code taskDescLive} counts from. Acquire loads; a snapshot calls this after reading the workers' STARTED
     * and releases, so each task counted there was accepted before (Snapshot.read).
     */
    public long submittedWithDescriptor() {
        long s = 0;
        for (int i = 0; i < OUTSIDE_STRIPES; i++) {
            // acquire: pairs with the accepting CAS, as get() does with its release store
            s += Mem.getLongAcquire(seg, Layout.outsideStripeOffset(i)) & ~CLOSED_BIT;
        }
        for (int w = 0; w < workers; w++) {
            s += Mem.getLongAcquire(seg, Layout.workerFieldOffset(w, ADMITTED)) & ~CLOSED_BIT; // acquire: as above
        }
        for (int sub = 0; sub < submitters; sub++) {
            s += Mem.getLongAcquire(seg, submitterWord(sub)) & ~CLOSED_BIT; // acquire: as above
        }
        return s;
    }

    // ---- cold shared counters ---------------------------------------------------------------------------
    public void addCancelled(long n) { Mem.getAndAddLong(seg, Layout.CANCELLED_OFFSET, n); }
    public void addRejected(long n) { Mem.getAndAddLong(seg, Layout.REJECTED_OFFSET, n); }
    public void addReleasedOther(long n) { Mem.getAndAddLong(seg, Layout.RELEASED_OTHER_OFFSET, n); }
    public long cancelled() { return Mem.getLongAcquire(seg, Layout.CANCELLED_OFFSET); }
    public long rejected() { return Mem.getLongAcquire(seg, Layout.REJECTED_OFFSET); }
    public long releasedOther() { return Mem.getLongAcquire(seg, Layout.RELEASED_OTHER_OFFSET); }
    public void addStallsSeen(long n) { Mem.getAndAddLong(seg, Layout.STALLS_SEEN_OFFSET, n); }
    public void addOverflowSpawned(long n) { Mem.getAndAddLong(seg, Layout.OVERFLOW_SPAWNED_OFFSET, n); }
    public void addOverflowRetired(long n) { Mem.getAndAddLong(seg, Layout.OVERFLOW_RETIRED_OFFSET, n); }
    public long stallsSeen() { return Mem.getLongAcquire(seg, Layout.STALLS_SEEN_OFFSET); }
    public long overflowSpawned() { return Mem.getLongAcquire(seg, Layout.OVERFLOW_SPAWNED_OFFSET); }
    public long overflowRetired() { return Mem.getLongAcquire(seg, Layout.OVERFLOW_RETIRED_OFFSET); }

    // ---- per-worker, single writer ----------------------------------------------------------------------

    /** Owner-only increment of {@code field} in worker {@code w}'s block: plain read, release store. */
    public void increment(int w, long field) {
        add(w, field, 1L);
    }

    /** Owner-only add of {@code n} (plain read, release store, as {@link #increment}); only on a worker. */
    public void add(int w, long field, long n) {
        long off = Layout.workerFieldOffset(w, field);
        // plain read of our own word, release store: pairs with get()'s acquire.
        Mem.setLongReleaseAt(seg, base, off, Mem.getLongPlainAt(seg, base, off) + n);
    }

    public long get(int w, long field) {
        // acquire: pairs with the owner's release store, so what it counted happened-before our read.
        return Mem.getLongAcquire(seg, Layout.workerFieldOffset(w, field));
    }

    public long sum(long field) {
        long s = 0;
        for (int w = 0; w < workers; w++) {
            s += get(w, field);
        }
        return s;
    }
}
