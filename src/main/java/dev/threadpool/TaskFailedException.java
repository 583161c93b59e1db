package dev.threadpool;

/** Thrown by {@code await} when the awaited task threw; the cause is what it threw. */
public class TaskFailedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public TaskFailedException(String message, Throwable cause) {
        super(message, cause);
    }
}
