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
        checkRange(from, to, tasks.length, "tasks");
        for (int i = from; i < to; i++) {
            if (tasks[i] == null) {
                throw new NullPointerException("tasks[" + i + "] must not be null");
            }
        }
    }

    /**
     * A batch in argument form ({@code submitBatch(fn, ctx, args, from, to)}): the function, the array and the range
     * within it; the context may be null, and any {@code long} is an argument, so no element is refused.
     */
    static void checkArgBatch(Object fn, long[] args, int from, int to) {
        requireFn(fn);
        Objects.requireNonNull(args, "args must not be null");
        checkRange(from, to, args.length, "args");
    }

    /** {@code [from, to)} within an array of {@code length} called {@code array}, or an exception naming them. */
    private static void checkRange(int from, int to, int length, String array) {
        if (from < 0 || from > to || to > length) {
            throw new IndexOutOfBoundsException("from and to must satisfy 0 <= from <= to <= " + array
                    + ".length: from=" + from + ", to=" + to + ", " + array + ".length=" + length);
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
