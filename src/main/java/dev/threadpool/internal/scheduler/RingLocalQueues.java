package dev.threadpool.internal.scheduler;

import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.BoundedRing;
import dev.threadpool.internal.queue.QueueEntry;
import dev.threadpool.internal.queue.RingQueue;

/**
 * {@link LocalQueues} of {@link dev.threadpool.QueueKind#RING}: one bounded SPMC {@link RingQueue} per worker
 * (Go's runq, Tokio's local run queue). The owner pops FIFO from the head; a thief moves half of a victim into
 * its own ring with one CAS on the victim's head ({@link RingQueue#stealHalf}); a full ring moves half of
 * itself to the inject ring ({@link RingQueue#pushOrOverflow}). Every removal, the owner's included, is a CAS
 * on the head, so an entry leaves a ring exactly once.
 *
 * <h2>Memory</h2>
 * <pre>
 *   workers_nonempty   LocalQueues.Layout.LENGTH bytes
 *   local queue w      RingQueue.Layout.byteSize(capacity) bytes, for w in [0, workers); freed with the arena
 * </pre>
 */
final class RingLocalQueues extends LocalQueues {
    private final RingQueue[] rings;

    RingLocalQueues(PoolMemory memory, WorkSummary summary, int workers, int capacity) {
        super(summary, workers);
        rings = new RingQueue[workers];
        for (int w = 0; w < workers; w++) {
            rings[w] = new RingQueue(memory, "local queue " + w, capacity, true); // worker-owned: raw push and pop
        }
    }

    // =====================================================================================================
    // OWNER (worker w only)
    // =====================================================================================================

    @Override
    boolean push(int w, long entry) {
        boolean ok = rings[w].tryPush(entry); // release store of tail publishes the cell to thieves
        if (ok) {
            markNonEmpty(w);
        }
        return ok;
    }

    /** Moves half of w's full queue plus {@code entry} to {@code overflow} (Tokio's push_overflow). */
    @Override
    boolean pushOrOverflow(int w, long entry, BoundedRing overflow, long[] scratch) {
        boolean ok = rings[w].pushOrOverflow(entry, overflow, scratch);
        if (ok) {
            markNonEmpty(w);
        }
        return ok;
    }

    /** FIFO owner: pushed first to last. */
    @Override
    void pushInRunOrder(int w, long[] batch, int from, int to, BoundedRing spill) {
        for (int j = from; j < to; j++) {
            long e = batch[j];
            if (!push(w, e)) {
                spillUntilPlaced(spill, e); // cannot happen within the caller's free bound; never drop one
            }
        }
    }

    @Override
    long takeOwn(int w) {
        return rings[w].pop(); // FIFO: CAS on head, the same word every thief claims through
    }

    @Override
    int free(int w) {
        return rings[w].capacity() - rings[w].size();
    }

    // =====================================================================================================
    // THIEF
    // =====================================================================================================

    @Override
    long stealFrom(int v, int thief, int max) {
        long e = rings[v].stealHalf(rings[thief], max); // one CAS on the victim's head
        if (e != QueueEntry.EMPTY && rings[thief].size() > 0) {
            markNonEmpty(thief); // the n - 1 moved entries are ours now, stealable in turn
        }
        return e;
    }

    @Override
    long stealHalfFrom(RingQueue victim, int thief, int max) {
        long e = victim.stealHalf(rings[thief], max); // one CAS on the victim's head
        if (e != QueueEntry.EMPTY && rings[thief].size() > 0) {
            markNonEmpty(thief);
        }
        return e;
    }

    // =====================================================================================================
    // ANY THREAD
    // =====================================================================================================

    @Override
    long size(int w) {
        return rings[w].size(); // volatile loads of head and tail
    }

    @Override
    long stealOne(int w) {
        return rings[w].steal(); // CAS on head
    }

    @Override
    void close() {
        // the rings are arena blocks: freed when the pool memory closes
    }
}
