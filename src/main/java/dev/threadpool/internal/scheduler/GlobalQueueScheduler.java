package dev.threadpool.internal.scheduler;

import dev.threadpool.Lane;
import dev.threadpool.PoolConfig;
import dev.threadpool.WaitGroup;
import dev.threadpool.internal.memory.CacheLine;
import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.BoundedRing;
import dev.threadpool.internal.queue.CarriedBatches;
import dev.threadpool.internal.queue.CarriedRings;
import dev.threadpool.internal.queue.QueueEntry;
import dev.threadpool.internal.stats.PoolCounters;
import dev.threadpool.internal.stats.QueueDepthGauge;
import java.util.function.IntPredicate;

/**
 * GLOBAL_QUEUE topology: one MPMC {@link BoundedRing} that every submitter pushes to and every worker pops
 * from, with the {@link WakeCoalescer} rule (as WORK_STEALING) for waking parked workers.
 *
 * <h2>Wakes</h2>
 * A submit wakes a parked worker only when nobody is searching (spinning in {@code Idle.idle} before it
 * announces), or every {@code wakeCoalesceBatch}-th submit while somebody is; the proof that no entry is left
 * with every worker parked is WakeCoalescer's (the ring push is a seq_cst CAS, the park re-check reads head and
 * tail with seq_cst loads). A worker that pops an entry and sees the ring still non-empty wakes one more parked
 * worker (the chained wake), so a burst coalesced into one wake still reaches every idle worker even when every
 * task blocks. The chained wake follows every pop, not only the first after a search, so it is also this
 * topology's pass-on (Scheduler's contract): the ring is the only queue, and a worker that takes one entry and
 * sees more wakes one more sleeper.
 *
 * <p>No lanes: an entry of either lane goes to the ring and is counted in the DEFAULT lane's depth.
 *
 * <h2>Two rings: descriptors' entries and carried tasks</h2>
 * Detached tasks submitted from outside the pool travel in a ring of their own, {@code carried}, which holds
 * each task's references in its cell ({@link BoundedRing}, "Carried tasks"; no descriptor, so no descriptor
 * line crosses cores per task: PERFORMANCE_TRACKING entry 37). Everything that holds a descriptor (waitable
 * tasks, the workers' own submits) goes to {@code inject}, which therefore has a cell per descriptor and is
 * never full of anything but entries being drained, as before. Both have {@code queueCapacity} cells. A worker
 * takes from both, starting with the one it did not start with last time (its own alternation), so neither
 * kind starves the other; FIFO holds within each ring. Every rule above (the handshake, hasWork, the chained
 * wake, the depth) looks at both rings. Without carried tasks (TimestampMode.FULL keeps its stamps in the
 * descriptors) {@code carried} is null and this is the one-ring topology it was.
 *
 * <h2>Carried batches</h2>
 * A worker pops the carried ring through {@link CarriedBatches}: from a deep ring (at least 16 ready), one head
 * CAS claims {@link CarriedBatches#MAX_BATCH} entries, else one; the worker runs the first and takes the rest from
 * its batch before anything else on its next calls, while any other worker that finds both rings empty steals
 * from it, and the shutdown sweep drains it. So two workers under a deep ring meet its shared lines once per
 * batch instead of once per task (PERFORMANCE_TRACKING 55, 56), and a task never waits behind a long one while
 * another worker is free; an inject entry waits behind at most 7 of a batch. The batches take part in every rule
 * above: hasWork and the chained wake look at them, the depth counts them, drainOne empties them first.
 */
final class GlobalQueueScheduler implements Scheduler {
    private final BoundedRing inject;
    /** Detached tasks from outside the pool, carried by their cells; null with TimestampMode.FULL. */
    private final CarriedRings carried;
    /** Each worker's claimed carried tasks, stealable; null when {@code carried} is. */
    private final CarriedBatches batches;
    private final ParkingLot parking;
    private final WakeCoalescer wake;
    private final QueueDepthGauge gauge;
    /** The per-worker counters: a take from a peer's batch counts as one of the thief's {@code steals}. */
    private final PoolCounters counters;
    /** Which workers' batches may hold entries (word HELD; WorkSummary). */
    private final WorkSummary summary;
    private final int workers;
    /**
     * Where worker i's next bounded look starts among the carried stripes (lookForWork): element
     * {@code (i + 1) * LOOK_STRIDE}, a line apart, plain, written by worker i only.
     */
    private final int[] stripeLook;
    private static final int LOOK_STRIDE = CacheLine.PAD / Integer.BYTES;
    /** Whether worker v's batch holds an entry (a volatile load): the bounded look's probe, made once. */
    private final IntPredicate batchReady = this::batchReady;

