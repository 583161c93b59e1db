package dev.threadpool.stress;

import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.QueueEntry;
import dev.threadpool.internal.queue.WorkDeque;
import java.util.concurrent.atomic.AtomicLong;

/**
 * WorkDeque (Chase–Lev), as seed 002's stress.c: one owner pushes 1..N and takes after every third push,
 * drains what is left at the end; {@code threads - 1} thieves steal until everything is consumed. Initial
 * capacity 64, so the array grows during the run. Also checks that close() gives every byte back.
 */
final class WorkDequeSubject implements StressSubject {
    @Override
    public String name() {
        return "work-deque";
    }

    @Override
    public String run(int items, int threads, Seen seen) throws Exception {
        int thieves = Math.max(1, threads - 1);
        try (PoolMemory mem = PoolMemory.create()) {
            WorkDeque q = new WorkDeque(mem, "stress deque", 64);
            AtomicLong consumed = new AtomicLong();
            long[] stolen = new long[thieves];
            long[] aborts = new long[thieves];
            Thread[] ts = new Thread[thieves];
            for (int i = 0; i < thieves; i++) {
                final int id = i;
                ts[i] = new Thread(() -> {
                    while (consumed.get() < items) {
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
                q.push(v);
                if (v % 3 == 0) { // the owner works on its newest entries
                    long x = q.take();
                    if (x != QueueEntry.EMPTY) {
                        seen.hit(x);
                        consumed.incrementAndGet();
                        taken++;
                    }
                }
            }
            for (long x; (x = q.take()) != QueueEntry.EMPTY; taken++) { // drain what the thieves left
                seen.hit(x);
                consumed.incrementAndGet();
            }
            for (Thread t : ts) t.join();
            long st = 0, ab = 0;
            for (int i = 0; i < thieves; i++) {
                st += stolen[i];
                ab += aborts[i];
            }
            long capacity = q.capacity();
            q.close();
            if (mem.liveBytes() != 0) {
                throw new IllegalStateException("deque close left " + mem.liveBytes() + " bytes live");
            }
            return "thieves " + thieves + "  owner took " + taken + "  stolen " + st + "  aborts " + ab
                    + "  final capacity " + capacity;
        }
    }
}
