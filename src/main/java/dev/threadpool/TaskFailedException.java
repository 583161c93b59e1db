package dev.threadpool;

/** Thrown by {@code await} when the awaited task threw; the cause is what it threw. */
public class TaskFailedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /**
     * An await of a task that threw.
     *
     * @param message which task failed, for the exception's message
     * @param cause   what the task threw
     */
    public TaskFailedException(String message, Throwable cause) {
        super(message, cause);
    }
}
