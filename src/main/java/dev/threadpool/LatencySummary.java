package dev.threadpool;

/**
 * A latency distribution in a {@link PoolStats} snapshot, in nanoseconds, from a log-bucketed histogram
 * (8 buckets per power of two). A percentile is the highest value of the bucket that holds it, capped by the
 * exact maximum: at most 12.5% above the true value, never below it. All zero when nothing was recorded
 * (and always with {@link TimestampMode#DISABLED}).
 *
 * @param count  samples recorded
 * @param p50    median, ns
 * @param p90    90th percentile, ns
 * @param p99    99th percentile, ns
 * @param p999   99.9th percentile, ns
 * @param max    largest sample, exact, ns
 * @param mean   exact mean (sum / count), ns
 */
public record LatencySummary(long count, long p50, long p90, long p99, long p999, long max, long mean) {
    /** No samples. */
    public static final LatencySummary EMPTY = new LatencySummary(0, 0, 0, 0, 0, 0, 0);
}
