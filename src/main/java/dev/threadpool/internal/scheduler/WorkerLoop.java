package dev.threadpool.internal.scheduler;

import dev.threadpool.PoolBusyException;
import dev.threadpool.TaskErrorHandler;
import dev.threadpool.WaitGroup;
import dev.threadpool.internal.jfr.PoolEvents;
import dev.threadpool.internal.queue.QueueEntry;
import dev.threadpool.internal.stats.LogHistogram;
import dev.threadpool.internal.stats.PoolCounters;
import dev.threadpool.internal.stats.RecentErrors;
import dev.threadpool.internal.stats.Timestamps;

/**
 * The worker run loop: take the next entry, run it, publish its outcome; and every nested run on a worker's
 * own stack (helping, a waiter's own task, caller-runs).
 *
 * <pre>
 *   loop:     turn, until it says stop (one method call a turn: see turn)
 *   turn:     scheduler.next(self) -> runEntry | nothing: steal an offered join half (Joining) and run it
 *             | nothing either: Idle.idle (spin, announce, park)
 *   runEntry: tryStart (gen, QUEUED) -> (gen, RUNNING): a CAS if waitable, a release store if detached
 *            (the pop already decided); else drop the entry (stale / cancelled)
 *             -> run (task.run(), or fn.accept(ctx, arg) where FLAG_ARGUMENT), containing any Throwable
 *             -> clear the refs (and a task in argument form's function and context) -> outcome:
 *                waitable: count, finishWaitable (keeps the failure), wake the awaiters
 *                detached: releaseSlot (cache or freelist), count RELEASED, then the outcome
 *             -> WaitGroup.done
 *   nested:   runNested(self, entry | inline task) counts inlineDepth and restores it in a finally
 * </pre>
 *
 * <h2>Nesting</h2>
 * A worker runs work on its own stack while it waits (await, submitWaitable needing a descriptor, a push into
 * a full queue, parallelFor) and when it runs a submit inline. Every such run goes through {@link #runNested}.
 * Nobody helps (runs an unrelated queued entry) at {@link #MAX_INLINE_DEPTH} or deeper; there a waiter only
 * runs its own task: the awaited task if still queued, the entry it cannot push. That adds one level per
 * level of the user's own recursion, so the pool's nesting on one stack is at most {@code MAX_INLINE_DEPTH}
 * plus the depth of the user's recursion.
 *
 * <h2>Rules</h2>
 * <ul>
 *   <li>A worker clears its interrupt status before and after every task it takes from a queue.</li>
 *   <li>Counters are incremented after the event they count: a task's slot is released before it is counted
 *       completed, so a snapshot that sees every task finished also sees every detached slot free.</li>
 *   <li>Nothing a task throws escapes {@link #runEntry}: the outcome (slot, counters, wake, group) is always
 *       published, and a failing error handler is contained too ({@link #onFailure}).</li>
 *   <li>A task that returns or throws with forks of its own still open ({@code ThreadPool.fork}) has them
 *       settled before its outcome ({@link Joining#settle}: each half runs exactly once, a failure among them is
 *       the task's, or suppressed on it), so the worker's fork stack and join levels are its own again.</li>
 * </ul>
 */
final class WorkerLoop {
    /**
     * Most levels of work one worker runs nested on its own stack on the pool's initiative: helping (a waiter
     * running unrelated queued entries) and inline runs of a submit into a full pool. At this depth a worker
     * no longer helps, and a submit that would run inline throws {@link PoolBusyException}; only a waiter's own
     * task may still run nested (see {@link #runNested}). Unbounded nesting ended in a StackOverflowError that
     * could strike inside the pool's own bookkeeping after a task returned, leaving its slot RUNNING.
     */
    static final int MAX_INLINE_DEPTH = 64;

    /**
     * A worker that has run this many carried tasks (detached tasks from outside the pool) without a search in
     * between yields its CPU ({@link Thread#yield}) and starts counting again. Such a run means an outside thread
     * keeps the carried ring fed; when that thread and the workers outnumber the CPUs, the kernel time-slices
     * them, and every slice the submitter waits for a CPU the workers drain the ring and spin or park, so the
     * flood's rate falls to what its starved submitter delivers: on 2 CPUs one worker flooded 1.2x-1.8x faster
     * than two (PERFORMANCE_TRACKING 54: the submitter runnable but off a CPU 27-52 ns per task). The yield hands a
     * waiting submitter the CPU at once; with nothing else runnable it returns at once (one syscall per this many
     * tasks). A search ({@link Idle#beginSearch}) restarts the count, so a worker that goes idle between tasks
     * (ping-pong, a frame at a time) never yields.
     */
    static final int CARRIED_YIELD_EVERY = 64;

