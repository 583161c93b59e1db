package dev.threadpool;

import java.util.concurrent.CancellationException;

/** Thrown by {@code await} when the awaited task was cancelled before it started. */
public class TaskCancelledException extends CancellationException {
    private static final long serialVersionUID = 1L;

    /**
     * An await of a task that was cancelled.
     *
     * @param message which task was cancelled, for the exception's message
     */
    public TaskCancelledException(String message) {
        super(message);
    }
}
