package dev.threadpool.lincheck;

import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.BoundedRing;
import dev.threadpool.internal.queue.QueueEntry;
import dev.threadpool.lincheck.mutants.PublishFirstRing;
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
 * {@link BoundedRing} against its contract ({@link Spec}), capacity 2, any thread pushing and popping,
 * one at a time and in batches of up to 2: stress and model checking, each weakness of the contract shown
 * to be real, and a mutant caught.
 */
public class BoundedRingLincheck {
    static final int CAPACITY = 2;

    /** The operations of the ring and of its mutants. */
    interface Ring {
        boolean tryPush(long v);

        long tryPop();

        int pushMany(long[] src, int from, int count);

        int popMany(long[] dst, int max);
    }

    /** The Lincheck test object: one ring per invocation, the operations Lincheck calls. */
    public static class Ops {
        private final Ring ring;

        public Ops() {
            this(real());
        }

        Ops(Ring ring) {
            this.ring = ring;
        }

        private static Ring real() {
            BoundedRing r = new BoundedRing(PoolMemory.createGcManaged(), "lincheck ring", CAPACITY);
            return new Ring() {
                public boolean tryPush(long v) { return r.tryPush(v); }
                public long tryPop() { return r.tryPop(); }
                public int pushMany(long[] src, int from, int count) { return r.pushMany(src, from, count); }
                public int popMany(long[] dst, int max) { return r.popMany(dst, max); }
            };
        }

        @Operation
        public boolean tryPush(@Param(gen = LongGen.class, conf = "1:3") long v) {
            return ring.tryPush(v);
        }

        @Operation
        public long tryPop() {
            return ring.tryPop();
        }

        /** Pushes {@code v, v + 1, ...}: up to {@code count} entries; returns how many. */
        @Operation
        public int pushMany(@Param(gen = LongGen.class, conf = "1:3") long v,
                @Param(gen = IntGen.class, conf = "1:2") int count) {
            long[] src = new long[count];
            for (int i = 0; i < count; i++) {
                src[i] = v + i;
            }
            return ring.pushMany(src, 0, count);
        }

