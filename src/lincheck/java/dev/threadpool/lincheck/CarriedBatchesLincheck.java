package dev.threadpool.lincheck;

import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.BoundedRing;
import dev.threadpool.internal.queue.CarriedBatches;
import dev.threadpool.internal.queue.QueueEntry;
import dev.threadpool.lincheck.mutants.PlainTakeBatches;
import java.util.ArrayList;
import java.util.List;
import org.jetbrains.lincheck.datastructures.LongGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Options;
import org.jetbrains.lincheck.datastructures.Param;
import org.junit.jupiter.api.Test;

/**
 * {@link CarriedBatches} over a carrying {@link BoundedRing} of 4 cells against its contract ({@link Spec}): any
 * thread pushing carried tasks and popping the ring, one owner taking its next task ({@code refill}: its batch,
 * else a claim of 2 from a full ring, else of 1; Lincheck's non-parallel group "owner"), any thread stealing from
 * the owner's batch. Stress and model checking, the claim's two weaknesses shown to be real, and a mutant caught.
 */
public class CarriedBatchesLincheck {
    static final int CAPACITY = 4;
    /** The owner's claim size: a batch needs {@code 2 * MAX} ready cells, the whole ring. */
    static final int MAX = 2;

    /** The operations of the batches and of their mutant (worker 0 owns the batch). */
    interface Batches {
        int refill(BoundedRing ring, Object[] taken, int max);

        boolean take(Object[] taken);
    }

    /** The Lincheck test object. Values travel as the task reference; the group is the negated value. */
    public static class Ops {
        private final BoundedRing ring =
                new BoundedRing(PoolMemory.createGcManaged(), "lincheck carried ring", CAPACITY, true);
        private final Batches batches;

        public Ops() {
            this(real());
        }

        Ops(Batches batches) {
            this.batches = batches;
        }

        private static Batches real() {
            CarriedBatches b = new CarriedBatches(PoolMemory.createGcManaged(), 1);
            return new Batches() {
                public int refill(BoundedRing ring, Object[] taken, int max) { return b.refill(0, ring, taken, max); }
                public boolean take(Object[] taken) { return b.take(0, taken); }
            };
        }

        @Operation
        public boolean tryPush(@Param(gen = LongGen.class, conf = "1:3") long v) {
            return ring.tryPushCarried(Long.valueOf(v), Long.valueOf(-v));
        }

        /** The ring's own pop (the shutdown sweep's door): the value, or EMPTY. */
        @Operation
        public long tryPop() {
            Object[] t = new Object[2];
            return ring.tryPop(t) == QueueEntry.EMPTY ? QueueEntry.EMPTY : value(t);
        }

        /** The owner's next task: {@code value * 10 + n} (n = what refill returned), or 0 for nothing. */
        @Operation(nonParallelGroup = "owner")
        public long next() {
            Object[] t = new Object[2];
            int n = batches.refill(ring, t, MAX);
            return n == 0 ? 0 : value(t) * 10 + n;
        }

        /** A thief's take from the owner's batch: the value, or EMPTY. */
        @Operation
        public long steal() {
            Object[] t = new Object[2];
            return batches.take(t) ? value(t) : QueueEntry.EMPTY;
        }

        private static long value(Object[] t) {
            long v = (Long) t[0];
            if ((Long) t[1] != -v) {
                throw new AssertionError("task " + v + " handed over with the group of " + -(Long) t[1]);
            }
            return v;
        }
    }

    /**
     * The contract. The ring part is {@link BoundedRingLincheck.Spec}'s (positions claimed in order, each cell
     * {@code free -> PUB -> ready(v) -> TAKEN -> FREED}), at capacity 4; {@code batch} is the owner's published
     * entries, in order.
     * <pre>
     *   tryPush(v)   as the ring's: claim (or full), then the publish
     *   tryPop()     as the ring's: claim (or EMPTY), then the free
     *   steal()      one step: batch empty: EMPTY        else its first entry, removed
     *   next()       batch not empty: one step, its first entry (n = 1)
     *                else step 1: head not ready: 0     else claim n cells at the head (n = 1, or n = MAX
     *                     if 2 * MAX cells are ready there), the first is the result; then one free step per
     *                     cell; then (n = MAX) the publish step: the other n - 1 join the batch
     * </pre>
     * The weaknesses this allows over one atomic step per operation: a steal that comes after the claim and before
     * the publish finds the batch empty although the entries have left the ring; and next() may claim one from a
     * ring whose cells became ready during its scan, though two were ready at the claim.
     */
    public static final class Spec implements StepSpec<Spec.S> {
        static final long PUB = -100;
        static final long TAKEN = -101;
        static final long FREED = -102;

