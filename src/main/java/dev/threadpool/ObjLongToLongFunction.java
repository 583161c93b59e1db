package dev.threadpool;

/**
 * A function of an object and a {@code long} that returns a {@code long}: the {@code long}-valued companion of
 * {@link java.util.function.ObjLongConsumer} (the JDK has {@code ToLongBiFunction<T, U>}, whose {@code long}
 * argument would be boxed). The half of {@link ThreadPool#forkLong}, whose result {@link ThreadPool#joinLong}
 * returns without a holder object.
 *
 * @param <T> the type of the object argument (the context)
 */
@FunctionalInterface
public interface ObjLongToLongFunction<T> {
    /**
     * Applies this function.
     *
     * @param ctx   the object argument, as given to the fork (may be null)
     * @param value the {@code long} argument
     * @return the result
     */
    long applyAsLong(T ctx, long value);
}
