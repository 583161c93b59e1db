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
    /** Tasks until the next JFR TaskLatency sample (owner-only; TimestampMode.FULL only). */
    int latencySampleCountdown = 1;

    WorkerThread(PoolCore core, int index, String name, boolean daemon) {
        super(name);
        this.core = core;
        this.index = index;
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
