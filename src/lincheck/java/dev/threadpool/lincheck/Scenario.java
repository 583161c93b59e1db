package dev.threadpool.lincheck;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.jetbrains.kotlinx.lincheck.Actor;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.Operation;

/**
 * A hand-written Lincheck scenario: the exact operations per thread that reach one known interleaving,
 * for checks that must not depend on the random scenario generator (a weakness shown on purpose, a
 * mutant that must be caught). Operations are named by method; arguments are given as the method takes
 * them (boxed).
 *
 * <pre>
 *   Scenario.of(RingLincheck.class).init("tryPush", 1L)
 *           .thread().op("tryPush", 2L)
 *           .thread().op("tryPush", 3L).op("tryPop")
 *           .build()
 * </pre>
 */
final class Scenario {
    private final Class<?> testClass;
    private final List<Actor> init = new ArrayList<>();
    private final List<List<Actor>> threads = new ArrayList<>();
    private final List<Actor> post = new ArrayList<>();
    private List<Actor> current = init;

    private Scenario(Class<?> testClass) {
        this.testClass = testClass;
    }

    static Scenario of(Class<?> testClass) {
        return new Scenario(testClass);
    }

    Scenario init(String name, Object... args) {
        init.add(actor(name, args));
        return this;
    }

    /** Starts the next parallel thread; {@link #op} then adds to it. */
    Scenario thread() {
        current = new ArrayList<>();
        threads.add(current);
        return this;
    }

    Scenario op(String name, Object... args) {
        if (current == init) {
            throw new IllegalStateException("call thread() before op(): op " + name + " has no thread");
        }
        current.add(actor(name, args));
        return this;
    }

    Scenario post(String name, Object... args) {
        post.add(actor(name, args));
        return this;
    }

    ExecutionScenario build() {
        return new ExecutionScenario(init, threads, post, null);
    }

    private Actor actor(String name, Object[] args) {
        for (Class<?> c = testClass; c != null; c = c.getSuperclass()) {
            for (Method m : c.getDeclaredMethods()) {
                if (m.getName().equals(name) && m.isAnnotationPresent(Operation.class)
                        && m.getParameterCount() == args.length) {
                    return new Actor(m, Arrays.asList(args));
                }
            }
        }
        throw new IllegalArgumentException("no @Operation " + name + " with " + args.length + " arguments in "
                + testClass.getName());
    }
}
