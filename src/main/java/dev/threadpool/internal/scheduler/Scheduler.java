package dev.threadpool.internal.scheduler;

/**
 * The queue topology of a pool, factored out of {@link PoolCore}: where an accepted entry goes, where a worker
 * looks for its next entry, what the park re-check must see, and what the CANCEL_PENDING sweep drains.
 * {@link PoolCore} keeps descriptors, accounting, awaiting and shutdown; a scheduler only moves queue entries.
 *
 * <h2>Contract</h2>
 * <ul>
 *   <li>[an entry accepted by {@link #tryEnqueue} is returned by exactly one {@link #next} or {@link #drainOne}]
 *       (the descriptor CAS in PoolCore then decides whether it runs or is dropped).</li>
 *   <li>[{@link #hasWork} uses only seq_cst loads]: it is step 2 of the ParkingLot handshake, so an entry
 *       published (seq_cst) before the submitter's {@link #signalWork} is seen by a worker that announced
 *       before that signal's idle-mask load.</li>
 *   <li>[{@link #signalWork} never leaves an entry with every worker parked].</li>
 * </ul>
 */
interface Scheduler {

    /**
     * Pushes an accepted, published entry from the calling thread ({@code self} is the calling worker of this
     * pool, or null). False when there is no room right now; the caller retries (helping when a worker).
     */
    boolean tryEnqueue(WorkerThread self, long entry);

    /** Pushes {@code entries[from, from + n)}; returns how many were taken (0: no room right now). */
    int tryEnqueueMany(WorkerThread self, long[] entries, int from, int n);

    /** Called after {@code n} entries were published: wakes parked workers as the topology's policy says. */
    void signalWork(int n);

    /**
     * {@link #signalWork(int)} for {@code n} entries that all carry descriptor {@code flags}: a topology with
     * lanes (LANE_EXTENSION) wakes a worker of the entries' lane; the others ignore the flags.
     */
    default void signalWork(int n, int flags) {
        signalWork(n);
    }

    /** The next entry for worker {@code self}, or {@code QueueEntry.EMPTY}. Only from {@code self}'s thread. */
    long next(WorkerThread self);

    /** Seq_cst check of every queue worker {@code i} could take from (the park re-check and idle spin). */
    boolean hasWork(int i);

    /** Worker {@code i} starts ({@code true}) or stops looking for work; used by wake coalescing. */
    void searching(int i, boolean on);

    /** Removes one entry from any queue, from any thread (the CANCEL_PENDING sweep); EMPTY when all are empty. */
    long drainOne();

    /** Frees what the topology allocated beyond the arena's lifetime rules; once nobody uses it. */
    void close();

    // ---- registered submitters ------------------------------------------------------------------------
    // A topology with per-submitter queues overrides these three; the defaults mean "no own queue", so a
    // submitter's entries take the ordinary external path (GLOBAL_QUEUE: the shared ring).

    /**
     * Pushes an accepted entry from the thread of registered submitter {@code slot} into that submitter's own
     * queue; false when it has none or it is full (the caller then uses {@code tryEnqueue(null, entry)}).
     */
    default boolean tryEnqueueFromSubmitter(int slot, long entry) {
        return false;
    }

    /** As {@link #tryEnqueueFromSubmitter} for {@code entries[from, from + n)}; returns how many were taken. */
    default int tryEnqueueManyFromSubmitter(int slot, long[] entries, int from, int n) {
        return 0;
    }

    /**
     * Submitter {@code slot} is closing (after its last submit): moves whatever its queue still holds where
     * workers will find it, and runs the wake rule for it. Nothing is lost.
     */
    default void closeSubmitter(int slot) {
    }

    /**
     * Entries queued in {@code lane} now, from any thread (stats; racy by nature, never negative). The default
     * knows no queue: a topology without that lane reports 0.
     */
    default long depth(dev.threadpool.Lane lane) {
        return 0;
    }

    /** Entries in worker {@code w}'s local queue now (stats); 0 for a topology without local queues. */
    default long localQueueLength(int w) {
        return 0;
    }
}
