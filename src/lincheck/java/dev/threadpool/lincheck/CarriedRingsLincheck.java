package dev.threadpool.lincheck;

import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.CarriedRings;
import dev.threadpool.internal.queue.QueueEntry;
import java.util.ArrayList;
import java.util.List;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.LongGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Options;
import org.jetbrains.lincheck.datastructures.Param;
import org.junit.jupiter.api.Test;

/**
 * {@link CarriedRings}, the pool's striped carried-task rings, against their contract ({@link Spec}): two stripes
 * of {@link BoundedRingLincheck#CAPACITY} cells, pushes from either home stripe, a submitter's whole decision
 * ({@code tryPushFrom}, then {@code closed()} when every stripe refused), a worker's pop from either home, the
 * shutdown sweep and shutdown's close. Stress and model checking, the two weaknesses of the composition shown to
 * be real, and a mutant caught. Each stripe is a carrying {@link dev.threadpool.internal.queue.BoundedRing},
 * checked on its own by {@link CarriedRingLincheck}; this suite checks what the stripes add: the overflow from
 * a full or closed stripe to the next, the stripe-by-stripe scan of a pop, the close in index order and its
 * count, and {@code closed()} reading stripe 0.
 */
public class CarriedRingsLincheck {
    static final int STRIPES = 2;
    static final int CAPACITY = STRIPES * BoundedRingLincheck.CAPACITY;

    /** A submitter's push: taken by a stripe. */
    static final String ACCEPTED = "accepted";
    /** Refused everywhere, and the close has not begun: the submitter waits for room. */
    static final String FULL = "full";
    /** Refused everywhere, and the close has begun: the submitter throws. */
    static final String CLOSED = "closed";

    /** The Lincheck test object: one set of stripes per invocation; the pushed value is the task reference. */
    public static class Ops {
        final CarriedRings rings = new CarriedRings(PoolMemory.createGcManaged(), CAPACITY, STRIPES);

        /**
         * What {@code Submission} does with a detached task from outside: the push from the thread's home stripe,
         * and when every stripe refused it, {@code closed()} to choose between waiting for room and throwing.
         */
        @Operation
        public String submit(@Param(gen = IntGen.class, conf = "0:1") int home,
                @Param(gen = LongGen.class, conf = "1:3") long v) {
            if (rings.tryPushFrom(home, Long.valueOf(v), null)) {
                return ACCEPTED;
            }
            return rings.closed() ? CLOSED : FULL;
        }

        /** Worker {@code w}'s pop of one entry: its home stripe first. The value, or EMPTY. */
        @Operation
        public long pop(@Param(gen = IntGen.class, conf = "0:1") int w) {
            Object[] t = new Object[2]; // per call: two threads popping must not share the hand-over slots
            return carried(rings.popManyFor(w, t, 0, 1) == 0 ? QueueEntry.EMPTY : QueueEntry.CARRIED, t);
        }

        /** The shutdown sweep's pop: the stripes in index order. The value, or EMPTY. */
        @Operation
        public long sweep() {
            Object[] t = new Object[2];
            return carried(rings.tryPop(t), t);
        }

        /** Shutdown's close of carried admission: the tasks ever accepted. */
        @Operation
        public long close() {
            return closeStripes();
        }

        /** The close under test (the mutant's differs). */
        long closeStripes() {
            return rings.close();
        }

        private static long carried(long e, Object[] t) {
            if (e == QueueEntry.EMPTY) {
                return e;
            }
            if (e != QueueEntry.CARRIED || t[1] != null) {
                throw new AssertionError("a carried cell popped as " + e + " with group " + t[1]);
            }
            return (Long) t[0];
        }
    }

