package dev.threadpool.internal.scheduler;

import dev.threadpool.Lane;
import dev.threadpool.PoolConfig;
import dev.threadpool.WaitGroup;
import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.BoundedRing;
import dev.threadpool.internal.queue.CarriedBatches;
import dev.threadpool.internal.queue.CarriedRings;
import dev.threadpool.internal.queue.LifoSlot;
import dev.threadpool.internal.queue.QueueEntry;
import dev.threadpool.internal.stats.PoolCounters;
import dev.threadpool.internal.stats.QueueDepthGauge;
import dev.threadpool.internal.stats.RecentErrors;
import java.lang.invoke.VarHandle;
import java.util.function.IntPredicate;

/**
 * WORK_STEALING topology: per-worker LIFO slot and local queue, the shared inject ring, steal-half between
 * workers, coalesced wakes. The worker loop order lives in {@link #next}.
 *
 * <h2>Where an entry goes</h2>
 * <pre>
 *   from worker w:  LIFO slot w  (the displaced entry -> local queue w -> when full, half of it -> inject)
 *   detached, from outside the pool (no Submitter queue): carried ring (the task in the cell, no descriptor)
 *   from elsewhere: inject ring
 *   from a registered Submitter s (not on a worker): submitter queue s (-> inject when full)
 *   batch from w:   local queue w (-> inject when full)
 * </pre>
 *
 * <h2>Submitter queues</h2>
 * WORK_STEALING's 64 submitter slots each have an SPMC queue of their own ({@link SubmitterQueues}: ownership,
 * and why the park re-check cannot miss one of their entries); LANE_EXTENSION builds this class without them.
 *
 * <h2>Worker loop ({@link #next})</h2>
 * <pre>
 *   every 61st call: inject first, then carried (a busy local queue cannot starve the rings; Tokio's global poll)
 *   LIFO slot w, at most MAX_LIFO_RUNS times in a row (a task resubmitting itself cannot starve the rest)
 *   local queue w
 *   carried ring: one entry, run as popped (chained wake if more are left)     } alternating which of the
 *   inject: popMany(min(injectBatchSize, free + 1)), run the first, the rest   } two comes first
 *           into local queue w
 *   submitter queues of registered slots, from a rotating start: steal-half (stealBatchSize) into w
 *   steal-half (stealBatchSize) from peers whose workers_nonempty bit is set, from a rotating start
 *   peers' LIFO slots (a task that blocks after submitting a child must not hide the child)
 *   LIFO slot w even if its run budget is spent (nothing else is there)
 *   the first take after a search: the pass-on (WakeCoalescer), unless that take ran a chained wake
 * </pre>
 *
 * <h2>Carried tasks</h2>
 * A detached task submitted from outside the pool rides in a cell of the {@code carried} ring with its group
 * ({@link BoundedRing}, "Carried tasks"; GLOBAL_QUEUE has the same ring): no descriptor, so no descriptor line
 * crosses cores per task (PERFORMANCE_TRACKING entries 37, 38). Its references live in the cell, so the entry
 * cannot move into a local queue or a stolen half. Every worker pops the carried ring itself through
 * {@link CarriedBatches}: from a deep ring one head CAS claims a batch of 8 (one otherwise), whose references
 * move to the worker's batch slots; the worker takes them first on its next calls and any other worker steals
 * them once its other sources are empty (after {@link #steal}), so two workers meet the ring's shared lines
 * once per batch (PERFORMANCE_TRACKING 55, 56). LANE_EXTENSION's reserved blocking workers claim one at a time
 * ({@link #batchMax}). A pop that leaves more in the ring or in the batch runs the chained wake, as an inject
 * refill does. A registered Submitter keeps its own queue (descriptors, owner pushes without a CAS), and
 * TimestampMode.FULL keeps every task on a descriptor (null ring). LANE_EXTENSION's default lane is this class,
 * so its outside default-lane submits are carried too; its blocking lane never is (Submission).
 *
 * <h2>Park re-check ({@link #hasWork})</h2>
 * Seq_cst loads of every queue a worker can take from: the inject and carried rings' heads and head-cell
 * sequences (a published entry; {@link #pendingPush} reports a claimed, unpublished one), every local queue's
 * head/tail (not the bitmap, which is only a hint), every LIFO slot and every worker's carried batch
 * ({@link CarriedBatches}: a refill publishes with a seq_cst getAndSet, then loads the idle mask in the chained
 * wake). Submitters publish (seq_cst CAS / getAndSet, or a release store: the local queue's tail, the inject
 * cell's sequence; each followed by the full fence in {@link #signalWork}; a carried push has no fence,
 * {@link #signalCarried}, and is covered by {@link #pendingPush}'s bounded park instead) and then run the
 * {@link WakeCoalescer} rule; see there for why no entry is left with every worker parked, and for the pass-on
 * that keeps an entry from waiting behind a searcher that took another one.
 */
