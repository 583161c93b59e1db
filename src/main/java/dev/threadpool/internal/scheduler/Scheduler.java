package dev.threadpool.internal.scheduler;

import dev.threadpool.Lane;
import dev.threadpool.PoolConfig;
import dev.threadpool.SchedulerVariant;
import dev.threadpool.TimestampMode;
import dev.threadpool.WaitGroup;
import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.BoundedRing;
import dev.threadpool.internal.queue.CarriedRings;
import dev.threadpool.internal.queue.QueueEntry;
import dev.threadpool.internal.stats.PoolCounters;
import dev.threadpool.internal.stats.QueueDepthGauge;
import dev.threadpool.internal.stats.RecentErrors;
import dev.threadpool.internal.stats.Timestamps;

/**
 * The queue topology of a pool: where an accepted entry goes, where a worker looks for its next entry, what
 * the park re-check must see, what the CANCEL_PENDING sweep drains, and how deep the queues are. The rest of
 * the pool (descriptors, accounting, awaiting, shutdown) is the same for every topology and never asks which
 * one it has: a scheduler only moves queue entries. {@link #create} picks the implementation from
 * {@link PoolConfig#schedulerVariant()}: {@link GlobalQueueScheduler}, {@link WorkStealingScheduler} or
 * {@link LaneScheduler}.
 *
 * <h2>The lane</h2>
 * An entry's {@link Lane} is decided once, by the submit ({@code Submission}), and travels with the entry as
 * an argument: {@link #tryEnqueue} routes by it and {@link #signalWork} wakes a worker that may take it. A
 * topology without lanes treats every entry as {@link Lane#DEFAULT}. Nobody re-derives the lane from the
 * descriptor.
 *
 * <h2>Contract</h2>
 * <ul>
 *   <li>[an entry accepted by {@link #tryEnqueue} is returned by exactly one {@link #next} or {@link #drainOne}]
 *       (the descriptor CAS in the worker loop then decides whether it runs or is dropped).</li>
 *   <li>[{@link #hasWork} uses only seq_cst loads and sees published entries only]: it is step 2 of the
 *       ParkingLot handshake, so an entry published (seq_cst, or a release store followed by a full fence)
 *       before the submitter's {@link #signalWork} is seen by a worker that announced before that signal's
 *       idle-mask load; and it is false while the only entries are ring cells claimed but not yet published,
 *       so an idle worker does not spin on them ({@link #pendingPush}).</li>
 *   <li>[{@link #signalWork} never leaves an entry with every worker that may take it parked].</li>
 *   <li>[pass-on: a worker's first {@link #next} that returns an entry after a search
 *       ({@code searching(i, true)}, however the search ended: work seen while spinning, on the park re-check,
 *       or a wake from park) wakes one parked worker if, after the take, a published entry is left that a
 *       parked worker could take]. A coalesced wake is counted against a search, not against the entry the
 *       searcher happens to take: the searcher may take another entry and block in it. See
 *       {@link WakeCoalescer}, "The pass-on rule".</li>
 *   <li>[{@link #signalWork} feeds the occupancy of the queue the entries went to into the lane's peak gauge
 *       when {@code QueueDepthGauge.sample(n)} says so (about one entry in 64; the depth reads the consumers'
 *       head line)];
 *       {@link #depth} counts every entry of a lane (racy by nature, never negative).</li>
 * </ul>
 *
 * <h2>Claimed but unpublished ring cells</h2>
 * A {@link dev.threadpool.internal.queue.BoundedRing} producer claims a cell (seq_cst tail CAS) and publishes it
 * later (release store of the cell's sequence); it calls {@link #signalWork} only after its publish. A worker
 * whose re-check finds nothing published but such a claimed cell ({@link #pendingPush}) parks, for at most
 * {@link #PENDING_PARK_NANOS}. The producer's wake normally ends that park: the producer's idle-mask load
 * follows its publish, so if that load misses the worker's announcement, the publish precedes the worker's
 * re-check, which then sees it. That "so" needs a StoreLoad barrier between the publish and the mask load.
 * WORK_STEALING's signalWork has one (the full fence it needs for local-queue pushes); GLOBAL_QUEUE, the
 * blocking lane and every topology's carried pushes ({@link #signalCarried}) do not (it would add a locked
 * instruction to every submit, which stalls on the cell line's ownership), and there the load may pass the
 * still-buffered publish. The bound covers exactly that window (one rule for every topology: where the fence
 * exists the bound is never needed, and costs nothing unless a producer is mid-push). The jcstress test
 * {@code RingPublishParkTest} shows the window without the fence and shows that the fence closes it.
 */