        /** Cells of positions {@code [base, tail)} (below base: FREED), and the owner's published batch. */
        record S(long head, long tail, long base, List<Long> cells, List<Long> batch) {
            long cell(long pos) {
                return pos < base ? FREED : cells.get((int) (pos - base));
            }

            boolean freeFor(long pos) {
                return pos - CAPACITY < 0 || cell(pos - CAPACITY) == FREED;
            }

            boolean ready(long pos) {
                return pos < tail && cell(pos) >= 0;
            }

            S claimTail() {
                List<Long> c = new ArrayList<>(cells);
                c.add(PUB);
                return new S(head, tail + 1, base, List.copyOf(c), batch);
            }

            S set(long pos, long v, long newHead) {
                List<Long> c = new ArrayList<>(cells);
                c.set((int) (pos - base), v);
                long b = base;
                while (!c.isEmpty() && c.getFirst() == FREED) {
                    c.removeFirst();
                    b++;
                }
                return new S(newHead, tail, b, List.copyOf(c), batch);
            }

            S withBatch(List<Long> b) {
                return new S(head, tail, base, cells, List.copyOf(b));
            }
        }

        /** A claim of next(): its first position, how many, the values, and the next step (i < n: free i). */
        record Claim(long pos, int n, List<Long> values, int i) {}

        @Override
        public S initial() {
            return new S(0, 0, 0, List.of(), List.of());
        }

        @Override
        public void step(S s, Call call, Object progress, List<Next<S>> out) {
            switch (call.name()) {
                case "tryPush" -> {
                    boolean r = (Boolean) call.result();
                    if (progress == null) {
                        if (!s.freeFor(s.tail())) {
                            if (!r) {
                                out.add(new Next<>(s, DONE));
                            }
                        } else if (r) {
                            out.add(new Next<>(s.claimTail(), s.tail()));
                        }
                    } else {
                        out.add(new Next<>(s.set((Long) progress, call.longArg(0), s.head()), DONE));
                    }
                }
                case "tryPop" -> {
                    long r = (Long) call.result();
                    if (progress == null) {
                        if (!s.ready(s.head())) {
                            if (r == QueueEntry.EMPTY) {
                                out.add(new Next<>(s, DONE));
                            }
                        } else if (r == s.cell(s.head())) {
                            out.add(new Next<>(s.set(s.head(), TAKEN, s.head() + 1), s.head()));
                        }
                    } else {
                        out.add(new Next<>(s.set((Long) progress, FREED, s.head()), DONE));
                    }
                }
                case "steal" -> {
                    long r = (Long) call.result();
                    if (s.batch().isEmpty()) {
                        if (r == QueueEntry.EMPTY) {
                            out.add(new Next<>(s, DONE));
                        }
                    } else if (r == s.batch().getFirst()) {
                        out.add(new Next<>(s.withBatch(s.batch().subList(1, s.batch().size())), DONE));
                    }
                }
                case "next" -> next(s, (Long) call.result(), progress, out);
                default -> throw new IllegalArgumentException("no such operation: " + call.name());
            }
        }

