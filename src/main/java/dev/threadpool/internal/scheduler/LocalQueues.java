package dev.threadpool.internal.scheduler;

import dev.threadpool.QueueKind;
import dev.threadpool.internal.memory.CacheLine;
import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.BoundedRing;
import dev.threadpool.internal.queue.QueueEntry;
import dev.threadpool.internal.queue.RingQueue;
import dev.threadpool.internal.stats.RecentErrors;

/**
 * The per-worker local queues of WORK_STEALING (and of LANE_EXTENSION's default lane), the
 * {@code workers_nonempty} bitmap and steal-half: one owner/thief contract, two implementations.
 *
 * <h2>Implementations</h2>
 * {@link #create} picks one from {@link QueueKind}; the scheduler never asks which it has.
 * <ul>
 *   <li>{@link RingLocalQueues} ({@link QueueKind#RING}): one bounded SPMC {@link RingQueue} per worker. The
 *       owner pops FIFO; a thief takes half with one CAS ({@link RingQueue#stealHalf}); a full queue moves half
 *       of itself to the inject ring ({@link RingQueue#pushOrOverflow}).</li>
 *   <li>{@link ChaseLevLocalQueues} ({@link QueueKind#CHASE_LEV}): one growable Chase–Lev
 *       {@link dev.threadpool.internal.queue.WorkDeque} per worker, first sized {@code localQueueCapacity}. The
 *       owner takes LIFO; a thief steals one at a time, up to half; a push that cannot grow the deque goes to
 *       the inject ring.</li>
 * </ul>
 *
 * <h2>Who may call what</h2>
 * <pre>
 *   OWNER (worker w only, for queue w)    push, pushOrOverflow, pushInRunOrder, pop, free
 *   THIEF (worker thief, owner of its     stealHalf (victims: the peers), stealHalfFrom (victim: a
 *          own queue; any victim)           registered submitter's queue); both place what they take beyond
 *                                           the one they return into the thief's own queue
 *   ANY THREAD                            size, stealOne, nonEmptyMask, anyNonEmptyHint
 *   once nobody uses the queues           close
 * </pre>
 *
 * <h2>workers_nonempty</h2>
 * Word NONEMPTY of the pool's {@link WorkSummary}: bit {@code w} set while worker {@code w}'s queue may be
 * non-empty. Only
 * the owner sets or clears its own bit (thieves never clear it: a thief's clear could race the owner's set and
 * hide a non-empty queue). The owner sets it after a push (its own, or a steal into its own queue) that finds it
 * clear, and clears it when its pop finds the queue empty; it then re-reads its own length (owned_queue_len)
 * and sets the bit again if that is not zero. Only the owner pushes into its queue, so the re-read finds it
 * empty today; it keeps the rule true should another thread ever push. A thief reads the bitmap as a hint; the park
 * re-check reads it (seq_cst, after the announcement) and then the length of every queue whose bit is set
 * ({@link #size}): a clear bit is a queue with nothing its owner has not signalled (WorkSummary, "Why the park
 * re-check can rely on the bits").
 */
abstract sealed class LocalQueues permits RingLocalQueues, ChaseLevLocalQueues {

    /** The {@code workers_nonempty} bitmap: word NONEMPTY of the pool's WorkSummary. */
    private final WorkSummary summary;
    /** Worker slots with a queue; bits at or above it are never set. */
    final int workers;

    LocalQueues(WorkSummary summary, int workers) {
        this.workers = workers;
        this.summary = summary;
    }

    /**
     * The implementation for {@code kind}: {@code workers} queues of {@code capacity} (a deque's first
     * capacity), allocated from {@code memory}; a failed deque growth is recorded in {@code errors}.
     */
    static LocalQueues create(PoolMemory memory, WorkSummary summary, QueueKind kind, int workers, int capacity,
            RecentErrors errors) {
        return kind == QueueKind.CHASE_LEV
                ? new ChaseLevLocalQueues(memory, summary, workers, capacity, errors)
                : new RingLocalQueues(memory, summary, workers, capacity);
    }

    // =====================================================================================================
    // OWNER (worker w only)
    // =====================================================================================================

    /**
     * Pushes into w's queue and sets w's bit; false when the queue is full (a deque: full and it could not grow,
     * the failure recorded). On false the entry is still the caller's to place: {@link #pushOrOverflow}.
     */
    abstract boolean push(int w, long entry);

    /**
     * After {@link #push} refused {@code entry}: places it, in w's queue or in {@code overflow} (the inject
     * ring); false when neither takes it, the entry still the caller's. RING moves half of its full queue plus
     * the entry to {@code overflow} (Tokio's push_overflow), so the next pushes stay local; Chase–Lev pushes the
     * entry alone to {@code overflow}. {@code scratch} is the caller's buffer, so this allocates nothing.
     */
    abstract boolean pushOrOverflow(int w, long entry, BoundedRing overflow, long[] scratch);

