package dev.threadpool.internal.scheduler;

import dev.threadpool.Lane;
import dev.threadpool.PoolConfig;
import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.BoundedRing;
import dev.threadpool.internal.queue.QueueEntry;
import dev.threadpool.internal.stats.QueueDepthGauge;

/**
 * GLOBAL_QUEUE topology: one MPMC {@link BoundedRing} that every submitter pushes to and every worker pops
 * from, with the {@link WakeCoalescer} rule (as WORK_STEALING) for waking parked workers.
 *
 * <h2>Wakes</h2>
 * A submit wakes a parked worker only when nobody is searching (spinning in {@code Idle.idle} before it
 * announces), or every {@code wakeCoalesceBatch}-th submit while somebody is; the proof that no entry is left
 * with every worker parked is WakeCoalescer's (the ring push is a seq_cst CAS, the park re-check reads head and
 * tail with seq_cst loads). A worker that pops an entry and sees the ring still non-empty wakes one more parked
 * worker (the chained wake), so a burst coalesced into one wake still reaches every idle worker even when every
 * task blocks. The chained wake follows every pop, not only the first after a search, so it is also this
 * topology's pass-on (Scheduler's contract): the ring is the only queue, and a worker that takes one entry and
 * sees more wakes one more sleeper.
 *
 * <p>No lanes: an entry of either lane goes to the ring and is counted in the DEFAULT lane's depth.
 */
final class GlobalQueueScheduler implements Scheduler {
    private final BoundedRing inject;
    private final ParkingLot parking;
    private final WakeCoalescer wake;
    private final QueueDepthGauge gauge;

    GlobalQueueScheduler(PoolMemory memory, PoolConfig config, BoundedRing inject, ParkingLot parking,
            QueueDepthGauge gauge) {
        this.inject = inject;
        this.parking = parking;
        this.gauge = gauge;
        this.wake = new WakeCoalescer(memory, parking, config.wakeCoalesceBatch());
    }

    @Override
    public boolean tryEnqueue(WorkerThread self, long entry, Lane lane) {
        return inject.tryPush(entry); // seq_cst CAS on tail: step a of the handshake
    }

    @Override
    public int tryEnqueueMany(WorkerThread self, long[] entries, int from, int n, Lane lane) {
        return inject.pushMany(entries, from, n); // one tail CAS per run of free cells
    }

    @Override
    public void signalWork(int n, Lane lane) {
        // Sampled (QueueDepthGauge.sample: the thread's own seed): the ring's occupancy reads its head, a line every
        // pop writes, so looking on every submit cost a miss per task. Then volatile loads of head and tail, a CAS
        // only for a new peak.
        if (QueueDepthGauge.sample(n)) {
            gauge.observe(Lane.DEFAULT, inject.size());
        }
        // The ring push (tryPush / pushMany) was a seq_cst CAS: no fence needed before the rule's idle-mask load.
        // One rule application per call; for a batch the chained wakes in next() spread it to more workers.
        wake.signalWork();
    }

    @Override
    public long next(WorkerThread self) {
        long e = inject.tryPop(); // seq_cst CAS on head
        if (e != QueueEntry.EMPTY && parking.idleMask() != 0 && !inject.isEmpty()) {
            // Chained wake: we run one entry and more are queued while a worker sleeps. Volatile loads after our
            // CAS; a worker that announces after the idle-mask load re-checks the ring itself (ParkingLot). The
            // mask was just loaded, so wake directly (wakeOne's CAS on a bit decides who, -1 if none is left).
            parking.wakeOne();
        }
        return e;
    }

    @Override
    public boolean hasWork(int i) {
        // volatile loads of head and the head cell's seq: a published entry only, so an idle worker does not spin
        // on a cell whose producer was preempted between its claim and its publish (see pendingPush)
        return inject.hasReadyEntry();
    }

    /**
     * Volatile loads of head and tail: a cell claimed but not yet published. Its producer's signalWork comes
     * after its publish but without a fence before the idle-mask load (none per submit here), so that load may
     * miss a worker that announced while the publish was still buffered: the worker's park is bounded
     * (Scheduler, "Claimed but unpublished ring cells").
     */
    @Override
    public boolean pendingPush(int i) {
        return !inject.isEmpty();
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
        return inject.tryPop();
    }

    @Override
    public void close() {
    }

    @Override
    public long depth(Lane lane) {
        return lane == Lane.DEFAULT ? inject.size() : 0;
    }
}
