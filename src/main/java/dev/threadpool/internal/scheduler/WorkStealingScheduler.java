package dev.threadpool.internal.scheduler;

import dev.threadpool.PoolConfig;
import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.BoundedRing;
import dev.threadpool.internal.queue.LifoSlot;
import dev.threadpool.internal.queue.QueueEntry;
import dev.threadpool.internal.stats.PoolCounters;
import java.lang.invoke.VarHandle;

/**
 * WORK_STEALING topology: per-worker LIFO slot and local queue, the shared inject ring, steal-half between
 * workers, coalesced wakes. The worker loop order lives in {@link #next}.
 *
 * <h2>Where an entry goes</h2>
 * <pre>
 *   from worker w:  LIFO slot w  (the displaced entry -> local queue w -> when full, half of it -> inject)
 *   from elsewhere: inject ring
 *   batch from w:   local queue w (-> inject when full)
 * </pre>
 *
 * <h2>Worker loop ({@link #next})</h2>
 * <pre>
 *   every 61st call: inject first (so a busy local queue cannot starve the ring; Tokio's global poll)
 *   LIFO slot w, at most MAX_LIFO_RUNS times in a row (a task resubmitting itself cannot starve the rest)
 *   local queue w
 *   inject: popMany(min(injectBatchSize, free + 1)), run the first, the rest into local queue w
 *   steal-half (stealBatchSize) from peers whose workers_nonempty bit is set, from a rotating start
 *   peers' LIFO slots (a task that blocks after submitting a child must not hide the child)
 *   LIFO slot w even if its run budget is spent (nothing else is there)
 * </pre>
 *
 * <h2>Park re-check ({@link #hasWork})</h2>
 * Seq_cst loads of every queue a worker can take from: inject head/tail, every local queue's head/tail (not
 * the bitmap, which is only a hint) and every LIFO slot. Submitters publish (seq_cst CAS / getAndSet, or the
 * local queue's release store followed by the full fence in {@link #signalWork}) and then run the
 * {@link WakeCoalescer} rule; see there for why no entry is left with every worker parked.
 */
final class WorkStealingScheduler implements Scheduler {
    /** Consecutive LIFO-slot runs before the local queue and inject ring get a turn (Tokio uses 3). */
    static final int MAX_LIFO_RUNS = 3;
    /** Every this many calls the inject ring is polled first. */
    static final int INJECT_POLL_INTERVAL = 61;

    /** Owner-only state of one worker; plain fields, touched only from that worker's thread. */
    private static final class WorkerState {
        int tick;
        int lifoRuns;
        int stealStart;
        final long[] batch;
        final long[] scratch;
        final long[] failures = new long[1];

        WorkerState(int injectBatch, int localCap) {
            batch = new long[injectBatch];
            scratch = new long[Math.max(1, localCap / 2)];
        }
    }

    private final BoundedRing inject;
    private final LifoSlot lifo;
    private final LocalQueues locals;
    private final WakeCoalescer wake;
    private final PoolCounters counters;
    private final WorkerState[] states;
    private final int workers;
    private final int stealBatch;

    WorkStealingScheduler(PoolMemory memory, PoolConfig config, BoundedRing inject, ParkingLot parking,
            PoolCounters counters) {
        this.inject = inject;
        this.counters = counters;
        this.workers = PoolCore.workerSlots(config); // LANE_EXTENSION: its overflow workers too
        this.stealBatch = config.stealBatchSize();
        this.lifo = new LifoSlot(memory, "lifo slots", workers);
        this.locals = new LocalQueues(memory, config.queueKind(), workers, config.localQueueCapacity());
        this.wake = new WakeCoalescer(memory, parking, config.wakeCoalesceBatch());
        this.states = new WorkerState[workers];
        for (int w = 0; w < workers; w++) {
            states[w] = new WorkerState(config.injectBatchSize(), config.localQueueCapacity());
            states[w].stealStart = w + 1;
        }
    }

    // =====================================================================================================
    // Enqueue
    // =====================================================================================================

    @Override
    public boolean tryEnqueue(WorkerThread self, long entry) {
        if (self == null) {
            return inject.tryPush(entry); // seq_cst CAS on tail
        }
        final int w = self.index;
        // getAndSet (seq_cst): publishes the entry to thieves and to the park re-check (peekVolatile).
        long displaced = lifo.put(w, entry);
        if (displaced == QueueEntry.EMPTY || pushLocal(w, displaced)) {
            return true;
        }
        // No room anywhere: put the displaced entry back and hand ours back to the caller to retry.
        long back = lifo.put(w, displaced);
        return back == QueueEntry.EMPTY; // a thief took ours meanwhile: it is placed, the displaced one too
    }

    /** Local queue w, or (RING full) half of it plus the entry to inject; false when nothing fits. */
    private boolean pushLocal(int w, long e) {
        if (locals.push(w, e)) {
            return true;
        }
        return locals.isRing() ? locals.pushOrOverflow(w, e, inject, states[w].scratch) : inject.tryPush(e);
    }

