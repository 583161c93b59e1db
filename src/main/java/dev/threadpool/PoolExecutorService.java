package dev.threadpool;

import dev.threadpool.internal.scheduler.PoolCore;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The {@link java.util.concurrent.ExecutorService} view of a {@link ThreadPool} ({@link ThreadPool#asExecutorService()}).
 *
 * <p>{@code submit}, {@code invokeAll} and {@code invokeAny} come from {@link AbstractExecutorService}: each task
 * is wrapped in a {@link java.util.concurrent.FutureTask} and handed to {@link #execute}, a detached submit.
 * So futures have the JDK's semantics exactly ({@code cancel(true)} interrupts the worker running the task; the
 * pool clears that interrupt before its next task).
 *
 * <h2>Lifecycle mapping</h2>
 * <ul>
 *   <li>{@link #shutdown()}: {@link ShutdownMode#DRAIN} without waiting.</li>
 *   <li>{@link #shutdownNow()}: {@link ShutdownMode#CANCEL_PENDING} without waiting; returns the tasks it swept
 *       from the queues (never run, not cancelled: the caller owns them, as with {@code ThreadPoolExecutor}),
 *       then interrupts every worker, best effort. A task submitted to the pool in argument form
 *       ({@code submit(fn, ctx, arg)}) is in the list as a {@code Runnable} made for it, whose {@code run()} calls
 *       {@code fn.accept(ctx, arg)}.</li>
 *   <li>{@link #awaitTermination}, {@link #isShutdown()}, {@link #isTerminated()}: the pool's own state.</li>
 *   <li>{@link #close()}: shutdown, wait for termination ({@code shutdownNow} once if interrupted, as the JDK's
 *       default), then {@link ThreadPool#close()}: closing the view closes the pool and frees its arena.</li>
 * </ul>
 *
 * <h2>Why a terminator thread</h2>
 * {@code PoolCore.shutdown} closes admission and then <em>waits</em> for the accepted tasks and joins the
 * workers; only a thread outside the pool may do that waiting. {@code ExecutorService.shutdown} must return at
 * once (and may be called from a task), yet {@code isTerminated()} must become true by itself. So the first
 * shutdown call closes admission on the caller's thread ({@code PoolCore.closeAdmission}, non-blocking) and
 * starts one daemon thread that runs the ordinary blocking {@code PoolCore.shutdown} to its end. The
 * alternative, having the last worker to finish complete termination, would put a shutdown check on the
 * workers' per-task path and make a worker join its siblings; one short-lived thread per pool lifetime, only
 * for pools used through this view, keeps the hot path untouched.
 *
 * <h2>Who gets a swept task</h2>
 * Each {@code shutdownNow} call collects into a list of its own, registered while its sweep runs: a task its own
 * sweep removes goes to its list; one that another thread's sweep removes meanwhile (a racing {@code close()}
 * or {@code ThreadPool.shutdown(CANCEL_PENDING)}) goes to the oldest collecting call. So concurrent
 * {@code shutdownNow} calls each return a list, and every swept task is in exactly one of them.
 *
 * <p>A task that a CANCEL_PENDING sweep removes while no {@code shutdownNow} is collecting (a sweep by a later
 * {@code ThreadPool.shutdown(CANCEL_PENDING)}, or of an entry whose submit was still in flight) is a task nobody
 * will ever receive: if it is a {@link Future}, it is cancelled so that {@code get()} does not hang.
 */
final class PoolExecutorService extends AbstractExecutorService {
    /** Slice of the wait in awaitTermination while the pool has not been shut down yet. */
    private static final long NOT_SHUT_DOWN_POLL_NANOS = 10_000_000L;

    private final ThreadPool pool;
    private final PoolCore core;
    private final AtomicBoolean terminatorStarted = new AtomicBoolean();
    private final CountDownLatch terminated = new CountDownLatch(1);
    private final Object sweepLock = new Object();
    /** The shutdownNow calls collecting swept tasks right now, oldest first (guarded by sweepLock). */
    private final ArrayDeque<Collector> collecting = new ArrayDeque<>();

    /** One shutdownNow call's list; identity equality, so removing it removes this call's, not an equal one. */
    private static final class Collector {
        final Thread owner = Thread.currentThread();
        final List<Runnable> tasks = new ArrayList<>();
    }

    PoolExecutorService(ThreadPool pool, PoolCore core) {
        this.pool = pool;
        this.core = core;
        core.onSweptTask(this::swept);
    }

    @Override
    public void execute(Runnable command) {
        Objects.requireNonNull(command, "command must not be null");
        try {
            pool.submit(command);
        } catch (PoolBusyException busy) {
            throw new RejectedExecutionException(busy.getMessage(), busy);
        }
    }

    @Override
    public void shutdown() {
        core.closeAdmission(ShutdownMode.DRAIN);
        startTerminator();
    }

    @Override
    public List<Runnable> shutdownNow() {
        Collector mine = new Collector();
        synchronized (sweepLock) {
            collecting.addLast(mine);
        }
        try {
            core.cancelQueuedNow(); // counted by the pool's close(): safe while another thread closes it
        } finally {
            synchronized (sweepLock) {
                collecting.remove(mine);
            }
        }
        core.interruptWorkers();
        startTerminator();
        return mine.tasks; // ours alone from here on: no sweep adds to a collector once it is removed
    }

    @Override
    public boolean isShutdown() {
        return core.isShutdown();
    }

    @Override
    public boolean isTerminated() {
        return core.isTerminated();
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
        Objects.requireNonNull(unit, "unit must not be null");
        long nanos = unit.toNanos(timeout);
        long deadline = System.nanoTime() + Math.max(0, nanos);
        boolean ownWorker = core.currentWorkerIndex() >= 0;
        for (;;) {
            if (core.isTerminated()) {
                return true;
            }
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            long remaining = deadline - System.nanoTime();
            if (remaining <= 0) {
                return false;
            }
            if (core.isShutdown() && !ownWorker) {
                // Someone shut the pool down: complete (or help complete) the termination ourselves.
                return completeShutdown(remaining);
            }
            // Not shut down yet (or we are a worker, which can only wait for the terminator).
            terminated.await(ownWorker ? remaining : Math.min(remaining, NOT_SHUT_DOWN_POLL_NANOS),
                    TimeUnit.NANOSECONDS);
        }
    }

    /**
     * Shuts down, waits for termination, then closes the pool. If interrupted while waiting it calls
     * {@link #shutdownNow()} once, keeps waiting, and restores the interrupt status at the end.
     *
     * @throws IllegalStateException if called from one of the pool's workers (it would wait for itself)
     */
    @Override
    public void close() {
        if (core.currentWorkerIndex() >= 0) {
            throw new IllegalStateException("close() called from a worker of this pool would wait for itself;"
                    + " call it from another thread");
        }
        boolean interrupted = false;
        shutdown();
        while (!core.isTerminated()) {
            try {
                awaitTermination(1, TimeUnit.DAYS);
            } catch (InterruptedException e) {
                if (!interrupted) {
                    shutdownNow();
                    interrupted = true;
                }
            }
        }
        pool.close();
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return "ExecutorService[" + pool + "]";
    }

    private void startTerminator() {
        if (!terminatorStarted.compareAndSet(false, true)) {
            return;
        }
        Thread t = new Thread(this::terminate, pool.config().threadNamePrefix() + "terminator");
        t.setDaemon(true); // it only ever waits for the pool; it must not keep the JVM alive by itself
        t.start();
    }

    private void terminate() {
        try {
            for (;;) {
                try {
                    if (completeShutdown(Long.MAX_VALUE)) {
                        return;
                    }
                } catch (InterruptedException ignored) {
                    // nobody but us holds this thread; keep going
                }
            }
        } finally {
            terminated.countDown();
        }
    }

    /**
     * The blocking half of the pool's shutdown; never called from a worker of the pool. {@link ThreadPool#close()}
     * on another thread waits for every thread inside {@code PoolCore.shutdown} (an arena caller, like
     * {@code cancelQueuedNow} and {@code closeAdmission}) before it frees the arena, so our loop never reads
     * freed memory; a call made once the pool is terminated or closed returns true at once.
     */
    private boolean completeShutdown(long nanos) throws InterruptedException {
        return core.shutdown(ShutdownMode.DRAIN, nanos); // DRAIN never downgrades an earlier CANCEL_PENDING
    }

    private void swept(Runnable task) {
        synchronized (sweepLock) {
            Collector to = collecting.peekFirst(); // a sweep on another thread: the oldest collecting call
            for (Collector c : collecting) {
                if (c.owner == Thread.currentThread()) {
                    to = c; // the calling shutdownNow's own sweep
                    break;
                }
            }
            if (to != null) {
                to.tasks.add(task);
                return;
            }
        }
        if (task instanceof Future<?> f) {
            f.cancel(false); // nobody will receive it: make its future report the cancellation
        }
    }
}
