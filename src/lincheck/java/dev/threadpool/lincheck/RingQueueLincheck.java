package dev.threadpool.lincheck;

import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.QueueEntry;
import dev.threadpool.internal.queue.RingQueue;
import dev.threadpool.lincheck.mutants.PlainClaimStealQueue;
import java.util.ArrayList;
import java.util.List;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.LongGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Options;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.jetbrains.lincheck.datastructures.verifier.Verifier;
import org.junit.jupiter.api.Test;

/**
 * {@link RingQueue} against its contract ({@link Spec}): capacity 4, the owner pushing and popping (one
 * thread, Lincheck's non-parallel group "owner"), any thread stealing one or half into a queue of its own
 * (capacity 2). Stress and model checking, and a mutant caught.
 */
public class RingQueueLincheck {
    static final int CAPACITY = 4;
    static final int DST_CAPACITY = 2;
    /** Thread ids Lincheck hands out (parallel threads, and the init and post parts). */
    static final int MAX_THREADS = 8;

    /** The operations of the queue and of its mutant. */
    interface Queue {
        boolean tryPush(long v);

        long pop();

        long steal();

        /** stealHalf into thread {@code tid}'s own queue, then that queue drained: [first, rest...]. */
        List<Long> stealHalf(int tid, int max);
    }

    /** The Lincheck test object. */
    public static class Ops {
        private final Queue q;

        public Ops() {
            this(real());
        }

        Ops(Queue q) {
            this.q = q;
        }

        private static Queue real() {
            PoolMemory mem = PoolMemory.createGcManaged();
            RingQueue victim = new RingQueue(mem, "lincheck victim", CAPACITY, true); // a worker's queue: raw push and pop
            RingQueue[] own = new RingQueue[MAX_THREADS];
            for (int i = 0; i < own.length; i++) {
                own[i] = new RingQueue(mem, "lincheck thief " + i, DST_CAPACITY, true);
            }
            return new Queue() {
                public boolean tryPush(long v) { return victim.tryPush(v); }
                public long pop() { return victim.pop(); }
                public long steal() { return victim.steal(); }
                public List<Long> stealHalf(int tid, int max) {
                    return drain(victim.stealHalf(own[tid], max), own[tid]::pop);
                }
            };
        }

        static List<Long> drain(long first, java.util.function.LongSupplier ownPop) {
            List<Long> out = new ArrayList<>();
            if (first == QueueEntry.EMPTY) {
                return out;
            }
            out.add(first);
            // the thief's own queue: only this thread touches it, and it is empty again when we return
            for (long v = ownPop.getAsLong(); v != QueueEntry.EMPTY; v = ownPop.getAsLong()) {
                out.add(v);
            }
            return out;
        }

        @Operation(nonParallelGroup = "owner")
        public boolean push(@Param(gen = LongGen.class, conf = "1:5") long v) {
            return q.tryPush(v);
        }

        @Operation(nonParallelGroup = "owner")
        public long pop() {
            return q.pop();
        }

        @Operation
        public long steal() {
            return q.steal();
        }

        @Operation
        public List<Long> stealHalf(@Param(gen = ThreadIdGen.class) int tid,
                @Param(gen = IntGen.class, conf = "1:3") int max) {
            return q.stealHalf(tid, max);
        }
    }

    /**
     * The contract of {@link RingQueue}: a bounded FIFO, every operation one atomic step. Push fails exactly
     * when the queue is full; pop and steal take the oldest entry, or return EMPTY exactly when it is empty;
     * stealHalf takes the {@code n = min(len - len/2, max, free(dst) + 1)} oldest entries of the {@code len}
     * it holds, or returns EMPTY when it is empty. No weakness: stealHalf takes effect at its load of tail,
     * where {@code len} is exact (it read head before and its CAS proves head did not move since), and the
     * entries it then copies are the ones it claims (only the owner adds, at the other end).
     */
    public static final class Spec implements StepSpec<Spec.S> {
        /** The entries, oldest first. */
        record S(List<Long> q) {
            S removeFirst(int n) {
                return new S(List.copyOf(q.subList(n, q.size())));
            }
        }