final class WorkStealingScheduler implements Scheduler {
    /** Consecutive LIFO-slot runs before the local queue and inject ring get a turn (Tokio uses 3). */
    static final int MAX_LIFO_RUNS = 3;
    /** Every this many calls the inject ring is polled first. */
    static final int INJECT_POLL_INTERVAL = 61;
    private final BoundedRing inject;
    /** Detached tasks from outside the pool, carried by their cells; null with TimestampMode.FULL. */
    private final CarriedRings carried;
    /** Each worker's claimed carried tasks, stealable (CarriedBatches); null when {@code carried} is. */
    private final CarriedBatches batches;
    private final ParkingLot parking;
    private final LifoSlot lifo;
    private final LocalQueues locals;
    /** Which workers may hold entries: NONEMPTY (local queues) and HELD (LIFO slots, carried batches). */
    private final WorkSummary summary;
    private final WakeCoalescer wake;
    private final PoolCounters counters;
    private final WorkerState[] states;
    private final int workers;
    private final int stealBatch;
    /** The registered submitters' own queues; none when built without them (LANE_EXTENSION). */
    private final SubmitterQueues submitterQueues;
    private final QueueDepthGauge gauge;
    /**
     * Whether worker v's local queue, LIFO slot or batch holds an entry (volatile loads): the bounded look's
     * probe; made once, so a look allocates nothing.
     */
    private final IntPredicate ownedReady = this::ownedReady;
    /** {@link #hasWork} for {@link WakeCoalescer#passOn}; made once, so a pass-on allocates nothing. */
    private final IntPredicate publishedWork = this::hasWork;

    /**
     * Builds the topology; {@code withSubmitterQueues} false builds none (a composing topology whose
     * Submitters use the external path).
     */
    WorkStealingScheduler(PoolMemory memory, PoolConfig config, BoundedRing inject, ParkingLot parking,
            PoolCounters counters, SubmitterRegistry submitters, QueueDepthGauge gauge, RecentErrors errors,
            boolean withSubmitterQueues) {
        this.inject = inject;
        this.carried = Scheduler.carriedRings(memory, config, inject.capacity());
        this.parking = parking;
        this.gauge = gauge;
        this.submitterQueues = new SubmitterQueues(memory, submitters, withSubmitterQueues,
                config.localQueueCapacity());
        this.counters = counters;
        this.workers = config.workerSlots(); // LANE_EXTENSION: its overflow workers too
        this.batches = carried == null ? null : new CarriedBatches(memory, workers);
        this.stealBatch = config.stealBatchSize();
        this.lifo = new LifoSlot(memory, "lifo slots", workers);
        this.summary = parking.work();
        this.locals = LocalQueues.create(memory, summary, config.queueKind(), workers, config.localQueueCapacity(),
                errors);
        this.wake = new WakeCoalescer(memory, parking, config.wakeCoalesceBatch());
        this.states = new WorkerState[workers];
        for (int w = 0; w < workers; w++) {
            states[w] = new WorkerState(config.injectBatchSize(), config.localQueueCapacity());
            states[w].stealStart = w + 1;
        }
    }

