package dev.threadpool.lincheck;

import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.threadpool.internal.memory.Mem;
import java.util.List;
import org.jetbrains.lincheck.LincheckAssertionError;
import org.jetbrains.lincheck.datastructures.ManagedStrategyGuarantee;
import org.jetbrains.lincheck.datastructures.ManagedStrategyGuaranteeKt;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Options;
import org.jetbrains.lincheck.datastructures.StressOptions;

/**
 * The Lincheck settings every suite here uses, in two sizes: the short run of {@code mvn verify} and the
 * long run ({@code -Dlincheck.long=true}, see docs/TESTING.md).
 *
 * <h2>The off-heap seam</h2>
 * Lincheck's model checker switches threads only at accesses it instruments: fields, arrays, atomics and
 * VarHandles on heap objects, monitors, park. A {@code VarHandle} access to a {@code MemorySegment} runs
 * inside the JDK, where it places no switch point, so a structure written through {@link Mem} would look
 * atomic from call to return and a broken one would pass. {@link #offHeapSwitchPoints()} fixes that
 * without touching {@code Mem} or the class path: it tells Lincheck to treat every method of {@code Mem}
 * as one atomic operation, and Lincheck places a switch point at each call of an atomic method (and
 * shows each call, with its arguments and result, in the trace of a failure). Every off-heap load, store,
 * CAS and getAndX of the library goes through {@code Mem}, one call per access, so every one of them
 * becomes a point where the model checker may switch. {@code MemSeamLincheck} shows it works: a queue
 * whose steal claims with a store instead of the CAS passes model checking without the guarantee and fails with it.
 *
 * <p>Model checking explores sequentially consistent executions only: it finds a missing CAS, a wrong
 * order of steps or a lost check, never a missing fence or a too-weak access mode. Those remain jcstress's
 * job (and stress mode's, by luck).
 */
final class Checks {
    /** {@code -Dlincheck.long=true}: the long run. */
    static final boolean LONG = Boolean.getBoolean("lincheck.long");

    private Checks() {}

    /** Every method of {@link Mem} is one atomic step with a switch point before it. */
    static ManagedStrategyGuarantee offHeapSwitchPoints() {
        return ManagedStrategyGuaranteeKt.forClasses(Mem.class.getName()).allMethods().treatAsAtomic();
    }

    /** Stress mode: real threads, random scenarios. */
    static StressOptions stress(int threads, int actorsPerThread) {
        return new StressOptions()
                .iterations(LONG ? 15 : 6)
                .invocationsPerIteration(LONG ? 5_000 : 1_000)
                .threads(threads)
                .actorsPerThread(actorsPerThread)
                .actorsBefore(2)
                .actorsAfter(1);
    }

    /** Model checking with a switch point at every off-heap access. */
    static ModelCheckingOptions modelChecking(int threads, int actorsPerThread) {
        return modelCheckingWithoutSeam(threads, actorsPerThread).addGuarantee(offHeapSwitchPoints());
    }

    /** Model checking as Lincheck does it by default: no switch point inside {@link Mem}. */
    static ModelCheckingOptions modelCheckingWithoutSeam(int threads, int actorsPerThread) {
        return new ModelCheckingOptions()
                .iterations(LONG ? 10 : 6)
                .invocationsPerIteration(LONG ? 1_000 : 200)
                .threads(threads)
                .actorsPerThread(actorsPerThread)
                .actorsBefore(1)
                .actorsAfter(1);
    }

    /**
     * Asserts that Lincheck finds a violation, and returns its report. The failing scenario is not minimised
     * (minimising re-runs the search many times, and the scenarios here are small already).
     */
    static String assertFails(Options<?, ?> options, Class<?> testClass) {
        options.minimizeFailedScenario(false);
        LincheckAssertionError e = assertThrows(LincheckAssertionError.class, () -> options.check(testClass),
                () -> testClass.getSimpleName() + " was expected to fail under " + options.getClass().getSimpleName());
        String report = e.getMessage();
        System.out.println("[expected failure] " + testClass.getSimpleName() + ":\n" + firstLines(report, 40));
        return report;
    }

    /**
     * A weakness of a contract shown to be real: model checking of the one fixed {@code scenario} passes against
     * the contract ({@link StepVerifier} over {@code spec}) and fails against the same contract made atomic
     * ({@link StepVerifier.Atomic}). So the contract allows the outcome and the structure produces it; a weakness
     * the structure could not produce would pass both, and this would fail.
     */
    static void weakness(String what, Class<?> spec, Class<?> testClass, Scenario scenario, int threads,
            int actorsPerThread) {
        timed(what, () -> {
            fixed(spec, scenario, threads, actorsPerThread).verifier(StepVerifier.class).check(testClass);
            assertFails(fixed(spec, scenario, threads, actorsPerThread).verifier(StepVerifier.Atomic.class),
                    testClass);
        });
    }

    /** Model checking of {@code scenario} alone (no random ones) against {@code spec}. */
    private static ModelCheckingOptions fixed(Class<?> spec, Scenario scenario, int threads, int actorsPerThread) {
        return modelChecking(threads, actorsPerThread).iterations(0).addCustomScenario(scenario.build())
                .sequentialSpecification(spec);
    }

    static String firstLines(String s, int n) {
        List<String> lines = s.lines().limit(n).toList();
        return String.join("\n", lines);
    }

    /** Runs {@code r} and returns its wall time in seconds (printed, for docs/TESTING.md; never asserted). */
    static double timed(String what, Runnable r) {
        long t0 = System.nanoTime();
        r.run();
        double s = (System.nanoTime() - t0) / 1e9;
        System.out.printf("[lincheck] %-50s %6.1f s%n", what, s);
        return s;
    }
}