    private final Scheduler scheduler;
    private final DescriptorTable table;
    private final Slots slots;
    private final SpaceWaiters space;
    /** Submitters waiting for a carried-ring cell (Submission, "Waiting for a carried cell"). */
    private final SpaceWaiters ringSpace;
    private final PoolCounters counters;
    private final Idle idle;
    private final RecentErrors errors;
    private final TaskErrorHandler errorHandler;
    /** Reports detached tasks' failures to System.err, rate-limited, when {@link #errorHandler} is null. */
    private final StderrErrorReporter defaultReport;
    /** LANE_EXTENSION's watchdog (null elsewhere): told about every task a watched worker runs. */
    private final Watchdog watchdog;
    private final String poolName;
    /** TimestampMode.FULL; every use reads {@code Timestamps.COMPILED && timestamps} (see PoolCore). */
    private final boolean timestamps;
    /** TimestampMode.FULL only (else null): per-worker queue-wait and execution histograms. */
    private final LogHistogram waitHist;
    private final LogHistogram execHist;
    /** Join halves: an idle worker steals one before it searches; a helper after its queues are empty. */
    private final Joining joining;

    WorkerLoop(Scheduler scheduler, DescriptorTable table, Slots slots, SpaceWaiters space, SpaceWaiters ringSpace,
            PoolCounters counters,
            Idle idle, RecentErrors errors, TaskErrorHandler errorHandler, Watchdog watchdog,
            String poolName, boolean timestamps, LogHistogram waitHist, LogHistogram execHist, Joining joining) {
        this.scheduler = scheduler;
        this.table = table;
        this.slots = slots;
        this.space = space;
        this.ringSpace = ringSpace;
        this.counters = counters;
        this.idle = idle;
        this.errors = errors;
        this.errorHandler = errorHandler;
        this.defaultReport = errorHandler == null ? new StderrErrorReporter(poolName) : null;
        this.watchdog = watchdog;
        this.poolName = poolName;
        this.timestamps = timestamps;
        this.waitHist = waitHist;
        this.execHist = execHist;
        this.joining = joining;
    }

    /** A base worker's life: take and run entries until {@link Idle#idle} says stop. */
    void run(WorkerThread self) {
        while (turn(self)) {
            // the body is a method of its own: see turn
        }
    }

    /**
     * One turn of the loop: the next entry, else an offered join half, else the idle path. False: stop.
     *
     * <p>A method of its own, not the body of {@link #run}'s loop, for the JIT. {@code run} is entered once per
     * worker, so its own code is only ever replaced on-stack (OSR), after tens of thousands of back-branches:
     * where a worker wakes a few thousand times a second that took 6 s to reach C1's profiling tier and 10 s to
     * reach C2, and the loop's body ran in the interpreter until then (PERFORMANCE_TRACKING 73). A method called
     * once a turn is compiled by its call count, C2 within the first second there, and each worker's loop then
     * calls it. Too large (over 35 bytes of bytecode) for C1 to inline into {@code run}'s profiling OSR code.
     */
    private boolean turn(WorkerThread self) {
        long e = scheduler.next(self);
        if (e != QueueEntry.EMPTY) {
            runEntry(self, e);
            return true;
        }
        if (joining.stealAndRun(self)) { // a join half another worker offered, at the top of our stack
            return true;
        }
        return timedIdle(self);
    }

    /** {@link Idle#idle} as one idle span ({@link Idle#beginSpan}; Idle, "The idle clock"). */
    private boolean timedIdle(WorkerThread self) {
        idle.beginSpan(self);
        try {
            return idle.idle(self);
        } finally {
            idle.endSpan(self);
        }
    }

    // ---- one entry --------------------------------------------------------------------------------------

