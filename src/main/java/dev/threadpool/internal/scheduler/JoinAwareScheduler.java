package dev.threadpool.internal.scheduler;

import dev.threadpool.Lane;
import dev.threadpool.PoolConfig;
import dev.threadpool.WaitGroup;
import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.CarriedRings;
import dev.threadpool.internal.stats.PoolCounters;
import java.util.function.IntPredicate;

/**
 * The topology's {@link Scheduler} as the idle path and the lifecycle see it: the same, except that
 * {@link #hasWork} also reports offered join halves ({@link JoinDeques}) to a worker that steals them, and
 * {@link #close} also frees the join deques. A searching worker that sees one goes back to its loop, where
 * {@code WorkerLoop.turn} steals it once {@code next} found nothing.
 *
 * <p>Only {@link Idle} and {@link Lifecycle} get this view; the submit path and the worker loop keep the
 * topology itself (no extra dispatch there). A join half is not a queued task: {@link #drainOne} (the
 * CANCEL_PENDING sweep) and {@link #depth} do not see it, since its owner always runs or awaits it
 * ({@link Joining}).
 */
final class JoinAwareScheduler implements Scheduler {
    private final Scheduler topology;
    private final JoinDeques joins;
    /** Workers that steal join halves (see Joining). */
    private final long stealers;

    /** Which workers' join deques may hold a half (word JOINS). */
    private final WorkSummary summary;
    /** Whether worker v's join deque holds a half (volatile loads): the bounded look's probe, made once. */
    private final IntPredicate joinReady;

    JoinAwareScheduler(Scheduler topology, JoinDeques joins, long stealers, WorkSummary summary) {
        this.topology = topology;
        this.joins = joins;
        this.stealers = stealers;
        this.summary = summary;
        this.joinReady = v -> v < joins.workers() && joins.nonEmpty(v);
    }

    @Override
    public boolean hasWork(int i) {
        // seq_cst loads of the topology's queues, then of JOINS and of the deques whose bit is set. The join half
        // is a hint only: its owner runs it if nobody steals it, so a miss costs parallelism, never the half.
        if (topology.hasWork(i)) {
            return true;
        }
        if (!Joining.stealer(stealers, i)) {
            return false;
        }
        for (long m = summary.mask(WorkSummary.JOINS); m != 0; m &= m - 1) {
            int v = Long.numberOfTrailingZeros(m);
            if (v < joins.workers() && joins.nonEmpty(v)) { // volatile loads of top and bottom
                return true;
            }
        }
        return false;
    }

    /**
     * The topology's bounded look, then JOINS and the deques of at most {@link WorkSummary#LOOK_PROBES} workers
     * whose bit is set, from a start that moves on with every look (Scheduler.lookForWork).
     */
    @Override
    public boolean lookForWork(int i) {
        if (topology.lookForWork(i)) {
            return true;
        }
        if (!Joining.stealer(stealers, i)) {
            return false;
        }
        long m = summary.mask(WorkSummary.JOINS) & ~(1L << i); // volatile load of the summary line
        return m != 0 && summary.probe(i, m, joinReady); // the deques of at most two set bits
    }

    /**
     * Worker {@code i} ran dry at the top of its stack, where no join of its own is open: its deque is empty and
     * only it offers into it, so JOINS's bit goes (WorkSummary); then the topology's.
     */
    @Override
    public void ranDry(int i) {
        if (summary.isMarked(WorkSummary.JOINS, i) && !joins.nonEmpty(i)) {
            summary.clear(WorkSummary.JOINS, i);
        }
        topology.ranDry(i);
    }

    @Override
    public void close() {
        topology.close();
        joins.close();
    }

    // ---- the rest as the topology has it ---------------------------------------------------------------

    @Override
    public boolean tryEnqueue(WorkerThread self, long entry, Lane lane) {
        return topology.tryEnqueue(self, entry, lane);
    }

    @Override
    public int tryEnqueueMany(WorkerThread self, long[] entries, int from, int n, Lane lane) {
        return topology.tryEnqueueMany(self, entries, from, n, lane);
    }

    @Override
    public void signalWork(int n, Lane lane) {
        topology.signalWork(n, lane);
    }

    @Override
    public void signalCarried(int n) {
        topology.signalCarried(n);
    }

    @Override
    public long next(WorkerThread self) {
        return topology.next(self);
    }

    @Override
    public boolean pendingPush(int i) {
        return topology.pendingPush(i);
    }

    @Override
    public WakeCoalescer wakeCoalescer() {
        return topology.wakeCoalescer();
    }

    @Override
    public void searching(int i, boolean on) {
        topology.searching(i, on);
    }

    @Override
    public long drainOne(Object[] taken, long[] arg) {
        return topology.drainOne(taken, arg);
    }

    @Override
    public boolean carriesTasks() {
        return topology.carriesTasks();
    }

    @Override
    public boolean tryEnqueueCarried(Runnable task, WaitGroup group) {
        return topology.tryEnqueueCarried(task, group);
    }

    @Override
    public boolean tryEnqueueCarriedArg(Object fn, Object ctx, long arg, WaitGroup group) {
        return topology.tryEnqueueCarriedArg(fn, ctx, arg, group);
    }

    @Override
    public CarriedRings carried() {
        return topology.carried();
    }

    @Override
    public boolean carriedLowWater() {
        return topology.carriedLowWater();
    }

    @Override
    public boolean hasSubmitterQueues() {
        return topology.hasSubmitterQueues();
    }

    @Override
    public boolean tryEnqueueFromSubmitter(int slot, long entry) {
        return topology.tryEnqueueFromSubmitter(slot, entry);
    }

    @Override
    public int tryEnqueueManyFromSubmitter(int slot, long[] entries, int from, int n) {
        return topology.tryEnqueueManyFromSubmitter(slot, entries, from, n);
    }

    @Override
    public void closeSubmitter(int slot) {
        topology.closeSubmitter(slot);
    }

    @Override
    public long depth(Lane lane) {
        return topology.depth(lane);
    }

    @Override
    public long localQueueLength(int w) {
        return topology.localQueueLength(w);
    }

    @Override
    public int blockingWorkers() {
        return topology.blockingWorkers();
    }

    @Override
    public Watchdog createWatchdog(PoolCore core, PoolConfig config, PoolMemory memory, PoolCounters counters,
            ParkingLot parking) {
        return topology.createWatchdog(core, config, memory, counters, parking);
    }
}
