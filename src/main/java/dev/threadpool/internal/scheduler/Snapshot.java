package dev.threadpool.internal.scheduler;

import dev.threadpool.Lane;
import dev.threadpool.LaneStats;
import dev.threadpool.LatencyStats;
import dev.threadpool.LatencySummary;
import dev.threadpool.PoolStats;
import dev.threadpool.WorkerStats;
import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.stats.LogHistogram;
import dev.threadpool.internal.stats.PoolCounters;
import dev.threadpool.internal.stats.QueueDepthGauge;
import dev.threadpool.internal.stats.WorkerTimes;
import java.util.ArrayList;
import java.util.List;

/**
 * The stats snapshot: reads the pool's counters and gauges in an order that keeps {@link PoolStats}'s
 * invariants, and turns a reading into the public records.
 *
 * <pre>
 *   statsSnapshot():  frozen final stats, if closed | under the arena lock: read() -> toStats(live)
 *   close():          read() while the arena is open -> arena closed -> freeze(reading, memory totals)
 * </pre>
 * A {@link Reading} is the raw figures of one moment; {@link #toStats} is the only place that builds a
 * {@link PoolStats} or a {@link WorkerStats}, for a live pool and for the final snapshot alike (gauges that
 * mean nothing once closed read 0 there: parked workers, local queue lengths, scratch bytes, overflow
 * workers alive, lane depths).
 */
final class Snapshot {
    private final PoolCounters counters;
    private final ParkingLot parking;
    private final PoolMemory memory;
    private final Scheduler scheduler;
    private final WorkerTimes times;
    private final QueueDepthGauge depthGauge;
    private final WorkerScratchBuffer[] scratch;
    private final LogHistogram waitHist;
    private final LogHistogram execHist;
    private final LogHistogram wakeHist;
    private final int capacity;
    private final int workerCount;
    /** Every worker index the pool may use: overflow workers' counters must be summed too. */
    private final int slots;

    /**
     * Held by every reader of the arena that may race {@code close()}: the snapshot here, and close itself
     * while it takes its last reading and frees the arena.
     */
    final Object arenaLock = new Object();
    /** The final snapshot, set once by close; every later {@link #statsSnapshot} returns it. */
    private volatile PoolStats finalStats;

    // Skew detection state (written only by toStats callers, under skewLock).
    private final Object skewLock = new Object();
    private boolean prevSkewCandidate;
    private long prevStarted = -1;
    private long prevFinished = -1;

    Snapshot(PoolCounters counters, ParkingLot parking, PoolMemory memory, Scheduler scheduler, WorkerTimes times,
            QueueDepthGauge depthGauge, WorkerScratchBuffer[] scratch, LogHistogram waitHist, LogHistogram execHist,
            LogHistogram wakeHist, int capacity, int workerCount, int slots) {
        this.counters = counters;
        this.parking = parking;
        this.memory = memory;
        this.scheduler = scheduler;
        this.times = times;
        this.depthGauge = depthGauge;
        this.scratch = scratch;
        this.waitHist = waitHist;
        this.execHist = execHist;
        this.wakeHist = wakeHist;
        this.capacity = capacity;
        this.workerCount = workerCount;
        this.slots = slots;
    }

    /** The public snapshot: the final one once closed, else a fresh reading. */
    PoolStats statsSnapshot() {
        PoolStats fin = finalStats;
        if (fin != null) {
            return fin;
        }
        synchronized (arenaLock) {
            fin = finalStats;
            return fin != null ? fin : take();
        }
    }

    /** A fresh snapshot of the live pool (the caller keeps the arena open: close waits for the arena lock). */
    PoolStats take() {
        return toStats(read(), memory.totals(), false);
    }

    /** Close: the final snapshot, from the last reading and the memory totals after the arena closed. */
    PoolStats freeze(Reading last, long[] closedTotals) {
        PoolStats fin = toStats(last, closedTotals, true);
        finalStats = fin;
        return fin;
    }

