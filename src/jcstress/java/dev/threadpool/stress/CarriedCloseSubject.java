package dev.threadpool.stress;

import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.BoundedRing;
import dev.threadpool.internal.queue.QueueEntry;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Carried admission against its close ({@code BoundedRing.closeToPushes}, the shutdown's close of carried
 * admission): producers push every item as a carried task into the current ring of 64 cells while a closer closes
 * it at random moments and installs a fresh one. A producer whose push is refused with {@code closedToPushes}
 * pushes the same item into the next ring. Consumers pop every ring. So an item comes out once only if every push
 * either got in and was counted by the close, or was refused and got in nowhere: a push accepted after the close
 * (and also re-pushed) shows up as a duplicate, a push counted but refused as a lost item; and each ring's close
 * count must equal what was popped from it.
 */
final class CarriedCloseSubject implements StressSubject {
    private static final int CELLS = 64;
    /** Producers done and nothing popped for this long: the rest is lost (a stray push), fail instead of hanging. */
    private static final long STALL_NANOS = 5_000_000_000L;

    /** One ring's life: open, then closed with the count of its pushes, then drained. */
    private static final class Round {
        final BoundedRing ring;
        final AtomicLong popped = new AtomicLong();
        volatile long closedCount = -1;

        Round(PoolMemory mem) {
            this.ring = new BoundedRing(mem, "stress carried-close ring", CELLS, true);
        }

        boolean drained() {
            long n = closedCount;
            return n >= 0 && popped.get() == n;
        }
    }

    @Override
    public String name() {
        return "carried-close";
    }

    @Override
    public String run(int items, int threads, Seen seen) throws Exception {
        int producers = Math.max(1, threads / 2);
        int consumers = Math.max(1, threads - producers);
        try (PoolMemory mem = PoolMemory.create()) {
            List<Round> rounds = new CopyOnWriteArrayList<>();
            Round first = new Round(mem);
            rounds.add(first);
            AtomicReference<Round> current = new AtomicReference<>(first);
            AtomicLong next = new AtomicLong(1);
            AtomicLong consumed = new AtomicLong();
            AtomicLong refused = new AtomicLong();
            AtomicLong torn = new AtomicLong();
            AtomicLong producing = new AtomicLong(producers);
            AtomicBoolean stalled = new AtomicBoolean();
            Thread[] ts = new Thread[producers + consumers + 1];
            for (int p = 0; p < producers; p++) {
                ts[p] = new Thread(() -> {
                    for (long v; (v = next.getAndIncrement()) <= items;) {
                        Long task = v;
                        Long group = -v;
                        for (;;) {
                            Round r = current.get();
                            if (r.ring.tryPushCarried(task, group)) {
                                break;
                            }
                            if (r.ring.closedToPushes()) {
                                refused.incrementAndGet();
                                while (current.get() == r) {
                                    Thread.onSpinWait(); // the closer installs the next ring right after its close
                                }
                            } else {
                                Thread.onSpinWait(); // full
                            }
                        }
                    }
                    producing.decrementAndGet();
                }, "producer-" + p);
            }
            for (int c = 0; c < consumers; c++) {
                ts[producers + c] = new Thread(() -> {
                    Object[] taken = new Object[2];
                    int from = 0; // rings before it are drained (they stay so: closed, every push counted out)
                    long idleSince = 0;
                    while (consumed.get() < items && !stalled.get()) {
                        boolean any = false;
                        for (int i = from; i < rounds.size(); i++) {
                            Round r = rounds.get(i);
                            if (r.drained()) {
                                if (i == from) {
                                    from++;
                                }
                                continue;
                            }
                            if (r.ring.tryPop(taken) == QueueEntry.CARRIED) {
                                long v = (Long) taken[0];
                                if ((Long) taken[1] != -v) {
                                    torn.incrementAndGet();
                                }
                                taken[0] = null;
                                taken[1] = null;
                                r.popped.incrementAndGet();
                                seen.hit(v);
                                consumed.incrementAndGet();
                                any = true;
                            }
                        }
                        if (any) {
                            idleSince = 0;
                        } else if (producing.get() > 0) {
                            Thread.onSpinWait();
                        } else if (idleSince == 0) {
                            idleSince = System.nanoTime();
                        } else if (System.nanoTime() - idleSince > STALL_NANOS) {
                            stalled.set(true); // an item pushed where no drain looks: Seen reports it lost
                        }
                    }
                }, "consumer-" + c);
            }
            ts[producers + consumers] = new Thread(() -> {
                ThreadLocalRandom rnd = ThreadLocalRandom.current();
                while (consumed.get() < items && !stalled.get()) {
                    for (int spin = rnd.nextInt(2_000); spin > 0; spin--) {
                        Thread.onSpinWait(); // pacing only: a close lands at a random point of the pushes
                    }
                    Round r = current.get();
                    Round fresh = new Round(mem);
                    rounds.add(fresh); // visible to consumers before any producer can push into it
                    r.closedCount = r.ring.closeToPushes();
                    current.set(fresh);
                }
                Round last = current.get();
                last.closedCount = last.ring.closeToPushes(); // every item is out: counts the last ring too
            }, "closer");
            for (Thread t : ts) t.start();
            for (Thread t : ts) t.join();
            if (torn.get() != 0) {
                throw new IllegalStateException(torn.get() + " carried pairs came out with a task and a group"
                        + " of different pushes");
            }
            long counted = 0;
            if (stalled.get()) {
                return "stalled: items went where no drain looks (lost below)";
            }
            for (Round r : rounds) {
                if (r.closedCount != r.popped.get()) {
                    throw new IllegalStateException("a ring's close counted " + r.closedCount + " pushes, "
                            + r.popped.get() + " came out");
                }
                counted += r.closedCount;
            }
            return "producers " + producers + "  consumers " + consumers + "  rings " + rounds.size()
                    + "  refused pushes " + refused.get() + "  counted " + counted;
        }
    }
}
