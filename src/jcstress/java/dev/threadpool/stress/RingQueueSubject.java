package dev.threadpool.stress;

import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.QueueEntry;
import dev.threadpool.internal.queue.RingQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * RingQueue (SPMC): one owner pushes 1..N into a 64-cell queue, popping one every 7th push and when it stays
 * full after a few yields; {@code threads - 1} thieves alternate steal and stealHalf (batch 1..8) into their own 16-cell
 * queues and drain those with owner pops. One time in eight a thief robs another thief's queue instead of
 * the owner's, so the speculative copy into a dst that is itself being stolen from is exercised too.
 */
final class RingQueueSubject implements StressSubject {
    @Override
    public String name() {
        return "ring-queue";
    }

    @Override
    public String run(int items, int threads, Seen seen) throws Exception {
        int thieves = Math.max(1, threads - 1);
        try (PoolMemory mem = PoolMemory.create()) {
            RingQueue victim = new RingQueue(mem, "stress owner queue", 64, true); // as a worker's: raw push and pop
            RingQueue[] own = new RingQueue[thieves];
            for (int k = 0; k < thieves; k++) {
                own[k] = new RingQueue(mem, "stress thief queue " + k, 16, true);
            }
            AtomicLong consumed = new AtomicLong();
            long[] ownerPops = new long[1];
            long[] refused = new long[1];
            long[] steals = new long[thieves];
            long[] halfClaims = new long[thieves];
            long[] halfEntries = new long[thieves];
            Thread[] ts = new Thread[thieves + 1];
            ts[0] = new Thread(() -> {
                long pops = 0;
                for (int v = 1; v <= items; v++) {
                    for (int full = 0; !victim.tryPush(v); full++) {
                        refused[0]++;
                        if ((full & 1) == 0) {
                            Thread.yield(); // full: give the thieves (fewer cores than threads) a chance first
                            continue;
                        }
                        long e = victim.pop();
                        if (e != QueueEntry.EMPTY) {
                            seen.hit(e);
                            consumed.incrementAndGet();
                            pops++;
                        }
                    }
                    if (v % 7 == 0) {
                        long e = victim.pop();
                        if (e != QueueEntry.EMPTY) {
                            seen.hit(e);
                            consumed.incrementAndGet();
                            pops++;
                        }
                    }
                }
                while (consumed.get() < items) {
                    long e = victim.pop();
                    if (e != QueueEntry.EMPTY) {
                        seen.hit(e);
                        consumed.incrementAndGet();
                        pops++;
                    } else {
                        Thread.onSpinWait(); // thieves still draining their own queues
                    }
                }
                ownerPops[0] = pops;
            }, "owner");
            for (int k = 0; k < thieves; k++) {
                final int id = k;
                final RingQueue dst = own[k];
                ts[k + 1] = new Thread(() -> {
                    long round = 0;
                    while (consumed.get() < items) {
                        round++;
                        RingQueue from = (round & 7) == 7 && thieves > 1 ? own[(id + 1) % thieves] : victim;
                        long e;
                        if ((round & 1) == 0) {
                            e = from.steal();
                            if (e != QueueEntry.EMPTY) steals[id]++;
                        } else {
                            int before = dst.size();
                            e = from.stealHalf(dst, 1 + (int) ((round >>> 1) & 7));
                            if (e != QueueEntry.EMPTY) {
                                halfClaims[id]++;
                                halfEntries[id] += 1 + Math.max(0, dst.size() - before);
                            }
                        }
                        if (e != QueueEntry.EMPTY) {
                            seen.hit(e);
                            consumed.incrementAndGet();
                        }
                        if (e == QueueEntry.EMPTY || (round & 15) == 0) {
                            // empty, or now and then anyway: let the owner (fewer cores than threads) push,
                            // so the victim also spends time full, where pushes race the copies
                            Thread.yield();
                        }
                        for (long w; (w = dst.pop()) != QueueEntry.EMPTY; ) {
                            seen.hit(w);
                            consumed.incrementAndGet();
                        }
                    }
                }, "thief-" + k);
            }
            for (Thread t : ts) t.start();
            for (Thread t : ts) t.join();
            long st = 0, hc = 0, he = 0;
            for (int k = 0; k < thieves; k++) {
                st += steals[k];
                hc += halfClaims[k];
                he += halfEntries[k];
            }
            return String.format("thieves %d  owner pops %d  pushes refused (full) %d  steals %d  stealHalf claims %d"
                    + " (%.2f/claim)", thieves, ownerPops[0], refused[0], st, hc, hc == 0 ? 0.0 : (double) he / hc);
        }
    }
}
