package dev.threadpool;

/** What an idle worker does while it waits for work. */
public enum IdleStrategy {
    /**
     * Spin briefly (about a microsecond), then park; one worker at a time (the first to run out of work) spins
     * up to 50 microseconds instead, so a pool fed steadily does not park and unpark a worker per task. An
     * idle pool costs nothing once that spin is over. The default.
     */
    PARK,
    /** Spin for up to {@code spinBeforeParkNanos}, then park: lower wake latency, some CPU while idle. */
    SPIN_THEN_PARK,
    /** Never park: lowest latency, one full core per idle worker. For dedicated cores only. */
    BUSY_SPIN
}
