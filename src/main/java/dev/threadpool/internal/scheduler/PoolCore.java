package dev.threadpool.internal.scheduler;

import dev.threadpool.IdleStrategy;
import dev.threadpool.InvalidHandleException;
import dev.threadpool.Lane;
import dev.threadpool.LaneStats;
import dev.threadpool.LatencyStats;
import dev.threadpool.LatencySummary;
import dev.threadpool.PoolBusyException;
import dev.threadpool.PoolConfig;
import dev.threadpool.PoolShutdownException;
import dev.threadpool.PoolStats;
import dev.threadpool.SchedulerVariant;
import dev.threadpool.ShutdownMode;
import dev.threadpool.TaskCancelledException;
import dev.threadpool.TaskErrorHandler;
import dev.threadpool.TaskFailedException;
import dev.threadpool.TimestampMode;
import dev.threadpool.WaitGroup;
import dev.threadpool.WorkerScratch;
import dev.threadpool.WorkerStats;
import dev.threadpool.internal.jfr.PoolEvents;
import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.os.Affinity;
import dev.threadpool.internal.queue.BoundedRing;
import dev.threadpool.internal.queue.QueueEntry;
import dev.threadpool.internal.stats.LogHistogram;
import dev.threadpool.internal.stats.PoolCounters;
import dev.threadpool.internal.stats.QueueDepthGauge;
import dev.threadpool.internal.stats.RecentErrors;
import dev.threadpool.internal.stats.Timestamps;
import dev.threadpool.internal.stats.WorkerTimes;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.IntConsumer;

/**
 * The engine behind {@link dev.threadpool.ThreadPool}: submit pipeline, worker loop, awaiting, shutdown and
 * stats, for every variant (the queue topology is a {@link Scheduler}; LANE_EXTENSION adds a {@link Watchdog}).
 *
 * <h2>Overview</h2>
 * <pre>
 *   submit:  acquire descriptor (freelist; wait for space, or run inline on a worker)
 *            -> accept (CAS on SUBMITTED, refused once shutdown closed admission)
 *            -> write task ref, flags, timestamp; publish (gen, QUEUED) with release
 *            -> push {gen, idx} on the inject ring -> wake one parked worker (ParkingLot)
 *   worker:  pop entry -> CAS (gen, QUEUED) -> (gen, RUNNING) or drop it (stale / cancelled)
 *            -> run, containing any Throwable -> finish: detached slots back to the freelist at once,
 *               waitable ones wait for their first await -> count -> WaitGroup.done
 *   idle:    spin (strategy) -> announce in IDLE_MASK -> re-check queue and stop flag -> park
 *   shutdown: close admission -> [CANCEL_PENDING: sweep the ring] -> wait for every accepted task to end
 *            -> stop and wake workers -> join
 *   close:   shutdown(DRAIN) -> final stats -> close the arena
 * </pre>
 *
 * <h2>What lives where</h2>
 * Descriptors, the ring, counters, the idle mask and the space-waiter masks are off-heap, in the pool's
 * {@link PoolMemory}. On-heap: the references (task, group, failure, per-slot signal, threads) in arrays
 * indexed by slot, and the lifecycle state, which must outlive the arena.
 *
 * <h2>Policies</h2>
 * <ul>
 *   <li>A submit from one of this pool's workers that finds no free descriptor runs the task inline
 *       (caller-runs), so a task that submits into a full pool can never deadlock it.</li>
 *   <li>Nesting: a worker runs work on its own stack while it waits (await, submitWaitable needing a
 *       descriptor, a push into a full queue, parallelFor) and when it runs a submit inline. Every such run
 *       goes through {@link #runNested}, which counts it in {@code inlineDepth} and restores the count in a
 *       finally. Nobody helps (runs an unrelated queued entry) at {@link #MAX_INLINE_DEPTH} or deeper; there a
 *       waiter only runs its own task: the awaited task if still queued, the entry it cannot push. That adds
 *       one level per level of the user's own recursion, so the pool's nesting on one stack is at most
 *       {@code MAX_INLINE_DEPTH} plus the depth of the user's recursion.</li>
 *   <li>A worker clears its interrupt status before and after every task.</li>
 *   <li>Counters are incremented after the event they count: a task's slot is released before it is
 *       counted completed, so a snapshot that sees every task finished also sees every detached slot free.</li>
 * </ul>
 */
public final class PoolCore {

    // ---- lifecycle (on-heap: it must outlive the arena) -----------------------------------------------
    static final int RUNNING = 0;
    static final int SHUTTING_DOWN = 1;
    static final int TERMINATED = 2;
    static final int CLOSED = 3;

    private static final VarHandle LIFECYCLE;
    private static final VarHandle ARENA_CALLERS;
    private static final VarHandle SIGNALS = MethodHandles.arrayElementVarHandle(SlotSignal[].class);