    /** Runs one queue entry if it still names a queued task; never throws. */
    void runEntry(WorkerThread self, long entry) {
        if (entry == QueueEntry.CARRIED) {
            runCarried(self);
            return;
        }
        final int idx = table.slotOf(entry);
        final long gen = table.genOf(entry);
        final int w = self.index;
        if (!table.tryStart(idx, gen, w)) {
            space.signal(); // a stale or cancelled entry left the ring: a cell is free
            return;
        }
        counters.increment(w, PoolCounters.STARTED);
        Runnable task = slots.task(idx); // plain: published by the release of QUEUED, observed by our CAS
        WaitGroup group = slots.group(idx);
        // plain, as the task: FLAGS sits on the descriptor line our tryStart just read. A task in argument form
        // (Slots, "Tasks in argument form") is its function, context and long; the Runnable path reads nothing more.
        final boolean argForm = (table.flags(idx) & DescriptorTable.FLAG_ARGUMENT) != 0;
        Object fn = null;
        Object ctx = null;
        long arg = 0;
        if (argForm) {
            fn = slots.fn(idx); // plain, all three: published with the entry, as the task
            ctx = slots.ctx(idx);
            arg = table.arg(idx);
        }
        long startNanos = 0;
        if (Timestamps.COMPILED && timestamps) {
            startNanos = System.nanoTime();
            table.setStartNanos(idx, startNanos);
            // submitNanos: plain, written before the publishing release store our tryStart's acquire load observed
            waitHist.record(w, startNanos - table.submitNanos(idx));
        }
        Throwable failure = runTask(self, argForm ? fn : task, argForm, ctx, arg);
        if (Timestamps.COMPILED && timestamps) {
            long endNanos = System.nanoTime();
            table.setEndNanos(idx, endNanos);
            execHist.record(w, endNanos - startNanos);
        }
        if (Timestamps.COMPILED && timestamps && --self.latencySampleCountdown <= 0) { // owner-only; slot still ours
            sampleLatency(self, idx);
        }
        slots.clearRefs(idx); // we still own the slot (RUNNING): clear its references before we give it up
        if (argForm) {
            slots.clearArgRefs(idx); // and the function and context: no context is retained past its task
        }
        if (failure != null) {
            // a waitable task's failure goes to its awaiter: the default report is for detached ones only
            boolean detached = !DescriptorTable.waitable(table.ctlAcquire(idx));
            if (argForm) {
                onArgFailure(fn, ctx, arg, failure, detached);
            } else {
                onFailure(task, failure, detached);
            }
        }
        long outcomeCounter = failure != null ? PoolCounters.FAILED : PoolCounters.COMPLETED;
        if (DescriptorTable.waitable(table.ctlAcquire(idx))) {
            counters.increment(w, outcomeCounter); // before the awaiter can return
            table.finishWaitable(idx, failure); // keeps the failure for the awaits of this handle, until reuse
            slots.wakeSlot(idx);
        } else {
            slots.releaseSlot(self, idx, false, failure != null); // detached: FREE now, cached or on the freelist
            counters.increment(w, PoolCounters.RELEASED);
            counters.increment(w, outcomeCounter); // after the release: see "Rules"
        }
        groupDone(group);
    }

    /**
     * Runs a task taken from a queue on {@code self}: {@code task.run()}, or for a task in argument form
     * ({@code argForm}) {@code task.accept(ctx, arg)} with {@code task} its function ({@code ctx} and {@code arg}
     * are ignored otherwise). Its interrupt status cleared before and after, the watchdog told (LANE_EXTENSION's
     * default-lane workers; {@code watched} is false elsewhere); returns what it threw, or null. Never throws.
     */
    private Throwable runTask(WorkerThread self, Object task, boolean argForm, Object ctx, long arg) {
        Thread.interrupted(); // a task never inherits an interrupt aimed at an earlier one
        final boolean watched = self.watched;
        final long outerRun = watched ? watchdog.taskStarted(self) : 0L;
        final int forks = self.forkTop; // owner-only plain field: forks the task leaves open, settled below
        Throwable failure = null;
        try {
            if (argForm) {
                ArgumentTask.call(task, ctx, arg);
            } else {
                ((Runnable) task).run();
            }
        } catch (Throwable t) {
            failure = t;
        }
        if (self.forkTop != forks) {
            failure = joining.settle(self, forks, failure); // forks the task never joined run now (Joining)
        }
        if (watched) {
            watchdog.taskEnded(self, outerRun);
        }
        Thread.interrupted(); // nor does the worker keep one a task left behind
        return failure;
    }

    /** The task's group, if any, counts it done; a group the user drove negative is contained and recorded. */
    private void groupDone(WaitGroup group) {
        if (group != null) {
            try {
                group.done();
            } catch (RuntimeException misuse) {
                errors.record(misuse);
            }
        }
    }