    // =====================================================================================================
    // Enqueue
    // =====================================================================================================

    @Override
    public boolean tryEnqueue(WorkerThread self, long entry, Lane lane) {
        if (self == null) {
            return inject.tryPush(entry); // seq_cst CAS on tail
        }
        final int w = self.index;
        // getAndSet (seq_cst): publishes the entry to thieves and to the park re-check (peekVolatile).
        long displaced = lifo.put(w, entry);
        // then HELD (getAndOr only while our bit is clear: once per run of work, not per task), before the
        // caller's signalWork loads the idle mask (WorkSummary, "Why the park re-check can rely on the bits")
        summary.mark(WorkSummary.HELD, w);
        if (displaced == QueueEntry.EMPTY) {
            return true; // published by the getAndSet alone: signalWorkFrom needs no fence for it
        }
        states[w].unfenced = true; // plain, owner-only: a local push (release store) follows
        if (pushLocal(w, displaced)) {
            return true;
        }
        // No room anywhere: put the displaced entry back and hand ours back to the caller to retry.
        long back = lifo.put(w, displaced);
        return back == QueueEntry.EMPTY; // a thief took ours meanwhile: it is placed, the displaced one too
    }

    /** Local queue w, or where {@link LocalQueues#pushOrOverflow} places it when full; false when nothing fits. */
    private boolean pushLocal(int w, long e) {
        if (locals.push(w, e)) {
            return true;
        }
        return locals.pushOrOverflow(w, e, inject, states[w].scratch);
    }

    @Override
    public int tryEnqueueMany(WorkerThread self, long[] entries, int from, int n, Lane lane) {
        if (self == null) {
            return inject.pushMany(entries, from, n);
        }
        states[self.index].unfenced = true; // plain, owner-only: local pushes are release stores
        int k = 0;
        while (k < n && pushLocal(self.index, entries[from + k])) {
            k++;
        }
        return k;
    }

    @Override
    public boolean carriesTasks() {
        return carried != null;
    }

    @Override
    public boolean tryEnqueueCarried(Runnable task, WaitGroup group) {
        if (carried == null) {
            throw new UnsupportedOperationException("TimestampMode.FULL: every task takes a descriptor");
        }
        // seq_cst CAS on the tail of the stripe that takes it (CarriedRings, "Where a push goes"): the acceptance
        // (BoundedRing, "Closing to pushes") and step a of the handshake (signalCarried)
        return carried.tryPush(task, group);
    }

    @Override
    public boolean tryEnqueueCarriedArg(Object fn, Object ctx, long arg, WaitGroup group) {
        if (carried == null) {
            throw new UnsupportedOperationException("TimestampMode.FULL: every task takes a descriptor");
        }
        // seq_cst CAS on the tail of the stripe that takes it, as tryEnqueueCarried
        return carried.tryPushArg(fn, group, ctx, arg);
    }

    @Override
    public boolean carriedLowWater() {
        return carried.atMostHalfFull();
    }

    @Override
    public CarriedRings carried() {
        return carried;
    }

    /** A registered Submitter's entries go to its own queue (descriptors), not to the carried ring. */
    @Override
    public boolean hasSubmitterQueues() {
        return submitterQueues.exist();
    }

    @Override
    public void signalWork(int n, Lane lane) {
        sampleDepth(n);
        signalWork();
    }

