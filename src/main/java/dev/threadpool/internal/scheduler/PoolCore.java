package dev.threadpool.internal.scheduler;

import dev.threadpool.IdleStrategy;
import dev.threadpool.PoolBusyException;
import dev.threadpool.PoolConfig;
import dev.threadpool.PoolStats;
import dev.threadpool.ShutdownMode;
import dev.threadpool.TimestampMode;
import dev.threadpool.WaitGroup;
import dev.threadpool.WorkerScratch;
import dev.threadpool.internal.jfr.PoolEvents;
import dev.threadpool.internal.jmx.PoolMXBean;
import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.os.Affinity;
import dev.threadpool.internal.queue.BoundedRing;
import dev.threadpool.internal.stats.LogHistogram;
import dev.threadpool.internal.stats.PoolCounters;
import dev.threadpool.internal.stats.QueueDepthGauge;
import dev.threadpool.internal.stats.RecentErrors;
import dev.threadpool.internal.stats.Timestamps;
import dev.threadpool.internal.stats.WorkerTimes;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.IntConsumer;
import java.util.function.ObjLongConsumer;

/**
 * The engine behind {@link dev.threadpool.ThreadPool}: it builds the pool's parts, wires the rooms together and
 * gives each public call to the room named after it. It holds no algorithm of its own.
 *
 * <h2>Map of the pool</h2>
 * <pre>
 *   room (file)            what it does                                      its state
 *   ---------------------  ------------------------------------------------  ---------------------------------
 *   Submission             submit, batch, waitable, fork: descriptor ->      the batch buffers
 *                          accept -> publish -> push -> signal
 *   Slots                  acquire / publish / release of descriptors,       task, group, signal arrays;
 *                          the caches and their hazard rules                 worker and submitter DescCaches,
 *                                                                            OutsideDescCaches
 *   Scheduler (topology)   where entries go, next(), park re-check,          the queues (below)
 *                          wake rule, depth
 *   WorkerLoop             next -> runEntry -> outcome; nested runs          (per worker: inlineDepth)
 *                          (helping, caller-runs), MAX_INLINE_DEPTH
 *   Idle                   spin / announce / re-check / park; the only       (ParkingLot, WakeCoalescer)
 *                          caller of scheduler.searching
 *   OverflowWorker         LANE_EXTENSION's spawned workers: run, retire     (Watchdog's slots)
 *   Watchdog               LANE_EXTENSION's stall detector, spawns overflow  run words, overflow mask
 *   Awaiting               await (helping on a worker), cancel, handles      (the control words)
 *   Joining                join(left, right): offer right, run left, pop     JoinDeques: a Chase-Lev deque per
 *                          back or help the thief (leapfrogging); thieves    worker, a completion word per slot;
 *                          (idle loop, helpNext); the outside caller's pair; ForkStack: each worker's open
 *                          fork(h) / join(h): the same frames, one half      forks (WorkerThread.forks)
 *                          in place; forks left open settled at the end
 *                          of the task or half that made them
 *   Lifecycle              state, shutdown steps 1-6, close step 7,          state, arena callers, stop flag
 *                          construction failure
 *   Snapshot               stats: read in invariant order -> PoolStats       the final stats, skew state
 * </pre>
 *
 * <h2>One detached submit, one worker pop</h2>
 * <pre>
 *   ThreadPool.submit -> PoolCore.submit -> Submission.submit:
 *       Lifecycle.checkAccepting -> Slots.acquireFast
 *       -> PoolCounters.tryAcceptOutside | tryAcceptOnWorker | tryAcceptOnSubmitter -> Slots.publish
 *       -> Scheduler.tryEnqueue(self, entry, lane) -> Scheduler.signalWork(1, lane)
 *   WorkerThread.run -> PoolCore.workerMain -> WorkerLoop.run -> WorkerLoop.turn, until it says stop:
 *       Scheduler.next(self) -> WorkerLoop.runEntry: DescriptorTable.tryStart -> task.run (or fn.accept(ctx, arg))
 *       -> Slots.releaseSlot (detached) | DescriptorTable.finishWaitable + Slots.wakeSlot (waitable)
 *       nothing queued: Idle.idle -> ParkingLot.announce / park
 * </pre>
 *
 * <h2>The topologies</h2>
 * <pre>
 *   GLOBAL_QUEUE    GlobalQueueScheduler: the inject ring only (Vyukov MPMC, BoundedRing); every worker pops
 *                   it; WakeCoalescer + a chained wake per pop that leaves entries behind
 *   WORK_STEALING   WorkStealingScheduler: inject ring; per worker a LIFO slot and a local queue (SPMC ring
 *                   with steal-half, or a Chase-Lev deque); 64 submitter queues; steal-half between workers;
 *                   WakeCoalescer with the pass-on rule
 *   LANE_EXTENSION  LaneScheduler: WORK_STEALING's default lane plus a blocking ring for reserved workers
 *                   [0, blockingWorkers); a Watchdog that spawns OverflowWorkers beside stalled default-lane
 *                   tasks; no submitter queues (a Submitter's entries take the external path)
 * </pre>
 * {@link Scheduler#create} picks the topology; nothing else in the pool asks which one it has.
 *
 * <h2>What lives where</h2>
 * Off-heap, in the pool's {@link PoolMemory} (one arena, every byte counted): descriptors, the rings, local
 * queues, LIFO slots, the workers_nonempty bitmap, counters, the idle mask, the space-waiter masks, the
 * descriptor caches, the depth gauge, histograms, worker times, the watchdog's words. On-heap: the references
 * (task, group, failure, per-slot signal, threads) in arrays indexed by slot, and the lifecycle state, which
 * must outlive the arena.
 */
