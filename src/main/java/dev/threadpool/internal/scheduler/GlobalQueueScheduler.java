package dev.threadpool.internal.scheduler;

import dev.threadpool.internal.queue.BoundedRing;

/**
 * GLOBAL_QUEUE topology: one MPMC {@link BoundedRing} that every submitter pushes to and every worker pops
 * from; one {@link ParkingLot#wakeOne()} per published entry. Exactly the behaviour PoolCore had before the
 * topology was factored out.
 */
final class GlobalQueueScheduler implements Scheduler {
    private final BoundedRing inject;
    private final ParkingLot parking;

    GlobalQueueScheduler(BoundedRing inject, ParkingLot parking) {
        this.inject = inject;
        this.parking = parking;
    }

    @Override
    public boolean tryEnqueue(WorkerThread self, long entry) {
        return inject.tryPush(entry); // seq_cst CAS on tail: step a of the handshake
    }

    @Override
    public int tryEnqueueMany(WorkerThread self, long[] entries, int from, int n) {
        return inject.pushMany(entries, from, n); // one tail CAS per run of free cells
    }

    @Override
    public void signalWork(int n) {
        for (int k = 0; k < n && parking.wakeOne() >= 0; k++) {
            // wake at most one worker per entry, stopping as soon as nobody is idle
        }
    }

    @Override
    public long next(WorkerThread self) {
        return inject.tryPop();
    }

    @Override
    public boolean hasWork(int i) {
        return !inject.isEmpty(); // volatile loads of head and tail
    }

    @Override
    public void searching(int i, boolean on) {
        // no coalescing: every submit wakes
    }

    @Override
    public long drainOne() {
        return inject.tryPop();
    }

    @Override
    public void close() {
    }

    @Override
    public long depth(dev.threadpool.Lane lane) {
        return lane == dev.threadpool.Lane.DEFAULT ? inject.size() : 0;
    }
}
