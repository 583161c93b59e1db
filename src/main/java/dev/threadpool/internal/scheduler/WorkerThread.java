package dev.threadpool.internal.scheduler;

import dev.threadpool.PoolConfig;
import dev.threadpool.internal.memory.CacheLine;
import dev.threadpool.internal.os.Affinity;

/**
 * {@link CacheLine#PAD} of fields between {@link Thread}'s and {@link WorkerThread}'s own: the collector puts the
 * workers' threads next to whatever it traced before them, and a worker writes the fields below on every join,
 * fork and carried task. Thread's own fields (about 100 bytes after the header) are written by their thread only
 * or not at all in a pool's life, so with this pad no other object's line reaches {@link WorkerThreadFields}.
 * HotSpot lays a superclass's fields out before its subclass's (on JDK 25 it fills none of Thread's gaps with
 * these), and {@code PaddedWorkerStateTest} reads the offsets the running JVM chose.
 */
@SuppressWarnings("unused")
abstract class WorkerThreadPad extends Thread {
    long p00, p01, p02, p03, p04, p05, p06, p07, p08, p09, p10, p11, p12, p13, p14, p15;

    WorkerThreadPad(String name, long stackSize) {
        super(null, null, name, stackSize); // stackSize 0: the JVM's default, as Thread(String) has
    }
}

/**
 * The worker's own fields, between two pads: the owner-only plain fields a worker writes as it runs, and the final
 * ones it reads as often. Unpadded, they lay on the object's last line, which the collector shares with the next
 * object in some JVMs and not in others (native-notes/FFM.md, "The Java heap needs the same care").
 */
abstract class WorkerThreadFields extends WorkerThreadPad {
    final PoolCore core;
    final int index;
    /**
     * Levels of work this worker runs nested on its own stack: helped entries, a waiter's own task, inline
     * runs (owner-only, plain). Changed only by WorkerLoop.runNested, which restores it in a finally; compared
     * with WorkerLoop.MAX_INLINE_DEPTH before helping.
     */
    int inlineDepth;
    /**
     * Joins of this worker open on its stack: the next join's frame (JoinDeques, "Frames"). Owner-only, plain;
     * changed only by Joining: a join restores it in a finally, a fork's join restores what the fork raised.
     */
    int joinDepth;
    /**
     * Joins of this worker open on its stack, offered or not (Joining, "Offer on demand"): the first
     * {@code Joining.EAGER_LEVELS} always offer. A fork counts as one until its join. Owner-only, plain; changed only
     * by Joining, which restores it.
     */
    int joinNest;
    /**
     * Forks of this worker not joined yet: the top of {@link #forks} (Joining, "Fork handles"). Owner-only, plain;
     * code that runs user code as a unit (WorkerLoop around a task, Joining around a half) reads it before and
     * after, and settles the forks the code left open.
     */
    int forkTop;
    /** This worker's open forks (ForkStack); owner-only. */
    final ForkStack forks = new ForkStack();
    /**
     * The task and group of the carried entry ({@code QueueEntry.CARRIED}) this worker popped last, handed over
     * by {@code CarriedBatches} (from {@code BoundedRing.popManyCarried}); for a task in argument form its function,
     * group and context marker ({@code BoundedRing}, "Argument cells"), the argument in {@link #takenArg}. Cleared by
     * {@code WorkerLoop.runCarried} before it runs the task: {@code taken[2]} stays null between pops (a pop of a
     * {@code Runnable} task does not write it). Owner-only.
     */
    final Object[] taken = new Object[3];
    /** The argument of the carried task in argument form in {@link #taken}; a long, nothing to clear. Owner-only. */
    final long[] takenArg = new long[1];
    /** Which of the shared rings (carried, inject) this worker's next look tries first (alternates; owner-only). */
    boolean carriedFirst;
    /**
     * Carried tasks this worker ran since its last search began or its last yield (owner-only):
     * {@code WorkerLoop.runCarried} yields the CPU at {@code WorkerLoop.CARRIED_YIELD_EVERY}, and
     * {@code Idle.beginSearch} starts the count again.
     */
    int carriedStreak;
    /**
     * The idle clock (Idle, "The idle clock"; owner-only, plain): {@code System.nanoTime} of the idle path's last
     * clock read, the looks for work made since, and the measured cost of one look in 1/16 ns (0 until the first
     * calibration). The end of an idle span is estimated from them, so no clock is read between seeing work and
     * running it.
     */
    long idleClock;
    long looksSinceClock;
    long lookNanos16;
    /**
     * PARK's idle window (Idle; owner-only, plain): whether this worker's last idle spell that got past the spin
     * looks ended within the window (true at start), and its STARTED count when it last opened a window (one
     * opens only after a task). Fields of the worker rather than elements of arrays indexed by worker, which put
     * every worker's writes on one line (PERFORMANCE_TRACKING entry 64).
     */
    boolean shortSpell = true;
    long startedAtWindow;
    /** The CPU to pin this worker to when it starts, or -1 (PoolConfig.workerCpus). Set before start. */
    int cpu = -1;
    /** Tasks until the next JFR TaskLatency sample (owner-only; TimestampMode.FULL only). */
    int latencySampleCountdown = 1;
    /** LANE_EXTENSION: a watchdog-spawned overflow worker, which retires when idle long enough. */
    final boolean overflow;
    /** LANE_EXTENSION: a default-lane worker whose running task the watchdog watches (see Watchdog). */
    final boolean watched;
    /**
     * Owner-only: sequence number of this worker's latest watched task start (see Watchdog); an overflow thread's
     * starting value is set by the watchdog before it starts.
     */
    long runSeq;

