package dev.threadpool.internal.scheduler;

import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.BoundedRing;
import dev.threadpool.internal.queue.QueueEntry;
import dev.threadpool.internal.queue.RingQueue;
import dev.threadpool.internal.queue.WorkDeque;
import dev.threadpool.internal.stats.RecentErrors;

/**
 * {@link LocalQueues} of {@link dev.threadpool.QueueKind#CHASE_LEV}: one growable Chase–Lev {@link WorkDeque}
 * per worker, first sized {@code localQueueCapacity}. The owner pushes and takes at the bottom (LIFO); a thief
 * steals from the top one entry at a time, up to half of what it saw, and pushes all but the first into its own
 * deque as that deque's owner.
 *
 * <h2>A deque that cannot grow</h2>
 * A deque grows from the arena when an owner push finds it full. If that allocation fails (the native allocator
 * is out of memory: {@code OutOfMemoryError}) or the deque is at {@link WorkDeque.Layout#MAX_CAPACITY}, the
 * entry, already accepted, must not be lost: {@link WorkDeque#push} leaves the deque unchanged when growing
 * fails, {@link #push} records the failure in {@link RecentErrors} (never thrown into the worker or the
 * submitting task) and returns false, exactly as a full RING queue does, and the caller places the entry
 * elsewhere: {@link #pushOrOverflow} puts it on the inject ring (the submit path retries while that is full,
 * like any other push), the inject refill's {@link #pushInRunOrder} spills it back to the ring. A steal never
 * grows the thief's deque: it takes at most what fits ({@link #free} + 1, the one it runs included), so a thief
 * never holds a stolen entry it cannot place. Each failed growth is recorded (a later push tries to grow again).
 *
 * <h2>Memory</h2>
 * <pre>
 *   workers_nonempty         LocalQueues.Layout.LENGTH bytes
 *   local deque w control    WorkDeque.Layout.CONTROL_LENGTH bytes, releasable   } for w in [0, workers);
 *   local deque w array g    WorkDeque.Layout.arrayByteSize(capacity &lt;&lt; g),   } released by close()
 *                            releasable; g = 0 with the pool, g &gt;= 1 on growth  }
 * </pre>
 */
final class ChaseLevLocalQueues extends LocalQueues {
    private final WorkDeque[] deques;
    /** Where a failed deque growth is recorded (the pool's recentErrors). */
    private final RecentErrors errors;

    ChaseLevLocalQueues(PoolMemory memory, WorkSummary summary, int workers, int capacity, RecentErrors errors) {
        super(summary, workers);
        this.errors = errors;
        deques = new WorkDeque[workers];
        for (int w = 0; w < workers; w++) {
            deques[w] = new WorkDeque(memory, "local deque " + w, capacity);
        }
    }

    // =====================================================================================================
    // OWNER (worker w only)
    // =====================================================================================================

    /** False, with the deque unchanged and the failure recorded, if growing it failed. */
    @Override
    boolean push(int w, long entry) {
        try {
            deques[w].push(entry); // the release fence inside publishes the slot to thieves
        } catch (OutOfMemoryError | IllegalStateException growthFailed) {
            // Only growth throws these (the allocation, or MAX_CAPACITY reached), before it changes anything:
            // the deque is as it was and the entry was not pushed. Recorded, not thrown into the worker.
            errors.record(growthFailed);
            return false;
        }
        markNonEmpty(w);
        return true;
    }

    /** A deque refuses a push only when it cannot grow: the entry alone goes to {@code overflow}. */
    @Override
    boolean pushOrOverflow(int w, long entry, BoundedRing overflow, long[] scratch) {
        return overflow.tryPush(entry); // seq_cst CAS on tail
    }

    /** LIFO owner: pushed last to first, so its takes still run the batch in array order. */
    @Override
    void pushInRunOrder(int w, long[] batch, int from, int to, BoundedRing spill) {
        for (int j = to - 1; j >= from; j--) {
            long e = batch[j];
            if (!push(w, e)) {
                spillUntilPlaced(spill, e); // only a failed growth, within the caller's free bound; never drop one
            }
        }
    }

    @Override
    long takeOwn(int w) {
        return deques[w].take(); // LIFO: the full fence inside pairs with the thieves' (Dekker)
    }

    @Override
    int free(int w) {
        return (int) Math.min(Integer.MAX_VALUE, deques[w].capacity() - deques[w].size());
    }

    // =====================================================================================================
    // THIEF
    // =====================================================================================================

    @Override
    long stealFrom(int v, int thief, int max) {
        WorkDeque victim = deques[v];
        // At most what fits in our own deque without growing it (+1: the one we run), so the pushes below never
        // allocate and cannot fail: a stolen entry always has a place (see "A deque that cannot grow").
        long n = Math.min(Math.min(max, (victim.size() + 1) / 2), free(thief) + 1L);
        long first = QueueEntry.EMPTY;
        for (long k = 0; k < n; k++) {
            long e = victim.steal();
            while (e == WorkDeque.ABORT) {
                e = victim.steal(); // lost a race on top: retry, someone made progress
            }
            if (e == QueueEntry.EMPTY) {
                break;
            }
            if (first == QueueEntry.EMPTY) {
                first = e;
            } else {
                deques[thief].push(e); // our own deque: owner push; fits (n bound above), so it never grows
            }
        }
        if (first != QueueEntry.EMPTY && n > 1 && deques[thief].size() > 0) {
            markNonEmpty(thief);
        }
        return first;
    }

    @Override
    long stealHalfFrom(RingQueue victim, int thief, int max) {
        // bounded by our free cells as in stealFrom: the pushes below never grow our deque
        long n = Math.min(Math.min(max, (victim.size() + 1) / 2), free(thief) + 1L);
        long first = QueueEntry.EMPTY;
        for (long k = 0; k < n; k++) {
            long e = victim.steal(); // CAS on the victim's head; EMPTY only when it is empty
            if (e == QueueEntry.EMPTY) {
                break;
            }
            if (first == QueueEntry.EMPTY) {
                first = e;
            } else {
                deques[thief].push(e); // our own deque: owner push; fits, so it never grows
            }
        }
        if (first != QueueEntry.EMPTY && deques[thief].size() > 0) {
            markNonEmpty(thief);
        }
        return first;
    }

    // =====================================================================================================
    // ANY THREAD
    // =====================================================================================================

    @Override
    long size(int w) {
        return deques[w].size(); // volatile loads of top and bottom
    }

    @Override
    long stealOne(int w) {
        long e;
        do {
            e = deques[w].steal();
        } while (e == WorkDeque.ABORT); // lost a race on top: retry
        return e;
    }

    @Override
    void close() {
        for (WorkDeque d : deques) {
            d.close();
        }
    }
}