        /** Pops up to {@code max} entries; returns them in order. */
        @Operation
        public List<Long> popMany(@Param(gen = IntGen.class, conf = "1:2") int max) {
            long[] dst = new long[max];
            int n = ring.popMany(dst, max);
            List<Long> out = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                out.add(dst[i]);
            }
            return out;
        }
    }

    /**
     * The contract of {@link BoundedRing}. Positions are claimed in order; each position's cell goes
     * {@code free -> PUB (claimed by a producer) -> ready(v) -> TAKEN (claimed by a consumer) -> FREED}, and
     * {@code FREED} makes it free for the position one lap ahead.
     * <pre>
     *   tryPush(v)   step 1 at the tail CAS or at the full check:
     *                   cell of tail - cap not FREED: false (full)   else claim tail as PUB
     *                step 2, the publish: PUB -> ready(v), true
     *   tryPop()     step 1: head == tail or head is PUB: EMPTY      else claim: ready(v) -> TAKEN, v
     *                step 2, the free: TAKEN -> FREED
     *   pushMany     step 1: first cell not free: 0                  else claim n of the free run, n in [1, count]
     *                then one publish step per cell, in order
     *   popMany      step 1: head not ready: []                      else claim n of the ready run, n in [1, max]
     *                then one free step per cell, in order
     *   closeToPushes  one step (a carrying ring's, CarriedRingLincheck): returns tail, the positions ever
     *                claimed; every push after it is refused (false, or 0), like a full ring's
     * </pre>
     * The weaknesses this allows, and {@link StepVerifier.Atomic} rejects (see the weakness tests):
     * a pop returns EMPTY while a producer that claimed the head is still before its publish, even after a
     * later push completed; a push reports full while the consumer of the position one lap back is still
     * before its free; a batch is claimed at once but published (or freed) a cell at a time, so another
     * thread sees half of it; and a batch may take less than is free (ready) at its claim, when a cell
     * became free (ready) while it scanned.
     */
    public static final class Spec implements StepSpec<Spec.S> {
        static final long PUB = -100;
        static final long TAKEN = -101;
        static final long FREED = -102;

        /** Cells of positions {@code [base, tail)}; everything below base is FREED; closed: to pushes. */
        record S(long head, long tail, long base, List<Long> cells, boolean closed) {
            long cell(long pos) {
                return pos < base ? FREED : cells.get((int) (pos - base));
            }

            boolean freeFor(long pos) {
                return pos - CAPACITY < 0 || cell(pos - CAPACITY) == FREED;
            }

            boolean headReady() {
                return head < tail && cell(head) != PUB;
            }

            S claimTail(int n) {
                List<Long> c = new ArrayList<>(cells);
                for (int i = 0; i < n; i++) {
                    c.add(PUB);
                }
                return new S(head, tail + n, base, List.copyOf(c), closed);
            }

            S set(long pos, long v, long newHead) {
                List<Long> c = new ArrayList<>(cells);
                c.set((int) (pos - base), v);
                long b = base;
                while (!c.isEmpty() && c.getFirst() == FREED) {
                    c.removeFirst();
                    b++;
                }
                return new S(newHead, tail, b, List.copyOf(c), closed);
            }
        }

        record Batch(long pos, int i) {}

        @Override
        public S initial() {
            return new S(0, 0, 0, List.of(), false);
        }

        @Override
        public void step(S s, Call call, Object progress, List<Next<S>> out) {
            switch (call.name()) {
                case "tryPush" -> {
                    boolean r = (Boolean) call.result();
                    if (progress == null) {
                        if (s.closed() || !s.freeFor(s.tail())) {
                            if (!r) {
                                out.add(new Next<>(s, DONE));
                            }
                        } else if (r) {
                            out.add(new Next<>(s.claimTail(1), s.tail()));
                        }
                    } else {
                        long pos = (Long) progress;
                        out.add(new Next<>(s.set(pos, call.longArg(0), s.head()), DONE));
                    }
                }
                case "tryPop" -> {
                    long r = (Long) call.result();
                    if (progress == null) {
                        if (!s.headReady()) {
                            if (r == QueueEntry.EMPTY) {
                                out.add(new Next<>(s, DONE));
                            }
                        } else if (r == s.cell(s.head())) {
                            out.add(new Next<>(s.set(s.head(), TAKEN, s.head() + 1), s.head()));
                        }
                    } else {
                        long pos = (Long) progress;
                        out.add(new Next<>(s.set(pos, FREED, s.head()), DONE));
                    }
                }
                case "pushMany" -> {
                    int n = (Integer) call.result();
                    if (progress == null) {
                        if (n == 0) {
                            if (s.closed() || !s.freeFor(s.tail())) {
                                out.add(new Next<>(s, DONE));
                            }
                            return;
                        }
                        if (s.closed() || n > call.intArg(1)) {
                            return;
                        }
                        for (int i = 0; i < n; i++) {
                            if (!s.freeFor(s.tail() + i)) {
                                return;
                            }
                        }
                        out.add(new Next<>(s.claimTail(n), new Batch(s.tail(), 0)));
                    } else {
                        Batch b = (Batch) progress;
                        S next = s.set(b.pos() + b.i(), call.longArg(0) + b.i(), s.head());
                        out.add(new Next<>(next, b.i() + 1 == n ? DONE : new Batch(b.pos(), b.i() + 1)));
                    }
                }
                case "popMany" -> {
                    @SuppressWarnings("unchecked")
                    List<Long> r = (List<Long>) call.result();
                    int n = r.size();
                    if (progress == null) {
                        if (n == 0) {
                            if (!s.headReady()) {
                                out.add(new Next<>(s, DONE));
                            }
                            return;
                        }
                        if (n > call.intArg(0)) {
                            return;
                        }
                        S next = s;
                        for (int i = 0; i < n; i++) {
                            long pos = s.head() + i;
                            if (pos >= s.tail() || s.cell(pos) == PUB || s.cell(pos) != r.get(i)) {
                                return;
                            }
                            next = next.set(pos, TAKEN, pos + 1);
                        }
                        out.add(new Next<>(next, new Batch(s.head(), 0)));
                    } else {
                        Batch b = (Batch) progress;
                        S next = s.set(b.pos() + b.i(), FREED, s.head());
                        out.add(new Next<>(next, b.i() + 1 == n ? DONE : new Batch(b.pos(), b.i() + 1)));
                    }
                }
                case "closeToPushes" -> {
                    if ((Long) call.result() == s.tail()) {
                        out.add(new Next<>(new S(s.head(), s.tail(), s.base(), s.cells(), true), DONE));
                    }
                }
                default -> throw new IllegalArgumentException("no such operation: " + call.name());
            }
        }
    }

    // ---- the checks ----------------------------------------------------------------------------------

    /** {@code options} checked against {@link Spec} with {@code verifier}; also {@link CarriedRingLincheck}'s. */
    static <O extends Options<O, ?>> O against(O options, Class<?> verifier) {
        return options.sequentialSpecification(Spec.class).verifier(
                verifier.asSubclass(org.jetbrains.lincheck.datastructures.verifier.Verifier.class));
    }

    /**
     * The model checking of this suite: random scenarios of three threads, plus one fixed scenario, a push
     * against a pop, so that the mutant below is caught whatever the random scenarios are.
     */
    static ModelCheckingOptions modelCheckingOptions() {
        return against(Checks.modelChecking(3, 2), StepVerifier.class)
                .addCustomScenario(Scenario.of(Ops.class).thread().op("tryPush", 1L).thread().op("tryPop").build());
    }

    @Test
    void stress() {
        Checks.timed("BoundedRing stress", () ->
                against(Checks.stress(3, 3), StepVerifier.class).check(Ops.class));
    }

    @Test
    void modelChecking() {
        Checks.timed("BoundedRing model checking", () -> modelCheckingOptions().check(Ops.class));
    }

    /** Weakness 1: EMPTY while a producer is between its claim and its publish, after a later push ended. */
    @Test
    void emptyWhileAProducerIsMidPublishIsReal() {
        weakness("EMPTY mid-publish", Scenario.of(Ops.class)
                .thread().op("tryPush", 1L)
                .thread().op("tryPush", 2L).op("tryPop"));
    }

    /** Weakness 2: full while the consumer of the position one lap back is between its claim and its free. */
    @Test
    void fullWhileAConsumerIsMidPopIsReal() {
        weakness("full mid-pop", Scenario.of(Ops.class)
                .init("tryPush", 1L).init("tryPush", 2L)
                .thread().op("tryPop")
                .thread().op("tryPop").op("tryPush", 3L));
    }

    /** Weakness 3: a batch claimed with one CAS is published a cell at a time; a pop sees half of it. */
    @Test
    void batchesAreNotAtomicIsReal() {
        weakness("pushMany seen half", Scenario.of(Ops.class)
                .thread().op("pushMany", 1L, 2)
                .thread().op("tryPop").op("tryPop"));
    }

    /** The scenario passes against the contract and fails against the same contract made atomic. */
    private void weakness(String what, Scenario scenario) {
        Checks.weakness("BoundedRing weakness: " + what, Spec.class, Ops.class, scenario, 2, 2);
    }

    // ---- the mutant ----------------------------------------------------------------------------------

    /** {@link PublishFirstRing}: tryPush publishes the sequence word before it writes the value. */
    public static class PublishFirst extends Ops {
        public PublishFirst() {
            super(mutant());
        }

        private static Ring mutant() {
            PublishFirstRing r = new PublishFirstRing(PoolMemory.createGcManaged(), "lincheck ring", CAPACITY);
            return new Ring() {
                public boolean tryPush(long v) { return r.tryPush(v); }
                public long tryPop() { return r.tryPop(); }
                public int pushMany(long[] src, int from, int count) { return r.pushMany(src, from, count); }
                public int popMany(long[] dst, int max) { return r.popMany(dst, max); }
            };
        }
    }

    @Test
    void mutantPublishFirstIsCaught() {
        Checks.timed("BoundedRing mutant publish-first", () ->
                Checks.assertFails(modelCheckingOptions(), PublishFirst.class));
    }
}
