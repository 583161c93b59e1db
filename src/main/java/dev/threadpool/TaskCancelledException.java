package dev.threadpool;

import java.util.concurrent.CancellationException;

/** Thrown by {@code await} when the awaited task was cancelled before it started. */
public class TaskCancelledException extends CancellationException {
    private static final long serialVersionUID = 1L;

    public TaskCancelledException(String message) {
        super(message);
    }
}
