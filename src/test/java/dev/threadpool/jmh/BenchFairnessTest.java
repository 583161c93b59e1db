package dev.threadpool.jmh;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.lang.annotation.Annotation;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Keeps the benchmark suite fair (docs/BENCHMARKS.md, "Fair comparison"): for every comparison class, every
 * pool of its {@code pool} parameter and every {@code @Benchmark} method, runs the state's setUp, two real
 * invocations (the second one of reused structures, where a side reuses them), and the state's
 * {@link Fairness.Comparison#shape}; then asserts that every pool of a method did the same work, field by field
 * (task count, threads, bound, counting, where the task objects come from, batching), except the fields a side
 * declares different with a reason, and that a declared difference is real. For throughput rows, the task count
 * must also be the {@code @OperationsPerInvocation} that JMH divides the score by.
 *
 * <p>The thread count and the bound come from the pool objects and ours' task count from its own counters, so a
 * benchmark that configured one side differently, or ran fewer tasks on it, fails here whatever its javadoc says.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class BenchFairnessTest {
    /** Every benchmark class whose methods compare pools. */
    static Stream<Class<?>> comparisons() {
        return Stream.of(PoolFloodBench.class, BatchFloodBench.class, BurstBench.class, FanoutBench.class,
                RangeBench.class, OrderDispatchBench.class, RecursiveShapesBench.class);
    }

    @ParameterizedTest
    @MethodSource("comparisons")
    void everySideOfEveryRowDoesTheSameWork(Class<?> bench) throws Exception {
        assertTrue(Fairness.Comparison.class.isAssignableFrom(bench), bench + " must implement Fairness.Comparison");
        List<String> pools = paramValues(bench, "pool");
        assertTrue(pools.size() >= 2, bench + ": a comparison needs two pools, got " + pools);
        Map<String, Map<String, Fairness.Shape>> shapes = new LinkedHashMap<>(); // method -> pool -> shape
        for (String pool : pools) {
            for (Method m : benchmarkMethods(bench)) {
                shapes.computeIfAbsent(m.getName(), k -> new LinkedHashMap<>()).put(pool, runOnce(bench, pool, m));
            }
        }
        for (Method m : benchmarkMethods(bench)) {
            String row = bench.getSimpleName() + "." + m.getName();
            Map<String, Fairness.Shape> byPool = shapes.get(m.getName());
            assertSameWork(row, byPool);
            OperationsPerInvocation ops = m.getAnnotation(OperationsPerInvocation.class);
            if (ops != null) {
                for (var e : byPool.entrySet()) {
                    assertEquals(ops.value(), e.getValue().tasks(), row + " on " + e.getKey()
                            + ": the score is divided by @OperationsPerInvocation, so it must be the tasks run");
                }
            }
        }
    }

    /** The checker itself: a side that differs undeclared fails, a declared difference passes, a stale one fails. */
    @Test
    void theCheckCatchesAnUndeclaredDifferenceAndAStaleDeclaration() {
        var fair = new Fairness.Shape(100, 2, 270, Fairness.Counting.WAIT_GROUP, Fairness.Nodes.PREALLOCATED, false);
        var fewer = new Fairness.Shape(99, 2, 270, Fairness.Counting.WAIT_GROUP, Fairness.Nodes.PREALLOCATED, false);
        var unbounded = new Fairness.Shape(100, 2, -1, Fairness.Counting.WAIT_GROUP, Fairness.Nodes.PREALLOCATED,
                false);
        assertSameWork("ok", Map.of("A", fair, "B", fair));
        assertSameWork("declared", Map.of("A", fair, "B", unbounded.differing("bound", "no bound")));
        assertThrowsAssertion(() -> assertSameWork("fewer", Map.of("A", fair, "B", fewer)));
        assertThrowsAssertion(() -> assertSameWork("undeclared", Map.of("A", fair, "B", unbounded)));
        assertThrowsAssertion(() -> assertSameWork("stale", Map.of("A", fair, "B", fair.differing("bound", "x"))));
        assertThrowsAssertion(() -> assertSameWork("blank", Map.of("A", fair, "B", unbounded.differing("bound", " "))));
    }

    private static void assertThrowsAssertion(Runnable r) {
        try {
            r.run();
        } catch (AssertionError expected) {
            return;
        }
        fail("the fairness check let an unfair row pass");
    }

    /**
     * Every field is the same on every side that does not declare it different; a side that declares a field
     * different gives a reason and really differs there; at least one side declares nothing for each field.
     */
    static void assertSameWork(String row, Map<String, Fairness.Shape> byPool) {
        Map<String, Fairness.Shape> sorted = new java.util.TreeMap<>(byPool);
        for (String field : sorted.values().iterator().next().fields().keySet()) {
            Object common = null;
            String commonPool = null;
            for (var e : sorted.entrySet()) {
                if (e.getValue().differs().containsKey(field)) {
                    continue;
                }
                Object v = e.getValue().fields().get(field);
                if (commonPool == null) {
                    common = v;
                    commonPool = e.getKey();
                } else if (!Objects.equals(common, v)) {
                    fail(row + ": " + field + " is " + common + " on " + commonPool + " but " + v + " on " + e.getKey()
                            + ", and neither side declares the difference (Fairness.Shape.differing)");
                }
            }
            if (commonPool == null) {
                fail(row + ": every side declares " + field + " different: then nothing is compared");
            }
            for (var e : sorted.entrySet()) {
                String reason = e.getValue().differs().get(field);
                if (reason == null) {
                    continue;
                }
                assertFalse(reason.isBlank(), row + " on " + e.getKey() + ": a declared difference needs a reason");
                Object v = e.getValue().fields().get(field);
                assertFalse(Objects.equals(common, v), row + " on " + e.getKey() + " declares " + field
                        + " different (" + reason + ") but it is the same as " + commonPool + "'s: " + v);
            }
        }
    }

    /** A fresh state for {@code pool}: setUp, two invocations of {@code m}, its shape, tearDown. */
    private static Fairness.Shape runOnce(Class<?> bench, String pool, Method m) throws Exception {
        Object state = newState(bench, pool);
        // the method's own @State arguments (RangeBench's Gap), each at its parameters' first values
        Object[] args = new Object[m.getParameterCount()];
        for (int i = 0; i < args.length; i++) {
            args[i] = newState(m.getParameterTypes()[i], null);
        }
        List<Object> states = new ArrayList<>(List.of(args));
        states.add(0, state);
        Fairness.Comparison c = (Fairness.Comparison) state;
        call(states, Setup.class, Level.Trial);
        try {
            for (int k = 0; k < 2; k++) {
                call(states, Setup.class, Level.Iteration);
                c.beforeInvocation();
                call(states, Setup.class, Level.Invocation);
                invoke(m, state, args);
                call(states, TearDown.class, Level.Invocation);
                call(states, TearDown.class, Level.Iteration);
            }
            return c.shape(m.getName());
        } finally {
            call(states, TearDown.class, Level.Trial);
        }
    }

    /** A state object with every {@code @Param} at its first value, and {@code pool} (when not null) set. */
    private static Object newState(Class<?> type, String pool) throws Exception {
        assertTrue(type.isAnnotationPresent(org.openjdk.jmh.annotations.State.class),
                type + ": a benchmark argument must be a JMH @State");
        var ctor = type.getDeclaredConstructor();
        ctor.setAccessible(true);
        Object state = ctor.newInstance();
        for (Field f : type.getFields()) {
            Param p = f.getAnnotation(Param.class);
            if (p != null) {
                set(f, state, f.getName().equals("pool") && pool != null ? pool : p.value()[0]);
            }
        }
        return state;
    }

    private static void set(Field f, Object state, String value) throws IllegalAccessException {
        Class<?> t = f.getType();
        if (t == String.class) {
            f.set(state, value);
        } else if (t == int.class) {
            f.setInt(state, Integer.parseInt(value));
        } else if (t == long.class) {
            f.setLong(state, Long.parseLong(value));
        } else if (t == boolean.class) {
            f.setBoolean(state, Boolean.parseBoolean(value));
        } else {
            throw new IllegalArgumentException("@Param of type " + t + " in " + f);
        }
    }

    /** Calls every state's fixture methods annotated with {@code kind} at {@code level}. */
    private static void call(List<Object> states, Class<? extends Annotation> kind, Level level) throws Exception {
        for (Object state : states) {
            for (Method m : sortedMethods(state.getClass())) {
                Annotation a = m.getAnnotation(kind);
                Level l = a instanceof Setup s ? s.value() : a instanceof TearDown t ? t.value() : null;
                if (l == level) {
                    invoke(m, state);
                }
            }
        }
    }

    private static void invoke(Method m, Object state, Object... args) throws Exception {
        try {
            m.setAccessible(true);
            m.invoke(state, args);
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof Exception x) {
                throw x;
            }
            throw new AssertionError(m + " failed", e.getCause());
        }
    }

    static List<Method> benchmarkMethods(Class<?> bench) {
        List<Method> out = new ArrayList<>();
        for (Method m : sortedMethods(bench)) {
            if (m.isAnnotationPresent(Benchmark.class)) {
                out.add(m);
            }
        }
        assertFalse(out.isEmpty(), bench + " has no @Benchmark method");
        return out;
    }

    private static List<Method> sortedMethods(Class<?> c) {
        return Arrays.stream(c.getDeclaredMethods()).sorted(Comparator.comparing(Method::getName)).toList();
    }

    private static List<String> paramValues(Class<?> bench, String name) throws NoSuchFieldException {
        return List.of(bench.getField(name).getAnnotation(Param.class).value());
    }
}
