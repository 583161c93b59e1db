package dev.threadpool.jmh;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.openjdk.jmh.annotations.Param;

/**
 * {@link OrderDispatchBench}'s body on every side of its {@code pool} parameter, at a small size: every order is
 * handled exactly once (a per-id tally) and the books equal a serial replay, so every side ends with the same
 * checksum. Nothing is timed. The size passes the ring's bound ({@link Pools#FLOOD_QUEUE}) several times, so
 * the feed thread waits for space on the bounded sides, and a second dispatch reuses the same side.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class OrderDispatchBenchTest {
    /** Orders per dispatch: a few times the bound, small enough for the suite. */
    static final int ORDERS = 5 * Pools.FLOOD_QUEUE + 123;

    static Stream<String> sides() throws NoSuchFieldException {
        return Stream.of(OrderDispatchBench.class.getField("pool").getAnnotation(Param.class).value());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("sides")
    void everyOrderIsHandledOnceAndTheBooksEqualTheSerialReplay(String pool) throws Exception {
        OrderDispatchBench.Engine engine = new OrderDispatchBench.Engine(ORDERS);
        OrderDispatchBench.Side side = OrderDispatchBench.Side.open(pool, 2, engine);
        try {
            long[] expected = OrderDispatchBench.Engine.replay(ORDERS);
            for (int run = 1; run <= 2; run++) {
                side.dispatch(ORDERS);
                for (int id = 0; id < ORDERS; id++) {
                    if (engine.tally[id] != run) {
                        throw new AssertionError(pool + ": order " + id + " handled " + engine.tally[id]
                                + " times after " + run + " dispatches");
                    }
                }
                assertEquals((long) run * ORDERS, engine.ordersHandled(), pool + ": orders counted in the books");
                engine.check(expected, run, pool);
                assertEquals(0, engine.filled.pending(), pool + ": the group is back at zero");
            }
            Fairness.Shape shape = side.shape(ORDERS);
            assertEquals(ORDERS, shape.tasks());
            assertEquals(2, shape.threads(), pool + ": two workers or handlers");
        } finally {
            side.close();
        }
    }

    /** The serial replay is a real checksum: it depends on every order (one order less changes it). */
    @Test
    void theReplayDependsOnEveryOrder() {
        long[] all = OrderDispatchBench.Engine.replay(1000);
        long[] fewer = OrderDispatchBench.Engine.replay(999);
        assertTrue(!java.util.Arrays.equals(all, fewer));
        assertArrayEquals(all, OrderDispatchBench.Engine.replay(1000), "deterministic");
        OrderDispatchBench.Engine e = new OrderDispatchBench.Engine(0);
        System.arraycopy(fewer, 0, e.books, 0, fewer.length);
        assertThrows(IllegalStateException.class, () -> e.check(all, 1, "test"));
    }

    @Test
    void anUnknownSideIsRefusedByName() {
        var e = assertThrows(IllegalArgumentException.class,
                () -> OrderDispatchBench.Side.open("NOPE", 2, new OrderDispatchBench.Engine(0)));
        assertTrue(e.getMessage().contains("NOPE"), e.getMessage());
    }

    @Test
    void everySideOfTheIssueIsThere() throws NoSuchFieldException {
        List<String> sides = sides().toList();
        for (String s : List.of("GLOBAL_QUEUE", "WORK_STEALING", "GLOBAL_QUEUE_LAMBDA", "FJP", "TPE_ABQ",
                "DISRUPTOR_BLOCKING")) {
            assertTrue(sides.contains(s), s + " in " + sides);
        }
    }
}
