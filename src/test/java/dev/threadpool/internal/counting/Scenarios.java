package dev.threadpool.internal.counting;

import java.util.List;
import java.util.Set;

/**
 * The scenarios, as the test sees them: implemented by a class loaded inside the {@link CountingLoader} (so the
 * pool it builds is the counting one), called through this interface, which both loaders share.
 */
public interface Scenarios {

    /** What one scenario recorded: every thread's counts over its windows, which threads ran the path, per what. */
    record Run(List<Recorder.Counts> counts, Set<Thread> pathThreads, long tasks, String note) {}

    /**
     * Builds a pool of {@code maxThreads(workers)} with {@code variant} and {@code queueKind} (enum constant
     * names), warms the path up, counts it over {@code tasks} tasks (or joins, looks, cycles) and closes the pool.
     * Returns null where the variant has no such path.
     */
    Run run(Path path, String variant, String queueKind, int workers, int tasks) throws Exception;

    /**
     * A mixed flood for the line classification's check, every thread counted: two outside threads (one of
     * them a registered submitter) submit {@code tasks} tasks in all, detached and with a group; each task
     * submits a child from its worker, and every eighth runs a join.
     */
    Run flood(String variant, String queueKind, int workers, int tasks) throws Exception;
}