    /** The raw figures of one moment, before any sum; see {@link #read} for the order they are read in. */
    static final class Reading {
        final long[] completed;
        final long[] failed;
        final long[] started;
        final long[] inline;
        final long[] released;
        final long[] parks;
        final long[] wakeups;
        final long[] steals;
        final long[] stealFailures;
        final long[] yields;
        final long[] busy;
        final long[] idle;
        final long[] localQueue;
        final long[] scratchBytes;
        final LatencySummary[] wake;
        long cancelled;
        long releasedOther;
        long submittedWithDescriptor;
        long rejected;
        long stalls;
        long overflowRetired;
        long overflowSpawned;
        long idleMask;
        long submitted;
        final long[] laneDepth = new long[Lane.values().length];
        final long[] lanePeak = new long[Lane.values().length];
        LatencyStats latency;

        Reading(int n) {
            completed = new long[n];
            failed = new long[n];
            started = new long[n];
            inline = new long[n];
            released = new long[n];
            parks = new long[n];
            wakeups = new long[n];
            steals = new long[n];
            stealFailures = new long[n];
            yields = new long[n];
            busy = new long[n];
            idle = new long[n];
            localQueue = new long[n];
            scratchBytes = new long[n];
            wake = new LatencySummary[n];
        }

        /** Tasks that ended (completed or failed), summed over every worker. */
        long finished() {
            long f = 0;
            for (int w = 0; w < completed.length; w++) {
                f += completed[w] + failed[w];
            }
            return f;
        }
    }

    /**
     * Reads counters in the order that keeps the snapshot's invariants: per-worker outcome counters first,
     * then started, then releases, then the global words, the admission words last. Each counter is bumped
     * after the ones read after it, so finished <= started <= submitted and taskDescLive >= 0 hold. Gauges come
     * after the counters: they take part in no invariant, so their place in the order is free.
     */
    Reading read() {
        int n = slots;
        Reading r = new Reading(n);
        for (int w = 0; w < n; w++) {
            r.completed[w] = counters.get(w, PoolCounters.COMPLETED);
            r.failed[w] = counters.get(w, PoolCounters.FAILED);
        }
        r.cancelled = counters.cancelled();
        for (int w = 0; w < n; w++) {
            r.started[w] = counters.get(w, PoolCounters.STARTED);
            r.inline[w] = counters.get(w, PoolCounters.INLINE_RUNS);
            r.released[w] = counters.get(w, PoolCounters.RELEASED);
            r.parks[w] = counters.get(w, PoolCounters.PARKS);
            r.wakeups[w] = counters.get(w, PoolCounters.WAKEUPS);
            r.steals[w] = counters.get(w, PoolCounters.STEALS);
            r.stealFailures[w] = counters.get(w, PoolCounters.STEAL_FAILURES);
            r.yields[w] = counters.get(w, PoolCounters.YIELDS);
        }
        r.releasedOther = counters.releasedOther();
        r.rejected = counters.rejected();
        r.stalls = counters.stallsSeen();
        r.overflowRetired = counters.overflowRetired(); // before spawned: overflowLive is never negative
        r.overflowSpawned = counters.overflowSpawned();
        r.idleMask = parking.idleMask();
        r.submittedWithDescriptor = counters.submittedWithDescriptor(); // after the releases: descLive >= 0
        // the admission words read again (>= the value above), and the carried ring's tail (BoundedRing, "Closing
        // to pushes"): after every worker's STARTED, so a carried task counted as started is counted as submitted
        r.submitted = counters.submittedWithDescriptor() + scheduler.carriedAccepted();
        long now = System.nanoTime();
        for (Lane lane : Lane.values()) {
            long depth = scheduler.depth(lane);
            r.laneDepth[lane.ordinal()] = depth;
            r.lanePeak[lane.ordinal()] = depthGauge.observe(lane, depth); // each snapshot feeds the whole lane
        }
        r.latency = waitHist == null ? LatencyStats.DISABLED
                : new LatencyStats(true, waitHist.merge().summary(), execHist.merge().summary(),
                        wakeHist.merge().summary());
        for (int w = 0; w < n; w++) {
            long[] busyIdle = times.busyIdle(w, now);
            r.busy[w] = busyIdle[0];
            r.idle[w] = busyIdle[1];
            r.localQueue[w] = scheduler.localQueueLength(w);
            r.scratchBytes[w] = w < scratch.length ? scratch[w].countedBytes() : 0;
            r.wake[w] = wakeHist != null ? wakeHist.merge(w, w + 1).summary() : LatencySummary.EMPTY;
        }
        return r;
    }

