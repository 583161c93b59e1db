package dev.threadpool.internal.scheduler;

/**
 * What a detached submit does when no descriptor is free. Passed explicitly, so that no deadline value has to
 * double as a policy.
 */
public enum WaitMode {
    /** One attempt: the submit returns false at once when the pool is full. */
    NO_WAIT,
    /**
     * Waits for a free descriptor until the deadline ({@link System#nanoTime()} based; {@link Long#MAX_VALUE}
     * for none), then returns false. Never runs the task on the caller's thread, also on a worker of this pool.
     */
    UNTIL_DEADLINE,
    /**
     * Waits as long as it takes. From a worker of this pool it does not wait: the task runs inline on the
     * caller's stack (caller-runs), so a task that submits into a full pool cannot deadlock it; at
     * {@code MAX_INLINE_DEPTH} nested runs that refusal is a {@link dev.threadpool.PoolBusyException}.
     */
    UNBOUNDED
}
