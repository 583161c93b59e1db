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
 *   beginSearch: ranDry(i) (the worker's WorkSummary bits); searching(i, true) (not for BUSY_SPIN, which never
 *                parks: it flushes its descriptor cache (Slots, hazard rule 2) and looks, uncounted)
 *   spin:        BUSY_SPIN forever | SPIN_THEN_PARK for spinBeforePark | PARK for PARK_SPINS looks,
 *                each look a bounded seq_cst scheduler.lookForWork(i) (a fixed number of lines, whatever the
 *                worker count); work seen: searching(i, false), back to the loop
 *   window:      PARK only, and only when armed (below): more looks until idleWindow has passed
 *                (still searching: submitters coalesce on us and need no unpark)
 *   announce:    flush the descriptor cache (Slots, hazard rule 2), ParkingLot.announce(i) (step 1), then
 *                searching(i, false)
 *   re-check:    hasWork(i) || stop (step 2; every source a set WorkSummary bit names): retract and go back
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
 *
 * <h2>The idle window (PARK)</h2>
 * A worker that has just run dry is often handed the next task a microsecond later (an event loop submitting one
 * event at a time). Parked by then, it costs the submitter an unpark and the task a wake-up, several microseconds
 * and on a VM whose idle vCPU has halted, a hundred. So after its {@link #PARK_SPINS} looks a PARK worker keeps
 * looking for up to {@code idleWindow} (one clock read per {@link #LOOKS_PER_CLOCK_READ} looks), <em>if armed</em>:
 * <ul>
 *   <li>it has run a task since its last window (its own STARTED count moved), so a pool with no work opens no
 *       window and every worker ends parked: idle CPU is zero once the last window has run out;</li>
 *   <li>and its last idle spell that reached this point ended within the window (found work in it, on the
 *       re-check, or a submitter woke it within {@code idleWindow} of its start, by the time the waker stamped
 *       just before its unpark, not the worker's own, later wake-up): the last gap predicts the next, as in the
 *       kernel's haltpoll governor. Work that arrives at longer intervals (the idle pool of {@code wake_latency},
 *       a probe every 100 us) closes the window after one miss, so that spinning does not tax the next wake;
 *       entry 7 of PERFORMANCE_TRACKING measured that tax (a 50 us spinner made those wakes 2x slower).</li>
 * </ul>
 * The window is part of the search: the worker stays counted in {@code searching} and announces only when it
 * ends. So the protocol is unchanged, only longer: the coalescing rule still counts on a searcher to see new work
 * (WakeCoalescer, "Why no submit is lost": the argument never uses how long a search lasts), the search still ends
 * with announce, re-check, park in that order (ParkingLot's handshake, checked by {@code ParkHandshakeTest}), and
 * the first take after it still passes a wake on. The arming state is the worker's own (two plain arrays, one
 * element per base worker, written only by that worker): nothing another thread reads, hence no new race. The
 * wake stamp it reads is the one the FULL wake histogram already used (WorkerTimes.WAKE_STAMP, stamped by every
 * windowed pool's wakeOne now): a stamp read too early or left stale only misjudges one spell, never a wake.
 * Spinning waits with {@code Thread.onSpinWait}, not {@code Thread.yield}: a yield hands the CPU to a spinning
 * submitter on the same vCPU, which then holds it for its own spin while the task waits (PERFORMANCE_TRACKING
 * entry 19).
 *
 * <h2>The idle clock</h2>
 * Busy and idle time are measured where a worker enters and leaves the idle path (WorkerTimes), but the exit is
 * the hand-off itself: a clock read between seeing the work and taking it delayed every task that found its
 * worker looking, by 40-50 ns of a 300-450 ns hand-off here (PERFORMANCE_TRACKING 61). So the exit reads no
 * clock. The worker keeps its idle path's last clock read ({@code WorkerThread.idleClock}: the entry's, the
 * windows' and SPIN_THEN_PARK's every 64 looks, BUSY_SPIN's every {@link #BUSY_SPIN_LOOKS_PER_CLOCK_READ}, and
 * one after every park), counts its looks since, and ends the span at {@link #idleEnd}: the last read plus those
 * looks at the measured cost of a look. A read made after at least {@link #MIN_LOOKS_TO_CALIBRATE} looks and no
 * park measures that cost again. The error is the difference between the last looks and the calibrated ones, a
 * few nanoseconds a look; the spans' sum stays exact to the clock everywhere else. All of it is the worker's own
 * (plain fields of its thread object): nothing another thread reads.
 */
final class Idle {
    /**
     * Looks of the default PARK strategy (and of the overflow workers) before the idle window or the announcement:
     * two, not more. Measured: with 64 (2-3 us of CPU after every task) each idle wake of the pool took about
     * 1 us longer at p50, 3.2-3.6 us against 2.3-3.0, and nothing else moved (PERFORMANCE_TRACKING 72). The
     * likely reason: the kernel queues a woken worker on its waker's CPU, and one that spent CPU there before it
     * slept waits for that thread to leave instead of preempting it. Work that comes within microseconds of the
     * last task is the idle window's to catch, once the last gap said it would come.
     */
    static final int PARK_SPINS = 2;
    /** SPIN_THEN_PARK: looks for work between two reads of the clock. */
    private static final int SPINS_PER_CLOCK_READ = 64;
    /** The idle window: looks for work between two reads of the clock. */
    static final int LOOKS_PER_CLOCK_READ = 64;
    /**
     * BUSY_SPIN: looks between two reads of the idle clock, which it needs only to calibrate a look's cost. Rare,
     * so that an entry seldom arrives during a read (about one look in 256 is one): a read taken at the
     * moment work is published delays that hand-off by the read.
     */
    static final int BUSY_SPIN_LOOKS_PER_CLOCK_READ = 256;
    /** The fewest looks between two clock reads, with no park between, that measure a look's cost again. */
    static final int MIN_LOOKS_TO_CALIBRATE = 64;

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
    /** PARK: the idle window in nanoseconds (PoolConfig.idleWindow); 0: none. */
    private final long windowNanos;
    /** Base worker slots, which have an idle window (overflow workers' indices are past them). */
    private final int windowSlots;
    /** TimestampMode.FULL; every use reads {@code Timestamps.COMPILED && timestamps} (see PoolCore). */
    private final boolean timestamps;
    /** TimestampMode.FULL only (else null): per-worker wake-latency histograms. */
    private final LogHistogram wakeHist;

    Idle(Scheduler scheduler, ParkingLot parking, Slots slots, PoolCounters counters, Lifecycle lifecycle,
            WorkerTimes times, IdleStrategy strategy, long spinBeforeParkNanos, long windowNanos,
            WorkerScratchBuffer[] scratch, long scratchIdlePurgeNanos, boolean timestamps, LogHistogram wakeHist) {
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
        this.windowNanos = strategy == IdleStrategy.PARK ? windowNanos : 0L;
        this.windowSlots = scratch.length;
    }

    /**
     * Waits for work according to the idle strategy. Returns false when the worker should exit: stop has
     * been requested, which shutdown only does once every accepted task has ended.
     */
    boolean idle(WorkerThread self) {
        final int i = self.index;
        if (strategy == IdleStrategy.BUSY_SPIN) {
            // Not counted as searching: a BUSY_SPIN worker never parks, so no submitter needs to count on its search
            // (leaving it out of SEARCHING only makes WakeCoalescer skip fewer wakes, of LANE_EXTENSION's parked
            // overflow workers), and no take of its owes the pass-on that a counted search arms. What it saves: the
            // two getAndAdds on the SEARCHING line per idle spell, one of them between seeing the work and taking
            // it, on a line every worker writes (PERFORMANCE_TRACKING 58).
            endRun(self);
            slots.flushWorkerCache(self); // BUSY_SPIN never parks: its cache goes back when it runs dry (rule 2)
            for (int k = 1;; k++) {
                if (scheduler.lookForWork(i)) { // bounded: it never parks, so no re-check needs hasWork's all
                    self.looksSinceClock += k; // the span's end: idleEnd, no clock read on the hand-off
                    return true;
                }
                if (lifecycle.stopRequested()) {
                    return false;
                }
                Thread.onSpinWait();
                if (k == BUSY_SPIN_LOOKS_PER_CLOCK_READ) {
                    self.looksSinceClock += k;
                    readClock(self);
                    k = 0;
                }
            }
        }
        beginSearch(self);
        if (strategy == IdleStrategy.SPIN_THEN_PARK) {
            long until = self.idleClock + spinBeforeParkNanos; // the span's first read (beginSpan)
            do {
                if (spin(self, SPINS_PER_CLOCK_READ)) {
                    return true;
                }
            } while (readClock(self) - until < 0 && !lifecycle.stopRequested());
        } else if (spin(self, PARK_SPINS)) {
            return true;
        }
        // PARK's idle window (class comment): a base worker measures the spell from here, and looks on while armed
        final long spellStart = windowNanos > 0 && i < windowSlots ? readClock(self) : 0L;
        if (spellStart != 0 && armed(self) && window(self, spellStart + windowNanos)) {
            self.shortSpell = true; // caught awake: the gap fitted the window
            return true;
        }
        announce(self);
        // step 2: seq_cst loads of every queue this worker can take from (published entries) and of the stop flag
        if (scheduler.hasWork(i) || lifecycle.stopRequested()) {
            parking.retract(i);
            if (spellStart != 0) {
                self.shortSpell = true; // found on the re-check: a short spell
            }
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
        long parkedAt = purgeOnTimeout ? System.nanoTime() : 0L; // the park's own length, not the idle clock
        if (pending) {
            parking.parkNanos(Scheduler.PENDING_PARK_NANOS); // ends early with the producer's wake
        } else if (purgeOnTimeout) {
            parking.parkNanos(scratchIdlePurgeNanos); // a timed park, so an idle worker can free its scratch
        } else {
            parking.park();
        }
        boolean stillAnnounced = parking.retract(i);
        final long now = clockAfterPark(self); // the idle clock restarts here: a park is not looks
        // the waker's stamp (ParkingLot.wakeOne, just before its unpark), taken once: the window's spell length
        // and the FULL wake histogram. 0: no deliberate wake, or its stamp is not written yet (then it is left
        // for the next take, which rejects it as older than its spell below).
        final long wakeStamp = !stillAnnounced && (spellStart != 0 || (Timestamps.COMPILED && timestamps))
                ? times.takeWakeStamp(i) : 0L; // getAndSet(0): pairs with the waker's release store (stampWake)
        if (spellStart != 0) {
            // The spell lasted until a submitter wanted us: the waker's stamp, not our own wake-up (on a VM, a
            // halted vCPU takes up to ~100 us to resume, which would close the window after every slow wake).
            // Timeout, spurious return, or a stale stamp: until now.
            long end = wakeStamp - spellStart >= 0 && now - wakeStamp >= 0 ? wakeStamp : now;
            self.shortSpell = end - spellStart <= windowNanos; // a window would have caught that submit awake
        }
        if (pending && stillAnnounced) {
            return !lifecycle.stopRequested(); // the bound ran out (or a spurious return): look again, park again
        }
        if (purgeOnTimeout && stillAnnounced && now - parkedAt >= scratchIdlePurgeNanos) {
            sb.purge(); // idle for scratchIdlePurge: give the buffer back (no mark can be open: we are idle)
            return !lifecycle.stopRequested(); // a timeout, not a spurious wakeup
        }
        if (!stillAnnounced) {
            counters.increment(i, PoolCounters.WAKEUPS); // a waker claimed our bit (a spurious return is not counted)
            if (Timestamps.COMPILED && timestamps && wakeStamp != 0) { // written by the waker before its unpark
                wakeHist.record(i, now - wakeStamp);
            }
        }
        return !lifecycle.stopRequested();
    }

    /** Whether a pool built from {@code config} has idle windows (PARK with a non-zero idleWindow). */
    static boolean windowed(dev.threadpool.PoolConfig config) {
        return config.idleStrategy() == IdleStrategy.PARK && !config.idleWindow().isZero();
    }

    // ---- the steps, shared with the overflow worker ------------------------------------------------------

    /**
     * Starts a search: ends the worker's run of carried tasks, then counts it as searching (which also arms the
     * pass-on of its next take). Its cached descriptors stay until it announces ({@link #announce}): a search
     * that finds work keeps them (issue 48: a flush at every search start cost a worker whose chain of tasks
     * moved to another worker and back a freelist CAS at each move).
     */
    void beginSearch(WorkerThread self) {
        endRun(self);
        scheduler.searching(self.index, true);
    }

    /**
     * The end of a run of tasks: the carried streak restarts, and the worker's late-cleared WorkSummary bits go
     * ({@link Scheduler#ranDry}: its own sources are empty).
     */
    private void endRun(WorkerThread self) {
        self.carriedStreak = 0; // a search ends a run of carried tasks (WorkerLoop.CARRIED_YIELD_EVERY)
        scheduler.ranDry(self.index);
    }

    /**
     * Up to {@code looks} seq_cst looks for published work, with a spin-wait hint between them, counted on the
     * idle clock. True when work showed up: the search has ended and the worker goes back to its loop.
     */
    boolean spin(WorkerThread self, int looks) {
        final int i = self.index;
        for (int k = 0; k < looks; k++) {
            if (scheduler.lookForWork(i)) { // bounded; the re-check after the announcement is hasWork
                self.looksSinceClock += k + 1;
                scheduler.searching(i, false);
                return true;
            }
            Thread.onSpinWait();
        }
        self.looksSinceClock += looks;
        return false;
    }

    /**
     * Whether base worker {@code i} opens its window now: it ran a task since its last window (its own STARTED
     * count moved) and its last long-enough idle spell was short. Consumes the arming: the next window needs
     * another task.
     */
    private boolean armed(WorkerThread self) {
        if (!self.shortSpell) {
            return false;
        }
        // our own counter: the acquire reads our last store
        long started = counters.get(self.index, PoolCounters.STARTED);
        if (started == self.startedAtWindow) {
            return false; // no task since the last window: an idle pool converges to every worker parked
        }
        self.startedAtWindow = started;
        return true;
    }

    /**
     * The idle window: seq_cst looks for published work, a spin-wait hint between them, the clock read every
     * {@link #LOOKS_PER_CLOCK_READ} looks, until {@code until} (a {@code System.nanoTime} value) or stop. The
     * worker is still counted as searching throughout. True when work showed up: the search has ended.
     */
    private boolean window(WorkerThread self, long until) {
        do {
            if (spin(self, LOOKS_PER_CLOCK_READ)) {
                return true;
            }
        } while (readClock(self) - until < 0 && !lifecycle.stopRequested());
        return false;
    }

    /**
     * Gives the worker's cached descriptors back (Slots, hazard rule 2: before it parks, so that a parked
     * worker holds none), then step 1 of the ParkingLot handshake, then the end of the search: in this order, so
     * a submitter that counted on the search sees the idle bit (WakeCoalescer, "Why no submit is lost").
     */
    void announce(WorkerThread self) {
        final int i = self.index;
        slots.flushWorkerCache(self);
        parking.announce(i);
        scheduler.searching(i, false);
    }

    // ---- the idle clock (class comment) --------------------------------------------------------------------

    /**
     * Begins an idle span (WorkerLoop's and OverflowWorker's loops): its one clock read starts both the busy / idle
     * accounting and the idle clock. The only place busy / idle time is measured; none per task.
     */
    void beginSpan(WorkerThread self) {
        long now = System.nanoTime();
        times.beginIdle(self.index, now);
        startClock(self, now);
    }

    /** Ends the idle span at {@link #idleEnd}, with no clock read: the end is the hand-off of the work found. */
    void endSpan(WorkerThread self) {
        times.endIdle(self.index, idleEnd(self));
    }

    /** The idle span begins at {@code now} (its first clock read, {@link #beginSpan}'s). */
    static void startClock(WorkerThread self, long now) {
        self.idleClock = now;
        self.looksSinceClock = 0;
    }

    /** Reads the clock on the idle path after the looks counted since its last read; returns the reading. */
    static long readClock(WorkerThread self) {
        return calibrate(self, System.nanoTime());
    }

    /**
     * The idle clock read {@code now}, {@code self.looksSinceClock} looks after its last read with no park between:
     * at least {@link #MIN_LOOKS_TO_CALIBRATE} of them measure a look's cost again. Returns {@code now}.
     */
    static long calibrate(WorkerThread self, long now) {
        long looks = self.looksSinceClock;
        long elapsed = now - self.idleClock;
        if (looks >= MIN_LOOKS_TO_CALIBRATE && elapsed > 0) {
            self.lookNanos16 = (elapsed << 4) / looks;
        }
        self.idleClock = now;
        self.looksSinceClock = 0;
        return now;
    }

    /** Reads the clock after a park: the looks before it say nothing of a look's cost. Returns the reading. */
    static long clockAfterPark(WorkerThread self) {
        long now = System.nanoTime();
        startClock(self, now);
        return now;
    }

    /**
     * The end of the idle span that just ended, without a clock read: the last read plus the looks made since it,
     * at the last measured cost of a look (none measured yet: the last read).
     */
    static long idleEnd(WorkerThread self) {
        return self.idleClock + ((self.looksSinceClock * self.lookNanos16) >> 4);
    }
}