    /**
     * {@link #signalWork(int, Lane)} after a worker's {@link #tryEnqueue}: without the full fence when everything
     * the worker published since its last such signal went into its LIFO slot with nothing displaced. The
     * slot's getAndSet is a seq_cst RMW, and the wake rule's loads are seq_cst (volatile): in the one total order
     * they follow it, so the Dekker pair with a parking worker's announce-then-re-check holds without the fence
     * (jcstress {@code WorkStealingParkTest.SummaryLifoPutNoFenceVsPark}); on x86 the exchange is a locked
     * instruction, which is the fence already. A worker's own submit is the fork of a recursive split: the
     * fence was the one fence per task the counting table showed on that path (docs/SCALING.md).
     */
    @Override
    public void signalWorkFrom(WorkerThread self, int n, Lane lane) {
        if (self == null) {
            signalWork(n, lane); // an inject push: its cell's release store needs the fence
            return;
        }
        WorkerState st = states[self.index];
        if (st.unfenced) {
            st.unfenced = false; // plain, owner-only
            signalWork(n, lane);
            return;
        }
        sampleDepth(n);
        wake.signalWork(); // volatile loads, after our seq_cst getAndSet (and HELD's getAndOr, if it wrote)
    }

    /**
     * After carried pushes: as {@link #signalWork(int, Lane)} without its fence, as GLOBAL_QUEUE's. The push's
     * tail CAS is seq_cst, so a worker that announces after our idle-mask load finds the ring non-empty
     * ({@link #pendingPush}) even if the cell's publish (a release store) is still in our store buffer; it
     * then parks for at most {@code PENDING_PARK_NANOS} (Scheduler, "Claimed but unpublished ring cells"). The
     * fence cost the submitter a stall on the cell line's ownership per task, in a flood where the submitter is
     * the bottleneck (PERFORMANCE_TRACKING 40).
     */
    @Override
    public void signalCarried(int n) {
        sampleDepth(n);
        wake.signalWork();
    }

    /**
     * The depth gauge of every signal after {@code n} pushes: sampled (QueueDepthGauge.sample: the thread's own
     * seed), since the shared rings' heads are lines every pop writes; their occupancy (volatile loads of head and
     * tail; a CAS only for a new peak). Local queues and LIFO slots are counted by the snapshots' depth().
     */
    private void sampleDepth(int n) {
        if (QueueDepthGauge.sample(n)) {
            gauge.observe(Lane.DEFAULT, sharedSize());
        }
    }

    /** The wake half of {@link #signalWork(int, Lane)}: the fence, then the WakeCoalescer rule. */
    private void signalWork() {
        // full fence: a local-queue push ends with a release store of tail, and an inject push with a release
        // store of the cell's seq (what the re-check's hasReadyEntry reads); the idle-mask load below must not
        // be reordered before either (StoreLoad); without it a worker could announce, miss the entry in its
        // re-check, and park while we miss its bit. The LIFO getAndSet is seq_cst already.
        VarHandle.fullFence();
        wake.signalWork();
    }

    // =====================================================================================================
    // Worker loop
    // =====================================================================================================

    @Override
    public long next(WorkerThread self) {
        final int w = self.index;
        final WorkerState st = states[w];
        long e;
        if (++st.tick == INJECT_POLL_INTERVAL) {
            st.tick = 0;
            e = inject.tryPop();
            if (e == QueueEntry.EMPTY && carried != null) {
                e = claimCarried(self);
            }
            if (e != QueueEntry.EMPTY) {
                st.lifoRuns = 0;
                passOnIfOwed(w, st);
                return e;
            }
        }
        // Own LIFO slot and local queue: only this worker pushes into them, and it searched only after finding
        // both empty, so right after a search neither returns here and the pass-on below is never skipped.
        if (st.lifoRuns < MAX_LIFO_RUNS) {
            e = lifo.take(w);
            if (e != QueueEntry.EMPTY) {
                st.lifoRuns++;
                return e;
            }
        }
        e = locals.pop(w);
        if (e != QueueEntry.EMPTY) {
            st.lifoRuns = 0;
            return e;
        }
        // Own carried batch before the shared rings: the alternation decided, at the claim, that carried tasks came
        // next, so the batch's entries do not probe inject again. The claim ran the chained wake; a search never
        // ends here (a worker searches only after a next() that found its batch empty, and only it refills it).
        e = takeOwnBatch(self);
        if (e != QueueEntry.EMPTY) {
            st.lifoRuns = 0;
            return e;
        }
        e = takeShared(self, st);
        if (e == QueueEntry.EMPTY) {
            e = stealFromSubmitters(w, st);
        }
        if (e == QueueEntry.EMPTY) {
            e = steal(w, st);
        }
        if (e == QueueEntry.EMPTY && batches != null) {
            e = stealBatch(self);
        }
        if (e != QueueEntry.EMPTY) {
            st.lifoRuns = 0;
        } else {
            e = lifo.take(w); // the run budget was spent but nothing else is queued
            st.lifoRuns = e != QueueEntry.EMPTY ? 1 : 0;
        }
        if (e != QueueEntry.EMPTY) {
            passOnIfOwed(w, st);
        }
        return e;
    }

