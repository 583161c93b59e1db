package dev.threadpool.internal.scheduler;

/**
 * A pool worker. Being a subclass lets the submit path recognise "called from one of my workers" with one
 * type check and one field compare, with no thread-local lookup.
 */
public final class WorkerThread extends Thread {
    final PoolCore core;
    final int index;
    /** How many tasks this worker is running inline, nested (owner-only; see PoolCore.MAX_INLINE_DEPTH). */
    int inlineDepth;
    /** LANE_EXTENSION: a watchdog-spawned overflow worker, which retires when idle long enough. */
    final boolean overflow;
    /** LANE_EXTENSION: a default-lane worker whose running task the watchdog watches (see Watchdog). */
    final boolean watched;
    /** Owner-only: sequence number of this worker's latest watched task start (see Watchdog). */
    int runSeq;

    WorkerThread(PoolCore core, int index, String name, boolean daemon) {
        this(core, index, name, daemon, false, false);
    }

    WorkerThread(PoolCore core, int index, String name, boolean daemon, boolean overflow, boolean watched) {
        super(name);
        this.core = core;
        this.index = index;
        this.overflow = overflow;
        this.watched = watched;
        setDaemon(daemon);
    }

    public int index() {
        return index;
    }

    @Override
    public void run() {
        core.workerMain(this);
    }
}
