package dev.threadpool.internal.scheduler;

import dev.threadpool.internal.queue.QueueEntry;
import dev.threadpool.internal.stats.PoolCounters;

/**
 * LANE_EXTENSION's overflow worker, the life of a thread the {@link Watchdog} spawns when every default-lane
 * worker is stuck in a long task: a default-lane worker until it has found nothing for
 * {@code 2 * watchdogInterval} ({@link Watchdog#retireNanos()}), then it retires and its slot is free for the
 * next spawn.
 *
 * <pre>
 *   loop:   scheduler.next(self) -> WorkerLoop.runEntry | nothing: idle (below) -> again, or retire
 *   idle:   Idle.beginSearch, Idle.spin(PARK_SPINS), Idle.announce, re-check,
 *           timed park until retireAt (bounded by PENDING_PARK_NANOS on a claimed cell), retract:
 *             false (a waker chose us) -> look again;  timed out at retireAt -> last re-check -> retire
 *   exit:   flush the descriptor cache, Watchdog.overflowExited (frees the slot), whatever happened
 * </pre>
 *
 * <h2>Retiring loses no entry</h2>
 * The worker retires only after a timed-out park, with its idle bit cleared by its own {@code retract} (a
 * waker that had claimed the bit makes retract return false: woken on purpose, it stays), and after one more
 * seq_cst re-check. A submitter publishes (P) and then loads the idle mask (M). If M precedes the retract R in
 * the total order, either the submitter's claim of the bit precedes R (we were woken: we stay) or it fails
 * after R, and then P &lt; M &lt; R &lt; re-check: the re-check sees the entry. If R precedes M, the submitter
 * never counts on this worker: it wakes another idle worker or finds none idle, exactly as if this worker had
 * never existed, and every base worker re-checks before it parks.
 */
final class OverflowWorker {
    private final Scheduler scheduler;
    private final WorkerLoop loop;
    private final Idle idle;
    private final ParkingLot parking;
    private final Slots slots;
    private final PoolCounters counters;
    private final Lifecycle lifecycle;
    private final Watchdog watchdog;

    OverflowWorker(Scheduler scheduler, WorkerLoop loop, Idle idle, ParkingLot parking, Slots slots,
            PoolCounters counters, Lifecycle lifecycle, Watchdog watchdog) {
        this.scheduler = scheduler;
        this.loop = loop;
        this.idle = idle;
        this.parking = parking;
        this.slots = slots;
        this.counters = counters;
        this.lifecycle = lifecycle;
        this.watchdog = watchdog;
    }

    /** The overflow worker's life; its slot is freed on the way out whatever happens. */
    void run(WorkerThread self) {
        try {
            while (turn(self)) {
                // the body is a method of its own, compiled by its call count (WorkerLoop.turn)
            }
        } finally {
            slots.flushWorkerCache(self); // a retiring worker must not strand cached descriptors in its slot
            watchdog.overflowExited(self);
        }
    }

    /** One turn of the loop: the next entry, else the idle path. False: exit. */
    private boolean turn(WorkerThread self) {
        long e = scheduler.next(self);
        if (e != QueueEntry.EMPTY) {
            loop.runEntry(self, e);
            return true;
        }
        idle.beginSpan(self); // idle time of an overflow slot, as for a base one (WorkerLoop)
        try {
            return idle(self);
        } finally {
            idle.endSpan(self);
        }
    }

    /**
     * The PARK handshake of {@link Idle#idle} with timed parks (whatever the idle strategy: a spinning overflow
     * worker would never retire). Returns true to look for work again, false to exit (stop requested, or idle
     * for {@code retireNanos}: see "Retiring loses no entry").
     */
    private boolean idle(WorkerThread self) {
        final int i = self.index;
        idle.beginSearch(self);
        if (idle.spin(self, Idle.PARK_SPINS)) {
            return true;
        }
        final long retireAt = Idle.readClock(self) + watchdog.retireNanos();
        idle.announce(self); // its cache back, step 1 of the handshake, then the end of the search
        for (;;) {
            if (scheduler.hasWork(i) || lifecycle.stopRequested()) { // step 2
                parking.retract(i);
                return !lifecycle.stopRequested();
            }
            // a claimed, unpublished ring cell: park, bounded (as in Idle.idle)
            boolean pending = scheduler.pendingPush(i);
            long left = retireAt - System.nanoTime();
            if (left > 0) {
                counters.increment(i, PoolCounters.PARKS);
                Thread.interrupted();
                parking.parkNanos(pending ? Math.min(left, Scheduler.PENDING_PARK_NANOS) : left);
            }
            final long now = Idle.clockAfterPark(self); // the idle clock restarts: a park is not looks
            if (!parking.retract(i)) {
                counters.increment(i, PoolCounters.WAKEUPS); // a waker chose this worker: it must look
                return !lifecycle.stopRequested();
            }
            if (lifecycle.stopRequested()) {
                return false;
            }
            if (now - retireAt >= 0) {
                return scheduler.hasWork(i); // the last re-check (see the class comment); false: retire
            }
            parking.announce(i); // timed out early (or a spurious return): step 1 again, no longer searching
        }
    }
}
