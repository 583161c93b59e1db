package dev.threadpool.internal.scheduler;

import dev.threadpool.IdleStrategy;
import dev.threadpool.internal.stats.LogHistogram;
import dev.threadpool.internal.stats.PoolCounters;
import dev.threadpool.internal.stats.Timestamps;
import dev.threadpool.internal.stats.WorkerTimes;

/**
 * Idle and park: what a worker does when {@code scheduler.next} found nothing, for every
 * {@link IdleStrategy}. This room owns the {@code searching} count: every {@code scheduler.searching} call
 * of the pool is made here (the overflow worker's idle path uses the same steps, {@link #beginSearch},
 * {@link #spin}, {@link #announce}).
 *
 * <pre>
 *   beginSearch: flush the descriptor cache (Slots, hazard rule 2); searching(i, true)
 *   spin:        BUSY_SPIN forever | SPIN_THEN_PARK for spinBeforePark | PARK for PARK_SPINS looks,
 *                each look a seq_cst scheduler.hasWork(i); work seen: searching(i, false), back to the loop
 *   announce:    ParkingLot.announce(i) (step 1), then searching(i, false)
 *   re-check:    hasWork(i) || stop (step 2): retract and go back
 *   park:        pendingPush(i) ? park at most PENDING_PARK_NANOS
 *                : scratch buffer held and scratchIdlePurge set ? timed park, then purge it
 *                : park until woken
 *   wake:        retract(i) false = a waker claimed our bit (WAKEUPS); true = timeout or spurious
 * </pre>
 *
 * <h2>Why the order matters</h2>
 * A worker counts as searching from {@link #beginSearch} until after its announcement (or until work shows
 * up): the coalescing wake rule counts on a searcher to see new work ({@link WakeCoalescer}, "Why no submit is
 * lost"), and the first take after a search passes a wake on (Scheduler's pass-on). The announcement comes
 * before the re-check, so a submitter either sees the worker's idle bit or published before the re-check
 * (ParkingLot's handshake).
 */
final class Idle {
    /** Bounded spin of the default PARK strategy (and of the overflow workers) before announcing. */
    static final int PARK_SPINS = 64;
    /** SPIN_THEN_PARK: looks for work between two reads of the clock. */
    private static final int SPINS_PER_CLOCK_READ = 64;

    private final Scheduler scheduler;
    private final ParkingLot parking;
    private final Slots slots;
    private final PoolCounters counters;
    private final Lifecycle lifecycle;
    private final WorkerTimes times;
    private final IdleStrategy strategy;
    private final long spinBeforeParkNanos;
    /** One per base worker slot (overflow slots have none). */
    private final WorkerScratchBuffer[] scratch;
    /** How long a worker holding a scratch buffer stays parked before it frees it; 0: never. */
    private final long scratchIdlePurgeNanos;
    /** TimestampMode.FULL; every use reads {@code Timestamps.COMPILED && timestamps} (see PoolCore). */
    private final boolean timestamps;
    /** TimestampMode.FULL only (else null): per-worker wake-latency histograms. */
    private final LogHistogram wakeHist;

    Idle(Scheduler scheduler, ParkingLot parking, Slots slots, PoolCounters counters, Lifecycle lifecycle,
            WorkerTimes times, IdleStrategy strategy, long spinBeforeParkNanos, WorkerScratchBuffer[] scratch,
            long scratchIdlePurgeNanos, boolean timestamps, LogHistogram wakeHist) {
        this.scheduler = scheduler;
        this.parking = parking;
        this.slots = slots;
        this.counters = counters;
        this.lifecycle = lifecycle;
        this.times = times;
        this.strategy = strategy;
        this.spinBeforeParkNanos = spinBeforeParkNanos;
        this.scratch = scratch;
        this.scratchIdlePurgeNanos = scratchIdlePurgeNanos;
        this.timestamps = timestamps;
        this.wakeHist = wakeHist;
    }

