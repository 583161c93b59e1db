package dev.threadpool.internal.scheduler;

import java.util.concurrent.locks.AbstractQueuedSynchronizer;

/**
 * Where awaiters of one descriptor slot block until its task reaches a terminal state. One per slot, made on
 * the first await of that slot and reused by every later generation, so steady-state waiting allocates only
 * what {@link AbstractQueuedSynchronizer} allocates for a thread that actually parks.
 *
 * <p>The condition is not kept in the synchronizer's own state: {@link #tryAcquireShared(int)} reads the
 * slot's control word, with the generation of the awaited handle as argument. A finishing worker stores the
 * terminal control word (seq_cst) and then loads the slot's signal (seq_cst); an awaiter publishes the signal
 * (seq_cst CAS into the pool's array) and then, inside AQS, enqueues itself and re-reads the control word
 * before parking. Either the worker sees the signal and releases it (waking the queue), or the awaiter's
 * re-check sees the terminal state. AQS itself guarantees that a release after an enqueue wakes the
 * enqueued thread.
 *
 * <p>AQS passes an {@code int} to the condition, so it gets the low 32 bits of the awaited generation. The
 * condition is only a wake-up filter: the caller re-reads the whole control word after every return. A
 * generation that differs only above bit 31 would be a slot reused 2^32 times while this awaiter waited;
 * even then the awaiter returns at that generation's end (every terminal store wakes the slot), or at its
 * timeout, and its caller then sees the stale handle.
 */
final class SlotSignal extends AbstractQueuedSynchronizer {
    private static final long serialVersionUID = 1L;

    private final transient DescriptorTable table;
    private final int idx;

    SlotSignal(DescriptorTable table, int idx) {
        this.table = table;
        this.idx = idx;
    }

    /**
     * Ready when the low 32 bits of the slot's generation differ from {@code genLow} or its state is terminal,
     * FREE or RETIRED.
     */
    @Override
    protected int tryAcquireShared(int genLow) {
        long c = table.ctlVolatile(idx);
        if ((int) DescriptorTable.gen(c) != genLow) {
            return 1;
        }
        int st = DescriptorTable.state(c);
        return st == DescriptorTable.QUEUED || st == DescriptorTable.RUNNING || st == DescriptorTable.RESERVED
                ? -1 : 1;
    }

    @Override
    protected boolean tryReleaseShared(int ignored) {
        return true; // the condition lives in the control word; always propagate the wake-up
    }

    /** Blocks until the slot is ready for {@code gen} (see the class comment); false on timeout. */
    boolean await(long gen, long nanos) throws InterruptedException {
        if (nanos == Long.MAX_VALUE) {
            acquireSharedInterruptibly((int) gen);
            return true;
        }
        return tryAcquireSharedNanos((int) gen, nanos);
    }

    /** Wakes every thread blocked on this slot. */
    void wake() {
        releaseShared(0);
    }

}
