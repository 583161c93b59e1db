package dev.threadpool.jmh;

import dev.threadpool.PoolConfig;
import dev.threadpool.PoolStats;
import dev.threadpool.ThreadPool;
import dev.threadpool.internal.queue.CarriedBatches;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ThreadPoolExecutor;

/**
 * What a side of a comparison does, so a test can hold every side of every comparison to the same work
 * ({@code BenchFairnessTest}, docs/BENCHMARKS.md "Fair comparison").
 *
 * <p>A benchmark state that compares pools implements {@link Comparison}: after its {@code setUp} and one real
 * invocation of a {@code @Benchmark} method, {@link Comparison#shape} describes that invocation on that state's
 * pool, read from the live objects where they can say it (the pool's thread count and bound come from the pool
 * itself, not from the benchmark's parameters). The test then asserts that every pool of one benchmark method
 * has the same {@link Shape}, field by field, except the fields a pool's shape names in {@link Shape#differs},
 * each with the reason that the row of the report prints.
 */
final class Fairness {
    private Fairness() {
    }

    /** How a side counts its completions (the same on every side of a fair row). */
    enum Counting {
        /** The public {@code WaitGroup}: added before the hand-over, one {@code done()} per task. */
        WAIT_GROUP,
        /** One shared atomic counter decremented by every task ({@link Countdown}): the labelled extra rows. */
        SHARED_COUNTER,
        /** The call returns when the whole computation ran (a join tree, {@code invoke}, {@code parallelFor}). */
        CALL_RETURNS,
    }

    /** Where the user's code gets its task objects, per invocation. */
    enum Nodes {
        /** One preallocated object, submitted again and again (a no-op flood): no user allocation. */
        PREALLOCATED,
        /** A structure built once in setUp and reused (FJP: {@code reinitialize()} before each run). */
        REUSED,
        /** Created as the computation recurses or submits: the user's code allocates one per task. */
        FRESH,
        /**
         * No task object at all: the argument form ({@code submit(fn, ctx, arg)}, {@code join(fn, ctx, l, r)}), whose
         * function, context and {@code long} the pool carries; only ours can, so a row with it says so.
         */
        NONE,
    }

    /**
     * One side of one comparison row.
     *
     * @param tasks    tasks (leaves, for a join tree) that one invocation runs
     * @param threads  threads that run them: the pool's own (read from the pool), plus 1 when the calling thread
     *                 takes part
     * @param bound    tasks the pool can hold queued before a submitter waits, read from the pool; -1 = unbounded
     * @param counting how completions are counted
     * @param nodes    where the task objects come from
     * @param batched  whether the submitter hands tasks over in batches (our {@code submitBatch}, FJP's one task
     *                 forking its batch inside the pool)
     * @param differs  field name to the reason this side differs from the others in it; empty for a fair side
     */
    record Shape(long tasks, int threads, long bound, Counting counting, Nodes nodes, boolean batched,
                 Map<String, String> differs) {
        Shape {
            differs = Map.copyOf(differs);
        }

        Shape(long tasks, int threads, long bound, Counting counting, Nodes nodes, boolean batched) {
            this(tasks, threads, bound, counting, nodes, batched, Map.of());
        }

        /** This shape with {@code field} declared different, for {@code reason}. */
        Shape differing(String field, String reason) {
            Map<String, String> d = new TreeMap<>(differs);
            d.put(field, reason);
            return new Shape(tasks, threads, bound, counting, nodes, batched, d);
        }

        /** The compared fields by name (all but {@code differs}). */
        Map<String, Object> fields() {
            Map<String, Object> m = new TreeMap<>();
            m.put("tasks", tasks);
            m.put("threads", threads);
            m.put("bound", bound);
            m.put("counting", counting);
            m.put("nodes", nodes);
            m.put("batched", batched);
            return m;
        }
    }

    /** A benchmark state whose methods compare pools. */
    interface Comparison {
        /** Called by the fairness test before the invocation that {@link #shape} then describes. */
        default void beforeInvocation() {
        }

        /** The shape of the last invocation of {@code method} on this state's pool (after setUp and one run). */
        Shape shape(String method);
    }

    /**
     * Ours' completed count, once every accepted task has ended ({@code submitted == completed + failed +
     * cancelled}): a task's completion is counted after its body returns, so right after the last body
     * signalled its waiter the count may still lag by one. Waits at most 10 s.
     */
    static long oursCompleted(ThreadPool ours) {
        long deadline = System.nanoTime() + 10_000_000_000L;
        for (;;) {
            PoolStats s = ours.statsSnapshot();
            if (s.submitted() == s.completed() + s.failed() + s.cancelled() || System.nanoTime() - deadline > 0) {
                return s.completed();
            }
            Thread.onSpinWait();
        }
    }

