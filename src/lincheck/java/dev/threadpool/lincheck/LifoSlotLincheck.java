package dev.threadpool.lincheck;

import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.LifoSlot;
import dev.threadpool.internal.queue.QueueEntry;
import dev.threadpool.lincheck.mutants.PlainTakeSlot;
import java.util.List;
import org.jetbrains.lincheck.datastructures.LongGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Options;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.verifier.Verifier;
import org.junit.jupiter.api.Test;

/**
 * {@link LifoSlot} against its contract ({@link Spec}): one slot, its owner putting (Lincheck's
 * non-parallel group "owner"), any thread taking. Stress and model checking, and a mutant caught.
 */
public class LifoSlotLincheck {

    /** The operations of the slot and of its mutant. */
    interface Slot {
        long put(long v);

        long take();
    }

    /** The Lincheck test object. */
    public static class Ops {
        private final Slot slot;

        public Ops() {
            this(real());
        }

        Ops(Slot slot) {
            this.slot = slot;
        }

        private static Slot real() {
            LifoSlot s = new LifoSlot(PoolMemory.createGcManaged(), "lincheck slot", 1);
            return new Slot() {
                public long put(long v) { return s.put(0, v); }
                public long take() { return s.take(0); }
            };
        }

        @Operation(nonParallelGroup = "owner")
        public long put(@Param(gen = LongGen.class, conf = "1:5") long v) {
            return slot.put(v);
        }

        @Operation
        public long take() {
            return slot.take();
        }
    }

    /**
     * The contract of {@link LifoSlot}: a register of one entry or EMPTY, each operation one atomic step.
     * {@code put(v)} stores v and returns what it displaced; {@code take()} empties the slot and returns what
     * was there. So every entry put comes back exactly once, by a take or as the value a later put displaced.
     * The empty fast path of take (a load that sees EMPTY) is no weakness: a take that returns EMPTY takes
     * effect at that load, before the put it missed.
     */
    public static final class Spec implements StepSpec<Long> {
        @Override
        public Long initial() {
            return QueueEntry.EMPTY;
        }

        @Override
        public void step(Long s, Call call, Object progress, List<Next<Long>> out) {
            if ((Long) call.result() != s.longValue()) {
                return;
            }
            switch (call.name()) {
                case "put" -> out.add(new Next<>(call.longArg(0), DONE));
                case "take" -> out.add(new Next<>(QueueEntry.EMPTY, DONE));
                default -> throw new IllegalArgumentException("no such operation: " + call.name());
            }
        }
    }

    // ---- the checks ----------------------------------------------------------------------------------

    private static <O extends Options<O, ?>> O against(O options, Class<? extends Verifier> verifier) {
        return options.sequentialSpecification(Spec.class).verifier(verifier);
    }

    /** Random scenarios, plus a put racing a take of the entry it displaces (catches the mutant below). */
    static ModelCheckingOptions modelCheckingOptions() {
        return against(Checks.modelChecking(3, 2), StepVerifier.class)
                .addCustomScenario(Scenario.of(Ops.class).init("put", 1L)
                        .thread().op("put", 2L)
                        .thread().op("take").build());
    }

    @Test
    void stress() {
        Checks.timed("LifoSlot stress", () -> against(Checks.stress(3, 3), StepVerifier.class).check(Ops.class));
    }

    @Test
    void modelChecking() {
        Checks.timed("LifoSlot model checking", () -> modelCheckingOptions().check(Ops.class));
    }

    /** {@link PlainTakeSlot}: take claims with a load and a store instead of one exchange. */
    public static class PlainTake extends Ops {
        public PlainTake() {
            super(mutant());
        }

        private static Slot mutant() {
            PlainTakeSlot s = new PlainTakeSlot(PoolMemory.createGcManaged(), "lincheck slot", 1);
            return new Slot() {
                public long put(long v) { return s.put(0, v); }
                public long take() { return s.take(0); }
            };
        }
    }

    @Test
    void mutantPlainTakeIsCaught() {
        Checks.timed("LifoSlot mutant plain take", () -> Checks.assertFails(modelCheckingOptions(), PlainTake.class));
    }
}