        @Override
        public S initial() {
            return new S(List.of());
        }

        @Override
        public void step(S s, Call call, Object progress, List<Next<S>> out) {
            switch (call.name()) {
                case "push" -> {
                    boolean ok = s.q().size() < CAPACITY;
                    if ((Boolean) call.result() == ok) {
                        List<Long> q = new ArrayList<>(s.q());
                        if (ok) {
                            q.add(call.longArg(0));
                        }
                        out.add(new Next<>(new S(List.copyOf(q)), DONE));
                    }
                }
                case "pop", "steal" -> {
                    long r = (Long) call.result();
                    if (s.q().isEmpty()) {
                        if (r == QueueEntry.EMPTY) {
                            out.add(new Next<>(s, DONE));
                        }
                    } else if (r == s.q().getFirst()) {
                        out.add(new Next<>(s.removeFirst(1), DONE));
                    }
                }
                case "stealHalf" -> {
                    @SuppressWarnings("unchecked")
                    List<Long> r = (List<Long>) call.result();
                    int len = s.q().size();
                    int n = Math.min(Math.min(len - len / 2, call.intArg(1)), DST_CAPACITY + 1);
                    if (r.equals(s.q().subList(0, n))) {
                        out.add(new Next<>(s.removeFirst(n), DONE));
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

    /** Owner pop against a steal of the same entry: the fixed scenario that catches the mutant below. */
    private static Scenario popVsSteal() {
        return Scenario.of(Ops.class).init("push", 1L).init("push", 2L)
                .thread().op("pop")
                .thread().op("steal");
    }

    static ModelCheckingOptions modelCheckingOptions() {
        return against(Checks.modelChecking(3, 2), StepVerifier.class).addCustomScenario(popVsSteal().build());
    }

    @Test
    void stress() {
        Checks.timed("RingQueue stress", () -> against(Checks.stress(3, 3), StepVerifier.class).check(Ops.class));
    }

    @Test
    void modelChecking() {
        Checks.timed("RingQueue model checking", () -> modelCheckingOptions().check(Ops.class));
    }

    /** {@link PlainClaimStealQueue}: steal claims with a store instead of the CAS on head. */
    public static class PlainClaimSteal extends Ops {
        public PlainClaimSteal() {
            super(mutant());
        }

        private static Queue mutant() {
            PoolMemory mem = PoolMemory.createGcManaged();
            PlainClaimStealQueue victim = new PlainClaimStealQueue(mem, "lincheck victim", CAPACITY);
            PlainClaimStealQueue[] own = new PlainClaimStealQueue[MAX_THREADS];
            for (int i = 0; i < own.length; i++) {
                own[i] = new PlainClaimStealQueue(mem, "lincheck thief " + i, DST_CAPACITY);
            }
            return new Queue() {
                public boolean tryPush(long v) { return victim.tryPush(v); }
                public long pop() { return victim.pop(); }
                public long steal() { return victim.steal(); }
                public List<Long> stealHalf(int tid, int max) {
                    return drain(victim.stealHalf(own[tid], max), own[tid]::pop);
                }
            };
        }
    }

    @Test
    void mutantPlainClaimStealIsCaught() {
        Checks.timed("RingQueue mutant plain-claim steal", () ->
                Checks.assertFails(modelCheckingOptions(), PlainClaimSteal.class));
    }

    /**
     * For {@link MemSeamLincheck}: the fixed pop-against-steal scenario alone, model-checked with or without
     * the off-heap seam.
     */
    static ModelCheckingOptions popVsStealOnly(boolean seam) {
        ModelCheckingOptions o = seam ? Checks.modelChecking(2, 1) : Checks.modelCheckingWithoutSeam(2, 1);
        return against(o.iterations(0), StepVerifier.class).addCustomScenario(popVsSteal().build());
    }
}