    /**
     * The pass-on rule (WakeCoalescer): the first take after a search wakes one parked worker if a published
     * entry is left. Owner-only flag (a plain load; the wake path is only taken once per search).
     */
    private void passOnIfOwed(int w, WorkerState st) {
        if (st.owesWake) {
            st.owesWake = false;
            wake.passOn(publishedWork, w);
        }
    }

    /** {@link #passOnIfOwed} for a take outside this topology (LANE_EXTENSION's blocking ring); owner only. */
    void passOnIfOwed(int w) {
        passOnIfOwed(w, states[w]);
    }

    /**
     * Chained wake after a worker took work from a shared source and left some behind: wakes one parked worker,
     * never coalesced. The coalescing rule of {@link WakeCoalescer#signalWork} skips a wake while a searcher is
     * bound to see the entry, but that searcher may be us, about to run one entry for as long as it blocks:
     * without this wake the rest would wait behind a blocked task while other workers sleep (Tokio's
     * "last searcher wakes one more", applied to every find that leaves work behind). Each woken worker repeats
     * it, so a burst spreads to every idle worker in a chain; with nobody parked it costs a fence and one load.
     */
    private void chainWake(WorkerState st) {
        // full fence (StoreLoad): our local-queue pushes (release stores) before the idle-mask load, as in
        // signalWork; a worker that announces after our load re-checks and sees them.
        VarHandle.fullFence();
        wake.wakeOneIfIdle();
        // This was a pass-on too: an idle-mask load after our take (and after our endSearch), and a wake if a
        // worker was parked; that worker passes it on after its own take.
        st.owesWake = false;
    }

    /**
     * The carried ring and the inject ring, the one tried first alternating per call (owner-only flag), so a
     * flood into either never starves the other; EMPTY when both are empty.
     */
    private long takeShared(WorkerThread self, WorkerState st) {
        if (carried == null) {
            return refillFromInject(self.index, st);
        }
        boolean carriedFirst = self.carriedFirst = !self.carriedFirst; // owner-only field
        long e = carriedFirst ? popCarried(self, st) : refillFromInject(self.index, st);
        if (e == QueueEntry.EMPTY) {
            e = carriedFirst ? refillFromInject(self.index, st) : popCarried(self, st);
        }
        return e;
    }

    /**
     * One carried entry (its task and group into {@code self.taken}), run by this worker as popped. If more are
     * left and a worker is parked: the chained wake, as after an inject refill, which also discharges the
     * pass-on (the same wake). The idle mask first: in a flood nobody is parked, and the mask's line stays
     * shared while the ring's head and tail lines move with every push and pop.
     */
    private long popCarried(WorkerThread self, WorkerState st) {
        int w = self.index;
        long e = claimCarried(self);
        // volatile loads after our CAS (no fence needed: the CAS is seq_cst and nothing of ours is unpublished);
        // a worker that announces after the idle-mask load re-checks the ring and the batches itself (ParkingLot)
        // every stripe, not a bounded look: with the taker about to block in its task, this wake is what gets an
        // entry left in a far stripe run while the other workers sleep (a chained wake, "Chained wakes")
        if (e != QueueEntry.EMPTY && parking.idleMaskOnWorker() != 0
                && (!carried.isEmpty() || batches.hasStealable(w))) {
            parking.wakeOne(); // one waker per bit; -1 if a racing waker took the last one
            st.owesWake = false;
        }
        return e;
    }

