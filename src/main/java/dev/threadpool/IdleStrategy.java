package dev.threadpool;

/** What an idle worker does while it waits for work. */
public enum IdleStrategy {
    /**
     * Look for work twice, then park. A worker that has just run a task first stays reachable
     * for up to {@code PoolConfig.idleWindow} (default 50 µs) while its idle gaps are that short, so a task
     * submitted right after the last one needs no unpark. Costs nothing while idle. The default.
     */
    PARK,
    /** Spin for up to {@code spinBeforeParkNanos}, then park: lower wake latency, some CPU while idle. */
    SPIN_THEN_PARK,
    /** Never park: lowest latency, one full core per idle worker. For dedicated cores only. */
    BUSY_SPIN
}
