package dev.threadpool.stress;

import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.CarriedRings;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Carried admission against its close ({@code CarriedRings.close}, the shutdown's close of carried admission, one
 * {@code BoundedRing.closeToPushes} per stripe): producers push every item as a carried task into the current
 * rings ({@code carried-close}: 64 cells in 4 stripes; {@code carried-close-16}: 256 cells in 16 stripes; each
 * producer from its own thread's home stripe, moving on after each run of {@code CarriedRings.SPREAD} pushes and
 * overflowing into the others when a stripe is full) while a closer closes them at random moments and installs
 * fresh ones. A producer
 * whose push is refused with {@code closed} pushes the same item into the next rings. Consumers pop every round's
 * rings from their own home stripe on. So an item comes out once only if every push either got in and was counted
 * by the close, or was refused and got in nowhere: a push accepted after its stripe's close (and also re-pushed)
 * shows up as a duplicate, a push counted but refused as a lost item; and each round's close count must equal
 * what was popped from it.
 */
final class CarriedCloseSubject implements StressSubject {
    /**
     * Cells per stripe: 16, two runs of {@code CarriedRings.SPREAD}, so producers spread, meet full stripes and
     * overflow, and a close lands between two stripes.
     */
    private static final int STRIPE_CELLS = 16;
    /** Producers done and nothing popped for this long: the rest is lost (a stray push), fail instead of hanging. */
    private static final long STALL_NANOS = 5_000_000_000L;

    private final String name;
    private final int stripes;

    /** {@code carried-close}: four stripes. */
    CarriedCloseSubject() {
        this("carried-close", 4);
    }

    /** Rings of {@code stripes} stripes of {@link #STRIPE_CELLS} cells each. */
    CarriedCloseSubject(String name, int stripes) {
        this.name = name;
        this.stripes = stripes;
    }

    /** One round's rings: open, then closed with the count of their pushes, then drained. */
    private static final class Round {
        final CarriedRings rings;
        final AtomicLong popped = new AtomicLong();
        volatile long closedCount = -1;

        Round(PoolMemory mem, int stripes) {
            this.rings = new CarriedRings(mem, stripes * STRIPE_CELLS, stripes);
        }

        boolean drained() {
            long n = closedCount;
            return n >= 0 && popped.get() == n;
        }
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String run(int items, int threads, Seen seen) throws Exception {
        int producers = Math.max(1, threads / 2);
        int consumers = Math.max(1, threads - producers);
        try (PoolMemory mem = PoolMemory.create()) {
            List<Round> rounds = new CopyOnWriteArrayList<>();
            Round first = new Round(mem, stripes);
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
                            if (r.rings.tryPush(task, group)) {
                                break;
                            }
                            if (r.rings.closed()) {
                                refused.incrementAndGet();
                                while (current.get() == r) {
                                    Thread.onSpinWait(); // the closer installs the next rings right after its close
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
                final int home = c; // the consumer pops as worker c would: its home stripe first
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
                            if (r.rings.popManyFor(home, taken, 0, 1) == 1) {
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
                    Round fresh = new Round(mem, stripes);
                    rounds.add(fresh); // visible to consumers before any producer can push into it
                    r.closedCount = r.rings.close();
                    current.set(fresh);
                }
                Round last = current.get();
                last.closedCount = last.rings.close(); // every item is out: counts the last round too
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
                    throw new IllegalStateException("a round's close counted " + r.closedCount + " pushes, "
                            + r.popped.get() + " came out");
                }
                counted += r.closedCount;
            }
            return "producers " + producers + "  consumers " + consumers + "  rounds " + rounds.size()
                    + "  refused pushes " + refused.get() + "  counted " + counted;
        }
    }
}