interface Scheduler {

    /**
     * The topology {@code config} asks for, its queues allocated from {@code memory}. {@code inject} is the
     * shared ring every topology has (external submits go there); {@code gauge} receives the depth samples of
     * {@link #signalWork}.
     */
    static Scheduler create(PoolMemory memory, PoolConfig config, BoundedRing inject, ParkingLot parking,
            PoolCounters counters, SubmitterRegistry submitters, QueueDepthGauge gauge, RecentErrors errors) {
        SchedulerVariant v = config.schedulerVariant();
        return switch (v) {
            case GLOBAL_QUEUE -> new GlobalQueueScheduler(memory, config, inject, parking, gauge, counters);
            case WORK_STEALING -> new WorkStealingScheduler(memory, config, inject, parking, counters, submitters,
                    gauge, errors, true);
            case LANE_EXTENSION -> new LaneScheduler(memory, config, inject, parking, counters, submitters, gauge,
                    errors);
        };
    }

    /**
     * Pushes an accepted, published entry of {@code lane} from the calling thread ({@code self} is the calling
     * worker of this pool, or null). False when there is no room right now; the caller retries (helping when
     * a worker).
     */
    boolean tryEnqueue(WorkerThread self, long entry, Lane lane);

    /**
     * Pushes {@code entries[from, from + n)}, all of {@code lane}; returns how many were taken (0: no room
     * right now).
     */
    int tryEnqueueMany(WorkerThread self, long[] entries, int from, int n, Lane lane);

    /**
     * Called after {@code n} entries of {@code lane} were published: feeds the lane's depth gauge (sampled), then wakes
     * parked workers that may take them, as the topology's policy says.
     */
    void signalWork(int n, Lane lane);

    /**
     * {@link #signalWork} after one {@link #tryEnqueue} by {@code self} (the calling worker of this pool, or
     * null): a topology that knows that enqueue published with a seq_cst RMW only may leave out the fence that
     * orders a release-store publish before the wake rule's loads. The default is {@link #signalWork}.
     */
    default void signalWorkFrom(WorkerThread self, int n, Lane lane) {
        signalWork(n, lane);
    }

    /** The next entry for worker {@code self}, or {@code QueueEntry.EMPTY}. Only from {@code self}'s thread. */
    long next(WorkerThread self);

    /**
     * Seq_cst check of every queue worker {@code i} could take from, for a published entry: the park re-check
     * after the announcement, and the pass-on. The shared rings, then the {@link WorkSummary} line and the
     * sources of every worker whose bit is set there (O(set bits), once per park). A ring cell claimed but not yet
     * published does not count: see {@link #pendingPush}.
     */
    boolean hasWork(int i);

    /**
     * A bounded look for a published entry, repeated while worker {@code i} spins or waits in its idle window: the
     * shared rings, the {@link WorkSummary} line and the sources of at most {@link WorkSummary#LOOK_PROBES} workers
     * whose bit is set, from a start that moves on at every look. It may miss an entry that {@link #hasWork} would
     * see (a set bit it did not probe this time): a later look probes it, and the park re-check, which is
     * {@link #hasWork}, misses nothing. So a search still ends by finding every entry a coalesced submit left to
     * it (WakeCoalescer), while a look reads a fixed number of lines whatever the worker count (issue 48).
     * Only from worker {@code i}'s thread. The default is {@link #hasWork}.
     */
    default boolean lookForWork(int i) {
        return hasWork(i);
    }

