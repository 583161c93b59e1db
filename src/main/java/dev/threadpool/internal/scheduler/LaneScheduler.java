package dev.threadpool.internal.scheduler;

import dev.threadpool.Lane;
import dev.threadpool.PoolConfig;
import dev.threadpool.WaitGroup;
import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.BoundedRing;
import dev.threadpool.internal.queue.CarriedRings;
import dev.threadpool.internal.queue.QueueEntry;
import dev.threadpool.internal.stats.PoolCounters;
import dev.threadpool.internal.stats.QueueDepthGauge;
import dev.threadpool.internal.stats.RecentErrors;

/**
 * LANE_EXTENSION topology: the WORK_STEALING default lane (composed, unchanged) plus a blocking lane, one
 * bounded MPMC ring ({@code blocking_inject}) drained by the reserved workers {@code [0, blockingWorkers)}.
 *
 * <h2>Who takes from where</h2>
 * <pre>
 *   worker                             next()                                 hasWork(i) re-checks
 *   blocking  [0, B)                   own carried batch, blocking ring,      blocking ring + default lane
 *                                      then the default lane
 *   default   [B, maxThreads) and      default lane, then the blocking ring   default lane (+ blocking ring
 *   overflow  [maxThreads, slots)      only if cpuHelpsBlocking               if cpuHelpsBlocking)
 * </pre>
 * "Default lane" is everything {@link WorkStealingScheduler} owns: the inject ring, every LIFO slot and every
 * local queue, stolen from by every worker. A blocking worker therefore helps the default lane whenever its
 * own lane is empty; a default (or overflow) worker helps the blocking lane only when
 * {@code cpuHelpsBlocking} is set. {@link #hasWork} checks exactly what {@link #next} may take, so a worker
 * never parks with an entry it may take queued, and never spins on one it may not.
 *
 * <p>A blocking worker claims carried batches as every worker does (CarriedBatches: up to eight default-lane
 * tasks with one head CAS), and takes what is left of its batch before its own lane: so no claimed default-lane
 * task waits behind a blocking task that may block for long, and a blocking entry waits behind at most the
 * seven tasks of one batch (which idle default workers may steal meanwhile). Claiming one at a time instead
 * left LANE_EXTENSION's flood with one of its two workers on a 2-CPU box popping singly against the other's
 * claims (PERFORMANCE_TRACKING 57).
 *
 * <h2>Where an entry goes</h2>
 * By the {@link Lane} the submit passes with the entry (Scheduler, "The lane"). A blocking entry always goes
 * to the blocking ring, also when submitted from a worker (never to its LIFO slot: a default worker would run
 * it there), and also from a registered Submitter: this topology keeps no submitter queues (the Scheduler
 * defaults), so a Submitter's entries take the external path. Everything else goes where WORK_STEALING puts
 * it (detached default-lane tasks from outside the pool into its carried ring).
 *
 * <h2>Wake rule</h2>
 * <ul>
 *   <li>Default lane: {@link WakeCoalescer} unchanged. Every worker can take default-lane entries and
 *       re-checks them before parking, so waking (or counting on the search of) any worker is sound.</li>
 *   <li>Blocking lane: no coalescing. After the ring's seq_cst tail CAS, one wake per entry through
 *       {@link ParkingLot#wakeOneOf} restricted to the blocking workers' bits; if none of them is idle and
 *       {@code cpuHelpsBlocking} is set, the default and overflow workers' bits. This is ParkingLot's
 *       handshake restricted to the workers that may take the entry: every eligible worker either had its
 *       bit set at the submitter's mask load (and a waker claims one such bit) or announces after that load,
 *       hence after the publish, and its re-check (which includes the blocking ring) sees the entry. Waking
 *       outside the mask would be the lost wake: a default worker's re-check cannot see a blocking entry.
 *       The jcstress test {@code LaneParkTest} checks the pair.</li>
 *   <li>Pass-on: blocking workers search like every other worker, so a default-lane submit may coalesce on a
 *       blocking worker's search, and that worker then takes a blocking entry first and may block in it. Its
 *       take from the blocking ring is therefore followed by the default lane's pass-on
 *       ({@code WorkStealingScheduler.passOnIfOwed}): a published default-lane entry left and a worker parked
 *       means one wake. A take from the default lane passes on inside {@code defaults.next}.</li>
 * </ul>
 */