    WorkerThreadFields(PoolCore core, int index, String name, long stackSize, boolean overflow, boolean watched) {
        super(name, stackSize);
        this.core = core;
        this.index = index;
        this.overflow = overflow;
        this.watched = watched;
    }
}

/**
 * A pool worker. Being a subclass lets the submit path recognise "called from one of my workers" with one
 * type check and one field compare, with no thread-local lookup. Its fields are in {@link WorkerThreadFields},
 * a {@link CacheLine#PAD} from both ends of the object (the pad below and {@link WorkerThreadPad}).
 */
@SuppressWarnings("unused")
public final class WorkerThread extends WorkerThreadFields {
    long q00, q01, q02, q03, q04, q05, q06, q07, q08, q09, q10, q11, q12, q13, q14, q15;

    /** A worker with the JVM's default stack size, priority and uncaught handler (white-box tests). */
    WorkerThread(PoolCore core, int index, String name, boolean daemon, boolean overflow, boolean watched) {
        this(core, index, name, daemon, overflow, watched, 0L, Thread.NORM_PRIORITY, null);
    }

    /**
     * A worker of a pool built from {@code config}: its {@code daemon}, {@code workerStackSize},
     * {@code threadPriority} and {@code uncaughtExceptionHandler}.
     */
    WorkerThread(PoolCore core, int index, String name, PoolConfig config, boolean overflow, boolean watched) {
        this(core, index, name, config.daemon(), overflow, watched, config.workerStackSize(),
                config.threadPriority(), config.uncaughtExceptionHandler());
    }

    private WorkerThread(PoolCore core, int index, String name, boolean daemon, boolean overflow, boolean watched,
            long stackSize, int priority, Thread.UncaughtExceptionHandler uncaught) {
        super(core, index, name, stackSize, overflow, watched);
        setDaemon(daemon);
        applySettings(this, priority, uncaught);
    }

    /** The priority and uncaught handler of {@code PoolConfig}, for every thread a pool starts (null: the JVM's). */
    static void applySettings(Thread t, int priority, Thread.UncaughtExceptionHandler uncaught) {
        if (t.getPriority() != priority) {
            t.setPriority(priority); // capped by the thread group's maximum, as Thread.setPriority always is
        }
        if (uncaught != null) {
            t.setUncaughtExceptionHandler(uncaught);
        }
    }

    public int index() {
        return index;
    }

    /** True when the calling thread is a worker of some pool (for {@code WaitGroup.await}). */
    public static boolean currentIsWorker() {
        return Thread.currentThread() instanceof WorkerThread;
    }

    /**
     * From a worker of some pool: runs one entry queued for it, or one offered join half, nested (helping,
     * bounded by {@code WorkerLoop.MAX_INLINE_DEPTH}); false when there was none, at the bound, or when the
     * caller is not a worker. For waits that must not block a worker ({@code WaitGroup.await}).
     */
    public static boolean helpCurrent() {
        return Thread.currentThread() instanceof WorkerThread w && w.core.helpOnce();
    }

    @Override
    public void run() {
        if (cpu >= 0) {
            try {
                Affinity.pinCurrentThread(cpu);
            } catch (RuntimeException refused) {
                core.workerSetupFailed(refused); // it runs unpinned; the failure is in recentErrors()
            }
        }
        core.workerMain(this);
    }
}
