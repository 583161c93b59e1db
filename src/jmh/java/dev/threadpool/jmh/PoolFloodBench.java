package dev.threadpool.jmh;

import dev.threadpool.PoolConfig;
import dev.threadpool.SchedulerVariant;
import dev.threadpool.ThreadPool;
import dev.threadpool.WaitGroup;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
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
 * One external thread submits {@link #TASKS} no-op tasks and waits for all of them: tasks per second, side by
 * side with the JDK pools on the same thread count. The task is one shared instance, so
 * {@code gc.alloc.rate.norm} (with {@code -prof gc}) shows what each pool allocates per task by itself.
 *
 * <pre>mvn -B validate test-compile exec:exec@jmh -Djmh.args="PoolFloodBench -prof gc"</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED"})
public class PoolFloodBench {
    static final int TASKS = 10_000;

    @Param({"GLOBAL_QUEUE", "FORK_JOIN", "TPE_LBQ"})
    public String pool;

    @Param({"2"})
    public int threads;

    private ThreadPool ours;
    private ExecutorService jdk;
    private final WaitGroup group = new WaitGroup();
    private final AtomicInteger remaining = new AtomicInteger();
    private volatile Object doneSignal;
    private Runnable oursTask;
    private Runnable jdkTask;

    @Setup(Level.Trial)
    public void setUp() {
        switch (pool) {
            case "GLOBAL_QUEUE" -> ours = ThreadPool.create(PoolConfig.builder().maxThreads(threads)
                    .queueCapacity(16384).schedulerVariant(SchedulerVariant.GLOBAL_QUEUE).daemon(true).build());
            case "FORK_JOIN" -> jdk = new ForkJoinPool(threads);
            case "TPE_LBQ" -> jdk = new ThreadPoolExecutor(threads, threads, 0, TimeUnit.SECONDS,
                    new LinkedBlockingQueue<>());
            default -> throw new IllegalArgumentException("pool=" + pool);
        }
        oursTask = () -> { };
        jdkTask = () -> {
            if (remaining.decrementAndGet() == 0) {
                synchronized (this) {
                    doneSignal = Boolean.TRUE;
                    notifyAll();
                }
            }
        };
    }

    @TearDown(Level.Trial)
    public void tearDown() throws InterruptedException {
        if (ours != null) {
            ours.close();
        }
        if (jdk != null) {
            jdk.shutdown();
            jdk.awaitTermination(30, TimeUnit.SECONDS);
        }
    }

    @Benchmark
    @OperationsPerInvocation(TASKS)
    public void flood() throws InterruptedException {
        if (ours != null) {
            ThreadPool p = ours;
            Runnable t = oursTask;
            WaitGroup g = group;
            for (int i = 0; i < TASKS; i++) {
                p.submit(t, g);
            }
            if (!g.await(Duration.ofSeconds(60))) {
                throw new IllegalStateException("flood did not finish");
            }
        } else {
            remaining.set(TASKS);
            doneSignal = null;
            ExecutorService e = jdk;
            Runnable t = jdkTask;
            for (int i = 0; i < TASKS; i++) {
                e.execute(t);
            }
            synchronized (this) {
                while (doneSignal == null) {
                    wait(60_000);
                }
            }
        }
    }
}