    GlobalQueueScheduler(PoolMemory memory, PoolConfig config, BoundedRing inject, ParkingLot parking,
            QueueDepthGauge gauge, PoolCounters counters) {
        this.inject = inject;
        this.carried = Scheduler.carriedRings(memory, config, inject.capacity());
        this.workers = config.workerSlots();
        this.batches = carried == null ? null : new CarriedBatches(memory, workers);
        this.parking = parking;
        this.summary = parking.work();
        this.stripeLook = new int[(workers + 2) * LOOK_STRIDE];
        this.gauge = gauge;
        this.counters = counters;
        this.wake = new WakeCoalescer(memory, parking, config.wakeCoalesceBatch());
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
        // (BoundedRing, "Closing to pushes") and step a of the handshake
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

    @Override
    public boolean tryEnqueue(WorkerThread self, long entry, Lane lane) {
        return inject.tryPush(entry); // seq_cst CAS on tail: step a of the handshake
    }

    @Override
    public int tryEnqueueMany(WorkerThread self, long[] entries, int from, int n, Lane lane) {
        return inject.pushMany(entries, from, n); // one tail CAS per run of free cells
    }

    @Override
    public void signalWork(int n, Lane lane) {
        // Sampled (QueueDepthGauge.sample: the thread's own seed): the rings' occupancy reads their heads, lines
        // every pop writes, so looking on every submit cost a miss per task. Then volatile loads of head and
        // tail, a CAS only for a new peak.
        if (QueueDepthGauge.sample(n)) {
            gauge.observe(Lane.DEFAULT, size());
        }
        // The ring push (tryPush / pushMany / tryPushCarried) was a seq_cst CAS: no fence needed before the
        // rule's idle-mask load. One rule application per call; for a batch the chained wakes in next() spread
        // it to more workers.
        wake.signalWork();
    }

    @Override
    public long next(WorkerThread self) {
        long e;
        if (carried == null) {
            e = inject.tryPop();
        } else {
            // Own batch first (a CAS on this worker's own state line): the ring alternation below decided, when the
            // batch was claimed, that carried tasks came next, so the batch's entries do not probe inject again
            // (checked segment accesses, each a few ns). A descriptor's entry in inject waits behind at most
            // MAX_BATCH - 1 of them.
            if (batches.take(self.index, self.taken, self.takenArg)) {
                return QueueEntry.CARRIED; // the claim that filled the batch ran the chained wake
            }
            // alternate which ring comes first (owner-only field), so a flood of one kind never starves the other
            boolean carriedFirst = self.carriedFirst = !self.carriedFirst;
            // seq_cst CASes on head; a carried task's references go to self.taken (WorkerLoop.runCarried)
            e = carriedFirst ? popCarried(self) : inject.tryPop();
            if (e == QueueEntry.EMPTY) {
                e = carriedFirst ? inject.tryPop() : popCarried(self);
            }
            if (e == QueueEntry.EMPTY) {
                e = stealBatch(self); // both rings empty: a peer's claimed tasks
            }
        }
        if (e != QueueEntry.EMPTY && parking.idleMaskOnWorker() != 0 && !isEmpty()) {
            // Chained wake: we run one entry and more are queued while a worker sleeps. Volatile loads after our
            // CAS, of every stripe (isEmpty): a bounded look here let an entry in a far stripe wait while the
            // awake workers blocked in their tasks (ExecutorServiceContractTest at 64 workers, 16 stripes: GLOBAL_QUEUE
            // has no pass-on). A worker that announces after the idle-mask load re-checks the rings itself. The
            // mask was just loaded, so wake directly (wakeOne's CAS on a bit decides who, -1 if none is left).
            parking.wakeOne();
        }
        return e;
    }

    /**
     * A claim from the carried ring (this worker's batch is empty: {@link #next} took from it first): the first
     * entry's references into {@code self.taken}, the rest into this worker's batch (published by the refill's
     * seq_cst getAndSet, before the chained wake's mask load).
     */
    private long popCarried(WorkerThread self) {
        int n = batches.refill(self.index, carried, self.taken, self.takenArg, CarriedBatches.MAX_BATCH);
        if (n > 1) {
            // entries left in our batch for thieves: HELD after the refill's publishing getAndSet, before the
            // chained wake's idle-mask load (WorkSummary)
            summary.mark(WorkSummary.HELD, self.index);
        }
        return n == 0 ? QueueEntry.EMPTY : QueueEntry.CARRIED;
    }

    /** One entry of another worker's batch, starting after our own index, or EMPTY. */
    private long stealBatch(WorkerThread self) {
        // volatile load of HELD: only the peers whose batch may hold entries; then acquire loads of their state
        // lines and a CAS on one
        if (!batches.steal(self.index, self.taken, summary.mask(WorkSummary.HELD), self.takenArg)) {
            return QueueEntry.EMPTY;
        }
        counters.increment(self.index, PoolCounters.STEALS); // own counter line, as WORK_STEALING's
        return QueueEntry.CARRIED;
    }

    @Override
    public boolean hasWork(int i) {
        // volatile loads of head and the head cell's seq: a published entry only, so an idle worker does not spin
        // on a cell whose producer was preempted between its claim and its publish (see pendingPush); then HELD
        // and the state words of the batches whose bit is set (seq_cst loads after the announcement: the Dekker
        // pair with a refill's getAndSet and its getAndOr on HELD; WorkSummary)
        return inject.hasReadyEntry() || (carried != null && (carried.hasReadyEntry() || anyHeld()));
    }

    /**
     * The bounded look (Scheduler.lookForWork): the rings, HELD, and the batches of at most
     * {@link WorkSummary#LOOK_PROBES} workers whose bit is set, from where worker i's last look stopped.
     */
    @Override
    public boolean lookForWork(int i) {
        if (inject.hasReadyEntry()) {
            return true;
        }
        if (carried == null) {
            return false;
        }
        final int at = (i + 1) * LOOK_STRIDE;
        // volatile loads of LOOK_STRIPES carried stripes from where worker i's last look stopped (the re-check,
        // hasWork, reads every stripe); the start is plain and owner-only
        int from = stripeLook[at];
        stripeLook[at] = from + Scheduler.LOOK_STRIPES;
        if (carried.hasReadyEntry(from, Scheduler.LOOK_STRIPES)) {
            return true;
        }
        long m = summary.mask(WorkSummary.HELD) & ~(1L << i); // volatile load of the summary line
        return m != 0 && summary.probe(i, m, batchReady); // the batches of at most two set bits
    }

    /** Whether worker {@code v}'s batch holds an entry (a volatile load of its state line). */
    private boolean batchReady(int v) {
        return v < workers && batches.hasStealable(v);
    }

    /** Whether a batch whose HELD bit is set holds an entry (volatile loads of HELD, then of those state words). */
    private boolean anyHeld() {
        for (long m = summary.mask(WorkSummary.HELD); m != 0; m &= m - 1) {
            int v = Long.numberOfTrailingZeros(m);
            if (v < workers && batches.hasStealable(v)) {
                return true;
            }
        }
        return false;
    }

    /** Worker {@code w} ran dry: its batch is empty and only it refills it, so HELD's bit goes (WorkSummary). */
    @Override
    public void ranDry(int w) {
        if (batches != null && w < workers && summary.isMarked(WorkSummary.HELD, w) && !batches.hasStealable(w)) {
            summary.clear(WorkSummary.HELD, w);
        }
    }

    /**
     * Volatile loads of head and tail: a cell claimed but not yet published. Its producer's signalWork comes
     * after its publish but without a fence before the idle-mask load (none per submit here), so that load may
     * miss a worker that announced while the publish was still buffered: the worker's park is bounded
     * (Scheduler, "Claimed but unpublished ring cells").
     */
    @Override
    public boolean pendingPush(int i) {
        return !isEmpty();
    }

    private boolean isEmpty() {
        return inject.isEmpty() && (carried == null || (carried.isEmpty() && !anyHeld()));
    }

    private long size() {
        return inject.size() + (carried == null ? 0 : carried.size() + batches.size());
    }

    @Override
    public WakeCoalescer wakeCoalescer() {
        return wake;
    }

    @Override
    public void searching(int i, boolean on) {
        if (on) {
            wake.beginSearch();
        } else {
            wake.endSearch();
        }
    }

    @Override
    public long drainOne(Object[] taken, long[] arg) {
        long e = inject.tryPop();
        if (e != QueueEntry.EMPTY || carried == null) {
            return e;
        }
        // claimed by a worker, not yet started: queued, and older than the ring
        return batches.takeAny(taken, arg) ? QueueEntry.CARRIED : carried.tryPop(taken, arg);
    }

    @Override
    public void close() {
    }

    @Override
    public long depth(Lane lane) {
        return lane == Lane.DEFAULT ? size() : 0;
    }
}
