package dev.threadpool.internal.scheduler;

import dev.threadpool.PoolConfig;
import dev.threadpool.internal.jfr.PoolEvents;
import dev.threadpool.internal.memory.CacheLine;
import dev.threadpool.internal.memory.Mem;
import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.stats.PoolCounters;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.locks.LockSupport;

/**
 * LANE_EXTENSION's watchdog: a pool-owned daemon thread that notices default-lane tasks running
 * longer than {@code blockingPromotionTimeout} and adds overflow workers so the rest of the default lane keeps
 * moving.
 *
 * <h2>What it sees: one run word per watched worker</h2>
 * A watched worker (a default-lane worker, base or overflow) writes its own run word when a task starts and
 * restores it when the task ends; nobody else writes it:
 * <pre>
 *   idle:     0
 *   running:  the worker's task sequence number (never 0: a base worker counts from 1, an overflow thread
 *             from its own multiple of 2^40, so a thread that reuses a slot never repeats its predecessor's words)
 * </pre>
 * No clock on the worker's side: a word names one task start, and the watchdog times it with its own clock,
 * one {@code System.nanoTime()} per tick instead of one per task (a clock read costs a flood's worker 20 to
 * 55 ns of its 100 to 200 per task here; PERFORMANCE_TRACKING entry 45). The watchdog remembers, per slot, the
 * word it saw last and the tick at which it first saw it. The task started before that tick, so its running
 * time at a later tick is at least the time since then: a task is called stalled at the first tick at least
 * {@code blockingPromotionTimeout} after the tick that first saw it, never early, and at most about two
 * intervals late (one before the first sighting, one of tick granularity) where the start-stamped word of
 * earlier versions was at most one late.
 *
 * <p>The worker stores its word with release and the watchdog loads it with acquire (the word carries no
 * other data; release/acquire only keeps the watchdog's view of a worker's starts in the worker's order). A
 * task run nested inside another (a worker helping while it awaits) saves the outer word and restores it
 * when it ends. If a tick saw the nested word, the restored outer word is new to it and its clock restarts
 * there: a worker that was running nested tasks was serving the lane, so only the time since is counted.
 * The other variants never touch the words: {@link WorkerThread#watched} is false.
 *
 * <h2>Each tick (every {@code watchdogInterval}, a timed park)</h2>
 * <pre>
 *   for each watched slot: word first seen >= blockingPromotionTimeout ago?  -> stalled++;
 *                          first time this word is counted stalled?          -> stallsSeen++, fresh++
 *   live = overflow slots in use
 *   want = max(fresh, default lane non-empty ? stalled - live : 0)
 *   spawn min(want, maxOverflowWorkers - live) overflow workers
 * </pre>
 * One overflow worker per newly stalled task; the second term respawns one when a stall outlasts an overflow
 * worker that retired (and work is waiting behind it).
 *
 * <h2>Overflow workers</h2>
 * Slot {@code s} in {@code [0, maxOverflowWorkers)} is worker index {@code maxThreads + s}, sized into every
 * per-worker structure by {@link PoolConfig#workerSlots()}. The watchdog claims a free slot bit in
 * OVERFLOW_MASK, joins the slot's previous (exited) thread, registers the new thread with the ParkingLot and
 * starts it. An overflow worker is a default-lane worker (it also helps the blocking lane under
 * {@code cpuHelpsBlocking}); when it has found nothing for {@code 2 * watchdogInterval} it retires: see
 * {@link OverflowWorker} for its loop and for why retiring loses no entry. On exit (retired, or stopped by shutdown) it
 * counts itself in {@code overflowRetired} and then frees its slot bit, so {@code overflowLive =
 * overflowSpawned - overflowRetired} is exact once the exit completes. Its local queue and LIFO slot are empty
 * when it exits: only the owner pushes into them, and it retires only after finding them empty.
 *
 * <h2>Shutdown</h2>
 * {@link #stop} runs once every accepted task has ended (overflow workers help drain until then); it joins
 * the watchdog thread, after which the overflow thread array no longer changes, and {@link #joinOverflow}
 * joins every overflow thread, live or retired.
 */