    /** Ours' completed count before an invocation (0 for a JDK pool), for {@link #submitted}. */
    static long completedBefore(ThreadPool ours) {
        return ours != null ? oursCompleted(ours) : 0;
    }

    /**
     * The shape of a row whose tasks are preallocated and submitted (the floods and bursts): ours' task count
     * from its own counters since {@code completedBefore}, a JDK pool's the loop's {@code jdkTasks} (they keep
     * no such count); threads and bound from the pools; an unbounded pool declared so.
     */
    static Shape submitted(ThreadPool ours, ExecutorService jdk, long completedBefore, long jdkTasks,
                           Counting counting, boolean batched) {
        long tasks = ours != null ? oursCompleted(ours) - completedBefore : jdkTasks;
        return declareUnbounded(new Shape(tasks, threadsOf(ours, jdk), boundOf(ours, jdk), counting,
                Nodes.PREALLOCATED, batched), jdk);
    }

    /**
     * The A/A control's prefix: {@code AA_X} is the side {@code X} built again by the same code under a name of its
     * own, so it is one more JMH fork of every round, in its own place of the round's shuffled order. A side against
     * its twin, paired by round, does identical work: how far that ratio strays from 1.0 is the run's noise for a
     * pool against itself, the yardstick for a target's worst-round part (docs/BENCHMARKS.md, "The A/A control").
     * bench_charts.py shows the twins in their own table and judges no target on them.
     */
    static final String TWIN_PREFIX = "AA_";

    /** The side a {@code pool} parameter builds: {@code pool} itself, or for a twin the side it repeats. */
    static String untwinned(String pool) {
        return pool.startsWith(TWIN_PREFIX) ? pool.substring(TWIN_PREFIX.length()) : pool;
    }

    /** The threads of a pool that run tasks, from the pool itself. */
    static int threadsOf(ThreadPool ours, ExecutorService jdk) {
        if (ours != null) {
            PoolConfig c = ours.config();
            return c.maxThreads();
        }
        if (jdk instanceof ForkJoinPool f) {
            return f.getParallelism();
        }
        if (jdk instanceof ThreadPoolExecutor t) {
            return t.getMaximumPoolSize();
        }
        throw new IllegalArgumentException("unknown pool " + jdk);
    }

    /**
     * The bound of a pool, from the pool itself: ours, its queue capacity plus what its workers may hold claimed
     * beyond it ({@link #oursClaimSlack}); a TPE, its queue's capacity; FJP: unbounded (-1).
     */
    static long boundOf(ThreadPool ours, ExecutorService jdk) {
        if (ours != null) {
            return ours.config().queueCapacity() + oursClaimSlack(ours);
        }
        if (jdk instanceof ThreadPoolExecutor t) {
            var q = t.getQueue();
            return q.remainingCapacity() == Integer.MAX_VALUE ? -1 : q.remainingCapacity() + q.size();
        }
        if (jdk instanceof ForkJoinPool) {
            return -1;
        }
        throw new IllegalArgumentException("unknown pool " + jdk);
    }

    /**
     * Ours' bound for a pool of {@code threads} with {@code queueCapacity}: what a bounded JDK queue is given, so
     * that a TPE holds exactly as many waiting tasks as ours ({@link #oursClaimSlack}).
     */
    static int boundFor(int queueCapacity, int threads) {
        return queueCapacity + threads * (CarriedBatches.MAX_BATCH - 1);
    }

    /**
     * {@code s} with its bound declared different when the pool is unbounded (-1): FJP and TPE_LBQ, whose
     * submitters never wait for space where ours and TPE_ABQ do.
     */
    static Shape declareUnbounded(Shape s, ExecutorService jdk) {
        if (s.bound() != -1) {
            return s;
        }
        return s.differing("bound", jdk instanceof ForkJoinPool
                ? "ForkJoinPool has no bounded queue: its submitters never wait for space"
                : "an unbounded LinkedBlockingQueue (what Executors.newFixedThreadPool builds): its submitters"
                        + " never wait for space");
    }

    /**
     * Tasks ours' workers may hold claimed out of the carried ring beyond its capacity: a worker claims up to
     * {@link CarriedBatches#MAX_BATCH} cells with one CAS, starts the first and holds the rest in its batch (cells
     * freed at once, so producers may refill them). A TPE's worker holds only the task it runs.
     */
    static int oursClaimSlack(ThreadPool ours) {
        PoolConfig c = ours.config();
        return boundFor(c.queueCapacity(), c.maxThreads()) - c.queueCapacity();
    }
}