public final class PoolCore {
    /** Marks a submit that comes from no registered submitter. */
    public static final int NO_SUBMITTER = Slots.NO_SUBMITTER;

    private final PoolConfig config;
    /** Every worker index the pool may use: maxThreads, plus maxOverflowWorkers in LANE_EXTENSION. */
    private final int slots;

    // ---- parts (off-heap structures, in PoolMemory) -----------------------------------------------------
    private final PoolMemory memory;
    private final DescriptorTable table;
    private final PoolCounters counters;
    private final ParkingLot parking;
    private final SpaceWaiters space;
    private final SubmitterRegistry submitters;
    private final Scheduler scheduler;
    /** LANE_EXTENSION's watchdog; null for a topology without one. */
    private final Watchdog watchdog;
    private final RecentErrors errors;
    /** One per base worker slot, on-heap until first used; the buffer itself is allocated on first allocate(). */
    private final WorkerScratchBuffer[] scratch;
    private final WorkerThread[] workers;
    /** Busy / idle time per worker slot: stamped around every worker's life. */
    private final WorkerTimes timesForWorkers;

    // ---- rooms ----------------------------------------------------------------------------------------------
    private final Slots slotTable;
    private final Snapshot snapshot;
    private final Lifecycle lifecycle;
    private final WorkerLoop loop;
    /** Null for a topology without overflow workers. */
    private final OverflowWorker overflow;
    private final Submission submission;
    private final Awaiting awaiting;
    private final Joining joining;
    /**
     * Join frames per worker (JoinDeques, "Frames"): joins nested deeper than this on one worker run both halves
     * inline, forks keep their half for their join. Each costs 40 bytes off-heap (its deque slot, and its completion,
     * ARG, FORK and RESULT words) and four references on-heap (half, context, failure, object result).
     */
    static final int JOIN_FRAMES = 256;

    public PoolCore(PoolConfig config) {
        this(config, ConstructionHook.NONE);
    }

