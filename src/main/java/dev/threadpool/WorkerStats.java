package dev.threadpool;

/**
 * One worker's counters in a {@link PoolStats} snapshot.
 *
 * @param index            worker index, 0-based
 * @param started          tasks this worker started (including inline runs); see {@link #tasksRun()}
 * @param completed        tasks that returned normally
 * @param failed           tasks that threw
 * @param inlineRuns       tasks this worker ran inline because the pool was full when it submitted them
 * @param parks            times it parked
 * @param wakeups          times it was woken on purpose by a submitter
 * @param busyNanos        time alive and not idle, ns: running tasks and looking for them (measured at the idle
 *                         boundaries, so the spin before a park counts as idle)
 * @param idleNanos        time spent in the idle path (spinning or parked), ns, including the span in progress
 * @param steals           successful steals by this worker (WORK_STEALING)
 * @param stealFailures    steal attempts by this worker that found nothing or lost a race
 * @param yields           times it gave up its CPU ({@code Thread.yield}) after a run of 64 tasks submitted from
 *                         outside the pool with no idle spell between them, so that a submitting thread waiting
 *                         for a CPU gets one (docs/DESIGN.md, "Yielding to outside submitters")
 * @param localQueueLength entries in this worker's local queue now (WORK_STEALING; 0 otherwise)
 * @param scratchBytes     counted bytes of this worker's scratch buffer (0 until first used, 0 after a purge)
 * @param wakeLatency      unpark-to-running latency of this worker ({@link TimestampMode#FULL} only)
 */
public record WorkerStats(int index, long started, long completed, long failed, long inlineRuns, long parks,
        long wakeups, long busyNanos, long idleNanos, long steals, long stealFailures, long yields,
        long localQueueLength, long scratchBytes, LatencySummary wakeLatency) {

    /**
     * Tasks this worker ran: queued ones and inline ones (the same as {@link #started()}).
     *
     * @return tasks started by this worker since the pool was built
     */
    public long tasksRun() {
        return started;
    }
}
