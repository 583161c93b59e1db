package dev.threadpool.stress;

import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.BoundedRing;
import dev.threadpool.internal.queue.QueueEntry;
import java.util.concurrent.atomic.AtomicLong;

/**
 * BoundedRing carrying tasks ({@code tryPushCarried} / {@code tryPop(Object[])}): half the threads produce, each
 * item as a carried reference (a boxed item, and its negation as the "group") or, every third group, as a plain
 * entry; half consume. A ring of 64 cells, so it wraps thousands of times, full and empty often. Each item is
 * recorded from what the pop handed over, so a reference read from the wrong lap, or cleared too early, shows
 * up as an item lost or duplicated; a carried pair whose two halves disagree fails the run.
 */
final class CarriedRingSubject implements StressSubject {
    @Override
    public String name() {
        return "carried-ring";
    }

    @Override
    public String run(int items, int threads, Seen seen) throws Exception {
        int producers = Math.max(1, threads / 2);
        int consumers = Math.max(1, threads - producers);
        try (PoolMemory mem = PoolMemory.create()) {
            BoundedRing ring = new BoundedRing(mem, "stress carried ring", 64, true);
            AtomicLong next = new AtomicLong(1);
            AtomicLong consumed = new AtomicLong();
            AtomicLong carried = new AtomicLong();
            AtomicLong torn = new AtomicLong();
            Thread[] ts = new Thread[producers + consumers];
            for (int p = 0; p < producers; p++) {
                ts[p] = new Thread(() -> {
                    for (;;) {
                        long first = next.getAndAdd(4);
                        if (first > items) {
                            return;
                        }
                        int n = (int) Math.min(4, items - first + 1);
                        boolean plain = first % 3 == 0;
                        for (int k = 0; k < n; k++) {
                            long v = first + k;
                            if (plain) {
                                while (!ring.tryPush(v)) Thread.onSpinWait();
                            } else {
                                Long task = v;
                                Long group = -v;
                                while (!ring.tryPushCarried(task, group)) Thread.onSpinWait();
                            }
                        }
                    }
                }, "producer-" + p);
            }
            for (int c = 0; c < consumers; c++) {
                ts[producers + c] = new Thread(() -> {
                    Object[] taken = new Object[2];
                    while (consumed.get() < items) {
                        long e = ring.tryPop(taken);
                        if (e == QueueEntry.EMPTY) {
                            Thread.onSpinWait();
                            continue;
                        }
                        if (e == QueueEntry.CARRIED) {
                            long v = (Long) taken[0];
                            if ((Long) taken[1] != -v) {
                                torn.incrementAndGet();
                            }
                            taken[0] = null;
                            taken[1] = null;
                            carried.incrementAndGet();
                            seen.hit(v);
                        } else {
                            seen.hit(e);
                        }
                        consumed.incrementAndGet();
                    }
                }, "consumer-" + c);
            }
            for (Thread t : ts) t.start();
            for (Thread t : ts) t.join();
            if (torn.get() != 0) {
                throw new IllegalStateException(torn.get() + " carried pairs came out with a task and a group"
                        + " of different pushes");
            }
            return "producers " + producers + "  consumers " + consumers + "  carried " + carried.get();
        }
    }
}
