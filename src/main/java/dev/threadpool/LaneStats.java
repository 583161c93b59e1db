package dev.threadpool;

/**
 * Queue depth of one {@link Lane} in a {@link PoolStats} snapshot.
 *
 * @param lane       the lane
 * @param depth      entries in the lane's queues at the snapshot: the inject ring plus, in WORK_STEALING, every
 *                   worker's local queue and LIFO slot. An entry whose task was cancelled counts until a worker
 *                   or the sweep drops it, so this may exceed {@link PoolStats#queuedTasks()} for a moment
 * @param peakDepth  the highest depth observed: by producers right after each push into the inject ring, and
 *                   by every snapshot for the whole lane. Always {@code >= depth}
 */
public record LaneStats(Lane lane, long depth, long peakDepth) {}
