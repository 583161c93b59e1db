package dev.threadpool.lincheck;

import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.BoundedRing;
import dev.threadpool.internal.queue.QueueEntry;
import org.jetbrains.lincheck.datastructures.LongGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Options;
import org.jetbrains.lincheck.datastructures.Param;
import org.junit.jupiter.api.Test;

/**
 * A {@link BoundedRing} that carries tasks ({@code tryPushCarried} / {@code tryPop(Object[])}, the path of every
 * detached task from outside the pool) against the same contract as the plain ring ({@link BoundedRingLincheck.Spec}):
 * capacity 2, any thread pushing and popping, the value travelling in the cell's reference, not in its long word;
 * and {@code closeToPushes}, shutdown's close of carried admission, which counts every push claimed before it and
 * refuses every push after it (BoundedRing, "Closing to pushes").
 * Where native access is granted (the test JVMs are launched with it) this ring's push and pop run through raw
 * addresses ({@code Mem.*At}), which the off-heap seam also treats as atomic steps (every method of {@code Mem}).
 */
public class CarriedRingLincheck {

    /** The Lincheck test object: one carrying ring per invocation; the pushed value is the task reference. */
    public static class Ops {
        private final BoundedRing ring =
                new BoundedRing(PoolMemory.createGcManaged(), "lincheck carried ring", BoundedRingLincheck.CAPACITY, true);

        @Operation
        public boolean tryPush(@Param(gen = LongGen.class, conf = "1:3") long v) {
            return ring.tryPushCarried(Long.valueOf(v), null);
        }

        /** The value carried by the popped cell, or EMPTY. */
        @Operation
        public long tryPop() {
            Object[] t = new Object[2]; // per call: two threads popping must not share the hand-over slots
            long e = ring.tryPop(t);
            if (e == QueueEntry.EMPTY) {
                return e;
            }
            if (e != QueueEntry.CARRIED || t[1] != null) {
                throw new AssertionError("a carried cell popped as " + e + " with group " + t[1]);
            }
            return (Long) t[0];
        }

        /** Shutdown's close of carried admission: the pushes ever claimed; every push after it is refused. */
        @Operation
        public long closeToPushes() {
            return ring.closeToPushes();
        }
    }

    private static <O extends Options<O, ?>> O against(O options, Class<?> verifier) {
        return BoundedRingLincheck.against(options, verifier);
    }

    static ModelCheckingOptions modelCheckingOptions() {
        return against(Checks.modelChecking(3, 2), StepVerifier.class)
                .addCustomScenario(Scenario.of(Ops.class).thread().op("tryPush", 1L).thread().op("tryPop").build())
                .addCustomScenario(Scenario.of(Ops.class).thread().op("tryPush", 1L).op("tryPush", 2L)
                        .thread().op("closeToPushes").build());
    }

    @Test
    void stress() {
        Checks.timed("carried ring stress", () ->
                against(Checks.stress(3, 3), StepVerifier.class).check(Ops.class));
    }

    @Test
    void modelChecking() {
        Checks.timed("carried ring model checking", () -> modelCheckingOptions().check(Ops.class));
    }

    /** The plain ring's weakness 2 holds here too: full while the consumer one lap back has not freed its cell. */
    @Test
    void fullWhileAConsumerIsMidPopIsReal() {
        Scenario scenario = Scenario.of(Ops.class)
                .init("tryPush", 1L).init("tryPush", 2L)
                .thread().op("tryPop")
                .thread().op("tryPop").op("tryPush", 3L);
        Checks.weakness("carried ring weakness: full mid-pop", BoundedRingLincheck.Spec.class, Ops.class, scenario,
                2, 2);
    }
}
