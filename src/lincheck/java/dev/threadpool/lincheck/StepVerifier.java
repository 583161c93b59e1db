package dev.threadpool.lincheck;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.jetbrains.kotlinx.lincheck.Actor;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionResult;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.kotlinx.lincheck.execution.ResultWithClock;
import org.jetbrains.kotlinx.lincheck.util.ExceptionResult;
import org.jetbrains.kotlinx.lincheck.util.LincheckResult;
import org.jetbrains.kotlinx.lincheck.util.ValueResult;
import org.jetbrains.kotlinx.lincheck.util.VoidResult;
import org.jetbrains.lincheck.datastructures.verifier.CachedVerifier;

/**
 * Lincheck verifier for a {@link StepSpec}: searches for a placement of every operation's steps that the
 * specification accepts (see {@link StepSpec} for what is checked). Plug it in with
 * {@code .sequentialSpecification(MySpec.class).verifier(StepVerifier.class)}.
 *
 * <h2>Search</h2>
 * A depth-first search over configurations {state, for each thread: next operation and its progress},
 * memoising the configurations already found to be dead ends. The threads are the init part, the parallel
 * threads and the post part. An operation may take its first step only when every operation that happened
 * before it has finished all of its steps: the init part before any parallel one, every parallel one
 * before the post part, and inside the parallel part whatever Lincheck's happens-before clocks say (the
 * number of operations of each other thread that had returned when this one was called). Once started, an
 * operation may take its next step at any time, interleaved with the steps of any other running operation.
 * The scenarios are a handful of operations, so the search is tiny; Lincheck also caches verdicts per
 * distinct result.
 *
 * <p>{@link Atomic} is the same search with every operation's steps taken back to back: the structure
 * checked as if each of its operations were one atomic step. Running a structure whose contract admits a
 * weakness against {@code Atomic} must fail; that shows the weakness is real, not just allowed.
 */
public class StepVerifier extends CachedVerifier {

    private final StepSpec<Object> spec;
    private final boolean atomic;

    public StepVerifier(Class<?> specClass) {
        this(specClass, false);
    }

    @SuppressWarnings("unchecked")
    StepVerifier(Class<?> specClass, boolean atomic) {
        try {
            this.spec = (StepSpec<Object>) specClass.getDeclaredConstructor().newInstance();
        } catch (ReflectiveOperationException | ClassCastException e) {
            throw new IllegalArgumentException("sequentialSpecification must be a StepSpec with a no-argument"
                    + " constructor: " + specClass.getName(), e);
        }
        this.atomic = atomic;
    }

    /** {@link StepVerifier} with every operation atomic (its steps back to back). */
    public static final class Atomic extends StepVerifier {
        public Atomic(Class<?> specClass) {
            super(specClass, true);
        }
    }

    @Override
    public boolean verifyResultsImpl(ExecutionScenario scenario, ExecutionResult results) {
        return new Search(scenario, results).run();
    }

    private final class Search {
        /** threads[0] = init part, threads[1..p] = parallel threads, threads[p + 1] = post part. */
        private final StepSpec.Call[][] threads;
        /** clocks[i][k][j]: operations of parallel thread j returned before op k of parallel thread i began. */
        private final int[][][] clocks;
        private final int parallel;
        private final Set<List<Object>> dead = new HashSet<>();

        Search(ExecutionScenario scenario, ExecutionResult results) {
            List<List<Actor>> par = scenario.getParallelExecution();
            parallel = par.size();
            threads = new StepSpec.Call[parallel + 2][];
            clocks = new int[parallel][][];
            threads[0] = calls(scenario.getInitExecution(), results.getInitResults());
            for (int i = 0; i < parallel; i++) {
                List<ResultWithClock> rs = results.getParallelResultsWithClock().get(i);
                List<LincheckResult> plain = new ArrayList<>();
                clocks[i] = new int[rs.size()][];
                for (int k = 0; k < rs.size(); k++) {
                    plain.add(rs.get(k).getResult());
                    int[] c = rs.get(k).getClockOnStart().getClock();
                    clocks[i][k] = Arrays.copyOf(c, parallel);
                }
                threads[i + 1] = calls(par.get(i), plain);
            }
            threads[parallel + 1] = calls(scenario.getPostExecution(), results.getPostResults());
        }

        private StepSpec.Call[] calls(List<Actor> actors, List<LincheckResult> results) {
            StepSpec.Call[] out = new StepSpec.Call[actors.size()];
            for (int k = 0; k < out.length; k++) {
                Actor a = actors.get(k);
                out[k] = new StepSpec.Call(a.getMethod().getName(), a.getArguments(), value(results.get(k)));
            }
            return out;
        }

        private Object value(LincheckResult r) {
            if (r instanceof ValueResult v) {
                return v.getValue();
            }
            if (r instanceof VoidResult) {
                return StepSpec.VOID;
            }
            if (r instanceof ExceptionResult e) {
                return e.getThrowable(); // no specification here allows an exception
            }
            return r; // suspended or cancelled: no specification here allows those either
        }

        boolean run() {
            int n = threads.length;
            return dfs(spec.initial(), new int[n], new Object[n]);
        }

        private boolean finished(int t, int[] next, Object[] prog) {
            return next[t] == threads[t].length && prog[t] == null;
        }

        /** May operation next[t] of thread t take its first step now? */
        private boolean mayStart(int t, int[] next, Object[] prog) {
            if (t == 0) {
                return true;
            }
            if (!finished(0, next, prog)) {
                return false;
            }
            if (t == parallel + 1) {
                for (int i = 1; i <= parallel; i++) {
                    if (!finished(i, next, prog)) {
                        return false;
                    }
                }
                return true;
            }
            int[] clock = clocks[t - 1][next[t]];
            for (int j = 0; j < parallel; j++) {
                // next[j + 1] counts thread j's operations that have taken their last step
                if (j != t - 1 && next[j + 1] < clock[j]) {
                    return false;
                }
            }
            return true;
        }

        private boolean dfs(Object state, int[] next, Object[] prog) {
            boolean all = true;
            int running = -1;
            for (int t = 0; t < threads.length; t++) {
                all &= finished(t, next, prog);
                if (prog[t] != null) {
                    running = t;
                }
            }
            if (all) {
                return true;
            }
            Object[] key = new Object[2 * threads.length + 1];
            key[0] = state;
            for (int t = 0; t < threads.length; t++) {
                key[1 + 2 * t] = next[t];
                key[2 + 2 * t] = prog[t];
            }
            List<Object> k = Arrays.asList(key);
            if (dead.contains(k)) {
                return false;
            }
            List<StepSpec.Next<Object>> steps = new ArrayList<>();
            for (int t = 0; t < threads.length; t++) {
                if (atomic && running >= 0 && t != running) {
                    continue; // Atomic: a started operation finishes before anything else moves
                }
                if (next[t] == threads[t].length) {
                    continue;
                }
                if (prog[t] == null && !mayStart(t, next, prog)) {
                    continue;
                }
                steps.clear();
                spec.step(state, threads[t][next[t]], prog[t], steps);
                for (StepSpec.Next<Object> s : steps) {
                    int[] n2 = next.clone();
                    Object[] p2 = prog.clone();
                    if (s.progress() == StepSpec.DONE) {
                        n2[t]++;
                        p2[t] = null;
                    } else {
                        p2[t] = s.progress();
                    }
                    if (dfs(s.state(), n2, p2)) {
                        return true;
                    }
                }
            }
            dead.add(k);
            return false;
        }
    }
}