        private static void next(S s, long r, Object progress, List<Next<S>> out) {
            long v = r / 10;
            int n = (int) (r % 10);
            if (progress == null) {
                if (!s.batch().isEmpty()) { // the owner's batch first
                    if (n == 1 && v == s.batch().getFirst()) {
                        out.add(new Next<>(s.withBatch(s.batch().subList(1, s.batch().size())), DONE));
                    }
                    return;
                }
                if (!s.ready(s.head())) {
                    if (r == 0) {
                        out.add(new Next<>(s, DONE));
                    }
                    return;
                }
                if (n != 1 && n != MAX) {
                    return;
                }
                int readyRun = 0;
                while (readyRun < 2 * MAX && s.ready(s.head() + readyRun)) {
                    readyRun++;
                }
                if ((n == MAX && readyRun < 2 * MAX) || v != s.cell(s.head())) {
                    return;
                }
                List<Long> values = new ArrayList<>();
                S claimed = s;
                for (int i = 0; i < n; i++) {
                    long pos = s.head() + i;
                    values.add(s.cell(pos));
                    claimed = claimed.set(pos, TAKEN, pos + 1);
                }
                out.add(new Next<>(claimed, new Claim(s.head(), n, List.copyOf(values), 0)));
            } else {
                Claim c = (Claim) progress;
                if (c.i() < c.n()) { // free one claimed cell
                    S freed = s.set(c.pos() + c.i(), FREED, s.head());
                    boolean last = c.i() + 1 == c.n();
                    out.add(new Next<>(freed, last && c.n() == 1 ? DONE
                            : new Claim(c.pos(), c.n(), c.values(), c.i() + 1)));
                } else { // publish the rest (the batch is empty: only the owner refills, and only when it is)
                    List<Long> b = new ArrayList<>(s.batch());
                    b.addAll(c.values().subList(1, c.n()));
                    out.add(new Next<>(s.withBatch(b), DONE));
                }
            }
        }
    }

    // ---- the checks ----------------------------------------------------------------------------------

    private static <O extends Options<O, ?>> O against(O options, Class<?> verifier) {
        return options.sequentialSpecification(Spec.class).verifier(
                verifier.asSubclass(org.jetbrains.lincheck.datastructures.verifier.Verifier.class));
    }

    /** A full ring: the owner claims a batch while a thief steals and a producer laps into a freed cell. */
    private static Scenario claimAgainstThiefAndProducer() {
        return Scenario.of(Ops.class)
                .init("tryPush", 1L).init("tryPush", 2L).init("tryPush", 3L).init("tryPush", 1L)
                .thread().op("next").op("next")
                .thread().op("steal").op("tryPush", 2L);
    }

    static ModelCheckingOptions modelCheckingOptions() {
        return against(Checks.modelChecking(3, 2), StepVerifier.class)
                .addCustomScenario(claimAgainstThiefAndProducer().build())
                .addCustomScenario(Scenario.of(Ops.class)
                        .init("tryPush", 1L).init("tryPush", 2L).init("tryPush", 3L).init("tryPush", 1L)
                        .init("next")
                        .thread().op("next")
                        .thread().op("steal").build());
    }

    @Test
    void stress() {
        Checks.timed("CarriedBatches stress", () ->
                against(Checks.stress(3, 3), StepVerifier.class)
                        .addCustomScenario(claimAgainstThiefAndProducer().build())
                        .check(Ops.class));
    }

    @Test
    void modelChecking() {
        Checks.timed("CarriedBatches model checking", () -> modelCheckingOptions().check(Ops.class));
    }

    /**
     * A steal between the owner's claim and its publish finds nothing, though the entries left the ring: the
     * ring's pop returns 3 (so the claim of 1 and 2 came first), and the steal after it finds the batch empty.
     */
    @Test
    void aStealBeforeThePublishFindsNothingIsReal() {
        Scenario scenario = Scenario.of(Ops.class)
                .init("tryPush", 1L).init("tryPush", 2L).init("tryPush", 3L).init("tryPush", 1L)
                .thread().op("next")
                .thread().op("tryPop").op("steal");
        Checks.weakness("CarriedBatches weakness: steal before the publish", Spec.class, Ops.class, scenario, 2, 2);
    }

    // ---- the mutant ----------------------------------------------------------------------------------

    /** {@link PlainTakeBatches}: take claims an entry with a load and a store of {@code next + 1}, no CAS. */
    public static class PlainTake extends Ops {
        public PlainTake() {
            super(mutant());
        }

        private static Batches mutant() {
            PlainTakeBatches b = new PlainTakeBatches(PoolMemory.createGcManaged(), 1);
            return new Batches() {
                public int refill(BoundedRing ring, Object[] taken, int max) { return b.refill(0, ring, taken, max); }
                public boolean take(Object[] taken) { return b.take(0, taken); }
            };
        }
    }

    @Test
    void mutantPlainTakeIsCaught() {
        Checks.timed("CarriedBatches mutant plain take", () ->
                Checks.assertFails(modelCheckingOptions(), PlainTake.class));
    }
}