final class Watchdog {

    /**
     * Off-heap layout: the overflow slot mask, then one run word per worker slot, each on its own line (a
     * worker stores its word at every watched task start and end; the watchdog only reads them).
     * <pre>
     *   OVERFLOW_MASK  long @0   bit s set: overflow slot s (worker maxThreads + s) is in use
     *   pad to PAD
     *   run word of worker w at RUN_WORDS_OFFSET + RUN_WORD_STRIDE * w (= PAD + PAD * w), w in [0, workerSlots):
     *     RUN_WORD     long @0   0 idle, else the running task's sequence number (see the class comment)
     *     pad to PAD
     * </pre>
     * Workers below {@code blockingWorkers} are never watched; their words stay 0 (kept so a word's offset is
     * the worker index, with no translation on the worker's path).
     */
    static final class Layout {
        static final long OVERFLOW_MASK_OFFSET = 0;
        static final long RUN_WORDS_OFFSET = CacheLine.PAD;
        static final long RUN_WORD_STRIDE = CacheLine.PAD;

        private Layout() {}

        static long bytes(int workerSlots) {
            return RUN_WORDS_OFFSET + RUN_WORD_STRIDE * workerSlots;
        }

        static long runWordOffset(int worker) {
            return RUN_WORDS_OFFSET + RUN_WORD_STRIDE * worker;
        }
    }

    private static final long NANOS_PER_MILLI = 1_000_000L;
    /** An overflow thread's run words start at {@code spawns << SPAWN_SEQ_SHIFT}: 2^40 tasks before the next's. */
    private static final int SPAWN_SEQ_SHIFT = 40;
    /**
     * An overflow worker retires after finding nothing for this many watchdog intervals. Two: its idle span then
     * covers at least one whole tick, so work that pauses for less than a tick keeps its helpers.
     */
    private static final int RETIRE_INTERVALS = 2;

    private final PoolCore core;
    private final LaneScheduler lanes;
    private final PoolCounters counters;
    private final ParkingLot parking;
    private final MemorySegment seg;
    /**
     * The run words' block address for the workers' own stores ({@link Mem#RAW}; native-notes/FFM.md, "Raw
     * addresses"), else 0. Sound because only watched workers store by address, and the block is freed with the
     * arena after every worker has been joined; the watchdog's loads stay checked.
     */
    private final long runBase;
    private final int firstWatched;
    private final int base;
    private final int slots;
    private final int maxOverflow;
    private final long intervalNanos;
    private final long timeoutNanos;
    private final long retireNanos;
    private final String namePrefix;
    /** For the overflow workers' thread settings (daemon, stack size, priority, uncaught handler). */
    private final PoolConfig config;

    /** Watchdog thread only, per worker slot: the run word last seen, and the tick's clock when first seen. */
    private final long[] seenWord;
    private final long[] seenAt;
    /** Watchdog thread only: the run word last counted as a stall, per worker slot. */
    private final long[] counted;
    /** Watchdog thread only: overflow threads started so far; each starts its run words at its own multiple. */
    private long spawns;
    /**
     * The latest thread of each overflow slot. Written only by the watchdog thread; read by the shutdown
     * thread after joining the watchdog (join: happens-before).
     */
    private final WorkerThread[] overflow;
    private final Thread thread;
    private volatile boolean stop;

    /** Whether worker {@code w}'s running tasks are watched: every default-lane worker, base or overflow. */
    boolean watches(int w) {
        return w >= firstWatched;
    }