final class LaneScheduler implements Scheduler {
    private final WorkStealingScheduler defaults;
    private final BoundedRing blocking;
    private final ParkingLot parking;
    private final QueueDepthGauge gauge;
    private final int blockingWorkers;
    private final boolean cpuHelpsBlocking;
    /** Idle-mask bits of the blocking lane's workers, {@code [0, blockingWorkers)}. */
    private final long blockingMask;
    /** Idle-mask bits of every other worker slot (default and overflow). */
    private final long otherMask;

    LaneScheduler(PoolMemory memory, PoolConfig config, BoundedRing inject, ParkingLot parking,
            PoolCounters counters, SubmitterRegistry submitters, QueueDepthGauge gauge, RecentErrors errors) {
        // Registered submitters take the external path here (the Scheduler defaults: no own queue), so that a
        // BLOCKING entry from a Submitter still reaches the blocking ring: `defaults` allocates no submitter queues.
        this.defaults = new WorkStealingScheduler(memory, config, inject, parking, counters, submitters, gauge,
                errors, false);
        this.blocking = new BoundedRing(memory, "blocking inject ring", config.queueCapacity());
        this.parking = parking;
        this.gauge = gauge;
        this.blockingWorkers = config.blockingWorkers();
        this.cpuHelpsBlocking = config.cpuHelpsBlocking();
        int slots = config.workerSlots();
        this.blockingMask = (1L << blockingWorkers) - 1; // blockingWorkers <= 63
        long all = slots == 64 ? -1L : (1L << slots) - 1;
        this.otherMask = all & ~blockingMask;
    }

    // =====================================================================================================
    // Enqueue and wake
    // =====================================================================================================

    @Override
    public boolean tryEnqueue(WorkerThread self, long entry, Lane lane) {
        if (lane == Lane.BLOCKING) {
            return blocking.tryPush(entry); // seq_cst CAS on tail: step a of the handshake
        }
        return defaults.tryEnqueue(self, entry, lane);
    }

    /** The default lane's carried ring (WORK_STEALING's); a blocking-lane task is never carried (Submission). */
    @Override
    public boolean carriesTasks() {
        return defaults.carriesTasks();
    }

    @Override
    public boolean tryEnqueueCarried(Runnable task, WaitGroup group) {
        return defaults.tryEnqueueCarried(task, group);
    }

    @Override
    public boolean tryEnqueueCarriedArg(Object fn, Object ctx, long arg, WaitGroup group) {
        return defaults.tryEnqueueCarriedArg(fn, ctx, arg, group);
    }

    @Override
    public CarriedRings carried() {
        return defaults.carried();
    }

    @Override
    public boolean carriedLowWater() {
        return defaults.carriedLowWater();
    }

    @Override
    public void signalCarried(int n) {
        defaults.signalCarried(n);
    }

    @Override
    public int tryEnqueueMany(WorkerThread self, long[] entries, int from, int n, Lane lane) {
        return lane == Lane.BLOCKING ? blocking.pushMany(entries, from, n)
                : defaults.tryEnqueueMany(self, entries, from, n, lane);
    }

    @Override
    public void signalWorkFrom(WorkerThread self, int n, Lane lane) {
        if (lane == Lane.BLOCKING) {
            signalWork(n, lane);
        } else {
            defaults.signalWorkFrom(self, n, lane); // the default lane's enqueue was the topology's
        }
    }

    @Override
    public void signalWork(int n, Lane lane) {
        if (lane == Lane.BLOCKING) {
            if (QueueDepthGauge.sample(n)) { // sampled, as the default lane's: the ring's head is the consumers' line
                gauge.observe(Lane.BLOCKING, blocking.size()); // the blocking ring's occupancy: two volatile loads
            }
            wakeBlocking(n);
        } else {
            defaults.signalWork(n, lane); // samples the default lane's depth itself
        }
    }

    /** One wake per entry among the workers that may take it; stops as soon as none of them is idle. */
    private void wakeBlocking(int n) {
        for (int k = 0; k < n; k++) {
            if (parking.wakeOneOf(blockingMask) < 0 && (!cpuHelpsBlocking || parking.wakeOneOf(otherMask) < 0)) {
                return; // every eligible worker is awake: each takes from the ring before it may park
            }
        }
    }

