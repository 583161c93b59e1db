package dev.threadpool.internal.scheduler;

import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.BoundedRing;
import dev.threadpool.internal.queue.QueueEntry;
import dev.threadpool.internal.queue.RingQueue;
import java.util.concurrent.locks.LockSupport;

/**
 * WORK_STEALING's submitter queues: one SPMC {@link RingQueue} per submitter slot (capacity
 * {@code localQueueCapacity}), allocated with the pool. A topology built without them (LANE_EXTENSION, which
 * composes WorkStealingScheduler) has none: then {@link #exist()} is false, every look finds nothing, and its
 * Submitters take the external path.
 *
 * <h2>Ownership</h2>
 * The registered submitter's thread is its queue's owner (it pushes, a release store of the tail); workers
 * steal from it ({@link RingQueue#stealHalf} into their own queue), visiting only slots whose bit is set in the
 * {@link SubmitterRegistry} mask. Ownership passes from one registration of a slot to the next through the
 * registry's RMWs (release, then the next claim's CAS), so the next owner's plain read of the tail is
 * current. {@link #moveToInject} (Submitter.close) moves what is left to the inject ring with CAS steals; the
 * caller then runs the wake rule, before the slot's bit is cleared.
 *
 * <h2>Why the park re-check cannot miss a submitter entry</h2>
 * A submitter push is a release store of the tail followed by the full fence in
 * {@code WorkStealingScheduler.signalWork}, exactly like a local-queue push, and the slot's bit was set (by the
 * registration CAS) before any push of that registration. A worker whose re-check ({@link #anyQueued}) reads
 * the mask before the bit was set announced before the registration, hence before the push, and the push's
 * idle-mask load sees it. A re-check that reads the bit already cleared by close follows the move to the
 * inject ring or else precedes it; in the second case the worker announced before the move, and the mover's
 * signalWork sees it.
 */
final class SubmitterQueues {
    /**
     * A submitter slot index modulo {@link SubmitterRegistry#MAX_SUBMITTERS} (64, one bit each of the registry's
     * one-long mask): wraps the rotating start of the scan and a rotated bit index.
     */
    private static final int SLOT_MASK = SubmitterRegistry.MAX_SUBMITTERS - 1;
    /**
     * {@link #moveToInject}: tries on a full inject ring with only {@link Thread#onSpinWait} between them, before
     * it parks between tries ({@link #CLOSE_PARK_NANOS}). The ring is full only of entries workers are draining,
     * so room often comes while it spins (of the order of microseconds).
     */
    static final int CLOSE_SPINS_BEFORE_PARK = 100;
    /**
     * {@link #moveToInject}: the park between two tries once {@link #CLOSE_SPINS_BEFORE_PARK} are spent (50 µs).
     * A ring still full after the spins waits for workers busy in long tasks; polling it at this period costs
     * little CPU and delays the close by at most one period after room appears.
     */
    static final long CLOSE_PARK_NANOS = 50_000L;

    private final SubmitterRegistry registry;
    /** Indexed by submitter slot; owner = the slot's registered thread. Empty when built without queues. */
    private final RingQueue[] queues;

    SubmitterQueues(PoolMemory memory, SubmitterRegistry registry, boolean withQueues, int capacity) {
        this.registry = registry;
        this.queues = new RingQueue[withQueues ? SubmitterRegistry.MAX_SUBMITTERS : 0];
        for (int k = 0; k < queues.length; k++) {
            queues[k] = new RingQueue(memory, "submitter queue " + k, capacity);
        }
    }

    /** Whether this topology has submitter queues at all. */
    boolean exist() {
        return queues.length > 0;
    }

    /**
     * Worker {@code w}: steal-half (up to {@code stealBatch}) from the queue of some registered submitter into
     * its own local queue, visiting registered slots from {@code start}; the entry to run, or EMPTY if all are
     * empty.
     */
    long stealInto(LocalQueues locals, int w, int stealBatch, int start) {
        // volatile load: which slots are registered; a miss is caught by the park re-check (anyQueued).
        long m = queues.length == 0 ? 0 : registry.mask();
        long rotated = Long.rotateRight(m, start);
        while (rotated != 0) {
            int k = (Long.numberOfTrailingZeros(rotated) + start) & SLOT_MASK;
            rotated &= rotated - 1;
            RingQueue q = queues[k];
            if (q.size() == 0) { // volatile loads: skip an empty queue without a CAS
                continue;
            }
            long e = locals.stealHalfFrom(q, w, stealBatch);
            if (e != QueueEntry.EMPTY) {
                return e;
            }
        }
        return QueueEntry.EMPTY;
    }

    /** The next rotating start after {@code start}. */
    static int nextStart(int start) {
        return (start + 1) & SLOT_MASK;
    }

    /**
     * Volatile loads of the registry mask, then of each registered queue's head and tail: whether any holds an
     * entry (the park re-check; see the class comment).
     */
    boolean anyQueued() {
        for (long m = queues.length == 0 ? 0 : registry.mask(); m != 0; m &= m - 1) {
            if (queues[Long.numberOfTrailingZeros(m)].size() > 0) {
                return true;
            }
        }
        return false;
    }

    /** Entries queued in registered slots (stats; an unregistered slot's queue is empty: close moved it). */
    long depth() {
        long d = 0;
        for (long m = queues.length == 0 ? 0 : registry.mask(); m != 0; m &= m - 1) {
            d += queues[Long.numberOfTrailingZeros(m)].size();
        }
        return d;
    }

    /** One entry from any slot's queue, registered or not (the CANCEL_PENDING sweep: cold); EMPTY if none. */
    long drainOne() {
        for (RingQueue q : queues) {
            long e = q.steal();
            if (e != QueueEntry.EMPTY) {
                return e;
            }
        }
        return QueueEntry.EMPTY;
    }

    /** Owner push into slot {@code slot}'s queue (a release store of its tail; the caller's signalWork fences). */
    boolean tryPush(int slot, long entry) {
        return queues.length > 0 && queues[slot].tryPush(entry);
    }

    /** As {@link #tryPush} for {@code entries[from, from + n)}; returns how many were taken. */
    int tryPushMany(int slot, long[] entries, int from, int n) {
        if (queues.length == 0) {
            return 0;
        }
        RingQueue q = queues[slot];
        int k = 0;
        while (k < n && q.tryPush(entries[from + k])) {
            k++;
        }
        return k;
    }

    /**
     * Submitter {@code slot} closes: moves whatever its queue still holds to {@code inject} (CAS steals, each
     * entry once against the workers' steals; seq_cst pushes); returns how many moved. Never drops one.
     */
    int moveToInject(int slot, BoundedRing inject) {
        if (queues.length == 0) {
            return 0;
        }
        RingQueue q = queues[slot];
        int moved = 0;
        long e;
        while ((e = q.steal()) != QueueEntry.EMPTY) { // CAS on head: races workers' steals, each entry once
            for (int spins = 0; !inject.tryPush(e); spins++) {
                // The ring holds at most queueCapacity live entries; it is full only of entries workers are
                // draining right now (or stale ones they drop), so room comes.
                if (spins < CLOSE_SPINS_BEFORE_PARK) {
                    Thread.onSpinWait();
                } else {
                    LockSupport.parkNanos(this, CLOSE_PARK_NANOS);
                }
            }
            moved++;
        }
        return moved;
    }
}