    /**
     * Runs the task carried by the ring cell this worker just popped ({@code self.taken}, see BoundedRing,
     * "Carried tasks"): no descriptor, so no start CAS (the pop gave it to us alone), nothing to release;
     * the counters, the failure report, the watchdog's run word and the group as for a detached task. Never
     * throws. Carried tasks exist only where timestamps are off (TimestampMode.FULL keeps descriptors).
     */
    private void runCarried(WorkerThread self) {
        final Object[] taken = self.taken;
        Object task = taken[0]; // a Runnable, or the function of a task in argument form
        WaitGroup group = (WaitGroup) taken[1];
        // null for a Runnable task (its pop left it null); else the context marker of a task in argument form
        // (BoundedRing, "Argument cells"), whose argument the pop put in takenArg
        Object marker = taken[2];
        taken[0] = null; // before the run: a nested pop (helping) reuses the pair
        taken[1] = null;
        long arg = 0;
        if (marker != null) {
            taken[2] = null; // the next pop of a Runnable task leaves it as it finds it
            arg = self.takenArg[0];
        }
        // volatile load of the waiter mask, after our pop's seq_cst head CAS made room, then of the ring's head and
        // tail: the signaller's half of the SpaceWaiters handshake with an outside submitter waiting for the
        // ring to drain to half (Submission, "Waiting for a carried cell"). Nobody waits: one load of a line
        // written only while somebody does.
        if (ringSpace.hasWaitersOnWorker() && scheduler.carriedLowWater()) {
            ringSpace.signal();
        }
        final int w = self.index;
        counters.increment(w, PoolCounters.STARTED);
        final boolean argForm = marker != null;
        final Object ctx = argForm ? QueueEntry.ctxOf(marker) : null;
        Throwable failure = runTask(self, task, argForm, ctx, arg);
        if (failure != null) { // detached: nobody awaits it
            if (argForm) {
                onArgFailure(task, ctx, arg, failure, true);
            } else {
                onFailure((Runnable) task, failure, true);
            }
        }
        counters.increment(w, failure != null ? PoolCounters.FAILED : PoolCounters.COMPLETED);
        groupDone(group);
        if (++self.carriedStreak >= CARRIED_YIELD_EVERY) { // owner-only count: see CARRIED_YIELD_EVERY
            self.carriedStreak = 0;
            counters.increment(w, PoolCounters.YIELDS);
            Thread.yield();
        }
    }

    /** JFR TaskLatency for one task in {@link PoolEvents#LATENCY_SAMPLE_EVERY} (TimestampMode.FULL only). */
    private void sampleLatency(WorkerThread self, int idx) {
        self.latencySampleCountdown = PoolEvents.LATENCY_SAMPLE_EVERY;
        if (PoolEvents.taskLatencyEnabled()) {
            long started = table.startNanos(idx);
            try {
                PoolEvents.taskLatency(poolName, self.index, started - table.submitNanos(idx),
                        table.endNanos(idx) - started);
            } catch (Throwable sampleFailed) {
                // dropped, as in onFailure: runEntry publishes the task's outcome after this
            }
        }
    }

    /**
     * Reports a task's failure: recentErrors, then the error handler. Never throws. In runEntry it runs after
     * the task and before the slot's outcome is published (finish or release, counters, wake, group), and a
     * Throwable out of here would skip those and leave the slot RUNNING for good: a task that failed with a
     * StackOverflowError leaves little stack, and the handler's own failure may be an Error too. With no
     * handler installed, a {@code detached} task's failure is printed to System.err, rate-limited
     * ({@link StderrErrorReporter}).
     */
    void onFailure(Runnable task, Throwable t, boolean detached) {
        try {
            errors.record(t);
            TaskErrorHandler h = errorHandler;
            if (h != null) {
                try {
                    h.onError(task, t);
                } catch (Throwable handlerFailure) {
                    errors.recordHandlerFailure(); // contained: never kills the worker
                }
            } else if (detached) {
                defaultReport.report(t);
            }
        } catch (Throwable reportingFailed) {
            // dropped: the report is lost, the outcome that follows is what must not be
        }
    }

    /**
     * {@link #onFailure} for a task in argument form: the error handler, if any, gets an {@link ArgumentTask} made for
     * it (a failure is no hot path); without one nothing is made. Never throws.
     */
    void onArgFailure(Object fn, Object ctx, long arg, Throwable t, boolean detached) {
        Runnable task;
        try {
            task = errorHandler != null ? new ArgumentTask(fn, ctx, arg) : null;
        } catch (Throwable noRoom) { // an OutOfMemoryError: the report goes on without the task
            task = null;
        }
        onFailure(task, t, detached);
    }

    // ---- nested runs ------------------------------------------------------------------------------------

    /** True while {@code self} may help, i.e. run an unrelated entry nested: below {@link #MAX_INLINE_DEPTH}. */
    static boolean mayHelp(WorkerThread self) {
        return self.inlineDepth < MAX_INLINE_DEPTH;
    }