    // =====================================================================================================
    // Worker loop, park re-check, sweep
    // =====================================================================================================

    @Override
    public long next(WorkerThread self) {
        long e;
        if (self.index < blockingWorkers) {
            // Its own carried batch before its own lane: the batch's seven default-lane tasks never wait behind a
            // blocking task, and a blocking entry waits behind at most those seven (they are stealable meanwhile).
            e = defaults.takeOwnBatch(self);
            if (e != QueueEntry.EMPTY) {
                return e; // no search ended here: only this worker refills its batch, in a take
            }
            e = blocking.tryPop();
            if (e == QueueEntry.EMPTY) {
                return defaults.next(self); // own lane first, then help the default (its take passes on itself)
            }
        } else {
            e = defaults.next(self);
            if (e != QueueEntry.EMPTY || !cpuHelpsBlocking) {
                return e;
            }
            e = blocking.tryPop();
            if (e == QueueEntry.EMPTY) {
                return e;
            }
        }
        // A blocking entry after a search: its task may block for long, while a default-lane wake may have been
        // coalesced on this worker's search. The default lane's pass-on rule (WakeCoalescer) covers it.
        defaults.passOnIfOwed(self.index);
        return e;
    }

    @Override
    public boolean hasWork(int i) {
        // volatile loads of head and the head cell's seq: seq_cst after the announcement (ParkingLot step 2);
        // published entries only (a claimed, unpublished cell is pendingPush's)
        if ((i < blockingWorkers || cpuHelpsBlocking) && blocking.hasReadyEntry()) {
            return true;
        }
        return defaults.hasWork(i);
    }

    /** {@link #hasWork}'s bounded form: the blocking ring's head, then the default lane's bounded look. */
    @Override
    public boolean lookForWork(int i) {
        // volatile loads of head and the head cell's seq, as in hasWork
        if ((i < blockingWorkers || cpuHelpsBlocking) && blocking.hasReadyEntry()) {
            return true;
        }
        return defaults.lookForWork(i);
    }

    @Override
    public void ranDry(int i) {
        defaults.ranDry(i); // the blocking lane is one shared ring: nothing of worker i's own to clear
    }

    /**
     * Volatile loads of head and tail of each ring worker {@code i} may take from. The blocking lane's wake
     * (wakeOneOf after the push) has no fence between the publish and the mask load, so that park is bounded
     * (Scheduler, "Claimed but unpublished ring cells").
     */
    @Override
    public boolean pendingPush(int i) {
        if ((i < blockingWorkers || cpuHelpsBlocking) && !blocking.isEmpty()) {
            return true;
        }
        return defaults.pendingPush(i);
    }

    /** Whether anything is queued in the default lane (the watchdog's "is work waiting" test; a hint). */
    boolean defaultLaneQueued() {
        return defaults.hasWork(blockingWorkers);
    }

    /** Whether the blocking lane holds anything (volatile loads). */
    boolean blockingLaneQueued() {
        return !blocking.isEmpty();
    }

    @Override
    public WakeCoalescer wakeCoalescer() {
        return defaults.wakeCoalescer(); // searching() goes to the default lane's topology
    }

    @Override
    public void searching(int i, boolean on) {
        defaults.searching(i, on);
    }

    @Override
    public long drainOne(Object[] taken, long[] arg) {
        long e = blocking.tryPop();
        return e != QueueEntry.EMPTY ? e : defaults.drainOne(taken, arg);
    }

    @Override
    public void close() {
        defaults.close();
    }

    @Override
    public long depth(Lane lane) {
        // volatile loads of the blocking ring's head and tail, or the default lane's count (WORK_STEALING's)
        return lane == Lane.BLOCKING ? blocking.size() : defaults.depth(lane);
    }

    @Override
    public long localQueueLength(int w) {
        return defaults.localQueueLength(w);
    }

    @Override
    public int blockingWorkers() {
        return blockingWorkers;
    }

    /** The watchdog of the default lane's stalls: it reads {@link #defaultLaneQueued} on each tick. */
    @Override
    public Watchdog createWatchdog(PoolCore core, PoolConfig config, PoolMemory memory, PoolCounters counters,
            ParkingLot parking) {
        return new Watchdog(core, config, memory, this, counters, parking);
    }
}
