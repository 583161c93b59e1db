package dev.threadpool;

/** A task handle that this pool never issued, or whose slot has since been reused. */
public class InvalidHandleException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    public InvalidHandleException(String message) {
        super(message);
    }
}