    /**
     * Our batch first, else a claim from the carried ring (CarriedBatches.refill: seq_cst CAS on the ring's head,
     * and a seq_cst getAndSet of our batch's state when it publishes more than one); the task and group into
     * {@code self.taken}. CARRIED, or EMPTY when both had nothing.
     */
    private long claimCarried(WorkerThread self) {
        int n = batches.refill(self.index, carried, self.taken, self.takenArg, CarriedBatches.MAX_BATCH);
        if (n > 1) {
            // entries left in our batch for thieves: HELD after the refill's publishing getAndSet, before the
            // chained wake's idle-mask load (WorkSummary)
            summary.mark(WorkSummary.HELD, self.index);
        }
        return n == 0 ? QueueEntry.EMPTY : QueueEntry.CARRIED;
    }

    /** popMany from inject; returns the first, the rest go to local queue w (they fit: at most free + 1). */
    private long refillFromInject(int w, WorkerState st) {
        if (!inject.hasReadyEntry()) {
            return QueueEntry.EMPTY; // as popMany would say; before locals.free, whose loads a miss does not need
        }
        final long[] b = st.batch;
        int max = Math.min(b.length, locals.free(w) + 1);
        int n = inject.popMany(b, max); // one head CAS for up to max entries
        if (n == 0) {
            return QueueEntry.EMPTY;
        }
        // The owner runs the rest in ring (submission) order, whichever order its own pops take; an entry that
        // does not fit (cannot happen with the free bound above) goes back to inject: never drop one.
        locals.pushInRunOrder(w, b, 1, n, inject);
        if (n > 1 || !inject.isEmpty()) {
            chainWake(st); // more than we run ourselves is now stealable, or still in the ring
        }
        return b[0];
    }

    /** Steal-half from the queue of some registered submitter, from a rotating start; EMPTY if all empty. */
    private long stealFromSubmitters(int w, WorkerState st) {
        int start = st.submitterStart;
        st.submitterStart = SubmitterQueues.nextStart(start);
        long e = submitterQueues.stealInto(locals, w, stealBatch, start);
        if (e != QueueEntry.EMPTY) {
            counters.increment(w, PoolCounters.STEALS);
            if (locals.size(w) > 0 || submitterQueues.anyQueued()) {
                chainWake(st); // we took more than one, or a submitter's queue still holds some
            }
        }
        return e;
    }

    /**
     * One entry of worker {@code self}'s own carried batch (its task and group into {@code self.taken}), or EMPTY
     * (also without a carried ring). {@link #next} takes it after the worker's own LIFO slot and local queue;
     * LANE_EXTENSION's reserved workers take it before their own lane, so that no batch of theirs waits behind a
     * blocking task. An acquire load of the owner's state line and, when it holds one, a CAS on it.
     */
    long takeOwnBatch(WorkerThread self) {
        return batches != null && batches.take(self.index, self.taken, self.takenArg) ? QueueEntry.CARRIED : QueueEntry.EMPTY;
    }

    /** One entry of another worker's carried batch, starting after our own index, or EMPTY. */
    private long stealBatch(WorkerThread self) {
        // volatile load of HELD: only the peers whose batch may hold entries; then acquire loads of their state
        // lines and a CAS on one
        if (!batches.steal(self.index, self.taken, summary.mask(WorkSummary.HELD), self.takenArg)) {
            return QueueEntry.EMPTY;
        }
        counters.increment(self.index, PoolCounters.STEALS);
        return QueueEntry.CARRIED;
    }