    /**
     * Pushes {@code batch[from, to)} into w's queue so that w's pops return them in array order (RING pops
     * FIFO: pushed first to last; Chase–Lev takes LIFO: pushed last to first). The caller bounds the batch by
     * {@link #free}, so each push fits; one that does not goes to {@code spill} (retried until it fits: an
     * accepted entry is never dropped).
     */
    abstract void pushInRunOrder(int w, long[] batch, int from, int to, BoundedRing spill);

    /** Pops w's next entry (RING: FIFO; Chase–Lev: LIFO take), clearing w's bit when the queue is empty. */
    final long pop(int w) {
        long e = takeOwn(w);
        if (e == QueueEntry.EMPTY) {
            // getAndAnd (seq_cst) when our bit is set: clear the stale hint, then reconcile with our own length
            if (summary.clear(WorkSummary.NONEMPTY, w) && size(w) > 0) {
                summary.mark(WorkSummary.NONEMPTY, w); // owned_queue_len says non-empty again (getAndOr)
            }
        }
        return e;
    }

    /** w's next entry or EMPTY, without the bitmap's bookkeeping ({@link #pop} does it). */
    abstract long takeOwn(int w);

    /** Free cells of w's queue (a deque: its current capacity minus its size, at most Integer.MAX_VALUE). */
    abstract int free(int w);

    /** Sets w's bit unless it is set already; called by w after an entry landed in its queue. */
    final void markNonEmpty(int w) {
        // an opaque test of our own bit, then getAndOr (seq_cst) if clear: after the push's publish, so a thief
        // that sees the bit sees the entry, and a parking worker's re-check either sees the bit or is seen
        // (WorkSummary, "Why the park re-check can rely on the bits")
        summary.mark(WorkSummary.NONEMPTY, w);
    }

    /** Retries {@code spill.tryPush(e)} until it takes {@code e} (an accepted entry is never dropped). */
    static void spillUntilPlaced(BoundedRing spill, long e) {
        while (!spill.tryPush(e)) { // seq_cst CAS on tail
            Thread.onSpinWait();
        }
    }

    // =====================================================================================================
    // THIEF (the owner of queue `thief`; any victim)
    // =====================================================================================================

    /**
     * Where a thief's failure count sits in the array {@link #newFailureCount} makes: a {@link CacheLine#PAD}
     * past the array's header and a PAD before its end, so that no object the collector places beside the
     * array (another worker's state, say) shares the line the thief writes on every search.
     */
    static final int FAILURES_AT = CacheLine.PAD / Long.BYTES;

    /** A thief's failure count for {@link #stealHalf}: element {@link #FAILURES_AT}, padded on both sides. */
    static long[] newFailureCount() {
        return new long[2 * FAILURES_AT + 1];
    }

    /**
     * Steals up to half (at most {@code max}) of some peer's queue into {@code thief}'s own queue, visiting
     * only peers whose bit is set, from {@code start}. Returns one stolen entry to run, or EMPTY.
     * {@code failures[FAILURES_AT]} ({@link #newFailureCount}) is incremented per victim tried without success.
     */
    final long stealHalf(int thief, int start, int max, long[] failures) {
        // volatile load: the hint; a miss is caught by the park re-check (seq_cst sizes of the set bits' queues).
        long m = summary.mask(WorkSummary.NONEMPTY) & ~(1L << thief);
        while (m != 0) {
            int v = WorkSummary.pick(m, start);
            m &= ~(1L << v);
            if (v >= workers) {
                continue;
            }
            long e = stealFrom(v, thief, max);
            if (e != QueueEntry.EMPTY) {
                return e;
            }
            failures[FAILURES_AT]++;
        }
        return QueueEntry.EMPTY;
    }

    /**
     * Steal-half from peer {@code v} into {@code thief}'s queue (setting the thief's bit if entries landed
     * there); returns the one to run, or EMPTY.
     */
    abstract long stealFrom(int v, int thief, int max);

    /**
     * Steals up to half (at most {@code max}) of a registered submitter's queue into {@code thief}'s own
     * queue, as {@link #stealHalf} does from a peer; returns one entry to run, or EMPTY.
     */
    abstract long stealHalfFrom(RingQueue victim, int thief, int max);

    // =====================================================================================================
    // ANY THREAD
    // =====================================================================================================

    /** Length of w's queue from volatile (seq_cst) loads: the park re-check. */
    abstract long size(int w);

    /** Removes one entry of w's queue from any thread (the sweep); EMPTY when it is empty. */
    abstract long stealOne(int w);

    /** The {@code workers_nonempty} bitmap (a hint: volatile load). */
    final long nonEmptyMask() {
        return summary.mask(WorkSummary.NONEMPTY);
    }

    /** Whether any worker's bit is set in {@code workers_nonempty} (a hint: volatile load of the bitmap). */
    final boolean anyNonEmptyHint() {
        return summary.mask(WorkSummary.NONEMPTY) != 0;
    }

    /** Releases each deque's blocks (RING: nothing; its queues live as long as the arena). Once nobody uses them. */
    abstract void close();
}
