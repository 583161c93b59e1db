package dev.threadpool.internal.scheduler;

import dev.threadpool.internal.memory.CacheLine;

/**
 * A {@link CacheLine#PAD} of fields ahead of {@link WorkerState}'s own: the collector places the workers'
 * states and their arrays side by side (in one dump, worker 1's failure count ended 8 bytes before worker
 * 0's state began, on the line of its {@code tick}), and the fields below are written on every take.
 * HotSpot lays a superclass's fields out before its subclass's, so these come first, as in JCTools' padded
 * queues; but it fills holes in the superclass's layout with a subclass's small fields, so the int fills
 * the one the header leaves (offset 12 with compressed class pointers), or {@code tick} would sit there.
 */
@SuppressWarnings("unused")
abstract class WorkerStatePad {
    int p;
    long p00, p01, p02, p03, p04, p05, p06, p07, p08, p09, p10, p11, p12, p13, p14, p15;
}

/** The owner's mutable fields, between two pads. */
abstract class WorkerStateFields extends WorkerStatePad {
    int tick;
    int lifoRuns;
    int stealStart;
    int submitterStart;
    /** Where this worker's next bounded look starts among the carried stripes (Scheduler.LOOK_STRIPES). */
    int stripeLook;
    /**
     * Set when this worker begins a search, cleared by its first take after it: that take must pass the
     * wake on (WakeCoalescer, "The pass-on rule"), unless it ran a chained wake, which is the same wake.
     */
    boolean owesWake;
    /**
     * Set when this worker published into its local queue (a release store of tail) since its last
     * {@code signalWorkFrom}: that signal needs the full fence. A put into the LIFO slot that displaced nothing
     * publishes with a seq_cst getAndSet and leaves it clear (WorkStealingScheduler.signalWorkFrom).
     */
    boolean unfenced;
    final long[] batch;
    final long[] scratch;
    /** Searches' failed victims, at {@link LocalQueues#FAILURES_AT} (padded in its own array). */
    final long[] failures = LocalQueues.newFailureCount();

    WorkerStateFields(int injectBatch, int localCap) {
        batch = new long[injectBatch];
        scratch = new long[Math.max(1, localCap / 2)];
    }
}

/**
 * {@link WorkStealingScheduler}'s owner-only state of one worker; plain fields, touched only from that worker's
 * thread. A PAD of fields on either side of them ({@link WorkerStatePad}, and the fields below) keeps another
 * worker's hot line off theirs wherever the collector puts the objects, JCTools' padding by class hierarchy
 * (native-notes/FFM.md, "The Java heap needs the same care"; the pad classes live in this file, as in JCTools).
 */
@SuppressWarnings("unused")
final class WorkerState extends WorkerStateFields {
    long q00, q01, q02, q03, q04, q05, q06, q07, q08, q09, q10, q11, q12, q13, q14, q15;

    WorkerState(int injectBatch, int localCap) {
        super(injectBatch, localCap);
    }
}