    /**
     * Builds the pool. One construction path: once the arena exists, a failure anywhere (an allocation, an
     * OutOfMemoryError on the heap arrays, a failed Thread.start, the JFR hook, the watchdog) goes to
     * {@link Lifecycle#abortConstruction}, which stops and joins every thread already started and closes the
     * arena, and is then rethrown; nothing is left alive. {@code hook} is the tests' fault-injection seam
     * ({@link ConstructionHook}); the public constructor passes {@link ConstructionHook#NONE}.
     */
    PoolCore(PoolConfig config, ConstructionHook hook) {
        this.config = config;
        final int capacity = config.queueCapacity();
        final int workerCount = config.maxThreads();
        this.slots = config.workerSlots();
        // TimestampMode.FULL. Every use reads Timestamps.COMPILED && timestamps: with
        // -Ddev.threadpool.timestamps=false the static final folds the whole branch away.
        final boolean timestamps = Timestamps.COMPILED && config.timestampMode() == TimestampMode.FULL;
        int[] cpus = config.workerCpus();
        if (cpus.length > 0) {
            Affinity.checkUsable(cpus); // before anything is allocated: a refused config leaves nothing behind
        }

        this.memory = PoolMemory.create();
        AutoCloseable jfrStatsHook = null;
        try {
            hook.at(ConstructionHook.Stage.ARENA_CREATED, -1, memory);
            this.errors = new RecentErrors(config.recentErrorCapacity()); // first: the structures may record into it
            this.table = new DescriptorTable(memory, capacity);
            this.counters = new PoolCounters(memory, slots, SubmitterRegistry.MAX_SUBMITTERS);
            this.parking = new ParkingLot(memory, slots);
            this.space = new SpaceWaiters(memory, "space waiters");
            SpaceWaiters ringSpace = new SpaceWaiters(memory, "carried-ring waiters");
            this.submitters = new SubmitterRegistry(memory);
            QueueDepthGauge depthGauge = new QueueDepthGauge(memory);
            BoundedRing inject = new BoundedRing(memory, "inject ring", capacity);
            this.scheduler = Scheduler.create(memory, config, inject, parking, counters, submitters, depthGauge,
                    errors);
            this.watchdog = scheduler.createWatchdog(this, config, memory, counters, parking);
            WorkerTimes times = new WorkerTimes(memory, slots);
            LogHistogram waitHist = null, execHist = null, wakeHist = null;
            if (timestamps) {
                waitHist = new LogHistogram(memory, "queue-wait histograms", slots);
                execHist = new LogHistogram(memory, "execution histograms", slots);
                wakeHist = new LogHistogram(memory, "wake-latency histograms", slots);
            }
            if (timestamps || Idle.windowed(config)) {
                parking.stampWakesInto(times); // the wake histogram; the idle window's spell length (Idle)
            }
            this.slotTable = new Slots(memory, table, space, capacity, slots, timestamps);
            hook.at(ConstructionHook.Stage.STRUCTURES_BUILT, -1, memory);

            hook.at(ConstructionHook.Stage.HEAP_STATE, -1, memory);
            this.scratch = new WorkerScratchBuffer[slots];
            for (int i = 0; i < scratch.length; i++) {
                scratch[i] = new WorkerScratchBuffer(this, memory, i, config.workerScratchCapBytes());
            }
            this.workers = new WorkerThread[workerCount];
            for (int i = 0; i < workerCount; i++) {
                // LANE_EXTENSION watches its default-lane workers' running tasks (Watchdog); nobody else does.
                boolean watched = watchdog != null && watchdog.watches(i);
                WorkerThread w = new WorkerThread(this, i, config.threadNamePrefix() + i, config, false, watched);
                w.cpu = cpus.length > 0 ? cpus[i % cpus.length] : -1;
                workers[i] = w;
                parking.register(i, w);
            }

            this.snapshot = new Snapshot(counters, parking, memory, scheduler, times, depthGauge, scratch, waitHist,
                    execHist, wakeHist, capacity, workerCount, slots);
            // Join halves: per worker slot a deque and a stack of frames. The idle path and the lifecycle see the
            // topology through JoinAwareScheduler (re-check and close include them).
            JoinDeques joinDeques = new JoinDeques(memory, slots, JOIN_FRAMES);
            long stealers = Joining.stealers(workerCount);
            Scheduler idleView = new JoinAwareScheduler(scheduler, joinDeques, stealers, parking.work());
            this.lifecycle = new Lifecycle(config.threadNamePrefix(), memory, counters, table, slotTable, idleView,
                    parking, space, ringSpace, snapshot, workers, watchdog, errors);
            // BUSY_SPIN's idle workers are not counted as searching (Idle): its joins offer every half
            this.joining = new Joining(joinDeques, lifecycle, parking, counters, stealers, scheduler.wakeCoalescer(),
                    config.idleStrategy() != IdleStrategy.BUSY_SPIN);
            Idle idle = new Idle(idleView, parking, slotTable, counters, lifecycle, times, config.idleStrategy(),
                    config.spinBeforePark().toNanos(), config.idleWindow().toNanos(), scratch,
                    config.scratchIdlePurge().toNanos(), timestamps, wakeHist);
            this.loop = new WorkerLoop(scheduler, table, slotTable, space, ringSpace, counters, idle, errors,
                    config.errorHandler(), watchdog, config.threadNamePrefix(), timestamps, waitHist, execHist,
                    joining);
            this.overflow = watchdog != null
                    ? new OverflowWorker(scheduler, loop, idle, parking, slotTable, counters, lifecycle, watchdog)
                    : null;
            this.submission = new Submission(lifecycle, counters, table, slotTable, scheduler, space, ringSpace, loop,
                    capacity);
            this.awaiting = new Awaiting(table, slotTable, counters, loop, lifecycle, capacity);
            this.timesForWorkers = times;

            // Thread.start happens-before everything the worker does, so the fields above are visible to it.
            for (WorkerThread w : workers) {
                hook.at(ConstructionHook.Stage.WORKER_START, w.index, memory);
                w.start();
            }
            hook.at(ConstructionHook.Stage.JFR_HOOK, -1, memory);
            jfrStatsHook = PoolEvents.registerPeriodicStats(config.threadNamePrefix(), this::statsSnapshot);
            if (config.jmxName() != null) {
                // The MXBean reads the same statsSnapshot as JFR; it shares the JFR hook's slot so that close
                // (Lifecycle.closeJfrHook) and a failed construction (abortConstruction) unregister it too. A
                // duplicate name throws here, after the JFR hook is set: the failure path removes that one.
                AutoCloseable jfr = jfrStatsHook;
                AutoCloseable jmx = PoolMXBean.register(config.jmxName(), this::statsSnapshot, config.maxThreads());
                jfrStatsHook = () -> {
                    try {
                        jmx.close();
                    } finally {
                        jfr.close();
                    }
                };
            }
            lifecycle.jfrStatsHook(jfrStatsHook);
            if (watchdog != null) {
                hook.at(ConstructionHook.Stage.WATCHDOG_START, -1, memory);
                watchdog.start();
            }
        } catch (Throwable failure) {
            abortConstruction(failure, jfrStatsHook);
            throw failure; // precise rethrow: only the unchecked failures of the block above
        }
    }

