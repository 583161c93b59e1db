package dev.threadpool;

/** How {@link ThreadPool#shutdown(ShutdownMode, java.time.Duration)} treats work that is still queued. */
public enum ShutdownMode {
    /** Run every accepted task, then stop. */
    DRAIN,
    /** Cancel every task still queued (counted in {@code cancelled}); running tasks finish. */
    CANCEL_PENDING
}