    private long steal(int w, WorkerState st) {
        st.failures[LocalQueues.FAILURES_AT] = 0;
        int start = st.stealStart;
        st.stealStart = start + 1 >= workers ? 0 : start + 1; // rotate the first victim
        long e = locals.stealHalf(w, start, stealBatch, st.failures);
        if (e == QueueEntry.EMPTY) {
            // volatile load of HELD: only the peers whose LIFO slot may hold an entry, from the one after us
            long m = summary.mask(WorkSummary.HELD) & ~(1L << w);
            while (m != 0 && e == QueueEntry.EMPTY) {
                int v = WorkSummary.pick(m, w + 1);
                m &= ~(1L << v);
                if (v < workers) {
                    e = lifo.take(v); // opaque test, then getAndSet: claims the peer's LIFO entry
                }
            }
        }
        if (st.failures[LocalQueues.FAILURES_AT] != 0) {
            counters.add(w, PoolCounters.STEAL_FAILURES, st.failures[LocalQueues.FAILURES_AT]);
        }
        if (e != QueueEntry.EMPTY) {
            counters.increment(w, PoolCounters.STEALS);
            if (locals.size(w) > 0 || locals.anyNonEmptyHint()) {
                chainWake(st); // we took more than one, or some victim still holds entries
            }
        }
        return e;
    }

    // =====================================================================================================
    // Park re-check, sweep
    // =====================================================================================================

    @Override
    public boolean hasWork(int i) {
        if (sharedReady()) {
            return true;
        }
        // volatile loads of the summary's words, seq_cst after the announcement (ParkingLot step 2), then of the
        // sources of every worker whose bit is set: a clear bit is a worker with nothing its owner did not signal
        // after setting it (WorkSummary, "Why the park re-check can rely on the bits")
        for (long m = summary.mask(WorkSummary.NONEMPTY); m != 0; m &= m - 1) {
            int v = Long.numberOfTrailingZeros(m);
            if (v < workers && locals.size(v) > 0) { // volatile loads of head and tail
                return true;
            }
        }
        for (long m = summary.mask(WorkSummary.HELD); m != 0; m &= m - 1) {
            if (heldReady(Long.numberOfTrailingZeros(m))) {
                return true;
            }
        }
        // volatile loads of the registry mask, then of each registered queue's head and tail (SubmitterQueues,
        // "Why the park re-check cannot miss a submitter entry")
        return submitterQueues.anyQueued();
    }

    /**
     * The bounded look (Scheduler.lookForWork): the shared rings, the summary line, and the sources of at most
     * {@link WorkSummary#LOOK_PROBES} workers whose bit is set, from where this worker's last look stopped.
     */
    @Override
    public boolean lookForWork(int i) {
        final WorkerState st = states[i];
        // volatile loads of inject's head and head cell, then of LOOK_STRIPES carried stripes' from where this
        // worker's last look stopped (the re-check, hasWork, reads every stripe)
        if (inject.hasReadyEntry()) {
            return true;
        }
        if (carried != null) {
            int from = st.stripeLook;
            st.stripeLook = from + Scheduler.LOOK_STRIPES; // plain, owner-only; wraps through the stripe mask
            if (carried.hasReadyEntry(from, Scheduler.LOOK_STRIPES)) {
                return true;
            }
        }
        // volatile loads of one line: the workers whose local queue, LIFO slot or batch may hold entries; then
        // the sources of at most two of them
        long m = (summary.mask(WorkSummary.NONEMPTY) | summary.mask(WorkSummary.HELD)) & ~(1L << i);
        if (m != 0 && summary.probe(i, m, ownedReady)) {
            return true;
        }
        return submitterQueues.anyQueued();
    }

    /**
     * The inject ring and the carried rings: volatile loads of head and the head cell's seq, a published entry (a
     * claimed, unpublished cell is pendingPush's; the fence in signalWork orders its publish before the
     * producer's idle-mask load).
     */
    private boolean sharedReady() {
        return inject.hasReadyEntry() || (carried != null && carried.hasReadyEntry());
    }

    /** Whether worker {@code v}'s local queue, LIFO slot or carried batch holds an entry (volatile loads). */
    private boolean ownedReady(int v) {
        return v < workers && (locals.size(v) > 0 || heldReady(v));
    }

