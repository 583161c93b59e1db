package dev.threadpool.stress;

import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.BoundedRing;
import dev.threadpool.internal.queue.CarriedBatches;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@link CarriedBatches} over a carrying {@link BoundedRing} of 64 cells, as the workers use them: half the threads
 * push items as carried tasks (a boxed item, its negation as the "group"); the other half are workers, each the
 * owner of one batch, which takes its next task with {@code refill} (its batch, else a claim of up to
 * {@link CarriedBatches#MAX_BATCH} from the ring) and, when that finds nothing, steals one entry from a random
 * peer's batch; one take in four tries a peer's batch first, and one claim in four is followed by a spin (the
 * first task "running") while the rest of the batch is exposed. Producers flood in bursts of 32, so claims of
 * whole batches and steals from them both happen often. An item taken twice (two CASes on one batch entry, a
 * stale thief winning on a refilled batch) or lost (a refill overwriting entries not yet taken) shows in the
 * count; a pair whose halves disagree, or an entry left in a batch, fails the run.
 */
final class CarriedBatchesSubject implements StressSubject {
    @Override
    public String name() {
        return "carried-batches";
    }

    @Override
    public String run(int items, int threads, Seen seen) throws Exception {
        int producers = Math.max(1, threads / 2);
        int workers = Math.max(2, threads - producers);
        try (PoolMemory mem = PoolMemory.create()) {
            BoundedRing ring = new BoundedRing(mem, "stress carried ring", 64, true);
            CarriedBatches batches = new CarriedBatches(mem, workers);
            AtomicLong next = new AtomicLong(1);
            AtomicLong consumed = new AtomicLong();
            AtomicLong stolen = new AtomicLong();
            AtomicLong claims = new AtomicLong();
            AtomicLong torn = new AtomicLong();
            Thread[] ts = new Thread[producers + workers];
            for (int p = 0; p < producers; p++) {
                ts[p] = new Thread(() -> {
                    for (;;) {
                        long first = next.getAndAdd(32);
                        if (first > items) {
                            return;
                        }
                        long last = Math.min(items, first + 31);
                        for (long v = first; v <= last; v++) {
                            Long task = v;
                            Long group = -v;
                            while (!ring.tryPushCarried(task, group)) {
                                Thread.onSpinWait();
                            }
                        }
                    }
                }, "producer-" + p);
            }
            for (int w = 0; w < workers; w++) {
                final int self = w;
                ts[producers + w] = new Thread(() -> {
                    Object[] taken = new Object[2];
                    ThreadLocalRandom rnd = ThreadLocalRandom.current();
                    long myClaims = 0;
                    long mySteals = 0;
                    for (long iter = 0; consumed.get() < items; iter++) {
                        boolean got = false;
                        if ((iter & 3) == 0) { // one take in four tries a peer's batch first: owner vs thief races
                            int victim = rnd.nextInt(workers);
                            got = victim != self && batches.take(victim, taken);
                            if (got) {
                                mySteals++;
                            }
                        }
                        if (!got) {
                            int n = batches.refill(self, ring, taken, CarriedBatches.MAX_BATCH);
                            if (n > 1) {
                                myClaims++;
                                if ((myClaims & 3) == 0) { // "runs" the first for a while: its batch is exposed
                                    for (int spin = 0; spin < 200; spin++) {
                                        Thread.onSpinWait();
                                    }
                                }
                            }
                            got = n > 0;
                        }
                        if (!got) {
                            int victim = rnd.nextInt(workers);
                            got = victim != self && batches.take(victim, taken);
                            if (got) {
                                mySteals++;
                            } else {
                                Thread.onSpinWait();
                                continue;
                            }
                        }
                        long v = (Long) taken[0];
                        if ((Long) taken[1] != -v) {
                            torn.incrementAndGet();
                        }
                        taken[0] = null;
                        taken[1] = null;
                        seen.hit(v);
                        consumed.incrementAndGet();
                    }
                    claims.addAndGet(myClaims);
                    stolen.addAndGet(mySteals);
                }, "worker-" + w);
            }
            for (Thread t : ts) t.start();
            for (Thread t : ts) t.join();
            if (torn.get() != 0) {
                throw new IllegalStateException(torn.get() + " carried pairs came out with a task and a group"
                        + " of different pushes");
            }
            if (batches.size() != 0) {
                throw new IllegalStateException(batches.size() + " entries left in the batches after every item"
                        + " was counted");
            }
            return "producers " + producers + "  workers " + workers + "  batch claims " + claims.get()
                    + "  steals " + stolen.get();
        }
    }
}
