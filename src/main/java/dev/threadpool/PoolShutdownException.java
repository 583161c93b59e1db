package dev.threadpool;

import java.util.concurrent.RejectedExecutionException;

/** A submission was refused because the pool is shutting down or closed. */
public class PoolShutdownException extends RejectedExecutionException {
    private static final long serialVersionUID = 1L;

    /**
     * A submission refused by a pool that is shutting down or closed.
     *
     * @param message what was refused, for the exception's message
     */
    public PoolShutdownException(String message) {
        super(message);
    }
}