    static {
        try {
            LIFECYCLE = MethodHandles.lookup().findVarHandle(PoolCore.class, "lifecycle", int.class);
            ARENA_CALLERS = MethodHandles.lookup().findVarHandle(PoolCore.class, "arenaCallers", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Bounded spin of the default PARK strategy before a worker announces itself idle. */
    private static final int PARK_SPINS = 64;
    /**
     * Most levels of work one worker runs nested on its own stack on the pool's initiative: helping (a waiter
     * running unrelated queued entries) and inline runs of a submit into a full pool. At this depth a worker
     * no longer helps, and a submit that would run inline throws {@link PoolBusyException}; only a waiter's own
     * task may still run nested (see {@link #runNested}). Unbounded nesting ended in a StackOverflowError that
     * could strike inside the pool's own bookkeeping after a task returned, leaving its slot RUNNING.
     */
    static final int MAX_INLINE_DEPTH = 64;
    /** Tasks accepted with one CAS and pushed with one ring claim by {@link #submitBatch}. */
    private static final int BATCH_CHUNK = 64;
    /** Each thread's chunk buffer for {@link #submitBatch}; null while that thread's outermost call uses it. */
    private static final ThreadLocal<long[]> BATCH_BUFFER = new ThreadLocal<>();
    /** How long a worker needing a descriptor finds nothing queued before submitWaitable gives up. */
    private static final long HELP_GIVE_UP_NANOS = 10_000_000L;
    /** How long a helping awaiter blocks before it looks for queued work again. */
    private static final long HELP_POLL_NANOS = 100_000L;
    /** Upper bound of one park of the shutdown waiter between two quiescence checks. */
    private static final long SHUTDOWN_POLL_NANOS = 1_000_000L;

    private volatile int lifecycle = RUNNING;
    /**
     * Threads inside a lifecycle path that may touch the arena while another thread closes the pool
     * ({@link #shutdown}, {@link #closeAdmission}, {@link #cancelQueuedNow}); {@link #close} waits for zero
     * before it frees the arena. See {@link #enterArena}.
     */
    private volatile int arenaCallers;
    private volatile boolean cancelRequested;
    private volatile boolean stopWorkers;
    private volatile long acceptedAtClose = -1;
    private volatile PoolStats finalStats;
    /** Receives the tasks a CANCEL_PENDING sweep cancels (the ExecutorService view's shutdownNow list). */
    private volatile Consumer<Runnable> sweptSink;
    /** Shutdown phases emitted so far (JFR ShutdownPhase): phase p is emitted by whoever moves p to p+1. */
    private final AtomicInteger shutdownPhases = new AtomicInteger();
    /** This pool's periodic JFR PoolStats hook; null without a Flight Recorder. Removed at close. */
    private final AutoCloseable jfrStatsHook;
    private final Object closeLock = new Object();

    // ---- configuration, constant after construction -----------------------------------------------------
    private final PoolConfig config;
    private final int capacity;
    private final int workerCount;
    /** Every worker index the pool may use: maxThreads, plus maxOverflowWorkers in LANE_EXTENSION. */
    private final int slots;
    /**
     * TimestampMode.FULL. Every use reads {@code Timestamps.COMPILED && timestamps}: with
     * {@code -Ddev.threadpool.timestamps=false} the static final folds the whole branch away.
     */
    private final boolean timestamps;
    private final IdleStrategy idleStrategy;
    private final long spinBeforeParkNanos;
    private final TaskErrorHandler errorHandler;

    // ---- off-heap structures -------------------------------------------------------------------------------
    private final PoolMemory memory;
    private final DescriptorTable table;
    private final BoundedRing inject;
    private final PoolCounters counters;
    private final ParkingLot parking;
    private final SpaceWaiters space;
    private final SubmitterRegistry submitters;
    /** The queue topology: GLOBAL_QUEUE, WORK_STEALING or LANE_EXTENSION (see {@link Scheduler}). */
    private final Scheduler scheduler;
    /**
     * One descriptor cache per worker slot, or null when {@code queueCapacity} is too small to spare them
     * (see {@link #workerCachesFit}). Each is touched only by its worker's thread. See "Descriptor caches".
     */
    private final DescCache[] workerCaches;
    /** One acquire-only descriptor cache per submitter slot (refills of {@link #submitterRefill}), or null. */
    private final DescCache[] submitterCaches;
    /** Busy / idle time and wake stamps, per worker slot. */
    private final WorkerTimes times;
    /** Peak queue depth per lane. */
    private final QueueDepthGauge depthGauge;
    /** TimestampMode.FULL only (else null): per-worker queue-wait, execution and wake-latency histograms. */
    private final LogHistogram waitHist;
    private final LogHistogram execHist;
    private final LogHistogram wakeHist;
    /** One per worker slot, on-heap until first used; the buffer itself is allocated on first allocate(). */
    private final WorkerScratchBuffer[] scratch;
    /** How long a worker holding a scratch buffer stays parked before it frees it; 0: never. */
    private final long scratchIdlePurgeNanos;
    /** LANE_EXTENSION's watchdog and overflow workers; null in the other variants. */
    private final Watchdog watchdog;

    // ---- on-heap references, indexed by descriptor slot ---------------------------------------------------
    // Written only by the slot's owner (see DescriptorTable, "References and who may write them"); a waitable
    // task's failure lives in the table, next to the generation that guards it.
    private final Runnable[] tasks;
    private final WaitGroup[] groups;
    private final SlotSignal[] signals;

    private final WorkerThread[] workers;
    private final RecentErrors errors;

    // Conditions for SpaceWaiters, made once so waiting allocates nothing.
    private final BooleanSupplier descriptorFree;
    private final BooleanSupplier admissionClosed;

    // Skew detection state (written only by statsSnapshot callers, under skewLock).
    private final Object skewLock = new Object();
    private boolean prevSkewCandidate;
    private long prevStarted = -1;
    private long prevFinished = -1;

    public PoolCore(PoolConfig config) {
        this(config, ConstructionHook.NONE);
    }

    /**
     * Builds the pool. One construction path: once the arena exists, a failure anywhere (an allocation, an
     * OutOfMemoryError on the heap arrays, a failed Thread.start, the JFR hook, the watchdog) goes to
     * {@link #abortConstruction}, which stops and joins every thread already started and closes the arena, and
     * is then rethrown; nothing is left alive. {@code hook} is the tests' fault-injection seam
     * ({@link ConstructionHook}); the public constructor passes {@link ConstructionHook#NONE}.
     */
    PoolCore(PoolConfig config, ConstructionHook hook) {
        this.config = config;
        this.capacity = config.queueCapacity();
        this.workerCount = config.maxThreads();
        this.slots = workerSlots(config);
        this.timestamps = Timestamps.COMPILED && config.timestampMode() == TimestampMode.FULL;
        this.scratchIdlePurgeNanos = config.scratchIdlePurge().toNanos();
        this.idleStrategy = config.idleStrategy();
        this.spinBeforeParkNanos = config.spinBeforePark().toNanos();
        this.errorHandler = config.errorHandler();
        int[] cpus = config.workerCpus();
        if (cpus.length > 0) {
            Affinity.checkUsable(cpus); // before anything is allocated: a refused config leaves nothing behind
        }

        this.memory = PoolMemory.create();
        try {
            hook.at(ConstructionHook.Stage.ARENA_CREATED, -1, memory);
            this.errors = new RecentErrors(config.recentErrorCapacity()); // first: the structures may record into it
            this.table = new DescriptorTable(memory, capacity);
            this.inject = new BoundedRing(memory, "inject ring", capacity);
            this.counters = new PoolCounters(memory, slots);
            this.parking = new ParkingLot(memory, slots);
            this.space = new SpaceWaiters(memory, "space waiters");
            this.submitters = new SubmitterRegistry(memory);
            if (config.schedulerVariant() == SchedulerVariant.LANE_EXTENSION) {
                LaneScheduler lanes = new LaneScheduler(memory, config, inject, table, parking, counters, submitters,
                        errors);
                this.scheduler = lanes;
                this.watchdog = new Watchdog(this, config, memory, lanes, counters, parking);
            } else {
                this.scheduler = config.schedulerVariant() == SchedulerVariant.WORK_STEALING
                        ? new WorkStealingScheduler(memory, config, inject, parking, counters, submitters, errors)
                        : new GlobalQueueScheduler(memory, config, inject, parking);
                this.watchdog = null;
            }
            this.workerCaches = workerCachesFit(capacity, workerSlots())
                    ? DescCache.allocateArray(memory, "worker descriptor caches", table, workerSlots())
                    : null;
            int refill = submitterRefill(capacity);
            this.submitterCaches = refill >= 2
                    ? DescCache.allocateArray(memory, "submitter descriptor caches", table,
                            SubmitterRegistry.MAX_SUBMITTERS, refill)
                    : null;
            this.times = new WorkerTimes(memory, slots);
            this.depthGauge = new QueueDepthGauge(memory);
            if (timestamps) {
                this.waitHist = new LogHistogram(memory, "queue-wait histograms", slots);
                this.execHist = new LogHistogram(memory, "execution histograms", slots);
                this.wakeHist = new LogHistogram(memory, "wake-latency histograms", slots);
                parking.stampWakesInto(times);
            } else {
                this.waitHist = null;
                this.execHist = null;
                this.wakeHist = null;
            }
            hook.at(ConstructionHook.Stage.STRUCTURES_BUILT, -1, memory);

            hook.at(ConstructionHook.Stage.HEAP_STATE, -1, memory);
            this.tasks = new Runnable[capacity];
            this.groups = new WaitGroup[capacity];
            this.signals = new SlotSignal[capacity];
            this.scratch = new WorkerScratchBuffer[workerSlots()];
            for (int i = 0; i < scratch.length; i++) {
                scratch[i] = new WorkerScratchBuffer(this, memory, i, config.workerScratchCapBytes());
            }
            this.descriptorFree = table::hasFree;
            this.admissionClosed = counters::admissionClosed;

            this.workers = new WorkerThread[workerCount];
            for (int i = 0; i < workerCount; i++) {
                // LANE_EXTENSION watches its default-lane workers' running tasks (Watchdog); nobody else does.
                boolean watched = watchdog != null && i >= config.blockingWorkers();
                WorkerThread w = new WorkerThread(this, i, config.threadNamePrefix() + i, config.daemon(), false,
                        watched);
                w.cpu = cpus.length > 0 ? cpus[i % cpus.length] : -1;
                workers[i] = w;
                parking.register(i, w);
            }
            // Thread.start happens-before everything the worker does, so the fields above are visible to it.
            for (WorkerThread w : workers) {
                hook.at(ConstructionHook.Stage.WORKER_START, w.index, memory);
                w.start();
            }
            hook.at(ConstructionHook.Stage.JFR_HOOK, -1, memory);
            this.jfrStatsHook = PoolEvents.registerPeriodicStats(config.threadNamePrefix(), this::statsSnapshot);
            if (watchdog != null) {
                hook.at(ConstructionHook.Stage.WATCHDOG_START, -1, memory);
                watchdog.start();
            }
        } catch (Throwable failure) {
            abortConstruction(failure); // reads the fields assigned so far; the others are still null
            throw failure; // precise rethrow: only the unchecked failures of the block above
        }
    }

    /**
     * The failure path of the constructor: nothing of a half-built pool may stay alive. Removes the JFR hook
     * (first: no periodic snapshot starts after it), stops and joins every thread already started (the watchdog
     * first, as in shutdown, then the workers: no task was ever accepted, so each exits at its next idle
     * check), joins any overflow worker, then closes the arena, after the last thread that could touch it has
     * ended, under closeLock (a periodic snapshot already in flight finishes first). Fields not assigned yet
     * are null. Every failure of this clean-up is added to {@code failure} as suppressed; the interrupt status
     * is kept.
     */
    private void abortConstruction(Throwable failure) {
        boolean interrupted = false;
        if (jfrStatsHook != null) {
            try {
                jfrStatsHook.close();
            } catch (Throwable t) {
                failure.addSuppressed(t);
            }
        }
        stopWorkers = true; // volatile: each started worker re-checks it after the wake below
        try {
            if (watchdog != null) {
                for (;;) {
                    try {
                        watchdog.stop(Long.MAX_VALUE); // joins its thread (at once if it never started)
                        break;
                    } catch (InterruptedException e) {
                        interrupted = true; // the joins must finish before the arena goes: wait on
                    }
                }
            }
            if (parking != null) {
                parking.wakeAll(); // after the volatile store of stopWorkers, as in shutdown
            }
            if (workers != null) {
                for (WorkerThread w : workers) {
                    interrupted |= w != null && joinUninterruptibly(w); // at once if it never started
                }
            }
            if (watchdog != null) {
                for (;;) {
                    try {
                        watchdog.joinOverflow(Long.MAX_VALUE);
                        break;
                    } catch (InterruptedException e) {
                        interrupted = true;
                    }
                }
            }
        } catch (Throwable t) {
            failure.addSuppressed(t);
        }
        synchronized (closeLock) {
            lifecycle = CLOSED; // volatile: as after close(), for anything that still holds this object
            try {
                memory.close(); // frees every block, the scheduler's releasable ones included
            } catch (Throwable t) {
                failure.addSuppressed(t);
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** Joins {@code t} to its end whatever interrupts come; returns whether one came. */
    private static boolean joinUninterruptibly(Thread t) {
        boolean interrupted = false;
        for (;;) {
            try {
                t.join();
                return interrupted;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
    }

    public PoolConfig config() {
        return config;
    }

    // =====================================================================================================
    // Submit
    // =====================================================================================================

    /** The calling thread as a worker of this pool, or null. */
    WorkerThread currentWorker() {
        return Thread.currentThread() instanceof WorkerThread w && w.core == this ? w : null;
    }

    public int currentWorkerIndex() {
        WorkerThread w = currentWorker();
        return w == null ? -1 : w.index;
    }

    private void checkAccepting() {
        if (lifecycle != RUNNING) {
            throw shutdownRejection();
        }
    }

    /** Counts one refused submission and returns the exception that reports it. */
    private PoolShutdownException rejectedByShutdown() {
        counters.addRejected(1);
        return shutdownRejection();
    }

    private PoolShutdownException shutdownRejection() {
        return new PoolShutdownException(lifecycle == CLOSED ? "pool is closed" : "pool is shutting down");
    }

    /**
     * Detached submit. With {@code wait} false this is one attempt; otherwise it waits for space until
     * {@code deadline} ({@link System#nanoTime()} based, {@link Long#MAX_VALUE} for none). Returns false
     * when the pool stayed full. Throws {@link PoolShutdownException} once shutdown has begun.
     */
    public boolean submit(Runnable task, int flags, WaitGroup group, boolean wait, long deadline) {
        return submit(NO_SUBMITTER, task, flags, group, wait, deadline);
    }

    /**
     * As {@link #submit(Runnable, int, WaitGroup, boolean, long)}, from registered submitter {@code submitter}
     * ({@link #NO_SUBMITTER} for none): the descriptor comes from its cache and the entry goes to its own
     * queue where the topology has one. Called from the submitter's thread only.
     */
    public boolean submit(int submitter, Runnable task, int flags, WaitGroup group, boolean wait, long deadline) {
        checkAccepting();
        if (group != null) {
            group.add(1);
        }
        boolean handedOver = false;
        try {
            final WorkerThread self = currentWorker();
            int idx = acquireFast(self, submitter);
            if (idx < 0) {
                if (self != null && wait && deadline == Long.MAX_VALUE) {
                    if (self.inlineDepth >= MAX_INLINE_DEPTH) {
                        counters.addRejected(1);
                        throw new PoolBusyException("pool full and " + MAX_INLINE_DEPTH + " tasks already run"
                                + " inline on this worker, nested: refusing to recurse deeper (queueCapacity="
                                + capacity + ")");
                    }
                    runInline(self, task, group);
                    handedOver = true;
                    return true;
                }
                idx = wait ? acquireWaiting(deadline) : -1;
                if (idx < 0) {
                    counters.addRejected(1);
                    return false;
                }
            }
            if (!counters.tryAccept(1)) {
                table.unreserve(idx);
                throw rejectedByShutdown();
            }
            handedOver = true;
            enqueue(self, submitter, publish(idx, task, group, flags, false));
            observeDepth(flags);
            scheduler.signalWork(1, flags);
            return true;
        } finally {
            if (group != null && !handedOver) {
                group.done();
            }
        }
    }

    /**
     * Batched detached submit: up to 64 descriptors are accepted with one CAS and pushed with one ring claim.
     * Waits while full. Returns how many of {@code tasks[from..to)} were accepted; stops early (returning the
     * count so far) if shutdown begins after at least one was accepted.
     */
    public int submitBatch(Runnable[] batch, int from, int to, int flags) {
        return submitBatch(NO_SUBMITTER, batch, from, to, flags);
    }

    /** As {@link #submitBatch(Runnable[], int, int, int)}, from registered submitter {@code submitter}. */
    public int submitBatch(int submitter, Runnable[] batch, int from, int to, int flags) {
        checkAccepting();
        // The chunk buffer is borrowed from the thread (allocated once per thread), so a batch submit allocates
        // nothing in steady state; it was 528 B per call before (docs/PERFORMANCE_TRACKING.md). Taken out
        // while in use: a task run inline or while helping may call submitBatch on this thread again, and
        // must get a buffer of its own rather than overwrite our pending entries.
        long[] borrowed = BATCH_BUFFER.get();
        if (borrowed != null) {
            BATCH_BUFFER.set(null);
        } else {
            borrowed = new long[BATCH_CHUNK];
        }
        try {
            return submitBatchChunks(submitter, batch, from, to, flags, borrowed);
        } finally {
            BATCH_BUFFER.set(borrowed);
        }
    }

    private int submitBatchChunks(int submitter, Runnable[] batch, int from, int to, int flags, long[] entries) {
        final WorkerThread self = currentWorker();
        int done = 0;
        int i = from;
        while (i < to) {
            int want = Math.min(entries.length, to - i);
            int got = 0;
            while (got < want) {
                int idx = acquireFast(self, submitter);
                if (idx < 0) {
                    break;
                }
                entries[got++] = idx; // the slot index for now; replaced by its queue entry once published
            }
            if (got == 0) {
                // Full: hand one task to the single path, which waits (or runs inline on a worker).
                try {
                    submit(submitter, batch[i], flags, null, true, Long.MAX_VALUE);
                } catch (PoolShutdownException e) {
                    if (done > 0) {
                        return done;
                    }
                    throw e;
                }
                i++;
                done++;
                continue;
            }
            if (!counters.tryAccept(got)) { // one CAS accepts the whole chunk
                for (int k = 0; k < got; k++) {
                    table.unreserve((int) entries[k]);
                }
                counters.addRejected(to - i);
                if (done > 0) {
                    return done;
                }
                throw shutdownRejection();
            }
            for (int k = 0; k < got; k++) {
                entries[k] = publish((int) entries[k], batch[i + k], null, flags, false);
            }
            int pushed = 0;
            if (self == null && submitter != NO_SUBMITTER) {
                pushed = scheduler.tryEnqueueManyFromSubmitter(submitter, entries, 0, got); // its own queue
            }
            while (pushed < got) {
                int n = scheduler.tryEnqueueMany(self, entries, pushed, got - pushed); // GQ: one tail CAS per run
                if (n == 0) {
                    waitForRingRoom(entries[pushed]); // pushes that one entry
                    n = 1;
                }
                pushed += n;
            }
            observeDepth(flags);
            scheduler.signalWork(got, flags); // GQ: at most one wake per accepted task, stopping when nobody is idle
            i += got;
            done += got;
        }
        return done;
    }

    /** Waitable submit; returns the handle ({@code gen << log2(queueCapacity) | idx}). Waits while full. */
    public long submitWaitable(Runnable task, int flags) {
        return submitWaitable(NO_SUBMITTER, task, flags);
    }

    /** As {@link #submitWaitable(Runnable, int)}, from registered submitter {@code submitter}. */
    public long submitWaitable(int submitter, Runnable task, int flags) {
        checkAccepting();
        final WorkerThread self = currentWorker();
        int idx = acquireFast(self, submitter);
        if (idx < 0) {
            idx = self != null ? acquireByHelping(self) : acquireWaiting(Long.MAX_VALUE);
        }
        if (!counters.tryAccept(1)) {
            table.unreserve(idx);
            throw rejectedByShutdown();
        }
        long entry = publish(idx, task, null, flags, true);
        enqueue(self, submitter, entry);
        observeDepth(flags);
        scheduler.signalWork(1, flags);
        return entry; // the queue entry is the handle (DescriptorTable, "Handles and queue entries")
    }

    /**
     * Writes the references and publishes (gen, QUEUED); returns the queue entry, which is also the task's
     * handle. The last write of the slot by the submitter: once the entry is out, the slot is the worker's
     * (or a canceller's, or an awaiter's).
     */
    private long publish(int idx, Runnable task, WaitGroup group, int flags, boolean waitable) {
        tasks[idx] = task; // plain: published by the release store in table.publish
        groups[idx] = group;
        table.prepare(idx, flags, Timestamps.COMPILED && timestamps ? System.nanoTime() : 0L);
        long gen = table.publish(idx, waitable);
        return table.handle(idx, gen);
    }

    /** Waits for a free descriptor; -1 on deadline; throws once shutdown closes admission. */
    private int acquireWaiting(long deadline) {
        for (;;) {
            int idx = table.acquire();
            if (idx >= 0) {
                return idx;
            }
            if (counters.admissionClosed()) {
                throw rejectedByShutdown();
            }
            if (!space.await(descriptorFree, admissionClosed, deadline) && !counters.admissionClosed()) {
                return -1; // deadline passed
            }
        }
    }

    /**
     * A worker that needs a descriptor for a waitable task helps run queued tasks until one is free. If
     * nothing is queued and nothing frees up, every descriptor is held by running tasks or by finished
     * waitable tasks nobody has awaited yet, and waiting could deadlock the pool: refuse.
     *
     * <p>At the nesting bound it does not help: it waits for a descriptor as an outside submitter does
     * (registered with SpaceWaiters, so releases go to the freelist) for at most the give-up time, then
     * refuses with {@link PoolBusyException}. On a one-worker pool nobody else frees one, so that refusal is
     * certain once the bound is reached with every descriptor taken.
     */
    private int acquireByHelping(WorkerThread self) {
        if (!mayHelp(self)) { // the depth cannot change inside this call: decide once
            int idx = acquireWaiting(System.nanoTime() + HELP_GIVE_UP_NANOS);
            if (idx >= 0) {
                return idx;
            }
            counters.addRejected(1);
            throw new PoolBusyException("queueCapacity=" + capacity + " descriptors are all taken and this worker"
                    + " already runs " + self.inlineDepth + " tasks nested (MAX_INLINE_DEPTH=" + MAX_INLINE_DEPTH
                    + "), so it cannot help: submitWaitable gave up after waiting "
                    + HELP_GIVE_UP_NANOS / 1_000_000 + " ms");
        }
        long giveUp = System.nanoTime() + HELP_GIVE_UP_NANOS;
        for (;;) {
            int idx = acquireFast(self, NO_SUBMITTER);
            if (idx >= 0) {
                return idx;
            }
            if (counters.admissionClosed()) {
                throw rejectedByShutdown();
            }
            if (helpNext(self)) {
                giveUp = System.nanoTime() + HELP_GIVE_UP_NANOS;
            } else if (System.nanoTime() - giveUp > 0) {
                counters.addRejected(1);
                throw new PoolBusyException("queueCapacity=" + capacity + " descriptors are all running or"
                        + " finished-but-not-awaited; submitWaitable from a pool worker cannot wait for one");
            } else {
                Thread.onSpinWait();
            }
        }
    }

    /**
     * One attempt to hand {@code task} to the pool as a detached task counted by {@code group} (which gets its
     * {@code add(1)} here), for a splitter that runs the work itself when this returns false: no descriptor
     * free right now, or admission closed. Never waits, never runs inline, and counts no rejection, since
     * nothing is refused: the caller keeps the work. Used by {@link ParallelFor}.
     */
    boolean tryFork(Runnable task, WaitGroup group) {
        if (lifecycle != RUNNING) {
            return false;
        }
        final WorkerThread self = currentWorker();
        if (self != null && !mayHelp(self)) {
            return false; // its splitter could not help run the fork (helpOnce refuses): keep the work
        }
        int idx = acquireFast(self, NO_SUBMITTER);
        if (idx < 0) {
            return false;
        }
        if (!counters.tryAccept(1)) {
            table.unreserve(idx);
            return false;
        }
        group.add(1); // before publish: the task may finish (and call done) at once
        enqueue(self, NO_SUBMITTER, publish(idx, task, group, 0, false));
        scheduler.signalWork(1);
        return true;
    }

    /**
     * From one of this pool's workers: runs one queued entry nested, if there is one, and returns true; false
     * when nothing is queued for this worker, the worker is at the nesting bound, or the caller is not a
     * worker of this pool. For waits that must help instead of blocking (a worker blocking on work it queued
     * itself could starve it). A caller that may be past the bound must not queue work only it would run:
     * {@link #tryFork} refuses there, so {@link ParallelFor} forks nothing it could not help with.
     */
    boolean helpOnce() {
        final WorkerThread self = currentWorker();
        // false at the nesting bound: the caller waits instead (bounded stack)
        return self != null && mayHelp(self) && helpNext(self);
    }

    /**
     * Helping: runs the next entry {@code self} would take, nested ({@link #runNested}); false when nothing is
     * queued for it. Every helping site (helpOnce, await, acquireByHelping, waitForRingRoom) comes through here,
     * after checking {@link #mayHelp}.
     */
    private boolean helpNext(WorkerThread self) {
        long e = scheduler.next(self);
        if (e == QueueEntry.EMPTY) {
            return false;
        }
        runNested(self, e, null, null);
        return true;
    }

    /** True while {@code self} may help, i.e. run an unrelated entry nested: below {@link #MAX_INLINE_DEPTH}. */
    private static boolean mayHelp(WorkerThread self) {
        return self.inlineDepth < MAX_INLINE_DEPTH;
    }

    /**
     * The one way a worker runs work nested on its own stack: queue entry {@code entry} (helping, or a
     * waiter's own task), or, with {@code inlineTask} non-null, a task submitted into a full pool and run
     * inline (caller-runs) with its {@code inlineGroup}. Counts the level in {@code inlineDepth} and restores
     * it in a finally: should the pool's own bookkeeping throw (an Error: runEntry contains everything a task
     * throws), the worker must not stay counted one level deeper, helping less for the rest of its life.
     *
     * <p>Callers keep to the bound: helping sites (helpOnce, await, acquireByHelping, waitForRingRoom) and
     * inline submits call this only when {@link #mayHelp}; past it only a waiter's own task comes here, which
     * adds one level per level of the user's recursion.
     */
    private void runNested(WorkerThread self, long entry, Runnable inlineTask, WaitGroup inlineGroup) {
        self.inlineDepth++; // owner-only plain field
        try {
            if (inlineTask == null) {
                runEntry(self, entry);
            } else {
                runInlineTask(self, inlineTask, inlineGroup);
            }
        } finally {
            self.inlineDepth--;
        }
    }

    /** True when the calling thread is one of this pool's workers. */
    boolean onWorker() {
        return currentWorker() != null;
    }

    /**
     * Pushes an accepted entry: a registered submitter's own queue first (outside a worker), then the
     * topology's usual place; the ring only fills up when cancelled entries linger in it.
     */
    private void enqueue(WorkerThread self, int submitter, long entry) {
        if (self == null && submitter != NO_SUBMITTER && scheduler.tryEnqueueFromSubmitter(submitter, entry)) {
            return;
        }
        if (!scheduler.tryEnqueue(self, entry)) {
            waitForRingRoom(entry);
        }
    }

    // =====================================================================================================
    // Descriptor caches
    // =====================================================================================================
    //
    // A worker acquires from and releases to its own DescCache (refill / spill in batches, one CAS each); a
    // registered submitter acquires from its own (refills of submitterRefill slots; it never releases, the
    // workers do). Everybody else uses the freelist directly. Cached slots are FREE, and are counted as
    // released when they enter a cache, so taskDescLive stays exact.
    //
    // Hazard: DescriptorTable.hasFree() and SpaceWaiters see only the freelist, never a cache. A producer
    // waiting for space must not wait while the slots sit cached, so:
    //   - a release goes straight to the freelist (+ signal) while SpaceWaiters.hasWaiters();
    //   - a worker flushes its cache when it runs out of work (idle(), before any spin or park);
    //   - a submitter's cache is flushed by Submitter.close (releaseSubmitter);
    //   - purgeWorkerCaches() waits until every worker cache is empty.
    // A waiter that registers just after a release chose the cache still makes progress: its park is capped
    // (SpaceWaiters.PARK_CAP_NANOS), every later release goes to the freelist, and an idle pool has flushed
    // every worker cache. The caches are only built when queueCapacity can spare them (workerCachesFit,
    // submitterRefill), so a small pool behaves exactly as without them.

    /** Marks a submit that comes from no registered submitter. */
    public static final int NO_SUBMITTER = -1;
    /** Worker caches may hold at most 1/WORKER_CACHE_SHARE of the descriptors in all. */
    private static final int WORKER_CACHE_SHARE = 4;

    /** True when every worker may cache a full DescCache and still hold at most a quarter of the table. */
    static boolean workerCachesFit(int capacity, int workerSlots) {
        return (long) capacity >= (long) WORKER_CACHE_SHARE * DescCache.Layout.CAPACITY * workerSlots;
    }

    /** Refill size of a submitter cache: all 64 together hold at most a quarter of the table. */
    static int submitterRefill(int capacity) {
        return Math.min(DescCache.Layout.CAPACITY, capacity / (WORKER_CACHE_SHARE * SubmitterRegistry.MAX_SUBMITTERS));
    }

    /** One descriptor for the caller: its own cache (worker, else registered submitter), else the freelist. */
    private int acquireFast(WorkerThread self, int submitter) {
        if (self != null) {
            DescCache[] wc = workerCaches;
            return wc != null ? wc[self.index].pop() : table.acquire();
        }
        DescCache[] sc = submitterCaches;
        return submitter != NO_SUBMITTER && sc != null ? sc[submitter].pop() : table.acquire();
    }

    /**
     * Gives back a FREE slot the caller owns off the freelist ({@code freed} true: already FREE, e.g. a won
     * waitable release; false: still RUNNING, a detached task that just ran). To {@code self}'s cache unless
     * somebody waits for space, else to the freelist with a signal.
     */
    private void releaseSlot(WorkerThread self, int idx, boolean freed, boolean failed) {
        DescCache[] wc = workerCaches;
        // volatile load of the waiter mask: pairs with SpaceWaiters.register's getAndOr (see the hazard above).
        if (self != null && wc != null && !space.hasWaiters()) {
            if (!freed) {
                table.finishDetachedHeld(idx, failed);
            }
            wc[self.index].push(idx); // plain: our own cache; a full one spills its oldest half with one CAS
            return;
        }
        if (freed) {
            table.pushReleased(idx);
        } else {
            table.finish(idx, failed); // detached: back on the freelist now
        }
        space.signal();
    }

    /** A worker that ran out of work gives its cached slots back, so no waiter waits for them. */
    private void flushWorkerCache(WorkerThread self) {
        DescCache[] wc = workerCaches;
        if (wc != null) {
            DescCache c = wc[self.index];
            if (c.count() != 0) {
                c.drainAll(); // one CAS
                if (space.hasWaiters()) {
                    space.signalAll(); // up to 32 slots at once
                }
            }
        }
    }

    /**
     * Pushes accepted, published {@code entry}, which found no room. A worker below the nesting bound makes
     * room by running (or dropping, when stale) the next entry it would take, nested. At the bound it runs
     * {@code entry} itself instead (caller-runs: one level per level of the user's recursion) rather than
     * wait: on a one-worker pool nobody else would make room, and the queues can be full of stale entries
     * left by awaiters past the bound that ran their own task (see await). An outside thread waits.
     */
    private void waitForRingRoom(long entry) {
        WorkerThread self = currentWorker();
        for (int spins = 0; !scheduler.tryEnqueue(self, entry); spins++) {
            // Help only within the nesting bound: the helped task may submit into the same full ring and help
            // again, and without the bound a fine-grained recursive workload nested thousands deep and
            // overflowed the stack inside the pool's bookkeeping (seen with a million-task tree on
            // GLOBAL_QUEUE: a push fails transiently while a consumer holds a claimed cell).
            if (self != null) {
                if (mayHelp(self)) {
                    if (helpNext(self)) {
                        continue;
                    }
                } else {
                    runNested(self, entry, null, null); // our own task: tryStart's CAS claims it as a pop would
                    return;
                }
            }
            if (spins < 100) {
                Thread.onSpinWait();
            } else {
                LockSupport.parkNanos(this, 50_000L);
            }
        }
    }

    /** Caller-runs for a submit from a worker into a full pool (the caller checked the nesting bound). */
    private void runInline(WorkerThread self, Runnable task, WaitGroup group) {
        if (!counters.tryAccept(1)) {
            throw rejectedByShutdown();
        }
        runNested(self, QueueEntry.EMPTY, task, group);
    }

    /** The body of {@link #runInline}, one level deeper (inside {@link #runNested}). */
    private void runInlineTask(WorkerThread self, Runnable task, WaitGroup group) {
        int w = self.index;
        counters.increment(w, PoolCounters.STARTED);
        counters.increment(w, PoolCounters.INLINE_RUNS);
        Throwable failure = null;
        try {
            task.run(); // inline: the caller's interrupt status is the caller's business, left untouched
        } catch (Throwable t) {
            failure = t;
        }
        if (failure != null) {
            onFailure(task, failure);
        }
        counters.increment(w, failure != null ? PoolCounters.FAILED : PoolCounters.COMPLETED);
        if (group != null) {
            group.done();
        }
    }

    // =====================================================================================================
    // Workers
    // =====================================================================================================

    void workerMain(WorkerThread self) {
        times.born(self.index, System.nanoTime());
        try {
            if (self.overflow) {
                overflowMain(self);
                return;
            }
            for (;;) {
                long e = scheduler.next(self);
                if (e != QueueEntry.EMPTY) {
                    runEntry(self, e);
                    continue;
                }
                if (!timedIdle(self)) {
                    return;
                }
            }
        } finally {
            times.died(self.index, System.nanoTime());
        }
    }

    /** {@link #idle} between two clock reads: the only place busy / idle time is measured (none per task). */
    private boolean timedIdle(WorkerThread self) {
        times.beginIdle(self.index, System.nanoTime());
        try {
            return idle(self);
        } finally {
            times.endIdle(self.index, System.nanoTime());
        }
    }

    /**
     * After a push: feeds the occupancy of the ring it went to (the inject ring, or LANE_EXTENSION's blocking
     * ring: the only variant with a watchdog) to that lane's peak gauge (two volatile loads and a compare; a
     * CAS only for a new peak). Snapshots feed the whole lane's depth, so the peak also covers local queues.
     */
    private void observeDepth(int flags) {
        if ((flags & DescriptorTable.FLAG_LANE_BLOCKING) != 0 && watchdog != null) {
            // LANE_EXTENSION routed it to the blocking ring: that ring's occupancy, the same two volatile loads
            depthGauge.observe(Lane.BLOCKING, scheduler.depth(Lane.BLOCKING));
        } else {
            depthGauge.observe(Lane.DEFAULT, inject.size());
        }
    }

    /**
     * Waits for work according to the idle strategy. Returns false when the worker should exit: stop has
     * been requested, which shutdown only does once every accepted task has ended.
     */
    private boolean idle(WorkerThread self) {
        final int i = self.index;
        flushWorkerCache(self); // before any spin or park: see "Descriptor caches"
        // Counted as searching from here until after the announcement (or until work shows up): the wake rule
        // relies on it (WakeCoalescer), and the first take after it passes the wake on (Scheduler's pass-on).
        scheduler.searching(i, true);
        if (idleStrategy == IdleStrategy.BUSY_SPIN) {
            for (;;) {
                if (scheduler.hasWork(i)) {
                    scheduler.searching(i, false);
                    return true;
                }
                if (stopWorkers) {
                    scheduler.searching(i, false);
                    return false;
                }
                Thread.onSpinWait();
            }
        }
        if (idleStrategy == IdleStrategy.SPIN_THEN_PARK) {
            long until = System.nanoTime() + spinBeforeParkNanos;
            do {
                for (int k = 0; k < 64; k++) {
                    if (scheduler.hasWork(i)) {
                        scheduler.searching(i, false);
                        return true;
                    }
                    Thread.onSpinWait();
                }
            } while (System.nanoTime() - until < 0 && !stopWorkers);
        } else {
            for (int k = 0; k < PARK_SPINS; k++) {
                if (scheduler.hasWork(i)) {
                    scheduler.searching(i, false);
                    return true;
                }
                Thread.onSpinWait();
            }
        }
        parking.announce(i); // step 1 of the handshake (ParkingLot)
        scheduler.searching(i, false); // after the announcement: see WakeCoalescer, "Why no submit is lost"
        // step 2: seq_cst loads of every queue this worker can take from (published entries) and of the stop flag
        if (scheduler.hasWork(i) || stopWorkers) {
            parking.retract(i);
            return !stopWorkers;
        }
        // Nothing published. A ring cell claimed but not yet published (its producer preempted between its tail
        // CAS and its publish, say) is no reason to spin: the producer signals after its publish. Its wake may
        // miss us only where no fence orders that publish before its idle-mask load, so the park is bounded
        // then (Scheduler, "Claimed but unpublished ring cells"). Seq_cst loads of ring head and tail.
        final boolean pending = scheduler.pendingPush(i);
        counters.increment(i, PoolCounters.PARKS);
        Thread.interrupted(); // a pending interrupt would make park() return at once: clear it, do not spin
        WorkerScratchBuffer sb = scratchIdlePurgeNanos > 0 && i < scratch.length ? scratch[i] : null;
        boolean purgeOnTimeout = !pending && sb != null && sb.allocated();
        long parkedAt = purgeOnTimeout ? System.nanoTime() : 0L;
        if (pending) {
            parking.parkNanos(Scheduler.PENDING_PARK_NANOS); // ends early with the producer's wake
        } else if (purgeOnTimeout) {
            parking.parkNanos(scratchIdlePurgeNanos); // a timed park, so an idle worker can free its scratch
        } else {
            parking.park();
        }
        boolean stillAnnounced = parking.retract(i);
        if (pending && stillAnnounced) {
            return !stopWorkers; // the bound ran out (or a spurious return): look again, then park again
        }
        if (purgeOnTimeout && stillAnnounced && System.nanoTime() - parkedAt >= scratchIdlePurgeNanos) {
            sb.purge(); // idle for scratchIdlePurge: give the buffer back (no mark can be open: we are idle)
            return !stopWorkers; // a timeout, not a spurious wakeup
        }
        counters.increment(i, stillAnnounced ? PoolCounters.SPURIOUS_WAKEUPS : PoolCounters.WAKEUPS);
        if (Timestamps.COMPILED && timestamps && !stillAnnounced) {
            long stamp = times.takeWakeStamp(i); // written by the waker just before its unpark
            if (stamp != 0) {
                wakeHist.record(i, System.nanoTime() - stamp);
            }
        }
        return !stopWorkers;
    }

    /**
     * LANE_EXTENSION overflow worker: a default-lane worker until it has found nothing for
     * {@code 2 * watchdogInterval}; then it retires. Its slot is freed on the way out whatever happens.
     */
    private void overflowMain(WorkerThread self) {
        try {
            for (;;) {
                long e = scheduler.next(self);
                if (e != QueueEntry.EMPTY) {
                    runEntry(self, e);
                    continue;
                }
                times.beginIdle(self.index, System.nanoTime()); // as timedIdle: idle time of an overflow slot
                boolean more;
                try {
                    more = overflowIdle(self);
                } finally {
                    times.endIdle(self.index, System.nanoTime());
                }
                if (!more) {
                    return;
                }
            }
        } finally {
            flushWorkerCache(self); // a retiring worker must not strand cached descriptors in its slot
            watchdog.overflowExited(self);
        }
    }

    /**
     * The idle path of an overflow worker: the PARK handshake of {@link #idle} with timed parks (whatever the
     * idle strategy: a spinning overflow worker would never retire). Returns true to look for work again,
     * false to exit (stop requested, or idle for {@code retireNanos}).
     *
     * <p>Retiring loses no entry. The worker retires only after a timed-out park, with its idle bit cleared by
     * its own {@code retract} (a waker that had claimed the bit makes retract return false: woken on purpose,
     * it stays), and after one more seq_cst re-check. A submitter publishes (P) and then loads the idle mask
     * (M). If M precedes the retract R in the total order, either the submitter's claim of the bit precedes R
     * (we were woken: we stay) or it fails after R, and then P &lt; M &lt; R &lt; re-check: the re-check sees
     * the entry. If R precedes M, the submitter never counts on this worker: it wakes another idle worker or
     * finds none idle, exactly as if this worker had never existed, and every base worker re-checks before
     * it parks.
     */
    private boolean overflowIdle(WorkerThread self) {
        flushWorkerCache(self); // before any spin or park, as in idle(): see "Descriptor caches"
        final int i = self.index;
        scheduler.searching(i, true);
        for (int k = 0; k < PARK_SPINS; k++) {
            if (scheduler.hasWork(i)) {
                scheduler.searching(i, false);
                return true;
            }
            Thread.onSpinWait();
        }
        final long retireAt = System.nanoTime() + watchdog.retireNanos();
        boolean searching = true;
        for (;;) {
            parking.announce(i); // step 1 of the handshake (ParkingLot)
            if (searching) {
                scheduler.searching(i, false); // after the announcement, as in idle()
                searching = false;
            }
            if (scheduler.hasWork(i) || stopWorkers) { // step 2
                parking.retract(i);
                return !stopWorkers;
            }
            // a claimed, unpublished ring cell: park, bounded (as in idle())
            boolean pending = scheduler.pendingPush(i);
            long left = retireAt - System.nanoTime();
            if (left > 0) {
                counters.increment(i, PoolCounters.PARKS);
                Thread.interrupted();
                parking.parkNanos(pending ? Math.min(left, Scheduler.PENDING_PARK_NANOS) : left);
            }
            if (!parking.retract(i)) {
                counters.increment(i, PoolCounters.WAKEUPS); // a waker chose this worker: it must look
                return !stopWorkers;
            }
            if (stopWorkers) {
                return false;
            }
            if (System.nanoTime() - retireAt >= 0) {
                return scheduler.hasWork(i); // the last re-check (see above); false: retire
            }
            if (!pending) {
                counters.increment(i, PoolCounters.SPURIOUS_WAKEUPS); // a bounded pending park is no spurious one
            }
        }
    }

    /** Runs one queue entry if it still names a queued task; never throws. */
    void runEntry(WorkerThread self, long entry) {
        final int idx = table.slotOf(entry);
        final long gen = table.genOf(entry);
        final int w = self.index;
        if (!table.tryStart(idx, gen, w)) {
            space.signal(); // a stale or cancelled entry left the ring: a cell is free
            return;
        }
        counters.increment(w, PoolCounters.STARTED);
        Runnable task = tasks[idx]; // plain: published by the release of QUEUED, observed by our CAS
        WaitGroup group = groups[idx];
        long startNanos = 0;
        if (Timestamps.COMPILED && timestamps) {
            startNanos = System.nanoTime();
            table.setStartNanos(idx, startNanos);
            // submitNanos: plain, written before the publishing release store our tryStart CAS observed
            waitHist.record(w, startNanos - table.submitNanos(idx));
        }
        Thread.interrupted(); // a task never inherits an interrupt aimed at an earlier one
        // LANE_EXTENSION default-lane workers publish what they run to the watchdog; false elsewhere
        final boolean watched = self.watched;
        final long outerRun = watched ? watchdog.taskStarted(self) : 0L;
        Throwable failure = null;
        try {
            task.run();
        } catch (Throwable t) {
            failure = t;
        }
        if (watched) {
            watchdog.taskEnded(self, outerRun);
        }
        Thread.interrupted(); // nor does the worker keep one a task left behind
        if (Timestamps.COMPILED && timestamps) {
            long endNanos = System.nanoTime();
            table.setEndNanos(idx, endNanos);
            execHist.record(w, endNanos - startNanos);
        }
        if (Timestamps.COMPILED && timestamps && --self.latencySampleCountdown <= 0) { // owner-only; slot still ours
            sampleLatency(self, idx);
        }
        tasks[idx] = null; // we still own the slot (RUNNING): clear its references before we give it up
        groups[idx] = null;
        if (failure != null) {
            onFailure(task, failure);
        }
        long outcomeCounter = failure != null ? PoolCounters.FAILED : PoolCounters.COMPLETED;
        if (isWaitableRunning(idx)) {
            counters.increment(w, outcomeCounter); // before the awaiter can return
            table.finishWaitable(idx, failure); // keeps the failure for the awaits of this handle, until reuse
            wakeSlot(idx);
        } else {
            releaseSlot(self, idx, false, failure != null); // detached: FREE now, cached or on the freelist
            counters.increment(w, PoolCounters.RELEASED);
            counters.increment(w, outcomeCounter); // after the release: see "Policies"
        }
        if (group != null) {
            try {
                group.done();
            } catch (RuntimeException misuse) {
                errors.record(misuse); // the user drove the group negative; contain it
            }
        }
    }

    /** JFR TaskLatency for one task in {@link PoolEvents#LATENCY_SAMPLE_EVERY} (TimestampMode.FULL only). */
    private void sampleLatency(WorkerThread self, int idx) {
        self.latencySampleCountdown = PoolEvents.LATENCY_SAMPLE_EVERY;
        if (PoolEvents.taskLatencyEnabled()) {
            long started = table.startNanos(idx);
            try {
                PoolEvents.taskLatency(config.threadNamePrefix(), self.index, started - table.submitNanos(idx),
                        table.endNanos(idx) - started);
            } catch (Throwable sampleFailed) {
                // dropped, as in onFailure: runEntry publishes the task's outcome after this
            }
        }
    }

    private boolean isWaitableRunning(int idx) {
        return DescriptorTable.waitable(table.ctlAcquire(idx));
    }

    /**
     * Reports a task's failure: recentErrors, then the error handler. Never throws. In runEntry it runs after
     * the task and before the slot's outcome is published (finish or release, counters, wake, group), and a
     * Throwable out of here would skip those and leave the slot RUNNING for good: a task that failed with a
     * StackOverflowError leaves little stack, and the handler's own failure may be an Error too.
     */
    private void onFailure(Runnable task, Throwable t) {
        try {
            errors.record(t);
            TaskErrorHandler h = errorHandler;
            if (h != null) {
                try {
                    h.onError(task, t);
                } catch (Throwable handlerFailure) {
                    errors.recordHandlerFailure(); // contained: never kills the worker
                }
            }
        } catch (Throwable reportingFailed) {
            // dropped: the report is lost, the outcome that follows is what must not be
        }
    }

    private void wakeSlot(int idx) {
        // volatile load: the second half of the finish/await Dekker pair (see SlotSignal)
        SlotSignal s = (SlotSignal) SIGNALS.getVolatile(signals, idx);
        if (s != null) {
            s.wake();
        }
    }

    private SlotSignal signalFor(int idx) {
        SlotSignal s = (SlotSignal) SIGNALS.getVolatile(signals, idx);
        if (s == null) {
            SlotSignal fresh = new SlotSignal(table, idx);
            // CAS (volatile): publishes the signal before the awaiter's re-check of the control word
            s = (SlotSignal) SIGNALS.compareAndExchange(signals, idx, (SlotSignal) null, fresh);
            if (s == null) {
                s = fresh;
            }
        }
        return s;
    }

    // =====================================================================================================
    // Handles
    // =====================================================================================================

    /** The slot of a handle of this pool's form; {@link InvalidHandleException}, naming the ranges, if not. */
    private int checkHandle(long handle) {
        if (!table.isValidHandle(handle)) {
            throw new InvalidHandleException("not a task handle of this pool: handle=0x" + Long.toHexString(handle)
                    + " (a handle is gen << " + table.idxBits() + " | slot, with slot in [0, " + capacity
                    + ") and gen in [1, " + table.maxGen() + "])");
        }
        return table.slotOf(handle);
    }

    /** The exception for a handle whose generation is not its slot's current one ({@code c}). */
    private static InvalidHandleException staleHandle(long handle, int idx, long gen, long c) {
        long slotGen = DescriptorTable.gen(c);
        String what = DescriptorTable.state(c) == DescriptorTable.RETIRED
                ? "stale handle 0x" + Long.toHexString(handle) + ": slot " + idx
                        + " has been retired (its generations are used up)"
                : slotGen > gen ? "stale handle 0x" + Long.toHexString(handle) + ": slot " + idx + " has been reused"
                : "not a task handle of this pool: handle=0x" + Long.toHexString(handle) + " has not been issued"
                        + " (slot " + idx + " has not reached that generation)";
        return new InvalidHandleException(what + " (handle gen " + gen + ", slot gen " + slotGen + ")");
    }

    /**
     * Waits for the task of {@code handle} for at most {@code nanos} ({@link Long#MAX_VALUE}: no limit).
     * Returns true when it completed, false on timeout; throws for failure, cancellation or a stale handle.
     * The first await of a finished task releases its descriptor (exactly once among concurrent awaiters).
     * Called from a worker of this pool, it runs queued tasks while it waits (helping), so awaiting a child
     * task cannot deadlock the pool.
     */
    public boolean await(long handle, long nanos) throws InterruptedException {
        ensureNotClosed();
        final int idx = checkHandle(handle);
        final long gen = table.genOf(handle);
        final long deadline = nanos == Long.MAX_VALUE ? Long.MAX_VALUE : System.nanoTime() + nanos;
        final WorkerThread self = currentWorker();
        for (;;) {
            long c = table.ctlVolatile(idx);
            if (DescriptorTable.gen(c) != gen) {
                throw staleHandle(handle, idx, gen, c);
            }
            if (!DescriptorTable.waitable(c)) {
                throw new InvalidHandleException("not a waitable handle: 0x" + Long.toHexString(handle));
            }
            int st = DescriptorTable.state(c);
            switch (st) {
                case DescriptorTable.COMPLETED, DescriptorTable.FAILED, DescriptorTable.CANCELLED -> {
                    long won = table.tryReleaseWaitable(idx, gen);
                    if (won != 0) {
                        // Ours now (FREE, not yet on the freelist): clear what must be cleared before the
                        // release. A cancelled task's reference is ours to drop: its canceller writes nothing
                        // after its CAS. The failure stays in the table for later awaits, until reuse.
                        int st0 = DescriptorTable.state(won);
                        if (st0 == DescriptorTable.CANCELLED) {
                            tasks[idx] = null;
                        }
                        Throwable cause = table.failure(idx);
                        releaseSlot(self, idx, true, false); // a helping worker keeps it in its cache
                        counters.addReleasedOther(1);
                        return report(st0, cause, handle);
                    }
                    // lost to a concurrent awaiter: re-read, now FREE with the outcome
                }
                case DescriptorTable.FREE -> {
                    // Released by an earlier await: report the same outcome (and cause) while the handle is
                    // valid, i.e. until the slot's next acquire.
                    int outcome = DescriptorTable.outcome(c);
                    if (outcome != DescriptorTable.FAILED) {
                        return report(outcome, null, handle);
                    }
                    Throwable cause = table.failureOf(idx, gen); // the seqlock read (DescriptorTable)
                    if (cause != null) {
                        return report(outcome, cause, handle);
                    }
                    // the slot moved on while we read: re-read, and the handle is reported stale
                }
                default -> {
                    long remaining = deadline == Long.MAX_VALUE ? Long.MAX_VALUE : deadline - System.nanoTime();
                    if (remaining <= 0) {
                        return false;
                    }
                    if (self != null) {
                        // A worker that blocked here could starve the very task it waits for (think of a
                        // one-worker pool): help by running queued work, nested, and block only briefly
                        // between looks, since the awaited task may be running on another worker.
                        if (mayHelp(self)) {
                            if (helpNext(self)) {
                                continue;
                            }
                            signalFor(idx).await(gen, Math.min(remaining, HELP_POLL_NANOS));
                        } else if (st == DescriptorTable.QUEUED) {
                            // At the nesting bound: help no more, but run the awaited task itself while
                            // nobody has started it (tryStart's CAS, exactly as a worker's pop would; its queue
                            // entry is dropped as stale when popped). One level per level of the user's
                            // recursion, and no deadlock on a small pool: we never block on a queued task.
                            runNested(self, handle, null, null);
                        } else {
                            // At the bound and RUNNING elsewhere: block until it ends (or the deadline).
                            signalFor(idx).await(gen, remaining);
                        }
                    } else if (!signalFor(idx).await(gen, remaining)) {
                        return false;
                    }
                    ensureNotClosed();
                }
            }
        }
    }

    private static boolean report(int outcome, Throwable cause, long handle) {
        switch (outcome) {
            case DescriptorTable.COMPLETED:
                return true;
            case DescriptorTable.FAILED:
                throw new TaskFailedException("task 0x" + Long.toHexString(handle) + " failed: " + cause, cause);
            default:
                throw new TaskCancelledException("task 0x" + Long.toHexString(handle) + " was cancelled");
        }
    }

    /** Cancels a waitable task while it is still queued; true only if this call cancelled it. */
    public boolean cancel(long handle) {
        ensureNotClosed();
        int idx = checkHandle(handle);
        long gen = table.genOf(handle);
        long c = table.ctlAcquire(idx);
        if (DescriptorTable.gen(c) != gen) {
            throw staleHandle(handle, idx, gen, c);
        }
        if (table.tryCancel(idx, gen, true) == 0) {
            return false;
        }
        // The slot is no longer ours to write: an awaiter may already have seen CANCELLED, released it, and the
        // next submit reused it. The releasing awaiter clears the task reference (issue 13, item 1).
        IntConsumer hook = cancelledHookForTest;
        if (hook != null) {
            hook.accept(idx);
        }
        counters.addCancelled(1);
        wakeSlot(idx); // the signal belongs to the slot, not to a generation: at worst a spurious wake-up
        return true;
    }

    // =====================================================================================================
    // Submitters
    // =====================================================================================================

    /** Claims one of the 64 submitter slots; {@link PoolBusyException} when all are taken. */
    public int registerSubmitter() {
        checkAccepting();
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
        if (lifecycle == CLOSED) {
            return; // the registry went with the arena
        }
        DescCache[] sc = submitterCaches;
        if (sc != null && sc[slot].count() != 0) {
            sc[slot].drainAll(); // one CAS
            space.signalAll();
        }
        scheduler.closeSubmitter(slot); // WORK_STEALING: its queue's entries move to the inject ring
        submitters.release(slot);
    }

    // =====================================================================================================
    // Shutdown and close
    // =====================================================================================================

    /**
     * Stops the pool as described in {@link ShutdownMode}; returns true when it has fully stopped (every
     * worker joined) before the deadline. Idempotent and safe from several threads at once; a later
     * CANCEL_PENDING call upgrades an earlier DRAIN.
     */
    public boolean shutdown(ShutdownMode mode, long nanos) throws InterruptedException {
        if (currentWorker() != null) {
            throw new IllegalStateException("shutdown() called from a worker of this pool would wait for itself;"
                    + " call it from another thread");
        }
        boolean open = enterArena(); // counted in while it may read the arena: see enterArena
        try {
            return !open || shutdownCounted(mode, nanos); // TERMINATED or CLOSED: nothing left to do
        } finally {
            exitArena();
        }
    }

    /**
     * Counts the calling thread in as one that may touch the arena on a lifecycle path, and says whether it
     * may: false once the pool is TERMINATED (every accepted task has ended and every worker is joined, so
     * nothing is left for such a path to do, and the arena may be freed at any moment). Always paired with
     * {@link #exitArena} in a finally block, whatever it returned. Every public path that may touch the arena
     * after admission closed, concurrently with {@link #close}, goes through here: {@link #shutdown},
     * {@link #closeAdmission}, {@link #cancelQueuedNow}. (Submits, awaits and handle calls racing close get
     * the FFM "closed" exception instead, which the facade reports as a closed pool.)
     *
     * <p>Why it is enough: the getAndAdd here, the TERMINATED CAS in shutdownCounted and close()'s load of the
     * count are all seq_cst, so they are in one total order. If close()'s load reads a count without us, our
     * increment comes after that load, hence after the TERMINATED CAS that precedes it, and our lifecycle load
     * below (after the increment) reads TERMINATED or CLOSED: we return false and touch nothing. Otherwise
     * close() sees us and waits until our {@link #exitArena}.
     */
    private boolean enterArena() {
        // getAndAdd (seq_cst): pairs with close()'s volatile load of the count, as argued above.
        ARENA_CALLERS.getAndAdd(this, 1);
        return lifecycle < TERMINATED; // volatile load, after the increment: see above
    }

    /** The end of an {@link #enterArena} region: our last arena access happens-before close() reads zero. */
    private void exitArena() {
        // getAndAdd (seq_cst, so also a release): pairs with close()'s volatile load that reads the count.
        ARENA_CALLERS.getAndAdd(this, -1);
    }

    /** {@link #shutdown} inside its {@link #enterArena} region. */
    private boolean shutdownCounted(ShutdownMode mode, long nanos) throws InterruptedException {
        final long deadline = nanos == Long.MAX_VALUE ? Long.MAX_VALUE : System.nanoTime() + nanos;
        closeAdmissionCounted(mode);
        if (lifecycle >= TERMINATED) {
            return true;
        }
        long accepted;
        while ((accepted = acceptedAtClose) < 0) {
            Thread.onSpinWait(); // the first caller is between its CAS and its store
        }
        long pollNanos = 10_000L;
        for (;;) {
            if (cancelRequested) {
                sweepQueued();
            }
            if (finishedOrCancelled() >= accepted) {
                break;
            }
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            long remaining = deadline == Long.MAX_VALUE ? Long.MAX_VALUE : deadline - System.nanoTime();
            if (remaining <= 0) {
                return false;
            }
            LockSupport.parkNanos(this, Math.min(remaining, pollNanos));
            pollNanos = Math.min(pollNanos * 2, SHUTDOWN_POLL_NANOS);
        }
        shutdownPhase(PoolEvents.Phase.TASKS_ENDED, mode, accepted);
        // LANE_EXTENSION: no spawn after this point, and the overflow thread array is stable (join)
        if (watchdog != null && !watchdog.stop(deadline)) {
            return false;
        }
        stopWorkers = true;
        parking.wakeAll(); // after the volatile store: each worker re-checks stopWorkers after waking
        for (WorkerThread w : workers) {
            long remaining = deadline == Long.MAX_VALUE ? 0 : deadline - System.nanoTime();
            if (deadline != Long.MAX_VALUE && remaining <= 0) {
                return false;
            }
            w.join(deadline == Long.MAX_VALUE ? 0 : Math.max(1, remaining / 1_000_000L));
            if (w.isAlive()) {
                return false;
            }
        }
        shutdownPhase(PoolEvents.Phase.WORKERS_JOINED, mode, accepted); // before TERMINATED: see shutdownPhase
        if (watchdog != null && !watchdog.joinOverflow(deadline)) { // every overflow thread, live or retired
            return false;
        }
        LIFECYCLE.compareAndSet(this, SHUTTING_DOWN, TERMINATED);
        return true;
    }

    /**
     * The non-blocking first half of {@link #shutdown}: refuses submissions from now on (a later CANCEL_PENDING
     * upgrades an earlier DRAIN). Safe from any thread, a worker of this pool included. Someone must still call
     * {@link #shutdown} to let the workers stop and reach TERMINATED. Counted as an arena caller (it may
     * run while another thread closes the pool: the ExecutorService view's shutdown()); a no-op once
     * TERMINATED.
     */
    public void closeAdmission(ShutdownMode mode) {
        boolean open = enterArena();
        try {
            if (open) {
                closeAdmissionCounted(mode);
            }
        } finally {
            exitArena();
        }
    }

    /** {@link #closeAdmission} inside an {@link #enterArena} region (it writes counters and space waiters). */
    private void closeAdmissionCounted(ShutdownMode mode) {
        if (mode == ShutdownMode.CANCEL_PENDING) {
            cancelRequested = true;
        }
        if (LIFECYCLE.compareAndSet(this, RUNNING, SHUTTING_DOWN)) {
            shutdownPhase(PoolEvents.Phase.BEGIN, mode, -1);
            long accepted = counters.closeAdmission(); // from here on every submit is refused
            shutdownPhase(PoolEvents.Phase.ADMISSION_CLOSED, mode, accepted); // before others can read it
            acceptedAtClose = accepted;
            space.signalAll(); // submitters waiting for space re-check admission and give up
        }
    }

    /**
     * Installs the receiver of every task a CANCEL_PENDING sweep cancels (called on the sweeping thread, once
     * per task, after the task's accounting). Set once, before shutdown; null for none.
     */
    public void onSweptTask(Consumer<Runnable> sink) {
        this.sweptSink = sink;
    }

    /**
     * CANCEL_PENDING without waiting: closes admission and sweeps what is queued now, from the calling thread
     * (which may be one of this pool's workers). Entries whose submit is still between acceptance and push are
     * swept by the next {@link #shutdown} call. Safe while another thread closes the pool: the sweep runs
     * inside an {@link #enterArena} region, so close() frees the queues only after it; once the pool is
     * TERMINATED nothing is queued and the call returns without touching the arena.
     */
    public void cancelQueuedNow() {
        boolean open = enterArena();
        try {
            if (open) {
                closeAdmissionCounted(ShutdownMode.CANCEL_PENDING);
                sweepQueued(); // reads the queues and the table: close() waits for our exitArena
            }
        } finally {
            exitArena();
        }
    }

    /**
     * Interrupts every worker (best effort, for {@code ExecutorService.shutdownNow}): a running task sees the
     * interrupt; a worker between tasks clears it before its next task (see runEntry), an idle one re-parks.
     */
    public void interruptWorkers() {
        for (WorkerThread w : workers) {
            w.interrupt();
        }
    }

    /** A worker could not apply its start-up settings (CPU pinning); it runs on, and the failure is kept. */
    void workerSetupFailed(Throwable t) {
        errors.record(t);
    }

    private void closeJfrHook() {
        try {
            jfrStatsHook.close();
        } catch (Exception e) {
            errors.record(e); // JFR bookkeeping must never fail a close; keep it visible
        }
    }

    /**
     * Emits JFR ShutdownPhase {@code p} if nobody has yet; phases are strictly ordered because every thread
     * tries each phase before the next one (and ADMISSION_CLOSED before anyone can read {@code accepted}).
     */
    private void shutdownPhase(PoolEvents.Phase p, ShutdownMode mode, long accepted) {
        if (!shutdownPhases.compareAndSet(p.ordinal(), p.ordinal() + 1)) {
            return;
        }
        boolean counts = p.ordinal() >= PoolEvents.Phase.TASKS_ENDED.ordinal();
        String m = cancelRequested ? ShutdownMode.CANCEL_PENDING.name() : mode.name();
        PoolEvents.shutdownPhase(config.threadNamePrefix(), p, m, accepted,
                counts ? counters.sum(PoolCounters.COMPLETED) + counters.sum(PoolCounters.FAILED) : -1,
                counts ? counters.cancelled() : -1, -1);
    }

    private long finishedOrCancelled() {
        return counters.sum(PoolCounters.COMPLETED) + counters.sum(PoolCounters.FAILED) + counters.cancelled();
    }

    /** CANCEL_PENDING: pops every entry and cancels what is still queued; workers may race us per entry. */
    private void sweepQueued() {
        long e;
        while ((e = scheduler.drainOne()) != QueueEntry.EMPTY) {
            int idx = table.slotOf(e);
            long gen = table.genOf(e);
            // Read before the CAS, kept only if it wins: while (gen, QUEUED) holds, the references are the ones
            // the submitter published with this entry (our pop acquired them), and nothing can overwrite them
            // before the slot leaves (gen, QUEUED). Once our CAS wins, a cancelled waitable is its awaiter's.
            Runnable task = tasks[idx];
            WaitGroup group = groups[idx];
            long won = table.tryCancel(idx, gen, false);
            if (won == 0) {
                space.signal();
                continue; // a worker started it first, or it was stale
            }
            IntConsumer hook = cancelledHookForTest;
            if (hook != null) {
                hook.accept(idx);
            }
            // Decide from the word our CAS replaced, never from a re-read: the awaiter of a waitable may already
            // have released the slot and a submitter reserved it (issue 13, item 2).
            if (DescriptorTable.waitable(won)) {
                counters.addCancelled(1);
                wakeSlot(idx); // the awaiter releases the slot (and clears its task) and sees TaskCancelledException
            } else {
                tasks[idx] = null; // a cancelled detached slot is ours alone: clear, then release
                groups[idx] = null;
                table.releaseCancelledDetached(idx);
                counters.addReleasedOther(1);
                counters.addCancelled(1); // after the release, as for completed tasks
            }
            if (group != null) {
                group.done();
            }
            Consumer<Runnable> sink = sweptSink;
            if (sink != null && task != null) {
                sink.accept(task);
            }
        }
    }

    /** shutdown(DRAIN) without a deadline, then the final snapshot, then the arena is closed. Idempotent. */
    public void close() throws InterruptedException {
        if (currentWorker() != null) {
            throw new IllegalStateException("close() called from a worker of this pool would wait for itself;"
                    + " call it from another thread");
        }
        shutdown(ShutdownMode.DRAIN, Long.MAX_VALUE);
        synchronized (closeLock) {
            if (lifecycle == CLOSED) {
                return;
            }
            // Another thread may still be inside a lifecycle path (shutdown, closeAdmission, cancelQueuedNow's
            // sweep) that entered before TERMINATED and is about to touch the arena: wait for it before the arena
            // goes (it returns promptly: every task has ended, the workers are joined, a sweep finds nothing
            // left to cancel). Volatile load, after our shutdown's TERMINATED CAS; pairs with enterArena's and
            // exitArena's getAndAdd (see enterArena for the argument).
            while ((int) ARENA_CALLERS.getVolatile(this) != 0) {
                LockSupport.parkNanos(this, 100_000L);
            }
            PoolStats last = snapshot();
            lifecycle = CLOSED; // volatile: every later public call sees it before touching the arena
            // Wake any awaiter still parked on a slot so it re-checks and sees the pool closed.
            for (SlotSignal s : signals) {
                if (s != null) {
                    s.wake();
                }
            }
            scheduler.close(); // frees the grown Chase-Lev arrays, if any, before the arena goes
            memory.close();
            long[] t = memory.totals();
            closeJfrHook();
            if (shutdownPhases.compareAndSet(PoolEvents.Phase.ARENA_CLOSED.ordinal(),
                    PoolEvents.Phase.ARENA_CLOSED.ordinal() + 1)) {
                PoolEvents.shutdownPhase(config.threadNamePrefix(), PoolEvents.Phase.ARENA_CLOSED,
                        cancelRequested ? "CANCEL_PENDING" : "DRAIN", acceptedAtClose, last.completed() + last.failed(),
                        last.cancelled(), t[0] - t[1]);
            }
            List<WorkerStats> closedWorkers = new ArrayList<>(last.workers().size());
            for (WorkerStats w : last.workers()) { // the scratch buffers went with the arena
                closedWorkers.add(new WorkerStats(w.index(), w.started(), w.completed(), w.failed(), w.inlineRuns(),
                        w.parks(), w.wakeups(), w.busyNanos(), w.idleNanos(), w.steals(), w.stealFailures(), 0, 0,
                        w.wakeLatency()));
            }
            finalStats = new PoolStats(last.submitted(), last.started(), last.completed(), last.cancelled(),
                    last.failed(), last.rejected(), last.queuedTasks(), last.activeTasks(), last.taskDescLive(),
                    t[0], t[1], t[0] - t[1], t[2], last.parks(), last.wakeups(), last.steals(),
                    last.stealFailures(), last.inlineRuns(), 0, closedWorkers, last.stallsSeen(),
                    last.overflowSpawned(), last.overflowRetired(), 0, last.accountingSkewDetected(),
                    closedLanes(last), last.latency(), 0);
        }
    }

    public boolean isClosed() {
        return lifecycle == CLOSED;
    }

    public boolean isShutdown() {
        return lifecycle != RUNNING;
    }

    public boolean isTerminated() {
        return lifecycle >= TERMINATED;
    }

    public void ensureNotClosed() {
        if (lifecycle == CLOSED) {
            throw new IllegalStateException("pool is closed");
        }
    }

    // =====================================================================================================
    // Stats
    // =====================================================================================================

    public PoolStats statsSnapshot() {
        PoolStats fin = finalStats;
        if (fin != null) {
            return fin;
        }
        synchronized (closeLock) {
            fin = finalStats;
            return fin != null ? fin : snapshot();
        }
    }

    /**
     * Reads counters in the order that keeps the snapshot's invariants: per-worker outcome counters first,
     * then started, then releases, then the global words, SUBMITTED last. Each counter is bumped after the
     * ones read after it, so finished <= started <= submitted and taskDescLive >= 0 hold.
     */
    private PoolStats snapshot() {
        int n = slots; // every slot: overflow workers' counters must be summed too
        long[] completed = new long[n];
        long[] failed = new long[n];
        long[] started = new long[n];
        long[] inline = new long[n];
        long[] released = new long[n];
        long[] parks = new long[n];
        long[] wakeups = new long[n];
        long[] steals = new long[n];
        long[] stealFailures = new long[n];
        long sumSteals = 0, sumStealFailures = 0;
        for (int w = 0; w < n; w++) {
            completed[w] = counters.get(w, PoolCounters.COMPLETED);
            failed[w] = counters.get(w, PoolCounters.FAILED);
        }
        long cancelled = counters.cancelled();
        for (int w = 0; w < n; w++) {
            started[w] = counters.get(w, PoolCounters.STARTED);
            inline[w] = counters.get(w, PoolCounters.INLINE_RUNS);
            released[w] = counters.get(w, PoolCounters.RELEASED);
            parks[w] = counters.get(w, PoolCounters.PARKS);
            wakeups[w] = counters.get(w, PoolCounters.WAKEUPS);
            steals[w] = counters.get(w, PoolCounters.STEALS);
            stealFailures[w] = counters.get(w, PoolCounters.STEAL_FAILURES);
            sumSteals += steals[w];
            sumStealFailures += stealFailures[w];
        }
        long releasedOther = counters.releasedOther();
        long rejected = counters.rejected();
        long stalls = counters.stallsSeen();
        long overflowRetired = counters.overflowRetired(); // before spawned: overflowLive is never negative
        long overflowSpawned = counters.overflowSpawned();
        long idle = parking.idleMask();
        long submitted = counters.submitted();
        // Gauges after the counters: they take part in no invariant, so their place in the order is free.
        long now = System.nanoTime();
        List<LaneStats> lanes = laneStats();
        LatencyStats latency = latencyStats();
        long scratchTotal = 0;

        long sumCompleted = 0, sumFailed = 0, sumStarted = 0, sumInline = 0, sumReleased = 0, sumParks = 0,
                sumWakeups = 0;
        List<WorkerStats> per = new ArrayList<>(n);
        for (int w = 0; w < n; w++) {
            sumCompleted += completed[w];
            sumFailed += failed[w];
            sumStarted += started[w];
            sumInline += inline[w];
            sumReleased += released[w];
            sumParks += parks[w];
            sumWakeups += wakeups[w];
            long[] busyIdle = times.busyIdle(w, now);
            long scratchBytes = w < scratch.length ? scratch[w].countedBytes() : 0;
            scratchTotal += scratchBytes;
            LatencySummary wake = wakeHist != null ? wakeHist.merge(w, w + 1).summary() : LatencySummary.EMPTY;
            per.add(new WorkerStats(w, started[w], completed[w], failed[w], inline[w], parks[w], wakeups[w],
                    busyIdle[0], busyIdle[1], steals[w], stealFailures[w], scheduler.localQueueLength(w),
                    scratchBytes, wake));
        }
        long finished = sumCompleted + sumFailed;
        long queued = submitted - sumStarted - cancelled;
        long active = sumStarted - finished;
        long descLive = submitted - sumInline - sumReleased - releasedOther;
        long[] mem = memory.totals();

        boolean allIdle = Long.bitCount(idle) == workerCount + (overflowSpawned - overflowRetired); // live ones
        boolean candidate = queued < 0 || active < 0 || descLive < 0 || descLive > capacity
                || (active > 0 && allIdle);
        boolean skew;
        synchronized (skewLock) {
            skew = candidate && prevSkewCandidate && prevStarted == sumStarted && prevFinished == finished;
            prevSkewCandidate = candidate;
            prevStarted = sumStarted;
            prevFinished = finished;
        }
        return new PoolStats(submitted, sumStarted, sumCompleted, cancelled, sumFailed, rejected, queued, active,
                descLive, mem[0], mem[1], mem[0] - mem[1], mem[2], sumParks, sumWakeups, sumSteals, sumStealFailures, sumInline,
                Long.bitCount(idle), per, stalls, overflowSpawned, overflowRetired, overflowSpawned - overflowRetired,
                skew, lanes, latency, scratchTotal);
    }

    /** Depth and peak per lane; each snapshot also feeds the whole lane's depth to the peak gauge. */
    private List<LaneStats> laneStats() {
        Lane[] all = Lane.values();
        List<LaneStats> out = new ArrayList<>(all.length);
        for (Lane lane : all) {
            long depth = scheduler.depth(lane);
            out.add(new LaneStats(lane, depth, depthGauge.observe(lane, depth)));
        }
        return out;
    }

    /** The final snapshot's lanes: nothing is queued once closed; the peaks stay. */
    private static List<LaneStats> closedLanes(PoolStats last) {
        List<LaneStats> out = new ArrayList<>(last.lanes().size());
        for (LaneStats l : last.lanes()) {
            out.add(new LaneStats(l.lane(), 0, l.peakDepth()));
        }
        return out;
    }

    private LatencyStats latencyStats() {
        if (waitHist == null) {
            return LatencyStats.DISABLED;
        }
        return new LatencyStats(true, waitHist.merge().summary(), execHist.merge().summary(),
                wakeHist.merge().summary());
    }

    /** Recent task failures, oldest first, bounded by {@code recentErrorCapacity}. */
    public List<Throwable> recentErrors() {
        return errors.snapshot();
    }

    public long errorHandlerFailures() {
        return errors.handlerFailures();
    }

    /** Quiescent-only maintenance: nothing may be queued or running. */
    public void purgeWorkerCaches() {
        ensureNotClosed();
        PoolStats s = snapshot();
        if (s.activeTasks() != 0 || s.queuedTasks() != 0) {
            throw new PoolBusyException("purgeWorkerCaches() needs a quiescent pool: activeTasks="
                    + s.activeTasks() + ", queuedTasks=" + s.queuedTasks());
        }
        purgeScratchBuffers();
        awaitWorkerCachesFlushed();
    }

    /** purgeWorkerCaches, descriptor part: waits until every worker has flushed its descriptor cache. */
    private void awaitWorkerCachesFlushed() {
        // Each worker flushes its own cache when it runs out of work (idle()); only its thread may touch it, so
        // wait for that instead of draining from here. A quiescent pool's workers get there at once.
        DescCache[] wc = workerCaches;
        if (wc == null) {
            return;
        }
        long deadline = System.nanoTime() + PURGE_WAIT_NANOS;
        for (int w = 0; w < wc.length; w++) {
            while (wc[w].countAcquire() != 0) { // acquire: pairs with drainAll's release store of the count
                if (System.nanoTime() - deadline > 0) {
                    throw new PoolBusyException("purgeWorkerCaches(): worker " + w + " still holds "
                            + wc[w].countAcquire() + " cached descriptors after " + PURGE_WAIT_NANOS / 1_000_000
                            + " ms; is work still being submitted?");
                }
                LockSupport.parkNanos(this, HELP_POLL_NANOS);
            }
        }
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

    /** White-box hook for tests in this package: worker {@code w}'s scratch buffer. */
    WorkerScratchBuffer scratchBufferForTest(int w) {
        return scratch[w];
    }

    /**
     * White-box hook for tests in this package: runs on the cancelling thread right after it won a
     * QUEUED -> CANCELLED CAS ({@link #cancel}, the CANCEL_PENDING sweep), with the slot. Null in production.
     */
    IntConsumer cancelledHookForTest;

    /** White-box hook for tests in this package: the descriptor table. */
    DescriptorTable tableForTest() {
        return table;
    }

    /** White-box hook for tests in this package: the raw counters. */
    PoolCounters countersForTest() {
        return counters;
    }

    /** How long purgeWorkerCaches waits for every worker to flush its cache. */
    private static final long PURGE_WAIT_NANOS = 5_000_000_000L;

    /** The pool's memory map: every live block with its purpose and counted size. */
    public List<PoolMemory.BlockInfo> memoryMap() {
        return memory.memoryMap();
    }

    int workerCount() {
        return workerCount;
    }

    /**
     * Worker indices this pool may ever use: the size of every per-worker array and counter block.
     * {@code maxThreads}; LANE_EXTENSION adds its overflow workers here (at most 64 in all).
     */
    public int workerSlots() {
        return slots;
    }

    /** {@link #workerSlots()} of a pool built from {@code config}. */
    public static int workerSlots(PoolConfig config) {
        return config.workerSlots();
    }
}
