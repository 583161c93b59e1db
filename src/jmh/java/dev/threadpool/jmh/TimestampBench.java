package dev.threadpool.jmh;

import dev.threadpool.PoolConfig;
import dev.threadpool.ThreadPool;
import dev.threadpool.TimestampMode;
import dev.threadpool.WaitGroup;
import java.time.Duration;
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
 * What timestamps cost per task: one thread floods {@link #TASKS} no-op tasks into a GLOBAL_QUEUE pool and
 * waits for them, with {@code timestampMode} DISABLED or FULL (three clock reads per task, two histogram
 * records, and the wake stamps), in a JVM where timestamps are compiled in ({@code flood}) and in one started
 * with {@code -Ddev.threadpool.timestamps=false} ({@code floodCompiledOut}), where both modes must run the same
 * code: the JIT folds every timestamp branch away.
 *
 * <pre>mvn -B validate test-compile exec:exec@jmh -Djmh.args="TimestampBench"</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED"})
public class TimestampBench {
    static final int TASKS = 10_000;

    @Param({"DISABLED", "FULL"})
    public TimestampMode mode;

    @Param({"2"})
    public int threads;

    private ThreadPool pool;
    private final WaitGroup group = new WaitGroup();
    private final Runnable task = () -> { };

    @Setup(Level.Trial)
    public void setUp() {
        pool = ThreadPool.create(PoolConfig.builder().maxThreads(threads).queueCapacity(16384).timestampMode(mode)
                .daemon(true).build());
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        pool.close();
    }

    private void run() throws InterruptedException {
        ThreadPool p = pool;
        Runnable t = task;
        WaitGroup g = group;
        for (int i = 0; i < TASKS; i++) {
            p.submit(t, g);
        }
        if (!g.await(Duration.ofSeconds(60))) {
            throw new IllegalStateException("flood did not finish");
        }
    }

    /** Timestamps compiled in (the default): DISABLED pays a final-field load and a predicted branch per site. */
    @Benchmark
    @OperationsPerInvocation(TASKS)
    public void flood() throws InterruptedException {
        run();
    }

    /** {@code -Ddev.threadpool.timestamps=false}: FULL is then DISABLED, and both fold to no timestamp code. */
    @Benchmark
    @OperationsPerInvocation(TASKS)
    @Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Ddev.threadpool.timestamps=false"})
    public void floodCompiledOut() throws InterruptedException {
        run();
    }
}
