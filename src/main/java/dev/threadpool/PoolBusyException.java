package dev.threadpool;

/** An operation that needs a quiescent (or less loaded) pool was called while it was busy. */
public class PoolBusyException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    /**
     * The pool was too busy for the operation.
     *
     * @param message which operation was refused and why, for the exception's message
     */
    public PoolBusyException(String message) {
        super(message);
    }
}
