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
import dev.threadpool.internal.memory.PoolMemory;
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
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * The engine behind {@link dev.threadpool.ThreadPool}: submit pipeline, worker loop, awaiting, shutdown and
 * stats, for the {@code GLOBAL_QUEUE} variant.
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
    private static final VarHandle SIGNALS = MethodHandles.arrayElementVarHandle(SlotSignal[].class);

    static {
        try {
            LIFECYCLE = MethodHandles.lookup().findVarHandle(PoolCore.class, "lifecycle", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Bounded spin of the default PARK strategy before a worker announces itself idle. */
    private static final int PARK_SPINS = 64;
    /**
     * Most tasks one worker runs inline, nested, when it keeps submitting into a full pool. Beyond it the
     * submit throws {@link PoolBusyException} instead of recursing: unbounded nesting would end in a
     * StackOverflowError that could strike inside the pool's own bookkeeping after a task returns.
     */
    static final int MAX_INLINE_DEPTH = 64;
    /** Tasks accepted with one CAS and pushed with one ring claim by {@link #submitBatch}. */
    private static final int BATCH_CHUNK = 64;
    /** How long a worker needing a descriptor finds nothing queued before submitWaitable gives up. */
    private static final long HELP_GIVE_UP_NANOS = 10_000_000L;
    /** How long a helping awaiter blocks before it looks for queued work again. */
    private static final long HELP_POLL_NANOS = 100_000L;
    /** Upper bound of one park of the shutdown waiter between two quiescence checks. */
    private static final long SHUTDOWN_POLL_NANOS = 1_000_000L;

    private volatile int lifecycle = RUNNING;
    private volatile boolean cancelRequested;
    private volatile boolean stopWorkers;
    private volatile long acceptedAtClose = -1;
    private volatile PoolStats finalStats;
    private final Object closeLock = new Object();

    // ---- configuration, constant after construction -----------------------------------------------------
    private final PoolConfig config;
    private final int capacity;
    private final int workerCount;
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
    /** The queue topology: GLOBAL_QUEUE or WORK_STEALING (see {@link Scheduler}). */
    private final Scheduler scheduler;
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

    // ---- on-heap references, indexed by descriptor slot ---------------------------------------------------
    private final Runnable[] tasks;
    private final WaitGroup[] groups;
    private final Throwable[] failures;
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
        this.config = config;
        this.capacity = config.queueCapacity();
        this.workerCount = config.maxThreads();
        this.timestamps = Timestamps.COMPILED && config.timestampMode() == TimestampMode.FULL;
        this.scratchIdlePurgeNanos = config.scratchIdlePurge().toNanos();
        this.idleStrategy = config.idleStrategy();
        this.spinBeforeParkNanos = config.spinBeforePark().toNanos();
        this.errorHandler = config.errorHandler();

        this.memory = PoolMemory.create();
        try {
            this.table = new DescriptorTable(memory, capacity);
            this.inject = new BoundedRing(memory, "inject ring", capacity);
            this.counters = new PoolCounters(memory, workerCount);
            this.parking = new ParkingLot(memory, workerCount);
            this.space = new SpaceWaiters(memory, "space waiters");
            this.submitters = new SubmitterRegistry(memory);
            this.scheduler = config.schedulerVariant() == SchedulerVariant.WORK_STEALING
                    ? new WorkStealingScheduler(memory, config, inject, parking, counters)
                    : new GlobalQueueScheduler(inject, parking);
            int slots = workerSlots();
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
        } catch (RuntimeException | Error e) {
            memory.close();
            throw e;
        }
        this.tasks = new Runnable[capacity];
        this.groups = new WaitGroup[capacity];
        this.failures = new Throwable[capacity];
        this.signals = new SlotSignal[capacity];
        this.errors = new RecentErrors(config.recentErrorCapacity());
        this.scratch = new WorkerScratchBuffer[workerSlots()];
        for (int i = 0; i < scratch.length; i++) {
            scratch[i] = new WorkerScratchBuffer(this, memory, i, config.workerScratchCapBytes());
        }
        this.descriptorFree = table::hasFree;
        this.admissionClosed = counters::admissionClosed;

        this.workers = new WorkerThread[workerCount];
        for (int i = 0; i < workerCount; i++) {
            WorkerThread w = new WorkerThread(this, i, config.threadNamePrefix() + i, config.daemon());
            workers[i] = w;
            parking.register(i, w);
        }
        // Thread.start happens-before everything the worker does, so the fields above are visible to it.
        for (WorkerThread w : workers) {
            w.start();
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
        checkAccepting();
        if (group != null) {
            group.add(1);
        }
        boolean handedOver = false;
        try {
            int idx = table.acquire();
            if (idx < 0) {
                WorkerThread self = currentWorker();
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
            enqueue(publish(idx, task, group, flags, false));
            observeDepth();
            scheduler.signalWork(1);
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
        checkAccepting();
        final long[] entries = new long[Math.min(BATCH_CHUNK, to - from)]; // one per call, not per task
        int done = 0;
        int i = from;
        while (i < to) {
            int want = Math.min(entries.length, to - i);
            int got = 0;
            while (got < want) {
                int idx = table.acquire();
                if (idx < 0) {
                    break;
                }
                entries[got++] = idx; // the slot index for now; replaced by its queue entry once published
            }
            if (got == 0) {
                // Full: hand one task to the single path, which waits (or runs inline on a worker).
                try {
                    submit(batch[i], flags, null, true, Long.MAX_VALUE);
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
            WorkerThread self = currentWorker();
            while (pushed < got) {
                int n = scheduler.tryEnqueueMany(self, entries, pushed, got - pushed); // GQ: one tail CAS per run
                if (n == 0) {
                    waitForRingRoom(entries[pushed]); // pushes that one entry
                    n = 1;
                }
                pushed += n;
            }
            observeDepth();
            scheduler.signalWork(got); // GQ: at most one wake per accepted task, stopping when nobody is idle
            i += got;
            done += got;
        }
        return done;
    }

    /** Waitable submit; returns the handle {gen, idx}. Waits while full. */
    public long submitWaitable(Runnable task, int flags) {
        checkAccepting();
        int idx = table.acquire();
        if (idx < 0) {
            WorkerThread self = currentWorker();
            idx = self != null ? acquireByHelping(self) : acquireWaiting(Long.MAX_VALUE);
        }
        if (!counters.tryAccept(1)) {
            table.unreserve(idx);
            throw rejectedByShutdown();
        }
        long entry = publish(idx, task, null, flags, true);
        enqueue(entry);
        observeDepth();
        scheduler.signalWork(1);
        return entry;
    }

    /** Writes the references and publishes (gen, QUEUED); returns the queue entry. */
    private long publish(int idx, Runnable task, WaitGroup group, int flags, boolean waitable) {
        tasks[idx] = task; // plain: published by the release store in table.publish
        groups[idx] = group;
        table.prepare(idx, flags, Timestamps.COMPILED && timestamps ? System.nanoTime() : 0L);
        int gen = table.publish(idx, waitable);
        return QueueEntry.pack(gen, idx);
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
     */
    private int acquireByHelping(WorkerThread self) {
        long giveUp = System.nanoTime() + HELP_GIVE_UP_NANOS;
        for (;;) {
            int idx = table.acquire();
            if (idx >= 0) {
                return idx;
            }
            if (counters.admissionClosed()) {
                throw rejectedByShutdown();
            }
            long e = scheduler.next(self);
            if (e != QueueEntry.EMPTY) {
                runEntry(self, e);
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

    /** Pushes an accepted entry; the ring only fills up when cancelled entries linger in it. */
    private void enqueue(long entry) {
        if (!scheduler.tryEnqueue(currentWorker(), entry)) {
            waitForRingRoom(entry);
        }
    }

    private void waitForRingRoom(long entry) {
        WorkerThread self = currentWorker();
        for (int spins = 0; !scheduler.tryEnqueue(self, entry); spins++) {
            if (self != null) {
                long e = scheduler.next(self); // help: make room by running (or dropping) the oldest entry
                if (e != QueueEntry.EMPTY) {
                    runEntry(self, e);
                    continue;
                }
            }
            if (spins < 100) {
                Thread.onSpinWait();
            } else {
                LockSupport.parkNanos(this, 50_000L);
            }
        }
    }

    private void runInline(WorkerThread self, Runnable task, WaitGroup group) {
        if (!counters.tryAccept(1)) {
            throw rejectedByShutdown();
        }
        int w = self.index;
        counters.increment(w, PoolCounters.STARTED);
        counters.increment(w, PoolCounters.INLINE_RUNS);
        Throwable failure = null;
        self.inlineDepth++;
        try {
            task.run(); // inline: the caller's interrupt status is the caller's business, left untouched
        } catch (Throwable t) {
            failure = t;
        } finally {
            self.inlineDepth--;
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
     * After a push: feeds the inject ring's occupancy to the peak gauge (two volatile loads and a compare; a
     * CAS only for a new peak). Snapshots feed the whole lane's depth, so the peak also covers local queues.
     */
    private void observeDepth() {
        depthGauge.observe(Lane.DEFAULT, inject.size());
    }

    /**
     * Waits for work according to the idle strategy. Returns false when the worker should exit: stop has
     * been requested, which shutdown only does once every accepted task has ended.
     */
    private boolean idle(WorkerThread self) {
        final int i = self.index;
        // Counted as searching from here until after the announcement (or until work shows up): the
        // WORK_STEALING wake rule relies on it (WakeCoalescer); GLOBAL_QUEUE ignores it.
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
        // step 2: seq_cst loads of every queue this worker can take from and of the stop flag
        if (scheduler.hasWork(i) || stopWorkers) {
            parking.retract(i);
            return !stopWorkers;
        }
        counters.increment(i, PoolCounters.PARKS);
        Thread.interrupted(); // a pending interrupt would make park() return at once: clear it, do not spin
        WorkerScratchBuffer sb = scratchIdlePurgeNanos > 0 && i < scratch.length ? scratch[i] : null;
        boolean purgeOnTimeout = sb != null && sb.allocated();
        long parkedAt = purgeOnTimeout ? System.nanoTime() : 0L;
        if (purgeOnTimeout) {
            parking.parkNanos(scratchIdlePurgeNanos); // a timed park, so an idle worker can free its scratch
        } else {
            parking.park();
        }
        boolean stillAnnounced = parking.retract(i);
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

    /** Runs one queue entry if it still names a queued task; never throws. */
    void runEntry(WorkerThread self, long entry) {
        final int idx = QueueEntry.idx(entry);
        final int gen = QueueEntry.gen(entry);
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
        Throwable failure = null;
        try {
            task.run();
        } catch (Throwable t) {
            failure = t;
        }
        Thread.interrupted(); // nor does the worker keep one a task left behind
        if (Timestamps.COMPILED && timestamps) {
            long endNanos = System.nanoTime();
            table.setEndNanos(idx, endNanos);
            execHist.record(w, endNanos - startNanos);
        }
        tasks[idx] = null;
        groups[idx] = null;
        if (failure != null) {
            failures[idx] = failure; // published to awaiters by finish()'s volatile store
            onFailure(task, failure);
        }
        long outcomeCounter = failure != null ? PoolCounters.FAILED : PoolCounters.COMPLETED;
        if (isWaitableRunning(idx)) {
            counters.increment(w, outcomeCounter); // before the awaiter can return
            table.finish(idx, failure != null);
            wakeSlot(idx);
        } else {
            table.finish(idx, failure != null); // detached: back on the freelist now
            counters.increment(w, PoolCounters.RELEASED);
            space.signal();
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

    private boolean isWaitableRunning(int idx) {
        return DescriptorTable.waitable(table.ctlAcquire(idx));
    }

    private void onFailure(Runnable task, Throwable t) {
        errors.record(t);
        TaskErrorHandler h = errorHandler;
        if (h != null) {
            try {
                h.onError(task, t);
            } catch (Throwable handlerFailure) {
                errors.recordHandlerFailure(); // contained: never kills the worker
            }
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

    private int checkHandle(long handle) {
        int idx = QueueEntry.idx(handle);
        if (handle == QueueEntry.EMPTY || idx < 0 || idx >= capacity) {
            throw new InvalidHandleException("not a task handle of this pool: handle=0x"
                    + Long.toHexString(handle) + " (slot must be in [0, " + capacity + "))");
        }
        return idx;
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
        final int gen = QueueEntry.gen(handle);
        final long deadline = nanos == Long.MAX_VALUE ? Long.MAX_VALUE : System.nanoTime() + nanos;
        final WorkerThread self = currentWorker();
        for (;;) {
            long c = table.ctlVolatile(idx);
            if (DescriptorTable.gen(c) != gen) {
                throw new InvalidHandleException("stale handle: slot " + idx + " has been reused (handle gen "
                        + Integer.toUnsignedString(gen) + ", slot gen "
                        + Integer.toUnsignedString(DescriptorTable.gen(c)) + ")");
            }
            if (!DescriptorTable.waitable(c)) {
                throw new InvalidHandleException("not a waitable handle: 0x" + Long.toHexString(handle));
            }
            int st = DescriptorTable.state(c);
            switch (st) {
                case DescriptorTable.COMPLETED, DescriptorTable.FAILED, DescriptorTable.CANCELLED -> {
                    long won = table.tryReleaseWaitable(idx, gen);
                    if (won != 0) {
                        Throwable cause = failures[idx]; // ours: the slot is FREE but not yet on the freelist
                        table.pushReleased(idx);
                        counters.addReleasedOther(1);
                        space.signal();
                        return report(DescriptorTable.state(won), cause, handle);
                    }
                    // lost to a concurrent awaiter: re-read, now FREE with the outcome
                }
                case DescriptorTable.FREE -> {
                    int outcome = DescriptorTable.outcome(c);
                    Throwable cause = failures[idx];
                    DescriptorTable.loadLoadFence(); // seqlock: read the reference, then re-validate the gen
                    if (table.ctlVolatile(idx) != c) {
                        cause = null; // the slot moved on while we read; the outcome is still right
                    }
                    return report(outcome, cause, handle);
                }
                default -> {
                    long remaining = deadline == Long.MAX_VALUE ? Long.MAX_VALUE : deadline - System.nanoTime();
                    if (remaining <= 0) {
                        return false;
                    }
                    if (self != null) {
                        // A worker that blocked here could starve the very task it waits for (think of a
                        // one-worker pool): help by running queued work, and block only briefly between
                        // looks, since the awaited task may be running on another worker.
                        long e = scheduler.next(self);
                        if (e != QueueEntry.EMPTY) {
                            runEntry(self, e);
                            continue;
                        }
                        signalFor(idx).await(gen, Math.min(remaining, HELP_POLL_NANOS));
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
        int gen = QueueEntry.gen(handle);
        long c = table.ctlAcquire(idx);
        if (DescriptorTable.gen(c) != gen) {
            throw new InvalidHandleException("stale handle: slot " + idx + " has been reused");
        }
        if (!table.tryCancel(idx, gen, true)) {
            return false;
        }
        tasks[idx] = null;
        counters.addCancelled(1);
        wakeSlot(idx);
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

    public void releaseSubmitter(int slot) {
        if (lifecycle == CLOSED) {
            return; // the registry went with the arena
        }
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
        final long deadline = nanos == Long.MAX_VALUE ? Long.MAX_VALUE : System.nanoTime() + nanos;
        if (mode == ShutdownMode.CANCEL_PENDING) {
            cancelRequested = true;
        }
        if (LIFECYCLE.compareAndSet(this, RUNNING, SHUTTING_DOWN)) {
            acceptedAtClose = counters.closeAdmission(); // from here on every submit is refused
            space.signalAll(); // submitters waiting for space re-check admission and give up
        }
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
        LIFECYCLE.compareAndSet(this, SHUTTING_DOWN, TERMINATED);
        return true;
    }

    private long finishedOrCancelled() {
        return counters.sum(PoolCounters.COMPLETED) + counters.sum(PoolCounters.FAILED) + counters.cancelled();
    }

    /** CANCEL_PENDING: pops every entry and cancels what is still queued; workers may race us per entry. */
    private void sweepQueued() {
        long e;
        while ((e = scheduler.drainOne()) != QueueEntry.EMPTY) {
            int idx = QueueEntry.idx(e);
            int gen = QueueEntry.gen(e);
            if (!table.tryCancel(idx, gen, false)) {
                space.signal();
                continue; // a worker started it first, or it was stale
            }
            boolean waitable = DescriptorTable.waitable(table.ctlAcquire(idx));
            WaitGroup group = groups[idx];
            tasks[idx] = null;
            groups[idx] = null;
            if (waitable) {
                counters.addCancelled(1);
                wakeSlot(idx); // the awaiter releases the slot and sees TaskCancelledException
            } else {
                table.releaseCancelledDetached(idx);
                counters.addReleasedOther(1);
                counters.addCancelled(1); // after the release, as for completed tasks
            }
            if (group != null) {
                group.done();
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
        int n = workerCount;
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

        boolean allIdle = Long.bitCount(idle) == n;
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

    /** White-box hook for tests in this package: the raw counters. */
    PoolCounters countersForTest() {
        return counters;
    }

    /** The pool's memory map: every live block with its purpose and counted size. */
    public List<PoolMemory.BlockInfo> memoryMap() {
        return memory.memoryMap();
    }

    int workerCount() {
        return workerCount;
    }

    /**
     * Worker indices this pool may ever use: the size of every per-worker array and counter block.
     * {@code maxThreads} today; LANE_EXTENSION adds its overflow workers here (at most 64 in all).
     */
    public int workerSlots() {
        return workerCount;
    }
}