    /**
     * The contract: each stripe is a ring of {@link BoundedRingLincheck.Spec} (its cells, its two-step push and
     * pop, its close in one step), and the composition takes one step per stripe it visits.
     * <pre>
     *   submit(home, v)   for k = 0, 1, stripe (home + k) mod 2, one step each:
     *                        closed or full: refused, next k     else claim its tail (then publish, a step)
     *                     refused by both: one step reading stripe 0's closed flag: CLOSED if set, else FULL
     *   pop(w)            for k = 0, 1, stripe (w + k) mod 2: head not ready: next k   else claim, then free
     *                     both passed: EMPTY
     *   sweep()           as pop, from stripe 0
     *   close()           stripe 0, then stripe 1, one step each: closed, its tail added; returns the sum
     * </pre>
     * What this allows that one ring's atomic contract would not, each shown real by a weakness test: a pop
     * passes a stripe before an entry lands there and then takes a later entry from the next stripe (the
     * stripes together are not FIFO, and an EMPTY is only per stripe); and a push whose home stripe the close
     * has already shut is accepted by the next stripe, which the close has not reached yet, and counted there.
     * What it forbids, and the mutant breaks: FULL from a submit that a closed stripe refused. Stripe 0 closes
     * first, so a stripe that refused for the close implies stripe 0 closed before, and the last step reads it.
     */
    public static final class Spec implements StepSpec<Spec.S> {
        /** One BoundedRingLincheck state per stripe. */
        record S(List<BoundedRingLincheck.Spec.S> stripes) {
            BoundedRingLincheck.Spec.S stripe(int i) {
                return stripes.get(i);
            }

            S with(int i, BoundedRingLincheck.Spec.S r) {
                List<BoundedRingLincheck.Spec.S> c = new ArrayList<>(stripes);
                c.set(i, r);
                return new S(List.copyOf(c));
            }
        }

        /** Where a multi-stripe operation is: its next stripe visit {@code k}, a claimed position, a running sum. */
        record At(int k, int stripe, long pos, long sum) {
            static At visit(int k, long sum) {
                return new At(k, -1, -1, sum);
            }

            boolean claimed() {
                return stripe >= 0;
            }
        }

        @Override
        public S initial() {
            BoundedRingLincheck.Spec.S empty = new BoundedRingLincheck.Spec().initial();
            List<BoundedRingLincheck.Spec.S> s = new ArrayList<>();
            for (int i = 0; i < STRIPES; i++) {
                s.add(empty);
            }
            return new S(List.copyOf(s));
        }

        @Override
        public void step(S s, Call call, Object progress, List<Next<S>> out) {
            At at = progress == null ? At.visit(0, 0) : (At) progress;
            switch (call.name()) {
                case "submit" -> submit(s, call, at, out);
                case "pop" -> pop(s, call.intArg(0), (Long) call.result(), at, out);
                case "sweep" -> pop(s, 0, (Long) call.result(), at, out);
                case "close" -> {
                    BoundedRingLincheck.Spec.S r = s.stripe(at.k());
                    long sum = at.sum() + r.tail();
                    S next = s.with(at.k(),
                            new BoundedRingLincheck.Spec.S(r.head(), r.tail(), r.base(), r.cells(), true));
                    if (at.k() + 1 < STRIPES) {
                        out.add(new Next<>(next, At.visit(at.k() + 1, sum)));
                    } else if (sum == (Long) call.result()) {
                        out.add(new Next<>(next, DONE));
                    }
                }
                default -> throw new IllegalArgumentException("no such operation: " + call.name());
            }
        }

        private static void submit(S s, Call call, At at, List<Next<S>> out) {
            String result = (String) call.result();
            if (at.claimed()) { // the publish
                BoundedRingLincheck.Spec.S r = s.stripe(at.stripe());
                out.add(new Next<>(s.with(at.stripe(), r.set(at.pos(), call.longArg(1), r.head())), DONE));
                return;
            }
            if (at.k() == STRIPES) { // refused by every stripe: closed() reads stripe 0
                if (result.equals(s.stripe(0).closed() ? CLOSED : FULL)) {
                    out.add(new Next<>(s, DONE));
                }
                return;
            }
            int i = (call.intArg(0) + at.k()) % STRIPES;
            BoundedRingLincheck.Spec.S r = s.stripe(i);
            if (r.closed() || !r.freeFor(r.tail())) {
                out.add(new Next<>(s, At.visit(at.k() + 1, 0)));
            } else if (result.equals(ACCEPTED)) {
                out.add(new Next<>(s.with(i, r.claimTail(1)), new At(at.k(), i, r.tail(), 0)));
            }
        }