    /**
     * The one place a {@link PoolStats} is built. {@code mem} is {@code {totalAlloc, totalFree, peakLive}};
     * {@code closed}: the final snapshot, where the gauges of a running pool read 0.
     */
    private PoolStats toStats(Reading r, long[] mem, boolean closed) {
        int n = r.completed.length;
        long sumCompleted = 0, sumFailed = 0, sumStarted = 0, sumInline = 0, sumReleased = 0, sumParks = 0,
                sumWakeups = 0, sumSteals = 0, sumStealFailures = 0, scratchTotal = 0;
        List<WorkerStats> per = new ArrayList<>(n);
        for (int w = 0; w < n; w++) {
            sumCompleted += r.completed[w];
            sumFailed += r.failed[w];
            sumStarted += r.started[w];
            sumInline += r.inline[w];
            sumReleased += r.released[w];
            sumParks += r.parks[w];
            sumWakeups += r.wakeups[w];
            sumSteals += r.steals[w];
            sumStealFailures += r.stealFailures[w];
            long scratchBytes = closed ? 0 : r.scratchBytes[w]; // the scratch buffers went with the arena
            scratchTotal += scratchBytes;
            per.add(new WorkerStats(w, r.started[w], r.completed[w], r.failed[w], r.inline[w], r.parks[w],
                    r.wakeups[w], r.busy[w], r.idle[w], r.steals[w], r.stealFailures[w],
                    r.yields[w], closed ? 0 : r.localQueue[w], scratchBytes, r.wake[w]));
        }
        long finished = sumCompleted + sumFailed;
        long queued = r.submitted - sumStarted - r.cancelled;
        long active = sumStarted - finished;
        // carried tasks (the carried ring's) hold no descriptor: only the admission words' tasks took one or ran
        // inline
        long descLive = r.submittedWithDescriptor - sumInline - sumReleased - r.releasedOther;
        long overflowLive = r.overflowSpawned - r.overflowRetired;

        boolean allIdle = Long.bitCount(r.idleMask) == workerCount + overflowLive; // every live worker
        boolean candidate = queued < 0 || active < 0 || descLive < 0 || descLive > capacity
                || (active > 0 && allIdle);
        boolean skew;
        synchronized (skewLock) {
            skew = candidate && prevSkewCandidate && prevStarted == sumStarted && prevFinished == finished;
            prevSkewCandidate = candidate;
            prevStarted = sumStarted;
            prevFinished = finished;
        }
        List<LaneStats> lanes = new ArrayList<>(r.laneDepth.length);
        for (Lane lane : Lane.values()) { // once closed nothing is queued; the peaks stay
            lanes.add(new LaneStats(lane, closed ? 0 : r.laneDepth[lane.ordinal()], r.lanePeak[lane.ordinal()]));
        }
        return new PoolStats(r.submitted, sumStarted, sumCompleted, r.cancelled, sumFailed, r.rejected, queued,
                active, descLive, mem[0], mem[1], mem[0] - mem[1], mem[2], sumParks, sumWakeups, sumSteals,
                sumStealFailures, sumInline, closed ? 0 : Long.bitCount(r.idleMask), per, r.stalls,
                r.overflowSpawned, r.overflowRetired, closed ? 0 : overflowLive, skew, lanes, r.latency,
                scratchTotal);
    }
}
