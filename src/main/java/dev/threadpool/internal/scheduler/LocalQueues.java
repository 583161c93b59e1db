package dev.threadpool.internal.scheduler;

import dev.threadpool.QueueKind;
import dev.threadpool.internal.memory.CacheLine;
import dev.threadpool.internal.memory.Mem;
import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.BoundedRing;
import dev.threadpool.internal.queue.QueueEntry;
import dev.threadpool.internal.queue.RingQueue;
import dev.threadpool.internal.queue.WorkDeque;
import dev.threadpool.internal.stats.RecentErrors;
import java.lang.foreign.MemorySegment;

/**
 * The per-worker local queues of WORK_STEALING, the {@code workers_nonempty} bitmap and steal-half.
 *
 * <h2>Kinds</h2>
 * {@link QueueKind#RING}: one bounded SPMC {@link RingQueue} per worker (owner FIFO pop, thieves
 * {@link RingQueue#stealHalf}). {@link QueueKind#CHASE_LEV}: one growable {@link WorkDeque} per worker, first
 * sized {@code localQueueCapacity} (owner LIFO take, thieves steal one at a time, up to half).
 *
 * <h2>A deque that cannot grow</h2>
 * A deque grows from the arena when an owner push finds it full. If that allocation fails (the native allocator
 * is out of memory: {@code OutOfMemoryError}) or the deque is at {@link WorkDeque.Layout#MAX_CAPACITY}, the
 * entry, already accepted, must not be lost: {@link WorkDeque#push} leaves the deque unchanged when growing
 * fails, {@link #push} records the failure in {@link RecentErrors} (never thrown into the worker or the
 * submitting task) and returns false, exactly as a full RING queue does, and the caller places the entry
 * elsewhere: the scheduler's pushLocal puts it on the inject ring (waiting for room there like any other push,
 * via the submit path's retry), the inject refill pushes it back to the ring. A steal never grows the thief's
 * deque: it takes at most what fits ({@link #free} + 1, the one it runs included), so a thief never holds a
 * stolen entry it cannot place. Each failed growth is recorded (a later push tries to grow again).
 *
 * <h2>workers_nonempty</h2>
 * One off-heap long, bit {@code w} set while worker {@code w}'s queue may be non-empty. Only the owner sets or
 * clears its own bit (thieves never clear it: a thief's clear could race the owner's set and hide a
 * non-empty queue). The owner sets it after a push into an empty-looking queue and clears it when its pop
 * finds the queue empty, then reconciles: it re-reads its own length (owned_queue_len) and sets the bit again
 * if a push of its own... cannot have happened meanwhile, since it is the only pusher; the re-read is what
 * keeps the rule true if a later change lets another thread push. The bitmap is a steal hint only: the park
 * re-check reads every queue's length with seq_cst loads, never the bitmap.
 */
final class LocalQueues {
    private static final long NONEMPTY_OFFSET = 0;

    private final RingQueue[] rings;   // RING kind, else null
    private final WorkDeque[] deques;  // CHASE_LEV kind, else null
    private final MemorySegment bitmap;
    private final int workers;
    /** Where a failed deque growth is recorded (the pool's recentErrors). */
    private final RecentErrors errors;

    LocalQueues(PoolMemory memory, QueueKind kind, int workers, int capacity, RecentErrors errors) {
        this.workers = workers;
        this.errors = errors;
        this.bitmap = memory.allocate("workers_nonempty", CacheLine.PAD);
        if (kind == QueueKind.CHASE_LEV) {
            rings = null;
            deques = new WorkDeque[workers];
            for (int w = 0; w < workers; w++) {
                deques[w] = new WorkDeque(memory, "local deque " + w, capacity);
            }
        } else {
            deques = null;
            rings = new RingQueue[workers];
            for (int w = 0; w < workers; w++) {
                rings[w] = new RingQueue(memory, "local queue " + w, capacity);
            }
        }
    }

    // =====================================================================================================
    // OWNER (worker w only)
    // =====================================================================================================

    /**
     * Pushes into w's queue; false when a RING queue is full or a deque is full and could not grow (the failure
     * is recorded; see "A deque that cannot grow"). On false the entry is still the caller's to place.
     */
    boolean push(int w, long entry) {
        boolean ok = rings != null
                ? rings[w].tryPush(entry) // release store of tail publishes the cell to thieves
                : pushDeque(w, entry);
        if (ok) {
            markNonEmpty(w);
        }
        return ok;
    }

    /** Owner push into deque w; false, with the deque unchanged and the failure recorded, if growing it failed. */
    private boolean pushDeque(int w, long entry) {
        try {
            deques[w].push(entry); // the release fence inside publishes the slot to thieves
            return true;
        } catch (OutOfMemoryError | IllegalStateException growthFailed) {
            // Only growth throws these (the allocation, or MAX_CAPACITY reached), before it changes anything:
            // the deque is as it was and the entry was not pushed. Recorded, not thrown into the worker.
            errors.record(growthFailed);
            return false;
        }
    }

