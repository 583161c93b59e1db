package dev.threadpool;

import java.util.List;
import java.util.Objects;

/**
 * A snapshot of a pool's counters and memory accounting, from {@link ThreadPool#statsSnapshot()}.
 *
 * <p>Counters are read in an order that keeps {@code completed + failed <= started <= submitted} true in
 * every snapshot, even while the pool runs; the derived values are then never negative. Memory figures are
 * exact, byte for byte, and read consistently with each other: {@code liveBytes == totalAllocBytes -
 * totalFreeBytes} always holds. After {@code close()} the snapshot is the final one, with
 * {@code liveBytes == 0}.
 *
 * @param submitted       tasks accepted
 * @param started         tasks that began running
 * @param completed       tasks that returned normally
 * @param cancelled       tasks cancelled before they started
 * @param failed          tasks that threw
 * @param rejected        submissions refused after they had started: the pool stayed full for a non-waiting or
 *                        timed call, or shutdown began while they waited (a submit made after shutdown began
 *                        is refused at once with {@link PoolShutdownException} and not counted)
 * @param queuedTasks     accepted, neither started nor cancelled: {@code submitted - started - cancelled}
 * @param activeTasks     running now: {@code started - completed - failed}
 * @param taskDescLive    descriptors in use (queued, running, or finished waitable tasks not yet awaited); a
 *                        detached default-lane task submitted from outside the pool is carried by its ring
 *                        cell and holds none (DESIGN.md, "Carried tasks")
 * @param totalAllocBytes every byte the pool ever allocated off-heap, alignment slack included
 * @param totalFreeBytes  every byte it gave back
 * @param liveBytes       {@code totalAllocBytes - totalFreeBytes}
 * @param peakLiveBytes   the most {@code liveBytes} has ever been
 * @param parks           times a worker parked
 * @param wakeups         times a worker was woken on purpose
 * @param steals          successful steals (work-stealing variants; 0 in GLOBAL_QUEUE)
 * @param stealFailures   steal attempts that found nothing or lost a race
 * @param inlineRuns      tasks a worker ran inline because the pool was full when it submitted them
 * @param parkedWorkers   workers parked (or about to park) at the moment of the snapshot
 * @param workers         per-worker counters
 * @param stallsSeen      LANE_EXTENSION: default-lane tasks the watchdog saw running longer than
 *                        {@code blockingPromotionTimeout} (each counted once); 0 in the other variants
 * @param overflowSpawned LANE_EXTENSION: overflow workers the watchdog started
 * @param overflowRetired LANE_EXTENSION: overflow workers that retired after being idle
 * @param overflowLive    overflow workers alive now: {@code overflowSpawned - overflowRetired}
 * @param accountingSkewDetected true when the counters broke an invariant in this snapshot and the one
 *                        before it (e.g. descriptors live with no task outstanding), which points at a bug
 * @param lanes           queue depth, current and peak, one entry per {@link Lane} in declaration order
 * @param latency         queue-wait, execution and wake latency ({@link TimestampMode#FULL} only)
 * @param scratchBytes    counted bytes of every worker scratch buffer allocated now (included in
 *                        {@code liveBytes})
 *
 * <p>Process memory (resident, peak resident, virtual) is not part of the snapshot on purpose: reading it
 * loads a native binding (jnr-ffi / jffi) on first use, and a snapshot must stay cheap and load nothing. Ask
 * {@link ThreadPool#processMemory()} for it. See {@code docs/OBSERVABILITY.md} for every field's cost.
 */
public record PoolStats(
        long submitted,
        long started,
        long completed,
        long cancelled,
        long failed,
        long rejected,
        long queuedTasks,
        long activeTasks,
        long taskDescLive,
        long totalAllocBytes,
        long totalFreeBytes,
        long liveBytes,
        long peakLiveBytes,
        long parks,
        long wakeups,
        long steals,
        long stealFailures,
        long inlineRuns,
        int parkedWorkers,
        List<WorkerStats> workers,
        long stallsSeen,
        long overflowSpawned,
        long overflowRetired,
        long overflowLive,
        boolean accountingSkewDetected,
        List<LaneStats> lanes,
        LatencyStats latency,
        long scratchBytes) {

    /**
     * Copies {@code workers} and {@code lanes} into unmodifiable lists.
     *
     * @throws NullPointerException {@code workers}, {@code lanes} or {@code latency} is null, or a list holds
     *         a null
     */
    public PoolStats {
        workers = List.copyOf(workers);
        lanes = List.copyOf(lanes);
        Objects.requireNonNull(latency, "latency");
    }

    /**
     * The depth and peak of {@code lane}.
     *
     * @param lane the lane to look up
     * @return its entry in {@link #lanes()}; depth and peak 0 when the snapshot has none for it
     */
    public LaneStats lane(Lane lane) {
        for (LaneStats l : lanes) {
            if (l.lane() == lane) {
                return l;
            }
        }
        return new LaneStats(lane, 0, 0);
    }

    /**
     * Entries queued now, over every lane.
     *
     * @return the sum of the lanes' depths at the snapshot
     */
    public long queueDepth() {
        long d = 0;
        for (LaneStats l : lanes) {
            d += l.depth();
        }
        return d;
    }

    /**
     * The highest depth observed, summed over the lanes' peaks (each lane peaks on its own).
     *
     * @return the sum of the lanes' peak depths: an upper bound on the pool's peak, not a depth seen at once
     */
    public long peakQueueDepth() {
        long d = 0;
        for (LaneStats l : lanes) {
            d += l.peakDepth();
        }
        return d;
    }

    /**
     * Every worker's busy time summed, ns.
     *
     * @return the sum of {@link WorkerStats#busyNanos()} over {@link #workers()}, in nanoseconds
     */
    public long busyNanos() {
        long t = 0;
        for (WorkerStats w : workers) {
            t += w.busyNanos();
        }
        return t;
    }

    /**
     * Every worker's idle time summed, ns.
     *
     * @return the sum of {@link WorkerStats#idleNanos()} over {@link #workers()}, in nanoseconds
     */
    public long idleNanos() {
        long t = 0;
        for (WorkerStats w : workers) {
            t += w.idleNanos();
        }
        return t;
    }
}
