package dev.threadpool;

/**
 * One worker's counters in a {@link PoolStats} snapshot.
 *
 * @param index       worker index, 0-based
 * @param started     tasks this worker started (including inline runs)
 * @param completed   tasks that returned normally
 * @param failed      tasks that threw
 * @param inlineRuns  tasks this worker ran inline because the pool was full when it submitted them
 * @param parks       times it parked
 * @param wakeups     times it was woken on purpose by a submitter
 */
public record WorkerStats(int index, long started, long completed, long failed, long inlineRuns, long parks,
        long wakeups) {}
