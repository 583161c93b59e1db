package dev.threadpool;

/**
 * A function of an object and a {@code long} that returns an object: the result-bearing companion of
 * {@link java.util.function.ObjLongConsumer}. The half of {@link ThreadPool#forkObject}, whose result
 * {@link ThreadPool#joinObject} returns; the pool keeps it in the fork's frame, not in a task object.
 *
 * @param <T> the type of the object argument (the context)
 * @param <R> the type of the result
 */
@FunctionalInterface
public interface ObjLongFunction<T, R> {
    /**
     * Applies this function.
     *
     * @param ctx   the object argument, as given to the fork (may be null)
     * @param value the {@code long} argument
     * @return the result (may be null)
     */
    R apply(T ctx, long value);
}