    /**
     * Helping: runs the next entry {@code self} would take, nested ({@link #runNested}), or else an offered
     * join half ({@link Joining#stealAndRunNested}); false when neither is there for it. Every helping site
     * (helpOnce, await, acquireByHelping, waitForRingRoom) comes through here, after checking {@link #mayHelp}.
     */
    boolean helpNext(WorkerThread self) {
        long e = scheduler.next(self);
        if (e == QueueEntry.EMPTY) {
            return joining.stealAndRunNested(self); // a join half, one level deeper, as runNested counts
        }
        runNested(self, e);
        return true;
    }

    /**
     * From one of this pool's workers ({@code self}, or null when the caller is none): runs one queued entry
     * nested, if there is one, and returns true; false when nothing is queued for this worker, the worker is
     * at the nesting bound, or the caller is not a worker of this pool. For waits that must help instead of
     * blocking (a worker blocking on work it queued itself could starve it). A caller that may be past the
     * bound must not queue work only it would run.
     */
    boolean helpOnce(WorkerThread self) {
        // false at the nesting bound: the caller waits instead (bounded stack)
        return self != null && mayHelp(self) && helpNext(self);
    }

    /**
     * Runs queue entry {@code entry} nested on {@code self}'s stack (helping, or a waiter's own task). Counts
     * the level in {@code inlineDepth} and restores it in a finally: should the pool's own bookkeeping throw
     * (an Error: runEntry contains everything a task throws), the worker must not stay counted one level
     * deeper, helping less for the rest of its life.
     *
     * <p>Callers keep to the bound: helping sites call this only when {@link #mayHelp}; past it only a
     * waiter's own task comes here, which adds one level per level of the user's recursion.
     */
    void runNested(WorkerThread self, long entry) {
        self.inlineDepth++; // owner-only plain field
        try {
            runEntry(self, entry);
        } finally {
            self.inlineDepth--;
        }
    }

    /**
     * Caller-runs: runs {@code task}, submitted by {@code self} into a full pool and already accepted, nested
     * (one level, restored in a finally as in {@link #runNested}), with its {@code group}. The caller checked
     * the nesting bound.
     */
    void runInline(WorkerThread self, Runnable task, WaitGroup group) {
        self.inlineDepth++; // owner-only plain field
        try {
            runInlineTask(self, task, group);
        } finally {
            self.inlineDepth--;
        }
    }

    /**
     * {@link #runInline} of a task in argument form: {@code fn.accept(ctx, arg)}, accepted and run here on
     * {@code self} with its {@code group}, counted as inline. The caller checked the nesting bound.
     */
    void runInlineArg(WorkerThread self, Object fn, Object ctx, long arg, WaitGroup group) {
        self.inlineDepth++; // owner-only plain field
        try {
            int w = self.index;
            counters.increment(w, PoolCounters.STARTED);
            counters.increment(w, PoolCounters.INLINE_RUNS);
            final int forks = self.forkTop; // owner-only plain field: as in runTask
            Throwable failure = null;
            try {
                ArgumentTask.call(fn, ctx, arg); // inline: the caller's interrupt status is left untouched
            } catch (Throwable t) {
                failure = t;
            }
            if (self.forkTop != forks) {
                failure = joining.settle(self, forks, failure);
            }
            if (failure != null) {
                onArgFailure(fn, ctx, arg, failure, true); // detached: nobody awaits it
            }
            counters.increment(w, failure != null ? PoolCounters.FAILED : PoolCounters.COMPLETED);
            if (group != null) {
                group.done();
            }
        } finally {
            self.inlineDepth--;
        }
    }

    private void runInlineTask(WorkerThread self, Runnable task, WaitGroup group) {
        int w = self.index;
        counters.increment(w, PoolCounters.STARTED);
        counters.increment(w, PoolCounters.INLINE_RUNS);
        final int forks = self.forkTop; // owner-only plain field: as in runTask
        Throwable failure = null;
        try {
            task.run(); // inline: the caller's interrupt status is the caller's business, left untouched
        } catch (Throwable t) {
            failure = t;
        }
        if (self.forkTop != forks) {
            failure = joining.settle(self, forks, failure);
        }
        if (failure != null) {
            onFailure(task, failure, true); // detached: nobody awaits it
        }
        counters.increment(w, failure != null ? PoolCounters.FAILED : PoolCounters.COMPLETED);
        if (group != null) {
            group.done();
        }
    }
}
