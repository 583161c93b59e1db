package dev.threadpool;

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

    /** Waits until the count is zero. */
    public void await() throws InterruptedException {
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
        return sync.tryAcquireSharedNanos(0, saturatedNanos(timeout));
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