    /**
     * Whether worker {@code v}'s LIFO slot or carried batch holds an entry: volatile loads, seq_cst after the
     * announcement (the batch's is the Dekker pair with a refill's getAndSet).
     */
    private boolean heldReady(int v) {
        return v < workers && (lifo.peekVolatile(v) != QueueEntry.EMPTY
                || (batches != null && batches.hasStealable(v)));
    }

    /**
     * Worker {@code w} ran dry (Scheduler.ranDry): next() found its LIFO slot and carried batch empty, and only w
     * fills them, so HELD's bit goes (a getAndAnd, once per run of work). The loads re-check that; a thief may
     * only have emptied them further.
     */
    @Override
    public void ranDry(int w) {
        if (w < workers && summary.isMarked(WorkSummary.HELD, w) && lifo.peek(w) == QueueEntry.EMPTY
                && (batches == null || !batches.hasStealable(w))) {
            summary.clear(WorkSummary.HELD, w);
        }
    }

    /** Volatile loads of the shared rings' heads and tails: a claimed cell its producer has not published. */
    @Override
    public boolean pendingPush(int i) {
        return !inject.isEmpty() || (carried != null && !carried.isEmpty());
    }

    /** Entries in the inject and carried rings (volatile loads of heads and tails). */
    private long sharedSize() {
        return inject.size() + (carried == null ? 0 : carried.size() + batches.size());
    }

    @Override
    public WakeCoalescer wakeCoalescer() {
        return wake;
    }

    @Override
    public void searching(int i, boolean on) {
        if (on) {
            states[i].owesWake = true; // plain: owner-only (called from worker i's thread)
            wake.beginSearch();
        } else {
            wake.endSearch();
        }
    }

    @Override
    public long drainOne(Object[] taken, long[] arg) {
        long e = inject.tryPop();
        if (e == QueueEntry.EMPTY && carried != null) {
            if (batches.takeAny(taken, arg)) { // claimed by a worker, not yet started: still queued
                return QueueEntry.CARRIED;
            }
            e = carried.tryPop(taken, arg);
        }
        if (e != QueueEntry.EMPTY) {
            return e;
        }
        for (int v = 0; v < workers; v++) {
            e = lifo.take(v);
            if (e != QueueEntry.EMPTY) {
                return e;
            }
            e = locals.stealOne(v);
            if (e != QueueEntry.EMPTY) {
                return e;
            }
        }
        return submitterQueues.drainOne(); // every slot, registered or not: the sweep is cold
    }

    // =====================================================================================================
    // Submitter queues
    // =====================================================================================================

    @Override
    public boolean tryEnqueueFromSubmitter(int slot, long entry) {
        return submitterQueues.tryPush(slot, entry); // owner push: release store of tail; signalWork fences
    }

    @Override
    public int tryEnqueueManyFromSubmitter(int slot, long[] entries, int from, int n) {
        return submitterQueues.tryPushMany(slot, entries, from, n);
    }

    @Override
    public void closeSubmitter(int slot) {
        if (submitterQueues.moveToInject(slot, inject) > 0) {
            signalWork(); // after the seq_cst pushes, before the slot's bit is cleared: SubmitterQueues
        }
    }

    @Override
    public void close() {
        locals.close();
    }

    /**
     * Stats: the inject and carried rings, every local queue, every occupied LIFO slot and every registered submitter's
     * queue (default lane only). An unregistered slot's queue is empty: closeSubmitter moved its entries.
     */
    @Override
    public long depth(Lane lane) {
        if (lane != Lane.DEFAULT) {
            return 0;
        }
        long d = sharedSize();
        for (int v = 0; v < workers; v++) {
            d += locals.size(v);
            if (lifo.peekVolatile(v) != QueueEntry.EMPTY) {
                d++;
            }
        }
        return d + submitterQueues.depth();
    }

    @Override
    public long localQueueLength(int w) {
        return w < workers ? locals.size(w) : 0;
    }
}
