package dev.threadpool.jmh;

import dev.threadpool.ThreadPool;
import dev.threadpool.WaitGroup;
import java.time.Duration;
import java.util.Arrays;
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
 * {@code flood_1m} and {@code flood_1m_batched}: one external thread (the JMH thread) submits {@link #TASKS}
 * no-op tasks, then waits until all have run. The score is tasks per second ({@code @OperationsPerInvocation}),
 * and with {@code -prof gc}, {@code gc.alloc.rate.norm} is bytes per task.
 *
 * <p>Allocation honesty: the task is one preallocated Runnable, the batch array is preallocated, and completion
 * is counted without allocating: so whatever {@code gc.alloc.rate.norm} shows is the pool's own allocation.
 * <ul>
 *   <li>ours, {@code flood_1m}: {@code submit(task, waitGroup)} then {@code waitGroup.await}: the pool calls
 *       {@code done()} after each task, one CAS on the group's AQS state, the API a user would reach for.</li>
 *   <li>ours, {@code flood_1m_batched}: {@code submitBatch(tasks, from, to, waitGroup)} then {@code
 *       waitGroup.await}: the group is added to once per chunk of 64, and the pool calls {@code done()} after each
 *       task, as in {@code flood_1m}. (Before the batch took a group, this flood counted itself down through a
 *       {@link Countdown} task, one shared atomic for both workers: PERFORMANCE_TRACKING 55.)</li>
 *   <li>JDK pools: {@code execute(countdownTask)} then {@link Countdown#await}. Neither ForkJoinPool nor
 *       ThreadPoolExecutor has a batch submit; {@code invokeAll} wraps each task in a Future (an allocation per
 *       task) and blocks for results, which no fire-and-forget caller would use, so {@code flood_1m_batched} on
 *       the JDK pools is the same looped {@code execute} as {@code flood_1m}: the best they offer. The pair of
 *       JDK scores also shows the run-to-run noise.</li>
 * </ul>
 *
 * <pre>mvn -B -q validate test-compile exec:exec@jmh -Djmh.args="PoolFloodBench -prof gc -p pool=GLOBAL_QUEUE,FJP"</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 2, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xms1g", "-Xmx1g"})
public class PoolFloodBench {
    static final int TASKS = 1_000_000;
    /** A flood that has not finished after this long lost a task: fail rather than hang. */
    static final long TIMEOUT_SECONDS = 120;

    @Param({"GLOBAL_QUEUE", "WORK_STEALING", "LANE_EXTENSION", "FJP", "TPE_LBQ", "TPE_ABQ"})
    public String pool;

    /** 0 = {@code Runtime.availableProcessors()}. */
    @Param({"0"})
    public int threads;

    /** Tasks per {@code submitBatch} call in {@code flood_1m_batched}. */
    @Param({"256"})
    public int batch;

    private ThreadPool ours;
    private ExecutorService jdk;
    private final WaitGroup group = new WaitGroup();
    private final Countdown countdown = new Countdown();
    private final Runnable noop = () -> { };
    private Runnable[] batchTasks;

    @Setup(Level.Trial)
    public void setUp() {
        int n = Pools.threads(threads);
        if (batch < 1 || batch > TASKS) {
            throw new IllegalArgumentException("batch must be in [1, " + TASKS + "], got " + batch);
        }
        ours = Pools.ours(pool, n, Pools.FLOOD_QUEUE);
        jdk = ours == null ? Pools.jdk(pool, n, Pools.FLOOD_QUEUE) : null;
        if (ours == null && jdk == null) {
            throw new IllegalArgumentException("pool=" + pool + " is not a pool this benchmark knows");
        }
        batchTasks = new Runnable[batch];
        Arrays.fill(batchTasks, noop);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws InterruptedException {
        Pools.close(ours, jdk);
    }

    @Benchmark
    @OperationsPerInvocation(TASKS)
    public void flood_1m() throws InterruptedException {
        if (ours != null) {
            ThreadPool p = ours;
            Runnable t = noop;
            WaitGroup g = group;
            for (int i = 0; i < TASKS; i++) {
                p.submit(t, g);
            }
            awaitGroup(g);
        } else {
            jdkFlood();
        }
    }

    @Benchmark
    @OperationsPerInvocation(TASKS)
    public void flood_1m_batched() throws InterruptedException {
        if (ours != null) {
            ThreadPool p = ours;
            Runnable[] tasks = batchTasks;
            WaitGroup g = group;
            int b = tasks.length;
            for (int i = 0; i < TASKS; i += b) {
                int len = Math.min(b, TASKS - i); // the last batch may be short
                int submitted = p.submitBatch(tasks, 0, len, g);
                if (submitted != len) {
                    throw new IllegalStateException("submitBatch took " + submitted + " of " + len);
                }
            }
            awaitGroup(g);
        } else {
            jdkFlood();
        }
    }

    /** Waits for our flood's group; a flood that does not finish in time lost a task: fail rather than hang. */
    private static void awaitGroup(WaitGroup g) throws InterruptedException {
        if (!g.await(Duration.ofSeconds(TIMEOUT_SECONDS))) {
            throw new IllegalStateException("flood did not finish: " + g.pending() + " outstanding");
        }
    }

    private void jdkFlood() {
        ExecutorService e = jdk;
        Runnable t = countdown.task();
        countdown.arm(TASKS);
        for (int i = 0; i < TASKS; i++) {
            e.execute(t);
        }
        countdown.await(TIMEOUT_SECONDS);
    }
}
