package dev.threadpool;

/**
 * The latency histograms of a {@link PoolStats} snapshot; recorded only with {@link TimestampMode#FULL} (and not
 * compiled out by {@code -Ddev.threadpool.timestamps=false}). All in nanoseconds.
 *
 * @param enabled    whether this pool records latencies
 * @param queueWait  submit to start, every task run from a queue (inline runs are not queued and not counted)
 * @param execution  start to end of the same tasks
 * @param wake       deliberate unpark of a worker to that worker running again, merged over every worker (per
 *                   worker in {@link WorkerStats#wakeLatency()})
 */
public record LatencyStats(boolean enabled, LatencySummary queueWait, LatencySummary execution,
        LatencySummary wake) {
    /** A pool that records no latencies. */
    public static final LatencyStats DISABLED =
            new LatencyStats(false, LatencySummary.EMPTY, LatencySummary.EMPTY, LatencySummary.EMPTY);
}