    /**
     * Carried stripes one bounded look reads ({@link #lookForWork}), from a start that moves on by as many at
     * every look: all of them up to 4 stripes (pools up to 4 workers), a quarter of 16, a sixteenth of 64.
     */
    int LOOK_STRIPES = 4;

    /**
     * Worker {@code i} ran dry: its next() found nothing, and it starts its idle path (every idle strategy). Its
     * own LIFO slot, local queue, carried batch and join deque are empty and only it fills them, so it clears
     * its late-cleared {@link WorkSummary} bits here. Only from worker {@code i}'s thread.
     */
    default void ranDry(int i) {
    }

    /**
     * After {@link #hasWork} said no on the park re-check: whether a ring worker {@code i} could take from holds a
     * cell claimed by a producer that has not published it yet (seq_cst loads of head and tail). The worker then
     * parks for at most {@link #PENDING_PARK_NANOS} instead of indefinitely (see the class comment).
     */
    boolean pendingPush(int i);

    /** Longest park of a worker whose re-check found only claimed-but-unpublished ring cells. */
    long PENDING_PARK_NANOS = 1_000_000L;

    /**
     * Worker {@code i} starts ({@code true}) or stops looking for work; only from {@code i}'s thread. Used by
     * wake coalescing; a start also arms the pass-on of {@code i}'s next take (see the contract).
     */
    void searching(int i, boolean on);

    /**
     * The coalescer that counts this topology's searching workers ({@link #searching}): read by
     * {@code Joining}'s demand check, once per join that would not otherwise offer its half.
     */
    WakeCoalescer wakeCoalescer();

    /**
     * Removes one entry from any queue, from any thread (the CANCEL_PENDING sweep); EMPTY when all are empty. For
     * {@link QueueEntry#CARRIED} the task and its group go to {@code taken[0]} and {@code taken[1]}; for a carried
     * task in argument form also its context marker to {@code taken[2]} and its argument to {@code arg[0]}
     * ({@code BoundedRing}, "Argument cells"). {@code taken[2]} is left as it was for any other entry.
     */
    long drainOne(Object[] taken, long[] arg);

    /**
     * {@link #drainOne(Object[], long[])} without an argument sink, for queues that hold no carried task in
     * argument form (tests): one met is refused ({@link IllegalStateException}) before it is taken.
     */
    default long drainOne(Object[] taken) {
        return drainOne(taken, null);
    }

    // ---- carried tasks --------------------------------------------------------------------------------
    // A ring of its own carries a detached task's references in its cell (BoundedRing, "Carried tasks"):
    // default-lane submits from outside the pool then take no descriptor. Every topology has one (WORK_STEALING's
    // workers pop it directly: refills and steal-half move entries between rings, which carried references
    // cannot follow), except with TimestampMode.FULL, whose stamps live in descriptors.

    /**
     * The carried-task rings of a topology of {@code config} ({@code capacity} cells in all, striped by
     * {@link CarriedRings#stripesFor} over its {@code maxThreads}), or null when tasks are not carried:
     * TimestampMode.FULL keeps every task on a descriptor, where its stamps live.
     */
    static CarriedRings carriedRings(PoolMemory memory, PoolConfig config, int capacity) {
        boolean stamps = Timestamps.COMPILED && config.timestampMode() == TimestampMode.FULL;
        return stamps ? null
                : new CarriedRings(memory, capacity, CarriedRings.stripesFor(config.maxThreads(), capacity));
    }

    /** Whether {@link #tryEnqueueCarried} works: the topology's ring carries tasks. */
    default boolean carriesTasks() {
        return false;
    }

    /**
     * Pushes a detached task with no descriptor as {@link QueueEntry#CARRIED}; the push is its acceptance
     * (BoundedRing, "Closing to pushes"). False when the ring is full or closed ({@link #carriedClosed} says
     * which). Only when {@link #carriesTasks()}; the caller then calls {@link #signalCarried}.
     */
    default boolean tryEnqueueCarried(Runnable task, WaitGroup group) {
        throw new UnsupportedOperationException("this topology does not carry tasks");
    }