    /** The constructor's failure path: hands the parts built so far (the others are still null) to Lifecycle. */
    private void abortConstruction(Throwable failure, AutoCloseable jfrStatsHook) {
        Lifecycle.abortConstruction(failure, lifecycle, jfrStatsHook, watchdog, parking, workers, snapshot, memory);
    }

    public PoolConfig config() {
        return config;
    }

    // ---- workers ----------------------------------------------------------------------------------------------

    /** The life of worker thread {@code self}: a base worker's loop, or an overflow worker's. */
    void workerMain(WorkerThread self) {
        timesForWorkers.born(self.index, System.nanoTime());
        try {
            if (self.overflow) {
                overflow.run(self);
            } else {
                loop.run(self);
            }
        } finally {
            timesForWorkers.died(self.index, System.nanoTime());
        }
    }

    /** A worker could not apply its start-up settings (CPU pinning); it runs on, and the failure is kept. */
    void workerSetupFailed(Throwable t) {
        errors.record(t);
    }

    /** The calling thread as a worker of this pool, or null. */
    WorkerThread currentWorker() {
        return Thread.currentThread() instanceof WorkerThread w && w.core == this ? w : null;
    }

    public int currentWorkerIndex() {
        WorkerThread w = currentWorker();
        return w == null ? -1 : w.index;
    }

    /** True when the calling thread is one of this pool's workers. */
    boolean onWorker() {
        return currentWorker() != null;
    }

    /**
     * Worker indices this pool may ever use: the size of every per-worker array and counter block.
     * {@code maxThreads}; LANE_EXTENSION adds its overflow workers here (at most 64 in all).
     */
    public int workerSlots() {
        return slots;
    }

    // ---- submit (Submission) ------------------------------------------------------------------------------

