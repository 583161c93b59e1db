package dev.threadpool.internal.scheduler;

import dev.threadpool.PoolShutdownException;
import dev.threadpool.PoolStats;
import dev.threadpool.ShutdownMode;
import dev.threadpool.WaitGroup;
import dev.threadpool.internal.jfr.PoolEvents;
import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.QueueEntry;
import dev.threadpool.internal.stats.PoolCounters;
import dev.threadpool.internal.stats.RecentErrors;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * Lifecycle: the pool's state (on-heap: it must outlive the arena), shutdown, close, and the failure path of
 * construction.
 *
 * <h2>The protocol</h2>
 * <pre>
 *   RUNNING --1--> SHUTTING_DOWN --2..5--> TERMINATED --6..7--> CLOSED
 * </pre>
 * <ol>
 *   <li><b>Close admission</b> ({@link #closeAdmission}; the first step of every shutdown). CANCEL_PENDING
 *       first sets {@code cancelRequested}. The RUNNING -&gt; SHUTTING_DOWN CAS picks one thread, which
 *       closes the admission words ({@code counters.closeAdmission}: SUBMITTED's bit, then every outside
 *       stripe, worker word and submitter word; from then on every accept with a descriptor fails), then the
 *       carried ring ({@code scheduler.closeCarried}, BoundedRing's "Closing to pushes": from
 *       then on every carried push fails), and publishes the number accepted on both, {@code acceptedAtClose}.
 *       Waiting submitters are signalled and give up.</li>
 *   <li><b>Wait for every accepted task to end</b>: completed + failed + cancelled &gt;= acceptedAtClose,
 *       polled with parks from {@link #FIRST_POLL_NANOS} doubling to {@link #SHUTDOWN_POLL_NANOS}. While
 *       {@code cancelRequested}, each poll first sweeps the queues ({@link #sweepQueued}): every entry popped
 *       and still (gen, QUEUED) is cancelled, racing the workers per entry with one CAS.</li>
 *   <li><b>Stop the watchdog</b> (LANE_EXTENSION): no overflow worker is spawned after this, so the set of
 *       overflow threads is final.</li>
 *   <li><b>Stop the workers</b>: {@code stopWorkers} (volatile) then {@code parking.wakeAll()}; each worker
 *       re-checks the flag after its wake and exits. Join every base worker.</li>
 *   <li><b>Join the overflow workers</b>, live or retired. Then drain the outside stripes' descriptor caches
 *       back to the freelist (Slots, hazard rule 5).</li>
 *   <li><b>TERMINATED</b> (SHUTTING_DOWN -&gt; TERMINATED CAS). From here no lifecycle path touches the arena
 *       (see {@link #enterArena}).</li>
 *   <li><b>Close</b> ({@link #close}, under the snapshot's arena lock): wait until no thread is inside an
 *       arena region, take the last reading, CLOSED, wake every awaiter still parked on a slot, free the
 *       scheduler's grown blocks and close the arena, freeze the final stats from the last reading and the
 *       closed totals ({@code liveBytes == 0}), remove the JFR hook.</li>
 * </ol>
 * Steps 2 to 5 are bounded by the caller's deadline; a call that runs out returns false and a later call
 * resumes. Every step is idempotent and safe from several threads at once; a later CANCEL_PENDING call
 * upgrades an earlier DRAIN. JFR ShutdownPhase events mark the steps, each emitted once.
 */
final class Lifecycle {
    static final int RUNNING = 0;
    static final int SHUTTING_DOWN = 1;
    static final int TERMINATED = 2;
    static final int CLOSED = 3;

    private static final VarHandle STATE;
    private static final VarHandle ARENA_CALLERS;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(Lifecycle.class, "state", int.class);
            ARENA_CALLERS = MethodHandles.lookup().findVarHandle(Lifecycle.class, "arenaCallers", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Step 2: the first park of the shutdown waiter between two quiescence checks. */
    private static final long FIRST_POLL_NANOS = 10_000L;
    /** Step 2: the longest park of the shutdown waiter between two quiescence checks. */
    private static final long SHUTDOWN_POLL_NANOS = 1_000_000L;
    /** Step 7: one park of close() while another thread is still inside an arena region. */
    private static final long ARENA_CALLER_POLL_NANOS = 100_000L;

    private volatile int state = RUNNING;
    /**
     * Threads inside a lifecycle path that may touch the arena while another thread closes the pool
     * ({@link #shutdown}, {@link #closeAdmission}, {@link #cancelQueuedNow}); {@link #close} waits for zero
     * before it frees the arena. See {@link #enterArena}.
     */
    private volatile int arenaCallers;
    private volatile boolean cancelRequested;
    private volatile boolean stopWorkers;
    private volatile long acceptedAtClose = -1;
    /** Receives the tasks a CANCEL_PENDING sweep cancels (the ExecutorService view's shutdownNow list). */
    private volatile Consumer<Runnable> sweptSink;
    /** Shutdown phases emitted so far (JFR ShutdownPhase): phase p is emitted by whoever moves p to p+1. */
    private final AtomicInteger shutdownPhases = new AtomicInteger();
    /** This pool's periodic JFR PoolStats hook, set once at the end of construction; null without JFR. */
    private volatile AutoCloseable jfrStatsHook;

    private final String poolName;
    private final PoolMemory memory;
    private final PoolCounters counters;
    private final DescriptorTable table;
    private final Slots slots;
    private final Scheduler scheduler;
    private final ParkingLot parking;
    private final SpaceWaiters space;
    private final SpaceWaiters ringSpace;
    private final Snapshot snapshot;
    private final WorkerThread[] workers;
    /** LANE_EXTENSION's watchdog and overflow workers; null in the other variants. */
    private final Watchdog watchdog;
    private final RecentErrors errors;

    Lifecycle(String poolName, PoolMemory memory, PoolCounters counters, DescriptorTable table, Slots slots,
            Scheduler scheduler, ParkingLot parking, SpaceWaiters space, SpaceWaiters ringSpace, Snapshot snapshot,
            WorkerThread[] workers, Watchdog watchdog, RecentErrors errors) {
        this.poolName = poolName;
        this.memory = memory;
        this.counters = counters;
        this.table = table;
        this.slots = slots;
        this.scheduler = scheduler;
        this.parking = parking;
        this.space = space;
        this.ringSpace = ringSpace;
        this.snapshot = snapshot;
        this.workers = workers;
        this.watchdog = watchdog;
        this.errors = errors;
    }

    void jfrStatsHook(AutoCloseable hook) {
        this.jfrStatsHook = hook;
    }

    // ---- state --------------------------------------------------------------------------------------------

    boolean accepting() {
        return state == RUNNING;
    }

    /** Step 1 has not begun, else {@link PoolShutdownException} (not counted: the caller counts a refusal). */
    void checkAccepting() {
        if (state != RUNNING) {
            throw shutdownRejection();
        }
    }

    PoolShutdownException shutdownRejection() {
        return new PoolShutdownException(state == CLOSED ? "pool is closed" : "pool is shutting down");
    }

    /** Step 4 has begun: workers exit at their next idle check. */
    boolean stopRequested() {
        return stopWorkers;
    }

    boolean isClosed() {
        return state == CLOSED;
    }

    boolean isShutdown() {
        return state != RUNNING;
    }

    boolean isTerminated() {
        return state >= TERMINATED;
    }

    void ensureNotClosed() {
        if (state == CLOSED) {
            throw new IllegalStateException("pool is closed");
        }
    }

    // ---- arena regions ------------------------------------------------------------------------------------

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
     * increment comes after that load, hence after the TERMINATED CAS that precedes it, and our state load
     * below (after the increment) reads TERMINATED or CLOSED: we return false and touch nothing. Otherwise
     * close() sees us and waits until our {@link #exitArena}.
     */
    private boolean enterArena() {
        // getAndAdd (seq_cst): pairs with close()'s volatile load of the count, as argued above.
        ARENA_CALLERS.getAndAdd(this, 1);
        return state < TERMINATED; // volatile load, after the increment: see above
    }

    /** The end of an {@link #enterArena} region: our last arena access happens-before close() reads zero. */
    private void exitArena() {
        // getAndAdd (seq_cst, so also a release): pairs with close()'s volatile load that reads the count.
        ARENA_CALLERS.getAndAdd(this, -1);
    }

    // ---- shutdown -----------------------------------------------------------------------------------------

    /**
     * Steps 1 to 6 (see the class comment) within {@code nanos}; true when the pool has fully stopped (every
     * worker joined) before the deadline. The caller is not a worker of this pool.
     */
    boolean shutdown(ShutdownMode mode, long nanos) throws InterruptedException {
        boolean open = enterArena(); // counted in while it may read the arena: see enterArena
        try {
            return !open || shutdownCounted(mode, nanos); // TERMINATED or CLOSED: nothing left to do
        } finally {
            exitArena();
        }
    }

    /** {@link #shutdown} inside its {@link #enterArena} region. */
    private boolean shutdownCounted(ShutdownMode mode, long nanos) throws InterruptedException {
        final long deadline = nanos == Long.MAX_VALUE ? Long.MAX_VALUE : System.nanoTime() + nanos;
        closeAdmissionCounted(mode); // step 1
        if (state >= TERMINATED) {
            return true;
        }
        long accepted;
        while ((accepted = acceptedAtClose) < 0) {
            Thread.onSpinWait(); // the first caller is between its CAS and its store
        }
        long pollNanos = FIRST_POLL_NANOS;
        for (;;) { // step 2
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
        if (watchdog != null && !watchdog.stop(deadline)) { // step 3: no spawn after this point
            return false;
        }
        stopWorkers = true; // step 4
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
        if (watchdog != null && !watchdog.joinOverflow(deadline)) { // step 5: every overflow thread
            return false;
        }
        // every worker is joined and admission is closed: the outside stripes' caches go back to the freelist
        // (Slots, hazard rule 5), so a terminated pool has every free descriptor there. A cache whose lock an
        // outside thread still holds (a submit refused by the closed admission, about to unreserve) is skipped:
        // its slots are FREE, counted by countFree, and go with the arena.
        slots.drainOutsideCaches();
        STATE.compareAndSet(this, SHUTTING_DOWN, TERMINATED); // step 6
        return true;
    }

    /**
     * Step 1 alone, non-blocking: refuses submissions from now on (a later CANCEL_PENDING upgrades an earlier
     * DRAIN). Safe from any thread, a worker of this pool included. Someone must still call {@link #shutdown}
     * to let the workers stop and reach TERMINATED. Counted as an arena caller (it may run while another
     * thread closes the pool: the ExecutorService view's shutdown()); a no-op once TERMINATED.
     */
    void closeAdmission(ShutdownMode mode) {
        boolean open = enterArena();
        try {
            if (open) {
                closeAdmissionCounted(mode);
            }
        } finally {
            exitArena();
        }
    }

    /** Step 1 inside an {@link #enterArena} region (it writes counters and space waiters). */
    private void closeAdmissionCounted(ShutdownMode mode) {
        if (mode == ShutdownMode.CANCEL_PENDING) {
            cancelRequested = true;
        }
        if (STATE.compareAndSet(this, RUNNING, SHUTTING_DOWN)) {
            shutdownPhase(PoolEvents.Phase.BEGIN, mode, -1);
            // from here on every submit is refused: with a descriptor, then carried (a carried push between the two
            // is accepted, and counted by the second)
            long accepted = counters.closeAdmission() + scheduler.closeCarried();
            shutdownPhase(PoolEvents.Phase.ADMISSION_CLOSED, mode, accepted); // before others can read it
            acceptedAtClose = accepted;
            space.signalAll(); // submitters waiting for space re-check admission and give up
            ringSpace.signalAll(); // and those waiting for a carried-ring cell
        }
    }

    /**
     * Installs the receiver of every task a CANCEL_PENDING sweep cancels (called on the sweeping thread, once
     * per task, after the task's accounting). Set once, before shutdown; null for none.
     */
    void onSweptTask(Consumer<Runnable> sink) {
        this.sweptSink = sink;
    }

    /**
     * CANCEL_PENDING without waiting: step 1, then one sweep of what is queued now, from the calling thread
     * (which may be one of this pool's workers). Entries whose submit is still between acceptance and push are
     * swept by the next {@link #shutdown} call. Safe while another thread closes the pool: the sweep runs
     * inside an {@link #enterArena} region, so close() frees the queues only after it; once the pool is
     * TERMINATED nothing is queued and the call returns without touching the arena.
     */
    void cancelQueuedNow() {
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

    /** Step 2's sweep: pops every entry and cancels what is still queued; workers may race us per entry. */
    private void sweepQueued() {
        long e;
        final Object[] taken = new Object[3]; // a carried task's references (cold path: shutdown)
        final long[] arg = new long[1]; // and a carried task in argument form's argument
        while ((e = scheduler.drainOne(taken, arg)) != QueueEntry.EMPTY) {
            if (e == QueueEntry.CARRIED) {
                sweptCarried(taken, arg[0]);
                continue;
            }
            int idx = table.slotOf(e);
            long gen = table.genOf(e);
            // Read before the CAS, kept only if it wins: while (gen, QUEUED) holds, the references (and flags and
            // argument) are the ones the submitter published with this entry (our pop acquired them), and nothing
            // can overwrite them before the slot leaves (gen, QUEUED). Once our CAS wins, a cancelled waitable is
            // its awaiter's.
            Runnable task = slots.task(idx);
            WaitGroup group = slots.group(idx);
            boolean argForm = (table.flags(idx) & DescriptorTable.FLAG_ARGUMENT) != 0;
            Object fn = argForm ? slots.fn(idx) : null;
            Object ctx = argForm ? slots.ctx(idx) : null;
            long argument = argForm ? table.arg(idx) : 0L;
            long won = table.tryCancel(idx, gen, false);
            if (won == 0) {
                space.signal();
                continue; // a worker started it first, or it was stale
            }
            slots.cancelled(idx);
            // Decide from the word our CAS replaced, never from a re-read: the awaiter of a waitable may already
            // have released the slot and a submitter reserved it.
            if (DescriptorTable.waitable(won)) {
                counters.addCancelled(1);
                slots.wakeSlot(idx); // the awaiter releases the slot (and clears its task), sees it cancelled
            } else {
                slots.clearRefs(idx); // a cancelled detached slot is ours alone: clear, then release
                if (argForm) {
                    slots.clearArgRefs(idx);
                }
                table.releaseCancelledDetached(idx);
                counters.addReleasedOther(1);
                counters.addCancelled(1); // after the release, as for completed tasks
            }
            if (group != null) {
                group.done();
            }
            Consumer<Runnable> sink = sweptSink;
            if (sink != null && argForm) {
                sink.accept(new ArgumentTask(fn, ctx, argument)); // one object per swept task: shutdown is cold
            } else if (sink != null && task != null) {
                sink.accept(task);
            }
        }
    }

    /**
     * A carried task the sweep took off the ring (no descriptor: BoundedRing, "Carried tasks"): the pop made it
     * ours alone, so it is cancelled without a CAS, counted, its group released and the task handed to the sink
     * (a task in argument form, {@code taken[2]} its context marker and {@code arg} its argument, as an
     * {@link ArgumentTask}).
     */
    private void sweptCarried(Object[] taken, long arg) {
        Object task = taken[0];
        WaitGroup group = (WaitGroup) taken[1];
        Object marker = taken[2];
        taken[0] = null;
        taken[1] = null;
        taken[2] = null;
        counters.addCancelled(1);
        if (group != null) {
            group.done();
        }
        Consumer<Runnable> sink = sweptSink;
        if (sink != null) {
            sink.accept(marker != null ? new ArgumentTask(task, QueueEntry.ctxOf(marker), arg) : (Runnable) task);
        }
    }

    /**
     * Interrupts every worker, base and overflow (best effort, for {@code ExecutorService.shutdownNow}): a
     * running task sees the interrupt; a worker between tasks clears it before its next task (see WorkerLoop
     * and OverflowWorker), an idle one re-parks.
     */
    void interruptWorkers() {
        for (WorkerThread w : workers) {
            w.interrupt();
        }
        if (watchdog != null) {
            watchdog.interruptOverflow();
        }
    }

    // ---- close --------------------------------------------------------------------------------------------

    /** Step 7, after {@code shutdown(DRAIN)} without a deadline has reached TERMINATED. Idempotent. */
    void close() {
        synchronized (snapshot.arenaLock) {
            if (state == CLOSED) {
                return;
            }
            // Another thread may still be inside a lifecycle path (shutdown, closeAdmission, cancelQueuedNow's
            // sweep) that entered before TERMINATED and is about to touch the arena: wait for it before the arena
            // goes (it returns promptly: every task has ended, the workers are joined, a sweep finds nothing
            // left to cancel). Volatile load, after our shutdown's TERMINATED CAS; pairs with enterArena's and
            // exitArena's getAndAdd (see enterArena for the argument).
            while ((int) ARENA_CALLERS.getVolatile(this) != 0) {
                LockSupport.parkNanos(this, ARENA_CALLER_POLL_NANOS);
            }
            Snapshot.Reading last = snapshot.read();
            state = CLOSED; // volatile: every later public call sees it before touching the arena
            slots.wakeAllSignals(); // awaiters still parked on a slot re-check and see the pool closed
            scheduler.close(); // frees the grown Chase-Lev arrays, if any, before the arena goes
            memory.close();
            PoolStats fin = snapshot.freeze(last, memory.totals());
            closeJfrHook();
            if (shutdownPhases.compareAndSet(PoolEvents.Phase.ARENA_CLOSED.ordinal(),
                    PoolEvents.Phase.ARENA_CLOSED.ordinal() + 1)) {
                PoolEvents.shutdownPhase(poolName, PoolEvents.Phase.ARENA_CLOSED,
                        cancelRequested ? "CANCEL_PENDING" : "DRAIN", acceptedAtClose,
                        fin.completed() + fin.failed(), fin.cancelled(), fin.liveBytes());
            }
        }
    }

    private void closeJfrHook() {
        AutoCloseable hook = jfrStatsHook;
        if (hook == null) {
            return;
        }
        try {
            hook.close();
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
        PoolEvents.shutdownPhase(poolName, p, m, accepted,
                counts ? counters.sum(PoolCounters.COMPLETED) + counters.sum(PoolCounters.FAILED) : -1,
                counts ? counters.cancelled() : -1, -1);
    }

    private long finishedOrCancelled() {
        return counters.sum(PoolCounters.COMPLETED) + counters.sum(PoolCounters.FAILED) + counters.cancelled();
    }

    // ---- construction failure -----------------------------------------------------------------------------

    /**
     * The failure path of construction: nothing of a half-built pool may stay alive. The parts not built yet
     * are null; {@code lifecycle} is null only if no thread was started. Removes the JFR hook (first: no
     * periodic snapshot starts after it), stops and joins every thread already started (the watchdog first, as
     * in shutdown, then the workers: no task was ever accepted, so each exits at its next idle check), joins
     * any overflow worker, then closes the arena, after the last thread that could touch it has ended, under
     * the arena lock (a periodic snapshot already in flight finishes first). Every failure of this clean-up
     * is added to {@code failure} as suppressed; the interrupt status is kept.
     */
    static void abortConstruction(Throwable failure, Lifecycle lifecycle, AutoCloseable jfrStatsHook,
            Watchdog watchdog, ParkingLot parking, WorkerThread[] workers, Snapshot snapshot, PoolMemory memory) {
        boolean interrupted = false;
        if (jfrStatsHook != null) {
            try {
                jfrStatsHook.close();
            } catch (Throwable t) {
                failure.addSuppressed(t);
            }
        }
        if (lifecycle != null) {
            lifecycle.stopWorkers = true; // volatile: each started worker re-checks it after the wake below
        }
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
        Object lock = snapshot != null ? snapshot.arenaLock : new Object();
        synchronized (lock) {
            if (lifecycle != null) {
                lifecycle.state = CLOSED; // volatile: as after close(), for anything that still holds the pool
            }
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
}
