package dev.threadpool;

/** What an idle worker does while it waits for work. */
public enum IdleStrategy {
    /** Spin briefly (about a microsecond), then park. Costs nothing while idle. The default. */
    PARK,
    /** Spin for up to {@code spinBeforeParkNanos}, then park: lower wake latency, some CPU while idle. */
    SPIN_THEN_PARK,
    /** Never park: lowest latency, one full core per idle worker. For dedicated cores only. */
    BUSY_SPIN
}
