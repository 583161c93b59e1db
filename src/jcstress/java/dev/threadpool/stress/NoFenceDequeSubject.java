package dev.threadpool.stress;

import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.QueueEntry;
import dev.threadpool.internal.queue.WorkDeque;
import dev.threadpool.jcstress.mutants.NoFenceDeque;
import java.util.concurrent.atomic.AtomicLong;

/**
 * DEMO ONLY, never in the default subject list: {@link WorkDequeSubject}'s workload on {@link NoFenceDeque},
 * the copy whose take() lacks its full fence (seed 002 Case 3). A BROKEN run is the expected finding. Run it
 * with {@link DemoStress}.
 *
 * <p>The copy does not grow: its array has a fixed capacity, 2 by default ({@code -Dnofence.capacity=N} in a
 * single run). When push finds it full, the owner takes one entry itself and retries. So the owner keeps
 * taking the last-but-one of two entries while the thieves steal, which is the race window of Case 3. Seed
 * 002 kept its growing deque near empty with 7 thieves on 8 vCPUs; on a 2-core machine the thieves fall
 * behind, and with a capacity of 64 the deque sits full and the race almost never lines up (see
 * docs/ALGORITHMS.md, section work-deque).
 */
final class NoFenceDequeSubject implements StressSubject {
    @Override
    public String name() {
        return "no-fence-deque";
    }

    @Override
    public String run(int items, int threads, Seen seen) throws Exception {
        int thieves = Math.max(1, threads - 1);
        try (PoolMemory mem = PoolMemory.create()) {
            NoFenceDeque q = new NoFenceDeque(mem, Integer.getInteger("nofence.capacity", 2));
            AtomicLong consumed = new AtomicLong();
            long[] stolen = new long[thieves];
            long[] aborts = new long[thieves];
            Thread[] ts = new Thread[thieves];
            for (int i = 0; i < thieves; i++) {
                final int id = i;
                ts[i] = new Thread(() -> {
                    // Bounded: a lost entry would otherwise keep the thieves spinning forever.
                    long deadline = System.nanoTime() + 120_000_000_000L;
                    while (consumed.get() < items && System.nanoTime() < deadline) {
                        long v = q.steal();
                        if (v == WorkDeque.ABORT) {
                            aborts[id]++;
                        } else if (v != QueueEntry.EMPTY) {
                            seen.hit(v);
                            consumed.incrementAndGet();
                            stolen[id]++;
                        }
                    }
                }, "thief-" + i);
            }
            for (Thread t : ts) t.start();
            long taken = 0;
            for (long v = 1; v <= items; v++) {
                while (!q.push(v)) { // full: work off one entry, then retry
                    long x = q.take();
                    if (x != QueueEntry.EMPTY) {
                        seen.hit(x);
                        consumed.incrementAndGet();
                        taken++;
                    }
                }
                if (v % 3 == 0) {
                    long x = q.take();
                    if (x != QueueEntry.EMPTY) {
                        seen.hit(x);
                        consumed.incrementAndGet();
                        taken++;
                    }
                }
            }
            for (long x; (x = q.take()) != QueueEntry.EMPTY; taken++) {
                seen.hit(x);
                consumed.incrementAndGet();
            }
            // A duplicate makes consumed overshoot; a lost entry (bottom below top) makes it fall short, and
            // then the thieves stop at their deadline.
            for (Thread t : ts) t.join();
            long st = 0, ab = 0;
            for (int i = 0; i < thieves; i++) {
                st += stolen[i];
                ab += aborts[i];
            }
            return "thieves " + thieves + "  owner took " + taken + "  stolen " + st + "  aborts " + ab;
        }
    }
}
