package dev.threadpool;

/** A task handle that this pool never issued, or whose slot has since been reused. */
public class InvalidHandleException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    /**
     * The handle was not issued by this pool, or is stale.
     *
     * @param message what was wrong with the handle, for the exception's message
     */
    public InvalidHandleException(String message) {
        super(message);
    }
}