    /** Detached submit; see {@link WaitMode} for what happens when the pool is full. False: it stayed full. */
    public boolean submit(Runnable task, int flags, WaitGroup group, WaitMode mode, long deadline) {
        return submission.submit(currentWorker(), NO_SUBMITTER, task, flags, group, mode, deadline);
    }

    /**
     * As {@link #submit(Runnable, int, WaitGroup, WaitMode, long)}, from registered submitter {@code submitter}
     * ({@link #NO_SUBMITTER} for none): the descriptor comes from its cache and the entry goes to its own
     * queue where the topology has one. Called from the submitter's thread only.
     */
    public boolean submit(int submitter, Runnable task, int flags, WaitGroup group, WaitMode mode, long deadline) {
        return submission.submit(currentWorker(), submitter, task, flags, group, mode, deadline);
    }

    /**
     * Batched detached submit from registered submitter {@code submitter} ({@link #NO_SUBMITTER} for none): how
     * many of {@code batch[from..to)} were accepted, each counted by {@code group} when it is not null (see
     * Submission).
     */
    public int submitBatch(int submitter, Runnable[] batch, int from, int to, int flags, WaitGroup group) {
        return submission.submitBatch(currentWorker(), submitter, batch, from, to, flags, group);
    }

    /**
     * As {@link #submit(int, Runnable, int, WaitGroup, WaitMode, long)} for a task in argument form: {@code fn} (an
     * {@code ObjLongConsumer}) is called as {@code fn.accept(ctx, arg)}; {@code ctx} may be null. Nothing is
     * allocated for it on any path (DESIGN.md, "Tasks with arguments"). {@code flags} are the lane's only.
     */
    public boolean submitArg(int submitter, Object fn, Object ctx, long arg, int flags, WaitGroup group,
            WaitMode mode, long deadline) {
        return submission.submit(currentWorker(), submitter, fn, ctx, arg, flags | DescriptorTable.FLAG_ARGUMENT,
                group, mode, deadline);
    }

    /**
     * As {@link #submitBatch(int, Runnable[], int, int, int, WaitGroup)} in argument form: one task per element of
     * {@code args[from..to)}, each called as {@code fn.accept(ctx, args[i])} (see {@link #submitArg}); the same
     * chunks, waits and count. {@code flags} are the lane's only.
     */
    public int submitBatchArg(int submitter, Object fn, Object ctx, long[] args, int from, int to, int flags,
            WaitGroup group) {
        return submission.submitBatchArg(currentWorker(), submitter, fn, ctx, args, from, to,
                flags | DescriptorTable.FLAG_ARGUMENT, group);
    }

    /** As {@link #submitWaitable(int, Runnable, int)} for a task in argument form (see {@link #submitArg}). */
    public long submitWaitableArg(int submitter, Object fn, Object ctx, long arg, int flags) {
        return submission.submitWaitable(currentWorker(), submitter, fn, ctx, arg,
                flags | DescriptorTable.FLAG_ARGUMENT);
    }

    /** Waitable submit; returns the handle ({@code gen << log2(queueCapacity) | idx}). Waits while full. */
    public long submitWaitable(Runnable task, int flags) {
        return submission.submitWaitable(currentWorker(), NO_SUBMITTER, task, flags);
    }

    /** As {@link #submitWaitable(Runnable, int)}, from registered submitter {@code submitter}. */
    public long submitWaitable(int submitter, Runnable task, int flags) {
        return submission.submitWaitable(currentWorker(), submitter, task, flags);
    }

    /** A worker's {@code WaitGroup.await}: runs one queued entry nested if the caller is a worker below the bound. */
    boolean helpOnce() {
        return loop.helpOnce(currentWorker());
    }

    // ---- join (Joining) ---------------------------------------------------------------------------------------

    /**
     * Runs both and returns when both are done; {@code TaskFailedException} if either threw (after both
     * ended). On a worker of this pool: fork/join on its stack (Joining); elsewhere the pair is handed over
     * as one task and the caller waits, interruptibly.
     */
    public void join(Runnable left, Runnable right) throws InterruptedException {
        WorkerThread self = currentWorker();
        if (self != null) {
            joining.join(self, left, right);
        } else {
            joining.joinFromOutside(submission, left, right);
        }
    }