    Watchdog(PoolCore core, PoolConfig config, PoolMemory memory, LaneScheduler lanes, PoolCounters counters,
            ParkingLot parking) {
        this.core = core;
        this.lanes = lanes;
        this.counters = counters;
        this.parking = parking;
        this.firstWatched = config.blockingWorkers();
        this.base = config.maxThreads();
        this.slots = config.workerSlots();
        this.maxOverflow = config.maxOverflowWorkers();
        this.intervalNanos = config.watchdogInterval().toNanos();
        this.timeoutNanos = config.blockingPromotionTimeout().toNanos();
        this.retireNanos = RETIRE_INTERVALS * intervalNanos;
        this.namePrefix = config.threadNamePrefix();
        this.config = config;
        this.seg = memory.allocate("watchdog run words", Layout.bytes(slots));
        this.runBase = Mem.RAW ? seg.address() : 0L;
        this.seenWord = new long[slots];
        this.seenAt = new long[slots];
        this.counted = new long[slots];
        this.overflow = new WorkerThread[maxOverflow];
        this.thread = new Thread(this::run, namePrefix + "watchdog");
        thread.setDaemon(true); // it never runs user code; it must not keep a JVM alive on its own
        // priority and uncaught handler as the workers'; its stack stays the JVM's default (no user code)
        WorkerThread.applySettings(thread, config.threadPriority(), config.uncaughtExceptionHandler());
    }

    void start() {
        thread.start();
    }

    long retireNanos() {
        return retireNanos;
    }

    // =====================================================================================================
    // Worker side (hot path of watched workers only)
    // =====================================================================================================

    /** A watched worker starts a task; returns the word to restore when it ends (0, or an outer task's). */
    long taskStarted(WorkerThread self) {
        final long off = Layout.runWordOffset(self.index);
        long outer = Mem.getLongPlainAt(seg, runBase, off); // own word: only this worker writes it
        // release: pairs with the watchdog's acquire load in tick(); owner-only sequence, never 0
        Mem.setLongReleaseAt(seg, runBase, off, ++self.runSeq);
        return outer;
    }

    /** The task started by the matching {@link #taskStarted} ended. */
    void taskEnded(WorkerThread self, long outer) {
        // release: pairs with the watchdog's acquire load in tick()
        Mem.setLongReleaseAt(seg, runBase, Layout.runWordOffset(self.index), outer);
    }

    /** An overflow worker leaves (retired or stopped): count it, then free its slot. */
    void overflowExited(WorkerThread self) {
        counters.addOverflowRetired(1); // before the slot is free: spawned - retired never undercounts a live one
        PoolEvents.overflowRetired(namePrefix, self.index); // JFR; nothing happens while no recording asks
        // getAndAnd (seq_cst, so also a release): pairs with spawn()'s volatile load of the mask; everything this
        // worker wrote (its counters, its queues) happens-before a new worker in the slot.
        Mem.getAndAndLong(seg, Layout.OVERFLOW_MASK_OFFSET, ~(1L << (self.index - base)));
    }

    // =====================================================================================================
    // Watchdog thread
    // =====================================================================================================

    private void run() {
        while (!stop) {
            LockSupport.parkNanos(this, intervalNanos); // a timed park per tick: no busy loop
            if (stop) {
                return;
            }
            tick();
        }
    }

    private void tick() {
        final long now = System.nanoTime();
        int stalled = 0;
        int fresh = 0;
        for (int w = firstWatched; w < slots; w++) {
            // acquire: pairs with the worker's release stores in taskStarted / taskEnded
            long word = Mem.getLongAcquire(seg, Layout.runWordOffset(w));
            if (word != seenWord[w]) { // idle, or a task this watchdog has not seen yet: its clock starts now
                seenWord[w] = word;
                seenAt[w] = now;
                continue;
            }
            long running = now - seenAt[w]; // at most the task's running time: it started before that tick
            if (word == 0 || running < timeoutNanos) {
                continue;
            }
            stalled++;
            if (word != counted[w]) {
                counted[w] = word; // once per task
                counters.addStallsSeen(1);
                PoolEvents.stall(namePrefix, w, running); // JFR TaskStall, the watchdog's lower bound
                fresh++;
            }
        }
        if (stalled == 0 || maxOverflow == 0) {
            return;
        }
        int live = Long.bitCount(overflowMask());
        int want = Math.max(fresh, lanes.defaultLaneQueued() ? stalled - live : 0);
        for (int k = Math.min(want, maxOverflow - live); k > 0; k--) {
            if (!spawn()) {
                return;
            }
        }
    }

