package dev.threadpool.jmh;

import dev.threadpool.ThreadPool;
import dev.threadpool.WaitGroup;
import java.util.concurrent.ExecutorService;
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
 * {@code flood_1m}: one external thread (the JMH thread) submits {@link #TASKS} no-op tasks one by one, then
 * waits until all have run. The score is tasks per second ({@code @OperationsPerInvocation}); with
 * {@code -prof gc}, {@code gc.alloc.rate.norm} is bytes per task. The batched flood is {@link BatchFloodBench}.
 *
 * <p>Both sides do the same work (docs/BENCHMARKS.md, "Fair comparison"; {@code BenchFairnessTest} holds them to
 * it through {@link #shape}): the same preallocated task, the same worker count, the same bound (ours holds
 * {@link Pools#FLOOD_QUEUE} tasks in its ring plus what its workers hold claimed, and the TPE_ABQ queue exactly as
 * many: {@link Fairness#boundFor}; FJP and TPE_LBQ are unbounded, and their rows say so), and the same counting: the
 * public {@link WaitGroup}, one {@code done()} per task on the running worker's stripe ({@link Floods}).
 * <ul>
 *   <li>{@code flood_1m}: ours {@code submit(task, group)}; the JDK pools {@code group.add(TASKS)} once, then
 *       {@code execute(group::done)} per task.</li>
 *   <li>{@code flood_1m_shared_counter}, a labelled extra row: every pool, ours included, runs a
 *       {@link Countdown} task that decrements one shared atomic (ours with a plain detached {@code submit}):
 *       the cheapest completion a JDK user can write without a striped counter, and what both workers then
 *       write once per task.</li>
 * </ul>
 *
 * <pre>mvn -B -q validate test-compile exec:exec@jmh -Djmh.args="PoolFloodBench -prof gc -p pool=GLOBAL_QUEUE,FJP"</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xms1g", "-Xmx1g"})
public class PoolFloodBench implements Fairness.Comparison {
    static final int TASKS = 1_000_000;

    @Param({"GLOBAL_QUEUE", "WORK_STEALING", "LANE_EXTENSION", "FJP", "TPE_LBQ", "TPE_ABQ"})
    public String pool;

    /** 0 = {@code Runtime.availableProcessors()}. */
    @Param({"0"})
    public int threads;

    private ThreadPool ours;
    private ExecutorService jdk;
    private final WaitGroup group = new WaitGroup();
    private final Runnable doneTask = Floods.doneTask(group);
    private final Countdown countdown = new Countdown();
    private final Runnable noop = () -> { };
    /** Ours' completed count before the last invocation: the fairness test's measured task count. */
    private long completedBefore;

    @Setup(Level.Trial)
    public void setUp() {
        int n = Pools.threads(threads);
        ours = Pools.ours(pool, n, Pools.FLOOD_QUEUE);
        jdk = ours == null ? Pools.jdk(pool, n, Fairness.boundFor(Pools.FLOOD_QUEUE, n)) : null;
        if (ours == null && jdk == null) {
            throw new IllegalArgumentException("pool=" + pool + " is not a pool this benchmark knows");
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws InterruptedException {
        Pools.close(ours, jdk);
    }

    @Benchmark
    @OperationsPerInvocation(TASKS)
    public void flood_1m() throws InterruptedException {
        if (ours != null) {
            Floods.ours(ours, noop, group, TASKS);
        } else {
            Floods.jdk(jdk, doneTask, group, TASKS);
        }
    }

    @Benchmark
    @OperationsPerInvocation(TASKS)
    public void flood_1m_shared_counter() throws InterruptedException {
        Runnable t = countdown.task();
        countdown.arm(TASKS);
        if (ours != null) {
            ThreadPool p = ours;
            for (int i = 0; i < TASKS; i++) {
                p.submit(t);
            }
        } else {
            ExecutorService e = jdk;
            for (int i = 0; i < TASKS; i++) {
                e.execute(t);
            }
        }
        countdown.await(Floods.TIMEOUT_SECONDS);
    }

    @Override
    public void beforeInvocation() {
        completedBefore = Fairness.completedBefore(ours);
    }

    @Override
    public Fairness.Shape shape(String method) {
        Fairness.Counting counting = method.equals("flood_1m_shared_counter")
                ? Fairness.Counting.SHARED_COUNTER : Fairness.Counting.WAIT_GROUP;
        return Fairness.submitted(ours, jdk, completedBefore, TASKS, counting, false);
    }
}
