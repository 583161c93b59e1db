package dev.threadpool.lincheck;

import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.QueueEntry;
import dev.threadpool.internal.queue.WorkDeque;
import dev.threadpool.lincheck.mutants.NoLastCasDeque;
import java.util.ArrayList;
import java.util.List;
import org.jetbrains.lincheck.datastructures.LongGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Options;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.verifier.Verifier;
import org.junit.jupiter.api.Test;

/**
 * {@link WorkDeque} against its contract ({@link Spec}): initial capacity 2, so that pushes grow the array
 * while thieves steal; the owner pushes and takes (one thread, Lincheck's non-parallel group "owner"), any
 * thread steals. Stress and model checking, the two weaknesses of the contract shown to be real, and a
 * mutant caught.
 */
public class WorkDequeLincheck {
    static final int INITIAL_CAPACITY = 2;

    /** The operations of the deque and of its mutant. */
    interface Deque {
        void push(long v);

        long take();

        long steal();
    }

    /** The Lincheck test object. */
    public static class Ops {
        private final Deque d;

        public Ops() {
            this(real());
        }

        Ops(Deque d) {
            this.d = d;
        }

        private static Deque real() {
            WorkDeque w = new WorkDeque(PoolMemory.createGcManaged(), "lincheck deque", INITIAL_CAPACITY);
            return new Deque() {
                public void push(long v) { w.push(v); }
                public long take() { return w.take(); }
                public long steal() { return w.steal(); }
            };
        }

        @Operation(nonParallelGroup = "owner")
        public void push(@Param(gen = LongGen.class, conf = "1:5") long v) {
            d.push(v);
        }

        @Operation(nonParallelGroup = "owner")
        public long take() {
            return d.take();
        }

        @Operation
        public long steal() {
            return d.steal();
        }
    }

    /**
     * The contract of {@link WorkDeque}: an unbounded deque (the array grows), entries oldest (top) first.
     * <pre>
     *   push(v)   one step: append at the bottom
     *   take()    empty: EMPTY (one step)      two or more: remove the newest entry (one step)
     *             one entry, two steps: 1, the reservation (its store of bottom): thieves that look from
     *                                     now on see EMPTY
     *                                   2, the claim (its CAS on top): still there: take it; a thief took
     *                                     it meanwhile: EMPTY
     *   steal()   step 1, its load of top: note how many entries have left by the top so far
     *             step 2, its load of bottom and its CAS:
     *                 EMPTY   if the deque is empty, or its last entry is reserved by a take
     *                 ABORT   if some entry has left by the top since step 1
     *                 else    the oldest entry, removed
     * </pre>
     * "Leaving by the top" is a steal, or a take of the last entry (both CAS top). The weaknesses: a steal
     * returns EMPTY while the owner is between the two steps of taking the last entry, and the owner's take
     * may then still return EMPTY, when a thief that had looked earlier wins the CAS; and a steal fails with
     * ABORT although the deque is not empty, when another thief or the owner's last-entry take won the CAS
     * on top meanwhile (a lost race, never a spurious failure). Neither loses an entry: whoever wins the
     * CAS runs it. The pool's thief treats ABORT as "try the next victim" and comes back on its next scan;
     * a worker parks only after its seq_cst re-check of every queue (ParkingLot), which sees the entry if
     * the race left it in place.
     */
    public static final class Spec implements StepSpec<Spec.S> {
        /**
         * The entries, oldest (top) first; whether the owner has reserved the last one (take's step 1); how
         * many have left by the top so far.
         */
        record S(List<Long> d, boolean reserved, int topRemovals) {
            S removeFirst() {
                return new S(List.copyOf(d.subList(1, d.size())), reserved, topRemovals + 1);
            }
        }

        static final Object RESERVED = "reserved";

        @Override
        public S initial() {
            return new S(List.of(), false, 0);
        }

