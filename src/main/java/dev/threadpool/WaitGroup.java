package dev.threadpool;

import dev.threadpool.internal.scheduler.WorkerThread;
import java.time.Duration;
import java.util.concurrent.locks.AbstractQueuedSynchronizer;

/**
 * Counts outstanding tasks and lets threads wait for the count to reach zero, like Go's
 * {@code sync.WaitGroup}. {@link ThreadPool#submit(Runnable, WaitGroup)} adds one before the task is handed
 * over and the pool calls {@link #done()} once the task has completed, failed or been cancelled (or when the
 * submission is refused), so {@link #await()} returns once every task submitted with the group has ended.
 *
 * <p>Reusable: once the count is back at zero, more tasks may be added. {@link #done()} allocates nothing.
 */
public final class WaitGroup {
    private final Sync sync = new Sync();

    private static final class Sync extends AbstractQueuedSynchronizer {
        private static final long serialVersionUID = 1L;

        int count() {
            return getState();
        }

        void add(int delta) {
            for (;;) {
                int c = getState();
                int n = c + delta;
                if (n < 0) {
                    throw new IllegalStateException("WaitGroup count would become negative: count=" + c
                            + ", delta=" + delta);
                }
                if (compareAndSetState(c, n)) {
                    if (n == 0) {
                        releaseShared(0); // wake waiters
                    }
                    return;
                }
            }
        }

        @Override
        protected int tryAcquireShared(int ignored) {
            return getState() == 0 ? 1 : -1;
        }

        @Override
        protected boolean tryReleaseShared(int ignored) {
            return getState() == 0;
        }
    }

    /** Adds {@code delta} (may be negative) to the count. */
    public void add(int delta) {
        sync.add(delta);
    }

    /** Subtracts one; wakes the waiters when the count reaches zero. */
    public void done() {
        sync.add(-1);
    }

    /** The current count. */
    public int pending() {
        return sync.count();
    }

    /**
     * Waits until the count is zero. Called from a worker of a pool, it runs queued work (and offered join
     * halves) of that worker's pool while it waits, instead of blocking the worker: on a small pool the tasks
     * it waits for may sit in its own queues. Such a helping wait polls the count between helped tasks and
     * blocks for at most {@link #HELP_POLL_NANOS} at a time when nothing is queued for it.
     */
    public void await() throws InterruptedException {
        if (sync.count() != 0 && WorkerThread.currentIsWorker()) {
            awaitHelping(Long.MAX_VALUE);
            return;
        }
        sync.acquireSharedInterruptibly(0);
    }

    /**
     * Waits until the count is zero or the timeout passes; returns true when it reached zero.
     *
     * @throws IllegalArgumentException if {@code timeout} is negative
     */
    public boolean await(Duration timeout) throws InterruptedException {
        if (timeout == null) {
            throw new NullPointerException("timeout must not be null");
        }
        if (timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must be >= 0: timeout=" + timeout);
        }
        long nanos = saturatedNanos(timeout);
        if (sync.count() != 0 && WorkerThread.currentIsWorker()) {
            return awaitHelping(nanos);
        }
        return sync.tryAcquireSharedNanos(0, nanos);
    }

    /** Longest block of a helping await (a worker's) before it looks for queued work again. */
    static final long HELP_POLL_NANOS = 100_000L;

    /**
     * A worker's await: helps its pool (WorkerThread.helpCurrent, nested and bounded) while the count is not
     * zero; blocks briefly when nothing is queued for it. True when the count reached zero within
     * {@code nanos} ({@link Long#MAX_VALUE}: no limit).
     */
    private boolean awaitHelping(long nanos) throws InterruptedException {
        final long deadline = nanos == Long.MAX_VALUE ? Long.MAX_VALUE : System.nanoTime() + nanos;
        while (sync.count() != 0) {
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            if (WorkerThread.helpCurrent()) {
                continue;
            }
            long left = deadline == Long.MAX_VALUE ? HELP_POLL_NANOS : deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            if (sync.tryAcquireSharedNanos(0, Math.min(left, HELP_POLL_NANOS))) {
                return true;
            }
        }
        return true;
    }

    static long saturatedNanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }

    @Override
    public String toString() {
        return "WaitGroup[pending=" + sync.count() + "]";
    }

}
