package dev.threadpool.jmh;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * A reusable, allocation-free countdown on one shared atomic: {@link #task()} is one preallocated Runnable that
 * counts itself down, and one waiter thread {@link #await}s zero. The comparisons count completions on the
 * public {@code WaitGroup} on every side ({@link Floods}); this is the labelled row
 * {@code flood_1m_shared_counter}, on every pool, and BurstBench's count of its producers.
 *
 * <p>Why not CountDownLatch or Phaser: a CountDownLatch is single-use, so each invocation would allocate one
 * (and JMH's {@code gc.alloc.rate.norm} would charge it to the pool); a Phaser allocates its QNode on every
 * blocking wait. This is the cheapest completion the JDK pools' API leaves a caller: one atomic decrement per
 * task on one shared counter, one wake-up of the waiter on the last one (docs/BENCHMARKS.md, "Fair
 * comparison").
 */
final class Countdown {
    private final AtomicInteger remaining = new AtomicInteger();
    private volatile Thread waiter;
    private final Runnable task = this::countDown;

    /** The counting task: a single instance, run as often as {@link #arm} said. */
    Runnable task() {
        return task;
    }

    /** Expects {@code n} more countDowns; call before submitting the tasks, from the waiting thread. */
    void arm(int n) {
        remaining.addAndGet(n); // getAndAdd is a full fence: the count is visible before any task is handed over
    }

    void countDown() {
        if (remaining.decrementAndGet() == 0) {
            Thread w = waiter; // volatile read; pairs with the volatile write in await
            if (w != null) {
                LockSupport.unpark(w);
            }
        }
    }

    /** Waits until the count is 0; throws after {@code timeoutSeconds} so a lost task fails the run. */
    void await(long timeoutSeconds) {
        if (remaining.get() == 0) {
            return;
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
        waiter = Thread.currentThread(); // volatile write, then re-check: a countDown after it sees us
        try {
            while (remaining.get() != 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new IllegalStateException("tasks did not finish within " + timeoutSeconds
                            + " s: " + remaining.get() + " outstanding");
                }
                LockSupport.parkNanos(this, left);
            }
        } finally {
            waiter = null;
        }
    }

    int remaining() {
        return remaining.get();
    }
}
