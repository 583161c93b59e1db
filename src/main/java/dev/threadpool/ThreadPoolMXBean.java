package dev.threadpool;

/**
 * The management view of one pool, registered in the platform MBean server when its configuration names one
 * ({@link PoolConfig.Builder#jmxName}), and unregistered when the pool closes. Suggested ObjectName:
 * {@code dev.threadpool:type=ThreadPool,name=<name>}; JConsole and VisualVM show it under the
 * {@code dev.threadpool} domain.
 *
 * <p>Every attribute is a field of {@link ThreadPool#statsSnapshot()} (or derived from one): reading an
 * attribute takes a snapshot, and a {@code getAttributes} call of several attributes takes one snapshot for
 * all of them, so they are consistent with each other as a snapshot's fields are. Nothing is maintained for
 * JMX on the pool's own paths. After close the attributes would read the final snapshot, but the MXBean is
 * gone by then.
 *
 * <p>Latency attributes are in nanoseconds and read {@code -1} when the pool records no latencies
 * ({@link #isLatencyEnabled()} false: {@link TimestampMode#DISABLED}, or timestamps compiled out), so that
 * "not recorded" cannot be mistaken for "zero"; with latencies on and no sample yet they read 0.
 */
public interface ThreadPoolMXBean {
    // ---- lifecycle ----

    /** Tasks accepted ({@link PoolStats#submitted()}). */
    long getSubmitted();

    /** Tasks that began running, inline runs included ({@link PoolStats#started()}). */
    long getStarted();

    /** Tasks that returned normally ({@link PoolStats#completed()}). */
    long getCompleted();

    /** Tasks that threw ({@link PoolStats#failed()}). */
    long getFailed();

    /** Tasks cancelled before they started ({@link PoolStats#cancelled()}). */
    long getCancelled();

    /** Submissions refused after they had started ({@link PoolStats#rejected()}). */
    long getRejected();

    /** Accepted and neither started nor cancelled, tasks ({@link PoolStats#queuedTasks()}). */
    long getQueuedTasks();

    /** Running now, tasks ({@link PoolStats#activeTasks()}). */
    long getActiveTasks();

    /** Task descriptors in use ({@link PoolStats#taskDescLive()}). */
    long getTaskDescLive();

    // ---- queues ----

    /** Entries queued now over every lane ({@link PoolStats#queueDepth()}). */
    long getQueueDepth();

    /** The lanes' peak depths summed, entries ({@link PoolStats#peakQueueDepth()}). */
    long getPeakQueueDepth();

    // ---- scheduling ----

    /** Times a worker parked ({@link PoolStats#parks()}). */
    long getParks();

    /** Times a worker was woken on purpose ({@link PoolStats#wakeups()}). */
    long getWakeups();

    /** Successful steals ({@link PoolStats#steals()}). */
    long getSteals();

    /** Steal attempts that found nothing or lost a race ({@link PoolStats#stealFailures()}). */
    long getStealFailures();

    /** Tasks run inline because the pool was full ({@link PoolStats#inlineRuns()}). */
    long getInlineRuns();

    /** Workers parked at the snapshot ({@link PoolStats#parkedWorkers()}). */
    int getParkedWorkers();

    /** Every worker's busy time summed, ns ({@link PoolStats#busyNanos()}). */
    long getBusyNanos();

    /** Every worker's idle time summed, ns ({@link PoolStats#idleNanos()}). */
    long getIdleNanos();

    // ---- workers ----

    /** The configured workers ({@link PoolConfig#maxThreads()}) plus the overflow workers alive now. */
    int getWorkerCount();

    /** Overflow workers alive now, LANE_EXTENSION ({@link PoolStats#overflowLive()}). */
    long getOverflowLive();

    /** Overflow workers started, LANE_EXTENSION ({@link PoolStats#overflowSpawned()}). */
    long getOverflowSpawned();

    /** Overflow workers retired, LANE_EXTENSION ({@link PoolStats#overflowRetired()}). */
    long getOverflowRetired();

    /** Default-lane tasks seen running past the promotion timeout ({@link PoolStats#stallsSeen()}). */
    long getStallsSeen();

    // ---- memory ----

    /** Off-heap bytes in use: {@code TotalAllocBytes - TotalFreeBytes} ({@link PoolStats#liveBytes()}). */
    long getLiveBytes();

    /** The most {@code LiveBytes} has been, bytes ({@link PoolStats#peakLiveBytes()}). */
    long getPeakLiveBytes();

    /** Every off-heap byte ever allocated ({@link PoolStats#totalAllocBytes()}). */
    long getTotalAllocBytes();

    /** Every off-heap byte given back ({@link PoolStats#totalFreeBytes()}). */
    long getTotalFreeBytes();

    /** Worker scratch buffers' counted bytes, part of {@code LiveBytes} ({@link PoolStats#scratchBytes()}). */
    long getScratchBytes();

    /** An accounting invariant failed twice in a row: a bug ({@link PoolStats#accountingSkewDetected()}). */
    boolean isAccountingSkewDetected();

    // ---- latency (TimestampMode.FULL) ----

    /** Whether this pool records latencies ({@link LatencyStats#enabled()}). */
    boolean isLatencyEnabled();

    /** Queue-wait samples recorded; -1 when latencies are off. */
    long getQueueWaitCount();

    /** Queue-wait median, ns ({@code latency.queueWait.p50}); -1 when latencies are off. */
    long getQueueWaitP50Nanos();

    /** Queue-wait 99th percentile, ns; -1 when latencies are off. */
    long getQueueWaitP99Nanos();

    /** Queue-wait 99.9th percentile, ns; -1 when latencies are off. */
    long getQueueWaitP999Nanos();

    /** Largest queue wait, ns; -1 when latencies are off. */
    long getQueueWaitMaxNanos();

    /** Execution median, ns ({@code latency.execution.p50}); -1 when latencies are off. */
    long getExecutionP50Nanos();

    /** Execution 99th percentile, ns; -1 when latencies are off. */
    long getExecutionP99Nanos();

    /** Execution 99.9th percentile, ns; -1 when latencies are off. */
    long getExecutionP999Nanos();

    /** Longest execution, ns; -1 when latencies are off. */
    long getExecutionMaxNanos();

    /** Wake latency median, ns ({@code latency.wake.p50}); -1 when latencies are off. */
    long getWakeP50Nanos();

    /** Wake latency 99th percentile, ns; -1 when latencies are off. */
    long getWakeP99Nanos();
}