        @Override
        public void step(S s, Call call, Object progress, List<Next<S>> out) {
            switch (call.name()) {
                case "push" -> {
                    List<Long> d = new ArrayList<>(s.d());
                    d.add(call.longArg(0));
                    out.add(new Next<>(new S(List.copyOf(d), false, s.topRemovals()), DONE));
                }
                case "take" -> {
                    long r = (Long) call.result();
                    int n = s.d().size();
                    if (progress == RESERVED) { // step 2, the claim
                        if (n == 0) {
                            if (r == QueueEntry.EMPTY) {
                                out.add(new Next<>(new S(s.d(), false, s.topRemovals()), DONE));
                            }
                        } else if (r == s.d().getFirst()) {
                            out.add(new Next<>(new S(List.of(), false, s.topRemovals() + 1), DONE));
                        }
                    } else if (n == 0) {
                        if (r == QueueEntry.EMPTY) {
                            out.add(new Next<>(s, DONE));
                        }
                    } else if (n == 1) {
                        out.add(new Next<>(new S(s.d(), true, s.topRemovals()), RESERVED));
                    } else if (r == s.d().getLast()) {
                        out.add(new Next<>(new S(List.copyOf(s.d().subList(0, n - 1)), false, s.topRemovals()),
                                DONE));
                    }
                }
                case "steal" -> {
                    long r = (Long) call.result();
                    if (progress == null) {
                        out.add(new Next<>(s, s.topRemovals()));
                        return;
                    }
                    int seen = (Integer) progress;
                    if (r == QueueEntry.EMPTY) {
                        if (s.d().isEmpty() || s.reserved()) {
                            out.add(new Next<>(s, DONE));
                        }
                    } else if (r == WorkDeque.ABORT) {
                        if (s.topRemovals() > seen) {
                            out.add(new Next<>(s, DONE));
                        }
                    } else if (s.topRemovals() == seen && !s.d().isEmpty() && r == s.d().getFirst()) {
                        out.add(new Next<>(s.removeFirst(), DONE));
                    }
                }
                default -> throw new IllegalArgumentException("no such operation: " + call.name());
            }
        }
    }

    // ---- the checks ----------------------------------------------------------------------------------

    private static <O extends Options<O, ?>> O against(O options, Class<? extends Verifier> verifier) {
        return options.sequentialSpecification(Spec.class).verifier(verifier);
    }

    /**
     * The model checking of this suite: random scenarios, plus two fixed ones: the last entry taken against
     * a steal (catches the mutant below), and pushes that grow the array from 2 to 4 while two steals run.
     */
    static ModelCheckingOptions modelCheckingOptions() {
        return against(Checks.modelChecking(3, 2), StepVerifier.class)
                .addCustomScenario(Scenario.of(Ops.class).init("push", 1L)
                        .thread().op("take")
                        .thread().op("steal").build())
                .addCustomScenario(Scenario.of(Ops.class).init("push", 1L).init("push", 2L)
                        .thread().op("push", 3L).op("take")
                        .thread().op("steal").op("steal").build());
    }

    @Test
    void stress() {
        Checks.timed("WorkDeque stress", () -> against(Checks.stress(3, 3), StepVerifier.class).check(Ops.class));
    }

    @Test
    void modelChecking() {
        Checks.timed("WorkDeque model checking", () -> modelCheckingOptions().check(Ops.class));
    }

    /** Weakness 1: two thieves, two entries; one loses the CAS to the other and aborts. */
    @Test
    void abortOnALostRaceIsReal() {
        weakness("ABORT on a lost race", Scenario.of(Ops.class).init("push", 1L).init("push", 2L)
                .thread().op("steal")
                .thread().op("steal"));
    }

    /**
     * Weakness 2: a steal returns EMPTY while the owner is between reserving and claiming the last entry,
     * and the next steal, which read top before the owner's CAS, aborts (found by the model checker).
     */
    @Test
    void emptyWhileTheOwnerTakesTheLastEntryIsReal() {
        weakness("EMPTY during a last-entry take", Scenario.of(Ops.class).init("push", 4L)
                .thread().op("take")
                .thread().op("steal").op("steal"));
    }

    /** The scenario passes against the contract and fails against the same contract made atomic. */
    private void weakness(String what, Scenario scenario) {
        Checks.weakness("WorkDeque weakness: " + what, Spec.class, Ops.class, scenario, 2, 2);
    }

    /** {@link NoLastCasDeque}: take's last entry without the CAS on top. */
    public static class NoLastCas extends Ops {
        public NoLastCas() {
            super(mutant());
        }

        private static Deque mutant() {
            NoLastCasDeque w = new NoLastCasDeque(PoolMemory.createGcManaged(), "lincheck deque", INITIAL_CAPACITY);
            return new Deque() {
                public void push(long v) { w.push(v); }
                public long take() { return w.take(); }
                public long steal() { return w.steal(); }
            };
        }
    }

    @Test
    void mutantNoLastCasIsCaught() {
        Checks.timed("WorkDeque mutant no last-entry CAS", () ->
                Checks.assertFails(modelCheckingOptions(), NoLastCas.class));
    }
}