    /**
     * RING only: moves half of w's full queue plus {@code entry} to {@code overflow} (Tokio's
     * push_overflow); false when neither fits. Deques never need it.
     */
    boolean pushOrOverflow(int w, long entry, BoundedRing overflow, long[] scratch) {
        boolean ok = rings[w].pushOrOverflow(entry, overflow, scratch);
        if (ok) {
            markNonEmpty(w);
        }
        return ok;
    }

    boolean isRing() {
        return rings != null;
    }

    private void markNonEmpty(int w) {
        long bit = 1L << w;
        // opaque: our own bit, only we write it; skip the RMW when already set.
        if ((Mem.getLongOpaque(bitmap, NONEMPTY_OFFSET) & bit) == 0) {
            // getAndOr (seq_cst): after the push's publish, so a thief that sees the bit sees the entry.
            Mem.getAndOrLong(bitmap, NONEMPTY_OFFSET, bit);
        }
    }

    /** Pops w's next entry (RING: FIFO; deque: LIFO take), clearing w's bit when empty. */
    long pop(int w) {
        long e = rings != null ? rings[w].pop() : deques[w].take();
        if (e == QueueEntry.EMPTY) {
            long bit = 1L << w;
            if ((Mem.getLongOpaque(bitmap, NONEMPTY_OFFSET) & bit) != 0) {
                // getAndAnd (seq_cst): clear the stale hint, then reconcile with our own length.
                Mem.getAndAndLong(bitmap, NONEMPTY_OFFSET, ~bit);
                if (size(w) > 0) {
                    Mem.getAndOrLong(bitmap, NONEMPTY_OFFSET, bit); // owned_queue_len says non-empty again
                }
            }
        }
        return e;
    }

    /** Free cells of w's queue (deque: its current capacity minus its size). */
    int free(int w) {
        if (rings != null) {
            return rings[w].capacity() - rings[w].size();
        }
        return (int) Math.min(Integer.MAX_VALUE, deques[w].capacity() - deques[w].size());
    }

    /** Whether any worker's bit is set in {@code workers_nonempty} (a hint: volatile load of the bitmap). */
    boolean anyNonEmptyHint() {
        return Mem.getLongVolatile(bitmap, NONEMPTY_OFFSET) != 0;
    }

    /**
     * Steals up to half (at most {@code max}) of some peer's queue into {@code thief}'s own queue, visiting
     * only peers whose bit is set, from {@code start}. Returns one stolen entry to run, or EMPTY.
     * {@code failures[0]} is incremented per victim tried without success.
     */
    long stealHalf(int thief, int start, int max, long[] failures) {
        // volatile load: the hint; a miss is caught by the park re-check (seq_cst sizes).
        long m = Mem.getLongVolatile(bitmap, NONEMPTY_OFFSET) & ~(1L << thief);
        while (m != 0) {
            long rotated = Long.rotateRight(m, start);
            int v = (Long.numberOfTrailingZeros(rotated) + start) & 63;
            m &= ~(1L << v);
            if (v >= workers) {
                continue;
            }
            long e = stealFrom(v, thief, max);
            if (e != QueueEntry.EMPTY) {
                return e;
            }
            failures[0]++;
        }
        return QueueEntry.EMPTY;
    }

    private long stealFrom(int v, int thief, int max) {
        if (rings != null) {
            long e = rings[v].stealHalf(rings[thief], max); // one CAS on the victim's head
            if (e != QueueEntry.EMPTY && rings[thief].size() > 0) {
                markNonEmpty(thief); // the n - 1 moved entries are ours now, stealable in turn
            }
            return e;
        }
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

    /**
     * Steals up to half (at most {@code max}) of a registered submitter's queue into {@code thief}'s own
     * queue, as {@link #stealHalf} does from a peer; returns one entry to run, or EMPTY.
     */
    long stealHalfFrom(RingQueue victim, int thief, int max) {
        if (rings != null) {
            long e = victim.stealHalf(rings[thief], max); // one CAS on the victim's head
            if (e != QueueEntry.EMPTY && rings[thief].size() > 0) {
                markNonEmpty(thief);
            }
            return e;
        }
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

    /** Length of w's queue from volatile (seq_cst) loads: the park re-check. */
    long size(int w) {
        return rings != null ? rings[w].size() : deques[w].size();
    }

    /** Removes one entry of w's queue from any thread (the sweep). */
    long stealOne(int w) {
        if (rings != null) {
            return rings[w].steal();
        }
        long e;
        do {
            e = deques[w].steal();
        } while (e == WorkDeque.ABORT);
        return e;
    }

    void close() {
        if (deques != null) {
            for (WorkDeque d : deques) {
                d.close();
            }
        }
    }
}
