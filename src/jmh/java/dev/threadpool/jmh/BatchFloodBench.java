package dev.threadpool.jmh;

import dev.threadpool.ThreadPool;
import dev.threadpool.WaitGroup;
import java.util.Arrays;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * {@code flood_1m_batched}: the flood of {@link PoolFloodBench}, {@link PoolFloodBench#TASKS} no-op tasks from
 * one external thread, handed over in batches of {@code batch}, each side with its own batching idiom:
 * <ul>
 *   <li>ours: {@code submitBatch(tasks, 0, batch, group)}, one preallocated {@code Runnable[]} of the no-op
 *       task; the pool adds to the group once per chunk and calls {@code done()} after each task.</li>
 *   <li>FJP: per batch one external {@code RecursiveAction} that forks its {@code batch} children inside the pool
 *       (into the running worker's own deque, where the other workers steal them), every child counting one
 *       {@code done()} on the same {@link WaitGroup}; batches and children are built once and reused with
 *       {@code reinitialize()} ({@link Floods.FjBatches}), so neither side's user code allocates per task.</li>
 * </ul>
 * ThreadPoolExecutor has no batch API (its {@code invokeAll} wraps each task in a Future and blocks for all of
 * them, which a fire-and-forget caller would not use), so it is not in this class: the report's TPE cells of
 * this row say "no batch API". Its own class because JMH cannot leave a pool out of one method only.
 *
 * <pre>mvn -B -q validate test-compile exec:exec@jmh -Djmh.args="BatchFloodBench -prof gc"</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xms1g", "-Xmx1g"})
public class BatchFloodBench implements Fairness.Comparison {
    static final int TASKS = PoolFloodBench.TASKS;

    @Param({"GLOBAL_QUEUE", "WORK_STEALING", "LANE_EXTENSION", "FJP"})
    public String pool;

    /** 0 = {@code Runtime.availableProcessors()}. */
    @Param({"0"})
    public int threads;

    /** Tasks per batch, on both sides. */
    @Param({"256"})
    public int batch;

    private ThreadPool ours;
    private ForkJoinPool fj;
    private Floods.FjBatches fjBatches;
    private final WaitGroup group = new WaitGroup();
    private Runnable[] batchTasks;
    /** Ours' completed count before the last invocation: the fairness test's measured task count. */
    private long completedBefore;

    @Setup(Level.Trial)
    public void setUp() {
        int n = Pools.threads(threads);
        if (batch < 1 || batch > TASKS) {
            throw new IllegalArgumentException("batch must be in [1, " + TASKS + "], got " + batch);
        }
        ours = Pools.ours(pool, n, Pools.FLOOD_QUEUE);
        if (ours == null) {
            if (!pool.equals("FJP")) {
                throw new IllegalArgumentException("pool=" + pool + " has no batch API; this benchmark runs ours"
                        + " and FJP");
            }
            fj = (ForkJoinPool) Pools.jdk(pool, n, 0); // FJP has no queue capacity to set
            fjBatches = new Floods.FjBatches(fj, group, TASKS, batch);
        }
        batchTasks = new Runnable[batch];
        Runnable noop = () -> { };
        Arrays.fill(batchTasks, noop);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws InterruptedException {
        Pools.close(ours, fj);
    }

    @Benchmark
    @OperationsPerInvocation(TASKS)
    public void flood_1m_batched() throws InterruptedException {
        if (ours != null) {
            Floods.oursBatched(ours, batchTasks, group, TASKS);
        } else {
            fjBatches.flood(TASKS);
        }
    }

    @Override
    public void beforeInvocation() {
        completedBefore = Fairness.completedBefore(ours);
    }

    @Override
    public Fairness.Shape shape(String method) {
        return Fairness.submitted(ours, fj, completedBefore, ours != null ? 0 : fjBatches.tasks(),
                Fairness.Counting.WAIT_GROUP, true);
    }
}
