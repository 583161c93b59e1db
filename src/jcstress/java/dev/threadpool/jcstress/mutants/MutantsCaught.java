package dev.threadpool.jcstress.mutants;

import java.util.ArrayList;
import java.util.List;
import java.util.SortedSet;
import org.openjdk.jcstress.JCStress;
import org.openjdk.jcstress.Options;

/**
 * CI's proof that the ordering detectors catch their mutants (the {@code jcstress-mutants} execution of
 * {@code mvn verify}; docs/TESTING.md, "Weakened orderings"). Runs jcstress with the given arguments over the
 * mutant tests of this package ({@code -t} selects them; the default selects every one), each of which forbids
 * the outcome its mutation produces, and then inverts the verdict: every selected test must have failed with
 * an observed forbidden state. A test that passed is a surviving mutant, and the run exits 1 naming it, as it
 * does when no test was selected or jcstress failed to run at all.
 *
 * <pre>
 *   java ... dev.threadpool.jcstress.mutants.MutantsCaught [jcstress options]
 * </pre>
 */
public final class MutantsCaught {
    /** The tests of this package: the mutant detectors, never the real structures' tests. */
    static final String MUTANTS = "dev\\.threadpool\\.jcstress\\.mutants\\.";

    private MutantsCaught() {}

    public static void main(String[] args) throws Exception {
        List<String> a = new ArrayList<>(List.of(args));
        if (!a.contains("-t")) {
            a.add("-t");
            a.add(MUTANTS);
        }
        Options opts = new Options(a.toArray(String[]::new));
        if (!opts.parse()) {
            System.exit(2);
        }
        JCStress jcstress = new JCStress(opts);
        SortedSet<String> tests = jcstress.getTests();
        tests.removeIf(t -> !t.startsWith("dev.threadpool.jcstress.mutants."));
        if (tests.isEmpty()) {
            System.err.println("MutantsCaught: no mutant test selected by " + a);
            System.exit(1);
        }
        String failures = "";
        try {
            jcstress.run();
        } catch (AssertionError e) { // jcstress reports failed tests by throwing, one line per failure
            failures = String.valueOf(e.getMessage());
        }
        List<String> survived = new ArrayList<>();
        for (String t : tests) {
            boolean caught = failures.lines().anyMatch(l -> l.startsWith(t + " ") && l.contains("Observed forbidden state"));
            System.out.println((caught ? "CAUGHT    " : "SURVIVED  ") + t);
            if (!caught) {
                survived.add(t);
            }
        }
        if (!survived.isEmpty()) {
            System.out.println("MutantsCaught: " + survived.size() + " of " + tests.size()
                    + " mutants survived (their detector saw no forbidden outcome): " + survived);
            System.exit(1);
        }
        System.out.println("MutantsCaught: all " + tests.size() + " mutants caught");
    }
}