    @Override
    public int tryEnqueueMany(WorkerThread self, long[] entries, int from, int n) {
        if (self == null) {
            return inject.pushMany(entries, from, n);
        }
        int k = 0;
        while (k < n && pushLocal(self.index, entries[from + k])) {
            k++;
        }
        return k;
    }

    @Override
    public void signalWork(int n) {
        // full fence: a local-queue push ends with a release store of tail, and the idle-mask load below must
        // not be reordered before it (StoreLoad); without it a worker could announce, miss the entry in its
        // re-check, and park while we miss its bit. The inject CAS and LIFO getAndSet are seq_cst already.
        VarHandle.fullFence();
        wake.signalWork();
    }

    // =====================================================================================================
    // Worker loop
    // =====================================================================================================

    @Override
    public long next(WorkerThread self) {
        final int w = self.index;
        final WorkerState st = states[w];
        long e;
        if (++st.tick == INJECT_POLL_INTERVAL) {
            st.tick = 0;
            e = inject.tryPop();
            if (e != QueueEntry.EMPTY) {
                st.lifoRuns = 0;
                return e;
            }
        }
        if (st.lifoRuns < MAX_LIFO_RUNS) {
            e = lifo.take(w);
            if (e != QueueEntry.EMPTY) {
                st.lifoRuns++;
                return e;
            }
        }
        e = locals.pop(w);
        if (e == QueueEntry.EMPTY) {
            e = refillFromInject(w, st);
        }
        if (e == QueueEntry.EMPTY) {
            e = steal(w, st);
        }
        if (e != QueueEntry.EMPTY) {
            st.lifoRuns = 0;
            return e;
        }
        e = lifo.take(w); // the run budget was spent but nothing else is queued
        st.lifoRuns = e != QueueEntry.EMPTY ? 1 : 0;
        return e;
    }

    /** popMany from inject; returns the first, the rest go to local queue w (they fit: at most free + 1). */
    private long refillFromInject(int w, WorkerState st) {
        final long[] b = st.batch;
        int max = Math.min(b.length, locals.free(w) + 1);
        int n = inject.popMany(b, max); // one head CAS for up to max entries
        if (n == 0) {
            return QueueEntry.EMPTY;
        }
        // The owner of a RING pops FIFO, of a Chase-Lev deque LIFO: push so that either way the owner runs
        // the batch in ring (submission) order.
        final boolean lifoOwner = !locals.isRing();
        for (int j = 1; j < n; j++) {
            long e = b[lifoOwner ? n - j : j];
            if (!locals.push(w, e)) {
                while (!inject.tryPush(e)) { // cannot happen with the free bound above; never drop one
                    Thread.onSpinWait();
                }
            }
        }
        if (n > 1) {
            signalWork(n - 1); // chained wake: more than we run ourselves is now stealable
        }
        return b[0];
    }

    private long steal(int w, WorkerState st) {
        st.failures[0] = 0;
        int start = st.stealStart;
        st.stealStart = start + 1 >= workers ? 0 : start + 1; // rotate the first victim
        long e = locals.stealHalf(w, start, stealBatch, st.failures);
        if (e == QueueEntry.EMPTY) {
            for (int k = 1; k < workers && e == QueueEntry.EMPTY; k++) {
                int v = (w + k) % workers;
                e = lifo.take(v); // getAndSet: claims the peer's LIFO entry
            }
        }
        if (st.failures[0] != 0) {
            counters.add(w, PoolCounters.STEAL_FAILURES, st.failures[0]);
        }
        if (e != QueueEntry.EMPTY) {
            counters.increment(w, PoolCounters.STEALS);
            if (locals.size(w) > 0) {
                signalWork(1); // chained wake: we took more than one
            }
        }
        return e;
    }

    // =====================================================================================================
    // Park re-check, sweep
    // =====================================================================================================

    @Override
    public boolean hasWork(int i) {
        if (!inject.isEmpty()) { // volatile loads of head and tail
            return true;
        }
        for (int v = 0; v < workers; v++) {
            // volatile loads: seq_cst after the announcement (ParkingLot step 2)
            if (lifo.peekVolatile(v) != QueueEntry.EMPTY || locals.size(v) > 0) {
                return true;
            }
        }
        return false;
    }

    @Override
    public void searching(int i, boolean on) {
        if (on) {
            wake.beginSearch();
        } else {
            wake.endSearch();
        }
    }

    @Override
    public long drainOne() {
        long e = inject.tryPop();
        if (e != QueueEntry.EMPTY) {
            return e;
        }
        for (int v = 0; v < workers; v++) {
            e = lifo.take(v);
            if (e != QueueEntry.EMPTY) {
                return e;
            }
            e = locals.stealOne(v);
            if (e != QueueEntry.EMPTY) {
                return e;
            }
        }
        return QueueEntry.EMPTY;
    }

    @Override
    public void close() {
        locals.close();
    }
}