    /**
     * {@link #tryEnqueueCarried} of a task in argument form: {@code fn}, {@code ctx} (null allowed) and {@code arg}
     * ride in the cell ({@code BoundedRing}, "Argument cells"), so the task is no object. Same contract.
     */
    default boolean tryEnqueueCarriedArg(Object fn, Object ctx, long arg, WaitGroup group) {
        throw new UnsupportedOperationException("this topology does not carry tasks");
    }

    /**
     * The rings that carry tasks, whose tails are also their admission words (BoundedRing, "Closing to pushes";
     * CarriedRings, "Admission"); null where nothing is carried. For the three cold calls below, which every
     * topology answers from them.
     */
    default CarriedRings carried() {
        return null;
    }

    /** Whether {@link #closeCarried} has run: a carried push that returned false was refused, not full. */
    default boolean carriedClosed() {
        CarriedRings r = carried();
        return r != null && r.closed();
    }

    /**
     * Shutdown's close of carried admission (CarriedRings.close): returns the carried tasks ever accepted,
     * stable from now on; 0 where nothing is carried.
     */
    default long closeCarried() {
        CarriedRings r = carried();
        return r == null ? 0 : r.close();
    }

    /** Carried tasks accepted so far (CarriedRings.accepted, acquire loads); 0 where nothing is carried. */
    default long carriedAccepted() {
        CarriedRings r = carried();
        return r == null ? 0 : r.accepted();
    }

    /**
     * {@link #signalWork} after {@code n} carried pushes (of the default lane). A topology whose signalWork
     * fences for its other queues may skip that fence here: the carried push's tail CAS is seq_cst, and a
     * publish still buffered when the idle mask is loaded is the claimed-but-unpublished case, whose park is
     * bounded (see "Claimed but unpublished ring cells").
     */
    default void signalCarried(int n) {
        signalWork(n, Lane.DEFAULT);
    }

    /**
     * Whether the carried ring is at most half full ({@code BoundedRing.atMostHalfFull}): where a submitter
     * waiting for a cell resumes, and when a worker's pop signals one (Submission, "Waiting for a carried cell").
     */
    default boolean carriedLowWater() {
        throw new UnsupportedOperationException("this topology does not carry tasks");
    }

    /**
     * Whether registered Submitters have queues of their own here ({@link #tryEnqueueFromSubmitter}): their
     * detached submits then keep descriptors and go there instead of being carried. Fixed per topology.
     */
    default boolean hasSubmitterQueues() {
        return false;
    }

    /** Frees what the topology allocated beyond the arena's lifetime rules; once nobody uses it. */
    void close();

    // ---- registered submitters ------------------------------------------------------------------------
    // A topology with per-submitter queues overrides these three; the defaults mean "no own queue", so a
    // submitter's entries take the ordinary external path (GLOBAL_QUEUE and LANE_EXTENSION: the shared ring).

    /**
     * Pushes an accepted entry from the thread of registered submitter {@code slot} into that submitter's own
     * queue; false when it has none or it is full (the caller then uses {@code tryEnqueue(null, entry, lane)}).
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
    default long depth(Lane lane) {
        return 0;
    }

    /** Entries in worker {@code w}'s local queue now (stats); 0 for a topology without local queues. */
    default long localQueueLength(int w) {
        return 0;
    }

    /**
     * Workers {@code [0, n)} reserved for a blocking lane (LANE_EXTENSION's {@code blockingWorkers}); 0 for a
     * topology without one. Such a worker may block in a task for long, so it steals no join half (Joining).
     */
    default int blockingWorkers() {
        return 0;
    }

    /**
     * The stall watchdog this topology runs beside its workers, built from the pool's parts (not started), or
     * null for a topology without one. Only LANE_EXTENSION has one: it spawns overflow workers when a
     * default-lane task blocks. The pool asks the topology instead of testing which one it is.
     */
    default Watchdog createWatchdog(PoolCore core, PoolConfig config, PoolMemory memory, PoolCounters counters,
            ParkingLot parking) {
        return null;
    }
}
