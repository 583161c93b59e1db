package dev.threadpool;

/**
 * A function of an object and a {@code long} that returns a {@code double}: the {@code double}-valued companion of
 * {@link java.util.function.ObjLongConsumer}. The half of {@link ThreadPool#forkDouble}, whose result
 * {@link ThreadPool#joinDouble} returns without a holder object.
 *
 * @param <T> the type of the object argument (the context)
 */
@FunctionalInterface
public interface ObjLongToDoubleFunction<T> {
    /**
     * Applies this function.
     *
     * @param ctx   the object argument, as given to the fork (may be null)
     * @param value the {@code long} argument
     * @return the result
     */
    double applyAsDouble(T ctx, long value);
}