    /**
     * Waits for work according to the idle strategy. Returns false when the worker should exit: stop has
     * been requested, which shutdown only does once every accepted task has ended.
     */
    boolean idle(WorkerThread self) {
        final int i = self.index;
        beginSearch(self);
        if (strategy == IdleStrategy.BUSY_SPIN) {
            for (;;) {
                if (scheduler.hasWork(i)) {
                    scheduler.searching(i, false);
                    return true;
                }
                if (lifecycle.stopRequested()) {
                    scheduler.searching(i, false);
                    return false;
                }
                Thread.onSpinWait();
            }
        }
        if (strategy == IdleStrategy.SPIN_THEN_PARK) {
            long until = System.nanoTime() + spinBeforeParkNanos;
            do {
                if (spin(i, SPINS_PER_CLOCK_READ)) {
                    return true;
                }
            } while (System.nanoTime() - until < 0 && !lifecycle.stopRequested());
        } else if (spin(i, PARK_SPINS)) {
            return true;
        }
        announce(i);
        // step 2: seq_cst loads of every queue this worker can take from (published entries) and of the stop flag
        if (scheduler.hasWork(i) || lifecycle.stopRequested()) {
            parking.retract(i);
            return !lifecycle.stopRequested();
        }
        // Nothing published. A ring cell claimed but not yet published (its producer preempted between its tail
        // CAS and its publish, say) is no reason to spin: the producer signals after its publish. Its wake may
        // miss us only where no fence orders that publish before its idle-mask load, so the park is bounded
        // then (Scheduler, "Claimed but unpublished ring cells"). Seq_cst loads of ring head and tail.
        final boolean pending = scheduler.pendingPush(i);
        counters.increment(i, PoolCounters.PARKS);
        Thread.interrupted(); // a pending interrupt would make park() return at once: clear it, do not spin
        WorkerScratchBuffer sb = scratchIdlePurgeNanos > 0 && i < scratch.length ? scratch[i] : null;
        boolean purgeOnTimeout = !pending && sb != null && sb.allocated();
        long parkedAt = purgeOnTimeout ? System.nanoTime() : 0L;
        if (pending) {
            parking.parkNanos(Scheduler.PENDING_PARK_NANOS); // ends early with the producer's wake
        } else if (purgeOnTimeout) {
            parking.parkNanos(scratchIdlePurgeNanos); // a timed park, so an idle worker can free its scratch
        } else {
            parking.park();
        }
        boolean stillAnnounced = parking.retract(i);
        if (pending && stillAnnounced) {
            return !lifecycle.stopRequested(); // the bound ran out (or a spurious return): look again, park again
        }
        if (purgeOnTimeout && stillAnnounced && System.nanoTime() - parkedAt >= scratchIdlePurgeNanos) {
            sb.purge(); // idle for scratchIdlePurge: give the buffer back (no mark can be open: we are idle)
            return !lifecycle.stopRequested(); // a timeout, not a spurious wakeup
        }
        if (!stillAnnounced) {
            counters.increment(i, PoolCounters.WAKEUPS); // a waker claimed our bit (a spurious return is not counted)
            if (Timestamps.COMPILED && timestamps) {
                long stamp = times.takeWakeStamp(i); // written by the waker just before its unpark
                if (stamp != 0) {
                    wakeHist.record(i, System.nanoTime() - stamp);
                }
            }
        }
        return !lifecycle.stopRequested();
    }

    // ---- the steps, shared with the overflow worker ------------------------------------------------------

    /**
     * Starts a search: gives the worker's cached descriptors back (before any spin or park: Slots, hazard rule
     * 2), then counts it as searching (which also arms the pass-on of its next take).
     */
    void beginSearch(WorkerThread self) {
        slots.flushWorkerCache(self);
        scheduler.searching(self.index, true);
    }

    /**
     * Up to {@code looks} seq_cst looks for published work, with a spin-wait hint between them. True when work
     * showed up: the search has ended and the worker goes back to its loop.
     */
    boolean spin(int i, int looks) {
        for (int k = 0; k < looks; k++) {
            if (scheduler.hasWork(i)) {
                scheduler.searching(i, false);
                return true;
            }
            Thread.onSpinWait();
        }
        return false;
    }

    /**
     * Step 1 of the ParkingLot handshake, then the end of the search: in this order, so a submitter that
     * counted on the search sees the idle bit (WakeCoalescer, "Why no submit is lost").
     */
    void announce(int i) {
        parking.announce(i);
        scheduler.searching(i, false);
    }
}