    /**
     * {@code join(fn, ctx, left, right)}: {@link #join(Runnable, Runnable)} of {@code fn.accept(ctx, left)} and
     * {@code fn.accept(ctx, right)}, whose halves are no objects (Joining.joinBoth).
     */
    public void join(ObjLongConsumer<Object> fn, Object ctx, long left, long right) throws InterruptedException {
        WorkerThread self = currentWorker();
        if (self != null) {
            joining.join(self, fn, ctx, left, right);
        } else {
            joining.joinFromOutside(submission, fn, ctx, left, right);
        }
    }

    /**
     * {@link #join} for the pool's own splitters ({@link ParallelFor}) on a worker: no admission check, since
     * the pair is part of a task the pool accepted. {@code self} is the calling worker.
     */
    void joinAccepted(WorkerThread self, Runnable left, Runnable right) {
        joining.joinAccepted(self, left, right);
    }

    // ---- fork and the join of a fork handle; invoke (Joining, "Fork handles") ------------------------------

    /** {@code fork(half)}: on a worker of this pool only (else IllegalStateException); the handle. */
    public long fork(Runnable half) {
        return joining.fork(forkingWorker("fork"), ForkStack.VOID, half, null, 0L);
    }

    /** {@code fork(fn, ctx, arg)} of an {@code ObjLongConsumer}: as {@link #fork(Runnable)}. */
    public long forkArg(Object fn, Object ctx, long arg) {
        return joining.fork(forkingWorker("fork"), ForkStack.VOID, fn, Joining.marker(ctx), arg);
    }

    /** {@code forkLong(fn, ctx, arg)} of an {@code ObjLongToLongFunction}: as {@link #fork(Runnable)}. */
    public long forkLong(Object fn, Object ctx, long arg) {
        return joining.fork(forkingWorker("forkLong"), ForkStack.LONG, fn, Joining.marker(ctx), arg);
    }

    /** {@code forkDouble(fn, ctx, arg)} of an {@code ObjLongToDoubleFunction}: as {@link #fork(Runnable)}. */
    public long forkDouble(Object fn, Object ctx, long arg) {
        return joining.fork(forkingWorker("forkDouble"), ForkStack.DOUBLE, fn, Joining.marker(ctx), arg);
    }

    /** {@code forkObject(fn, ctx, arg)} of an {@code ObjLongFunction}: as {@link #fork(Runnable)}. */
    public long forkObject(Object fn, Object ctx, long arg) {
        return joining.fork(forkingWorker("forkObject"), ForkStack.OBJECT, fn, Joining.marker(ctx), arg);
    }

    /** {@code join(handle)} of a {@code fork}: on the worker that forked it (Joining.joinFork). */
    public void joinFork(long handle) {
        joining.joinFork(joiningWorker(handle, "join"), handle, ForkStack.VOID);
    }

    /** {@code joinLong(handle)} of a {@code forkLong}: its result. */
    public long joinLong(long handle) {
        return joining.joinFork(joiningWorker(handle, "joinLong"), handle, ForkStack.LONG);
    }

    /** {@code joinDouble(handle)} of a {@code forkDouble}: its result. */
    public double joinDouble(long handle) {
        return Double.longBitsToDouble(joining.joinFork(joiningWorker(handle, "joinDouble"), handle,
                ForkStack.DOUBLE));
    }

    /** {@code joinObject(handle)} of a {@code forkObject}: its result. */
    public Object joinObject(long handle) {
        return joining.joinObject(joiningWorker(handle, "joinObject"), handle);
    }

    /** {@code invokeLong(fn, ctx, arg)}: called here on a worker of this pool, else handed over and awaited. */
    public long invokeLong(Object fn, Object ctx, long arg) throws InterruptedException {
        WorkerThread self = currentWorker();
        return self != null ? joining.invoke(self, ForkStack.LONG, fn, Joining.marker(ctx), arg)
                : joining.invokeFromOutside(submission, ForkStack.LONG, fn, Joining.marker(ctx), arg);
    }

