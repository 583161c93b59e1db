package dev.threadpool.stress;

import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.BoundedRing;
import dev.threadpool.internal.queue.QueueEntry;
import java.util.concurrent.atomic.AtomicLong;

/**
 * BoundedRing (MPMC): half the threads produce (mixing tryPush and pushMany), half consume (mixing tryPop
 * and popMany), through a ring of 64 cells so it wraps thousands of times and is often full and empty.
 */
final class BoundedRingSubject implements StressSubject {
    @Override
    public String name() {
        return "bounded-ring";
    }

    @Override
    public String run(int items, int threads, Seen seen) throws Exception {
        int producers = Math.max(1, threads / 2);
        int consumers = Math.max(1, threads - producers);
        try (PoolMemory mem = PoolMemory.create()) {
            BoundedRing ring = new BoundedRing(mem, "stress ring", 64);
            AtomicLong next = new AtomicLong(1);
            AtomicLong consumed = new AtomicLong();
            long[] pushBatches = new long[producers];
            long[] popBatches = new long[consumers];
            Thread[] ts = new Thread[producers + consumers];
            for (int p = 0; p < producers; p++) {
                final int id = p;
                ts[p] = new Thread(() -> {
                    long[] buf = new long[8];
                    for (;;) {
                        long first = next.getAndAdd(4);
                        if (first > items) {
                            return;
                        }
                        int n = (int) Math.min(4, items - first + 1);
                        for (int k = 0; k < n; k++) {
                            buf[k] = first + k;
                        }
                        if ((first & 4) == 0) { // every other group goes through pushMany
                            int done = 0;
                            while (done < n) {
                                int m = ring.pushMany(buf, done, n - done);
                                if (m > 0) pushBatches[id]++;
                                done += m;
                                if (m == 0) Thread.onSpinWait();
                            }
                        } else {
                            for (int k = 0; k < n; k++) {
                                while (!ring.tryPush(buf[k])) Thread.onSpinWait();
                            }
                        }
                    }
                }, "producer-" + p);
            }
            for (int c = 0; c < consumers; c++) {
                final int id = c;
                ts[producers + c] = new Thread(() -> {
                    long[] buf = new long[8];
                    long round = 0;
                    while (consumed.get() < items) {
                        if ((round++ & 1) == 0) {
                            long v = ring.tryPop();
                            if (v != QueueEntry.EMPTY) {
                                seen.hit(v);
                                consumed.incrementAndGet();
                            }
                        } else {
                            int n = ring.popMany(buf, 1 + (int) (round & 7));
                            if (n > 0) popBatches[id]++;
                            for (int k = 0; k < n; k++) seen.hit(buf[k]);
                            consumed.addAndGet(n);
                        }
                    }
                }, "consumer-" + c);
            }
            for (Thread t : ts) t.start();
            for (Thread t : ts) t.join();
            long pb = 0, cb = 0;
            for (long x : pushBatches) pb += x;
            for (long x : popBatches) cb += x;
            return "producers " + producers + "  consumers " + consumers + "  pushMany claims " + pb
                    + "  popMany claims " + cb;
        }
    }
}
