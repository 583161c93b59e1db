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

    /** {@return tasks accepted ({@link PoolStats#submitted()})} */
    long getSubmitted();

    /** {@return tasks that began running, inline runs included ({@link PoolStats#started()})} */
    long getStarted();

    /** {@return tasks that returned normally ({@link PoolStats#completed()})} */
    long getCompleted();

    /** {@return tasks that threw ({@link PoolStats#failed()})} */
    long getFailed();

    /** {@return tasks cancelled before they started ({@link PoolStats#cancelled()})} */
    long getCancelled();

    /** {@return submissions refused after they had started ({@link PoolStats#rejected()})} */
    long getRejected();

    /** {@return tasks accepted and neither started nor cancelled ({@link PoolStats#queuedTasks()})} */
    long getQueuedTasks();

    /** {@return tasks running now ({@link PoolStats#activeTasks()})} */
    long getActiveTasks();

    /** {@return task descriptors in use ({@link PoolStats#taskDescLive()})} */
    long getTaskDescLive();

    // ---- queues ----

    /** {@return entries queued now over every lane ({@link PoolStats#queueDepth()})} */
    long getQueueDepth();

    /** {@return the lanes' peak depths summed, entries ({@link PoolStats#peakQueueDepth()})} */
    long getPeakQueueDepth();

    // ---- scheduling ----

    /** {@return times a worker parked ({@link PoolStats#parks()})} */
    long getParks();

    /** {@return times a worker was woken on purpose ({@link PoolStats#wakeups()})} */
    long getWakeups();

    /** {@return successful steals ({@link PoolStats#steals()})} */
    long getSteals();

    /** {@return steal attempts that found nothing or lost a race ({@link PoolStats#stealFailures()})} */
    long getStealFailures();

    /** {@return tasks run inline because the pool was full ({@link PoolStats#inlineRuns()})} */
    long getInlineRuns();

    /** {@return workers parked at the snapshot ({@link PoolStats#parkedWorkers()})} */
    int getParkedWorkers();

    /** {@return every worker's busy time summed, ns ({@link PoolStats#busyNanos()})} */
    long getBusyNanos();

    /** {@return every worker's idle time summed, ns ({@link PoolStats#idleNanos()})} */
    long getIdleNanos();

    // ---- workers ----

    /** {@return the configured workers ({@link PoolConfig#maxThreads()}) plus the overflow workers alive now} */
    int getWorkerCount();

    /** {@return overflow workers alive now, LANE_EXTENSION ({@link PoolStats#overflowLive()})} */
    long getOverflowLive();

    /** {@return overflow workers started, LANE_EXTENSION ({@link PoolStats#overflowSpawned()})} */
    long getOverflowSpawned();

    /** {@return overflow workers retired, LANE_EXTENSION ({@link PoolStats#overflowRetired()})} */
    long getOverflowRetired();

    /** {@return default-lane tasks seen running past the promotion timeout ({@link PoolStats#stallsSeen()})} */
    long getStallsSeen();

    // ---- memory ----

    /** {@return off-heap bytes in use: {@code TotalAllocBytes - TotalFreeBytes} ({@link PoolStats#liveBytes()})} */
    long getLiveBytes();

    /** {@return the most {@code LiveBytes} has been, bytes ({@link PoolStats#peakLiveBytes()})} */
    long getPeakLiveBytes();

    /** {@return every off-heap byte ever allocated ({@link PoolStats#totalAllocBytes()})} */
    long getTotalAllocBytes();

    /** {@return every off-heap byte given back ({@link PoolStats#totalFreeBytes()})} */
    long getTotalFreeBytes();

    /**
     * {@return worker scratch buffers' counted bytes, part of {@code LiveBytes}
     * ({@link PoolStats#scratchBytes()})}
     */
    long getScratchBytes();

    /**
     * {@return true when an accounting invariant failed in two snapshots in a row, which points at a bug
     * ({@link PoolStats#accountingSkewDetected()})}
     */
    boolean isAccountingSkewDetected();

    // ---- latency (TimestampMode.FULL) ----

    /** {@return whether this pool records latencies ({@link LatencyStats#enabled()})} */
    boolean isLatencyEnabled();

    /** {@return queue-wait samples recorded; -1 when latencies are off} */
    long getQueueWaitCount();

    /** {@return queue-wait median, ns ({@code latency.queueWait.p50}); -1 when latencies are off} */
    long getQueueWaitP50Nanos();

    /** {@return queue-wait 99th percentile, ns; -1 when latencies are off} */
    long getQueueWaitP99Nanos();

    /** {@return queue-wait 99.9th percentile, ns; -1 when latencies are off} */
    long getQueueWaitP999Nanos();

    /** {@return largest queue wait, ns; -1 when latencies are off} */
    long getQueueWaitMaxNanos();

    /** {@return execution median, ns ({@code latency.execution.p50}); -1 when latencies are off} */
    long getExecutionP50Nanos();

    /** {@return execution 99th percentile, ns; -1 when latencies are off} */
    long getExecutionP99Nanos();

    /** {@return execution 99.9th percentile, ns; -1 when latencies are off} */
    long getExecutionP999Nanos();

    /** {@return longest execution, ns; -1 when latencies are off} */
    long getExecutionMaxNanos();

    /** {@return wake latency median, ns ({@code latency.wake.p50}); -1 when latencies are off} */
    long getWakeP50Nanos();

    /** {@return wake latency 99th percentile, ns; -1 when latencies are off} */
    long getWakeP99Nanos();
}