    /** {@code invokeDouble(fn, ctx, arg)}: as {@link #invokeLong}. */
    public double invokeDouble(Object fn, Object ctx, long arg) throws InterruptedException {
        WorkerThread self = currentWorker();
        long bits = self != null ? joining.invoke(self, ForkStack.DOUBLE, fn, Joining.marker(ctx), arg)
                : joining.invokeFromOutside(submission, ForkStack.DOUBLE, fn, Joining.marker(ctx), arg);
        return Double.longBitsToDouble(bits);
    }

    /** {@code invoke(fn, ctx, arg)} of an {@code ObjLongFunction}: as {@link #invokeLong}. */
    public Object invoke(Object fn, Object ctx, long arg) throws InterruptedException {
        WorkerThread self = currentWorker();
        return self != null ? joining.invokeObject(self, fn, Joining.marker(ctx), arg)
                : joining.invokeObjectFromOutside(submission, fn, Joining.marker(ctx), arg);
    }

    /** The calling worker of this pool, for a fork; from any other thread IllegalStateException. */
    private WorkerThread forkingWorker(String method) {
        WorkerThread self = currentWorker();
        if (self == null) {
            throw Joining.forkFromOutside(method);
        }
        return self;
    }

    /** The calling worker of this pool, for the join of {@code handle}; from any other thread a misuse exception. */
    private WorkerThread joiningWorker(long handle, String method) {
        WorkerThread self = currentWorker();
        if (self == null) {
            throw Joining.joinFromOutside(handle, method);
        }
        return self;
    }

    // ---- await and cancel (Awaiting) --------------------------------------------------------------------------

    /** Waits for the task of {@code handle} for at most {@code nanos} ({@link Long#MAX_VALUE}: no limit). */
    public boolean await(long handle, long nanos) throws InterruptedException {
        return awaiting.await(currentWorker(), handle, nanos);
    }

    /** Cancels a waitable task while it is still queued; true only if this call cancelled it. */
    public boolean cancel(long handle) {
        return awaiting.cancel(handle);
    }

    // ---- submitters -----------------------------------------------------------------------------------------

    /** Claims one of the 64 submitter slots; {@link PoolBusyException} when all are taken. */
    public int registerSubmitter() {
        lifecycle.checkAccepting();
        int slot = submitters.claim();
        if (slot < 0) {
            throw new PoolBusyException("at most " + SubmitterRegistry.MAX_SUBMITTERS
                    + " submitters may be registered at once; close one first");
        }
        return slot;
    }

    /**
     * Gives submitter slot {@code slot} back: its cached descriptors go to the freelist and what its queue
     * still holds to the shared queue (nothing is lost), then the slot is free for the next registration.
     * Called once per registration, after (happens-before) the submitter's last submit.
     */
    public void releaseSubmitter(int slot) {
        if (lifecycle.isClosed()) {
            return; // the registry went with the arena
        }
        slotTable.flushSubmitterCache(slot);
        scheduler.closeSubmitter(slot); // WORK_STEALING: its queue's entries move to the inject ring
        submitters.release(slot);
    }

    // ---- lifecycle (Lifecycle) --------------------------------------------------------------------------------

    /**
     * Stops the pool as described in {@link ShutdownMode}; returns true when it has fully stopped (every
     * worker joined) before the deadline. Idempotent and safe from several threads at once; a later
     * CANCEL_PENDING call upgrades an earlier DRAIN.
     */
    public boolean shutdown(ShutdownMode mode, long nanos) throws InterruptedException {
        rejectWorker("shutdown()");
        return lifecycle.shutdown(mode, nanos);
    }

    /** Refuses submissions from now on, without waiting; safe from any thread (Lifecycle step 1). */
    public void closeAdmission(ShutdownMode mode) {
        lifecycle.closeAdmission(mode);
    }

    /** Installs the receiver of every task a CANCEL_PENDING sweep cancels; null for none. */
    public void onSweptTask(Consumer<Runnable> sink) {
        lifecycle.onSweptTask(sink);
    }

    /** CANCEL_PENDING without waiting: closes admission and sweeps what is queued now. */
    public void cancelQueuedNow() {
        lifecycle.cancelQueuedNow();
    }

    /** Interrupts every worker (best effort, for {@code ExecutorService.shutdownNow}). */
    public void interruptWorkers() {
        lifecycle.interruptWorkers();
    }

