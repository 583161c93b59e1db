package dev.threadpool.stress;

import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.LifoSlot;
import dev.threadpool.internal.queue.QueueEntry;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * LifoSlot: one owner puts items 1..N into its slot, taking back each entry it displaces (as a worker would
 * move it to its local queue) and now and then taking the slot itself; the other threads take from the same
 * slot, as a thief would. Every value stored is returned by exactly one exchange, so every item must come
 * out exactly once.
 */
final class LifoSlotSubject implements StressSubject {
    @Override
    public String name() {
        return "lifo-slot";
    }

    @Override
    public String run(int items, int threads, Seen seen) throws Exception {
        int thieves = Math.max(1, threads - 1);
        try (PoolMemory mem = PoolMemory.create()) {
            LifoSlot slots = new LifoSlot(mem, "stress lifo slot", 1);
            AtomicBoolean done = new AtomicBoolean();
            long[] taken = new long[thieves];
            Thread[] ts = new Thread[thieves];
            for (int k = 0; k < thieves; k++) {
                final int id = k;
                ts[k] = new Thread(() -> {
                    while (!done.get()) {
                        long v = slots.take(0);
                        if (v != QueueEntry.EMPTY) {
                            seen.hit(v);
                            taken[id]++;
                        } else {
                            Thread.onSpinWait();
                        }
                    }
                }, "thief-" + k);
                ts[k].start();
            }
            long displaced = 0;
            long ownTakes = 0;
            for (long v = 1; v <= items; v++) {
                long prev = slots.put(0, v);
                if (prev != QueueEntry.EMPTY) {
                    seen.hit(prev);
                    displaced++;
                }
                if (v % 5 == 0) {
                    long mine = slots.take(0);
                    if (mine != QueueEntry.EMPTY) {
                        seen.hit(mine);
                        ownTakes++;
                    }
                }
            }
            done.set(true);
            for (Thread t : ts) {
                t.join();
            }
            long last = slots.take(0); // whatever is still in the slot after every thief stopped
            if (last != QueueEntry.EMPTY) {
                seen.hit(last);
            }
            long stolen = 0;
            for (long x : taken) {
                stolen += x;
            }
            return "thieves " + thieves + "  stolen " + stolen + "  displaced " + displaced + "  owner takes "
                    + ownTakes;
        }
    }
}
