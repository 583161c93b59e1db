package dev.threadpool;

import java.time.Duration;
import java.util.Objects;

/**
 * Checks of the public API's arguments, shared by {@link ThreadPool} and {@link WaitGroup}:
 * each failure names the parameter and what it must be, before anything is accepted or waited for.
 */
final class Arguments {
    private Arguments() {}

    static void requireTask(Runnable task) {
        if (task == null) {
            throw new NullPointerException("task must not be null");
        }
    }

    /** The function of a task in argument form ({@code submit(fn, ctx, arg)}); its context may be null. */
    static void requireFn(Object fn) {
        if (fn == null) {
            throw new NullPointerException("fn must not be null");
        }
    }

    /** The array, the range within it and every task in the range. */
    static void checkBatch(Runnable[] tasks, int from, int to) {
        Objects.requireNonNull(tasks, "tasks must not be null");
        Objects.checkFromToIndex(from, to, tasks.length);
        for (int i = from; i < to; i++) {
            if (tasks[i] == null) {
                throw new NullPointerException("tasks[" + i + "] must not be null");
            }
        }
    }

    /**
     * A timeout in nanoseconds, {@link Long#MAX_VALUE} when it is longer than that (about 292 years).
     *
     * @throws NullPointerException if {@code timeout} is null
     * @throws IllegalArgumentException if {@code timeout} is negative
     */
    static long timeoutNanos(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout must not be null");
        if (timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must be >= 0: timeout=" + timeout);
        }
        try {
            return timeout.toNanos();
        } catch (ArithmeticException tooLong) {
            return Long.MAX_VALUE;
        }
    }
}
