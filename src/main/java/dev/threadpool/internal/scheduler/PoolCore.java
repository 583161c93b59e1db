package dev.threadpool.internal.scheduler;

import dev.threadpool.IdleStrategy;
import dev.threadpool.InvalidHandleException;
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
import dev.threadpool.WorkerStats;
import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.BoundedRing;
import dev.threadpool.internal.queue.QueueEntry;
import dev.threadpool.internal.stats.PoolCounters;
import dev.threadpool.internal.stats.RecentErrors;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

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
    /** Every worker index the pool may use: maxThreads, plus maxOverflowWorkers in LANE_EXTENSION. */
    private final int slots;
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
    /** LANE_EXTENSION's watchdog and overflow workers; null in the other variants. */
    private final Watchdog watchdog;

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
        this.slots = workerSlots(config);
        this.timestamps = config.timestampMode() == TimestampMode.FULL;
        this.idleStrategy = config.idleStrategy();
        this.spinBeforeParkNanos = config.spinBeforePark().toNanos();
        this.errorHandler = config.errorHandler();

        this.memory = PoolMemory.create();
        try {
            this.table = new DescriptorTable(memory, capacity);
            this.inject = new BoundedRing(memory, "inject ring", capacity);
            this.counters = new PoolCounters(memory, slots);
            this.parking = new ParkingLot(memory, slots);
            this.space = new SpaceWaiters(memory, "space waiters");
            this.submitters = new SubmitterRegistry(memory);
            if (config.schedulerVariant() == SchedulerVariant.LANE_EXTENSION) {
                LaneScheduler lanes = new LaneScheduler(memory, config, inject, table, parking, counters);
                this.scheduler = lanes;
                this.watchdog = new Watchdog(this, config, memory, lanes, counters, parking);
            } else {
                this.scheduler = config.schedulerVariant() == SchedulerVariant.WORK_STEALING
                        ? new WorkStealingScheduler(memory, config, inject, parking, counters)
                        : new GlobalQueueScheduler(inject, parking);
                this.watchdog = null;
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
        this.descriptorFree = table::hasFree;
        this.admissionClosed = counters::admissionClosed;

        this.workers = new WorkerThread[workerCount];
        for (int i = 0; i < workerCount; i++) {
            // LANE_EXTENSION watches its default-lane workers' running tasks (Watchdog); nobody else does.
            boolean watched = watchdog != null && i >= config.blockingWorkers();
            WorkerThread w = new WorkerThread(this, i, config.threadNamePrefix() + i, config.daemon(), false, watched);
            workers[i] = w;
            parking.register(i, w);
        }
        // Thread.start happens-before everything the worker does, so the fields above are visible to it.
        for (WorkerThread w : workers) {
            w.start();
        }
        if (watchdog != null) {
            watchdog.start();
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
            scheduler.signalWork(got, flags); // GQ: at most one wake per accepted task, stopping when nobody is idle
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
        scheduler.signalWork(1, flags);
        return entry;
    }

    /** Writes the references and publishes (gen, QUEUED); returns the queue entry. */
    private long publish(int idx, Runnable task, WaitGroup group, int flags, boolean waitable) {
        tasks[idx] = task; // plain: published by the release store in table.publish
        groups[idx] = group;
        table.prepare(idx, flags, timestamps ? System.nanoTime() : 0L);
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
            if (!idle(self)) {
                return;
            }
        }
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
        parking.park();
        boolean stillAnnounced = parking.retract(i);
        counters.increment(i, stillAnnounced ? PoolCounters.SPURIOUS_WAKEUPS : PoolCounters.WAKEUPS);
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
                if (!overflowIdle(self)) {
                    return;
                }
            }
        } finally {
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
            long left = retireAt - System.nanoTime();
            if (left > 0) {
                counters.increment(i, PoolCounters.PARKS);
                Thread.interrupted();
                parking.parkNanos(left);
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
            counters.increment(i, PoolCounters.SPURIOUS_WAKEUPS);
        }
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
        if (timestamps) {
            table.setStartNanos(idx, System.nanoTime());
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
        if (timestamps) {
            table.setEndNanos(idx, System.nanoTime());
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
        if (watchdog != null && !watchdog.joinOverflow(deadline)) { // every overflow thread, live or retired
            return false;
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
            finalStats = new PoolStats(last.submitted(), last.started(), last.completed(), last.cancelled(),
                    last.failed(), last.rejected(), last.queuedTasks(), last.activeTasks(), last.taskDescLive(),
                    t[0], t[1], t[0] - t[1], t[2], last.parks(), last.wakeups(), last.steals(),
                    last.stealFailures(), last.inlineRuns(), 0, last.workers(), last.stallsSeen(),
                    last.overflowSpawned(), last.overflowRetired(), 0, last.accountingSkewDetected());
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
            sumSteals += counters.get(w, PoolCounters.STEALS);
            sumStealFailures += counters.get(w, PoolCounters.STEAL_FAILURES);
        }
        long releasedOther = counters.releasedOther();
        long rejected = counters.rejected();
        long stalls = counters.stallsSeen();
        long overflowRetired = counters.overflowRetired(); // before spawned: overflowLive is never negative
        long overflowSpawned = counters.overflowSpawned();
        long idle = parking.idleMask();
        long submitted = counters.submitted();

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
            per.add(new WorkerStats(w, started[w], completed[w], failed[w], inline[w], parks[w], wakeups[w]));
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
                skew);
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
        // GLOBAL_QUEUE keeps no per-worker caches yet: nothing to give back.
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
     * {@code maxThreads}; LANE_EXTENSION adds its overflow workers here (at most 64 in all).
     */
    public int workerSlots() {
        return slots;
    }

    /** {@link #workerSlots()} of a pool built from {@code config}. */
    public static int workerSlots(PoolConfig config) {
        return config.schedulerVariant() == SchedulerVariant.LANE_EXTENSION
                ? config.maxThreads() + config.maxOverflowWorkers()
                : config.maxThreads();
    }
}
