package dev.threadpool;

/** The scheduler behind a pool. All variants share one public API; see {@code docs/DESIGN.md}. */
public enum SchedulerVariant {
    /** One Vyukov MPMC ring shared by all workers: the simple, correctness-first baseline. */
    GLOBAL_QUEUE,
    /** Inject ring plus per-worker LIFO slot and local queue with steal-half over the non-empty bitmap. */
    WORK_STEALING,
    /**
     * The WORK_STEALING default lane plus a blocking lane ({@link SubmitOptions#BLOCKING}) drained by reserved
     * workers, and a watchdog that adds overflow workers when default-lane tasks run too long.
     */
    LANE_EXTENSION
}
