package dev.threadpool.internal.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.reflect.Field;
import org.junit.jupiter.api.Test;

/**
 * Slots holds each slot's task in an {@code Object[]}, not a {@code Runnable[]}: C2's type check of a submit's store
 * into a {@code Runnable[]} trapped and threw away the compiled submit path in each of three wsum JVMs logged
 * (PERFORMANCE_TRACKING 90). A JIT's choices cannot be asserted here; the declared type that spares the check can.
 */
class SlotsTaskArrayTest {
    @Test
    void theTaskArrayIsAnObjectArraySoASubmitsStoreNeedsNoTypeCheck() throws NoSuchFieldException {
        Field tasks = Slots.class.getDeclaredField("tasks");
        assertEquals(Object[].class, tasks.getType(), "Slots.tasks must be an Object[] (PERFORMANCE_TRACKING 90)");
    }
}