        private static void pop(S s, int home, long result, At at, List<Next<S>> out) {
            if (at.claimed()) { // the free
                BoundedRingLincheck.Spec.S r = s.stripe(at.stripe());
                out.add(new Next<>(s.with(at.stripe(), r.set(at.pos(), BoundedRingLincheck.Spec.FREED, r.head())),
                        DONE));
                return;
            }
            if (at.k() == STRIPES) {
                if (result == QueueEntry.EMPTY) {
                    out.add(new Next<>(s, DONE));
                }
                return;
            }
            int i = (home + at.k()) % STRIPES;
            BoundedRingLincheck.Spec.S r = s.stripe(i);
            if (!r.headReady()) {
                out.add(new Next<>(s, At.visit(at.k() + 1, 0)));
            } else if (result == r.cell(r.head())) {
                out.add(new Next<>(s.with(i, r.set(r.head(), BoundedRingLincheck.Spec.TAKEN, r.head() + 1)),
                        new At(at.k(), i, r.head(), 0)));
            }
        }
    }

    // ---- the checks ----------------------------------------------------------------------------------

    private static <O extends Options<O, ?>> O against(O options, Class<?> verifier) {
        return options.sequentialSpecification(Spec.class).verifier(
                verifier.asSubclass(org.jetbrains.lincheck.datastructures.verifier.Verifier.class));
    }

    /** Stripe 0 full, a push from home 1 against the close: the scenario that catches {@link ReverseClose}. */
    static Scenario pushFromTheOtherHomeVsClose(Class<?> testClass) {
        return Scenario.of(testClass)
                .init("submit", 0, 1L).init("submit", 0, 2L)
                .thread().op("submit", 1, 3L)
                .thread().op("close");
    }

    static ModelCheckingOptions modelCheckingOptions() {
        return against(Checks.modelChecking(3, 2), StepVerifier.class)
                .addCustomScenario(Scenario.of(Ops.class).thread().op("submit", 0, 1L).op("submit", 1, 2L)
                        .thread().op("pop", 0).build())
                .addCustomScenario(pushFromTheOtherHomeVsClose(Ops.class).build());
    }

    @Test
    void stress() {
        Checks.timed("CarriedRings stress", () -> against(Checks.stress(3, 3), StepVerifier.class).check(Ops.class));
    }

    @Test
    void modelChecking() {
        Checks.timed("CarriedRings model checking", () -> modelCheckingOptions().check(Ops.class));
    }

    /**
     * Weakness 1: a pop scans stripe by stripe. It passes its empty home stripe, a push then fills it and a later
     * push fills the next one, and the pop takes the later entry: one ring, or the stripes read at one instant,
     * would have given the earlier.
     */
    @Test
    void aPopPassesAStripeBeforeItFillsIsReal() {
        weakness("pop passes a stripe", Scenario.of(Ops.class)
                .thread().op("submit", 0, 1L).op("submit", 1, 2L)
                .thread().op("pop", 0));
    }

    /**
     * Weakness 2: the close shuts one stripe at a time. A push from home 0 that meets stripe 0 already shut is
     * accepted by stripe 1 and counted by the close there; a pop from home 0 afterwards finds it behind the
     * entry that was already in stripe 1, not alone in stripe 0, as it would be had the push come first.
     */
    @Test
    void aPushPastAClosedHomeIsAcceptedAndCountedIsReal() {
        weakness("push past a closed home", Scenario.of(Ops.class)
                .init("submit", 1, 3L)
                .thread().op("submit", 0, 1L)
                .thread().op("close")
                .post("pop", 0));
    }

    private static void weakness(String what, Scenario scenario) {
        Checks.weakness("CarriedRings weakness: " + what, Spec.class, Ops.class, scenario, 2, 2);
    }

    // ---- the mutant ----------------------------------------------------------------------------------

    /**
     * The real stripes closed in reverse index order. A push that stripe 1 refused for the close and stripe 0 for
     * being full then reads stripe 0 still open in {@code closed()} and reports FULL: its submitter would wait
     * for room in a pool that is shutting down.
     */
    public static class ReverseClose extends Ops {
        @Override
        long closeStripes() {
            long n = 0;
            for (int i = rings.stripes() - 1; i >= 0; i--) {
                n += rings.ring(i).closeToPushes();
            }
            return n;
        }
    }

    @Test
    void mutantReverseCloseIsCaught() {
        Checks.timed("CarriedRings mutant reverse close", () -> Checks.assertFails(
                against(Checks.modelChecking(2, 1), StepVerifier.class).iterations(0)
                        .addCustomScenario(pushFromTheOtherHomeVsClose(ReverseClose.class).build()),
                ReverseClose.class));
    }
}