    private long overflowMask() {
        // volatile load: pairs with overflowExited's getAndAnd
        return Mem.getLongVolatile(seg, Layout.OVERFLOW_MASK_OFFSET);
    }

    /** Starts an overflow worker in a free slot; false when none is free or the thread could not start. */
    private boolean spawn() {
        long free = ~overflowMask() & ((1L << maxOverflow) - 1);
        if (free == 0) {
            return false;
        }
        int s = Long.numberOfTrailingZeros(free);
        WorkerThread old = overflow[s];
        if (old != null) {
            joinQuietly(old); // it freed the slot as its last act; it is ending, so this is short
        }
        // getAndOr (seq_cst): the slot is ours until that worker's overflowExited clears it again
        Mem.getAndOrLong(seg, Layout.OVERFLOW_MASK_OFFSET, 1L << s);
        int index = base + s;
        WorkerThread t = new WorkerThread(core, index, namePrefix + "overflow-" + index, config, true, true);
        // A sequence of its own: the slot's previous thread counted from its own start, and a word of that thread
        // still in counted[] must not equal one of this thread's (its stall would not be counted). Plain store,
        // published to the new thread by start().
        t.runSeq = ++spawns << SPAWN_SEQ_SHIFT;
        overflow[s] = t;
        parking.registerLate(index, t);
        counters.addOverflowSpawned(1); // before start: the worker may retire (and count it) at once
        try {
            t.start();
        } catch (Throwable e) { // OutOfMemoryError "unable to create native thread", and the like
            overflow[s] = old;
            counters.addOverflowRetired(1); // spawned and retired at once: overflowLive stays exact
            Mem.getAndAndLong(seg, Layout.OVERFLOW_MASK_OFFSET, ~(1L << s));
            return false;
        }
        PoolEvents.overflowSpawned(namePrefix, index); // JFR OverflowWorker SPAWNED
        return true;
    }

    private static void joinQuietly(Thread t) {
        boolean interrupted = false;
        for (;;) {
            try {
                t.join();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    // =====================================================================================================
    // Shutdown
    // =====================================================================================================

    /** Stops the watchdog thread and joins it; false if it did not end before {@code deadline}. */
    boolean stop(long deadline) throws InterruptedException {
        stop = true; // volatile: read by run() after every park
        LockSupport.unpark(thread);
        return join(thread, deadline);
    }

    /**
     * Interrupts every overflow thread this watchdog has started (best effort, for
     * {@code ExecutorService.shutdownNow}, beside the base workers). Plain reads of the array, which only the
     * watchdog thread writes: a thread spawned at this moment may be missed, as a task starting at this moment
     * may miss a base worker's interrupt; a stale (exited) thread is interrupted harmlessly.
     */
    void interruptOverflow() {
        for (WorkerThread t : overflow) {
            if (t != null) {
                t.interrupt();
            }
        }
    }

    /** Joins every overflow thread, live or retired; only after {@link #stop} returned true. */
    boolean joinOverflow(long deadline) throws InterruptedException {
        for (WorkerThread t : overflow) {
            if (t != null && !join(t, deadline)) {
                return false;
            }
        }
        return true;
    }

    private static boolean join(Thread t, long deadline) throws InterruptedException {
        if (deadline == Long.MAX_VALUE) {
            t.join();
            return true;
        }
        long remaining = deadline - System.nanoTime();
        if (remaining <= 0) {
            return !t.isAlive();
        }
        t.join(Math.max(1, remaining / NANOS_PER_MILLI)); // at least 1 ms: join(0) would wait forever
        return !t.isAlive();
    }
}