    /** shutdown(DRAIN) without a deadline, then the final snapshot, then the arena is closed. Idempotent. */
    public void close() throws InterruptedException {
        rejectWorker("close()");
        lifecycle.shutdown(ShutdownMode.DRAIN, Long.MAX_VALUE);
        lifecycle.close();
    }

    private void rejectWorker(String call) {
        if (currentWorker() != null) {
            throw new IllegalStateException(call + " called from a worker of this pool would wait for itself;"
                    + " call it from another thread");
        }
    }

    public boolean isClosed() {
        return lifecycle.isClosed();
    }

    public boolean isShutdown() {
        return lifecycle.isShutdown();
    }

    public boolean isTerminated() {
        return lifecycle.isTerminated();
    }

    public void ensureNotClosed() {
        lifecycle.ensureNotClosed();
    }

    // ---- stats and maintenance --------------------------------------------------------------------------------

    public PoolStats statsSnapshot() {
        return snapshot.statsSnapshot();
    }

    /** Recent task failures, oldest first, bounded by {@code recentErrorCapacity}. */
    public List<Throwable> recentErrors() {
        return errors.snapshot();
    }

    public long errorHandlerFailures() {
        return errors.handlerFailures();
    }

    /** The pool's memory map: every live block with its purpose and counted size. */
    public List<PoolMemory.BlockInfo> memoryMap() {
        return memory.memoryMap();
    }

    /**
     * Quiescent-only maintenance: frees every scratch buffer, waits until every worker cache is flushed and drains
     * every outside stripe's descriptor cache.
     */
    public void purgeWorkerCaches() {
        ensureNotClosed();
        PoolStats s;
        synchronized (snapshot.arenaLock) {
            s = snapshot.take();
        }
        if (s.activeTasks() != 0 || s.queuedTasks() != 0) {
            throw new PoolBusyException("purgeWorkerCaches() needs a quiescent pool: activeTasks="
                    + s.activeTasks() + ", queuedTasks=" + s.queuedTasks());
        }
        purgeScratchBuffers();
        slotTable.awaitWorkerCachesFlushed();
        slotTable.awaitOutsideCachesDrained();
    }

    /**
     * purgeWorkerCaches, scratch part: frees every worker's scratch buffer. {@link PoolBusyException} when one is
     * in use (a task submitted after the quiescence check holds a mark); the others are freed regardless.
     */
    private void purgeScratchBuffers() {
        int busy = -1;
        for (WorkerScratchBuffer b : scratch) {
            if (!b.purge() && busy < 0) {
                busy = b.index();
            }
        }
        if (busy >= 0) {
            throw new PoolBusyException("purgeWorkerCaches(): worker " + busy + " is using its scratch buffer;"
                    + " the pool must stay quiescent while purging");
        }
    }

    /** The calling worker's scratch buffer; {@link IllegalStateException} from any other thread. */
    public WorkerScratch scratch() {
        ensureNotClosed();
        WorkerThread w = currentWorker();
        if (w == null) {
            throw new IllegalStateException("ThreadPool.scratch() may only be called from a worker thread of this"
                    + " pool (called from " + Thread.currentThread().getName() + ")");
        }
        return scratch[w.index];
    }

    // ---- white-box hooks for tests in this package -------------------------------------------------------------

    /** Worker {@code w}'s scratch buffer. */
    WorkerScratchBuffer scratchBufferForTest(int w) {
        return scratch[w];
    }

    /**
     * Installs a hook that runs on the cancelling thread right after it won a QUEUED -> CANCELLED CAS
     * ({@link #cancel}, the CANCEL_PENDING sweep), with the slot; null removes it.
     */
    void cancelledHookForTest(IntConsumer hook) {
        slotTable.cancelledHookForTest = hook;
    }

    DescriptorTable tableForTest() {
        return table;
    }

    /** The outside stripes' descriptor caches, or null when the pool has none. */
    OutsideDescCaches outsideCachesForTest() {
        return slotTable.outsideCachesForTest();
    }

    PoolCounters countersForTest() {
        return counters;
    }

    Scheduler schedulerForTest() {
        return scheduler;
    }

    WorkerLoop loopForTest() {
        return loop;
    }

    Joining joiningForTest() {
        return joining;
    }
}
