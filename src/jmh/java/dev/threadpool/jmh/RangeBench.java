package dev.threadpool.jmh;

import dev.threadpool.PoolConfig;
import dev.threadpool.SchedulerVariant;
import dev.threadpool.ThreadPool;
import dev.threadpool.WaitGroup;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RecursiveAction;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * 200,000 indices, each writing {@code mix(i)} into an array:
 * <ul>
 *   <li>{@link #parallelFor}: ours, {@code ThreadPool.parallelFor(0, N, grain, body)}; FORK_JOIN: a
 *       RecursiveAction with the same split and grain.</li>
 *   <li>{@link #taskPerIndex}: one submitted task per index (ours: {@code submit(task, group)}; FORK_JOIN:
 *       {@code execute} plus a latch): what parallelFor exists to avoid.</li>
 * </ul>
 * {@code threads} 0 means {@code availableProcessors()}. Time per whole range.
 *
 * <pre>mvn -B -q validate test-compile exec:exec@jmh -Djmh.args="RangeBench -f 1 -wi 1 -i 1 -r 1s -w 1s"</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED"})
public class RangeBench {
    static final int N = 200_000;

    @Param({"GLOBAL_QUEUE", "WORK_STEALING", "FORK_JOIN"})
    public String pool;

    @Param({"0"})
    public int threads;

    @Param({"1024"})
    public int grain;

    private ThreadPool ours;
    private ForkJoinPool fj;
    private final long[] out = new long[N];
    private final WaitGroup group = new WaitGroup();

    @Setup(Level.Trial)
    public void setUp() {
        int n = threads > 0 ? threads : Runtime.getRuntime().availableProcessors();
        switch (pool) {
            case "GLOBAL_QUEUE", "WORK_STEALING" -> ours = ThreadPool.create(PoolConfig.builder()
                    .maxThreads(Math.min(n, 64)).queueCapacity(16384).daemon(true)
                    .schedulerVariant(SchedulerVariant.valueOf(pool)).build());
            case "FORK_JOIN" -> fj = new ForkJoinPool(n);
            default -> throw new IllegalArgumentException("pool=" + pool);
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws InterruptedException {
        if (ours != null) {
            ours.close();
        }
        if (fj != null) {
            fj.shutdown();
            fj.awaitTermination(30, TimeUnit.SECONDS);
        }
    }

    private void body(int i) {
        out[i] = FanoutBench.mix(i);
    }

    @Benchmark
    public long[] parallelFor() throws InterruptedException {
        if (fj != null) {
            fj.invoke(new Range(this, 0, N, grain));
        } else {
            ours.parallelFor(0, N, grain, this::body);
        }
        return out;
    }

    @Benchmark
    public long[] taskPerIndex() throws InterruptedException {
        if (fj != null) {
            CountDownLatch done = new CountDownLatch(N);
            for (int i = 0; i < N; i++) {
                final int k = i;
                fj.execute(() -> { body(k); done.countDown(); });
            }
            if (!done.await(120, TimeUnit.SECONDS)) {
                throw new IllegalStateException("did not finish within 120 s");
            }
        } else {
            for (int i = 0; i < N; i++) {
                final int k = i;
                ours.submit(() -> body(k), group);
            }
            if (!group.await(Duration.ofSeconds(120))) {
                throw new IllegalStateException("did not finish within 120 s");
            }
        }
        return out;
    }

    private static final class Range extends RecursiveAction {
        private final RangeBench b;
        private final int lo;
        private final int hi;
        private final int grain;

        Range(RangeBench b, int lo, int hi, int grain) {
            this.b = b;
            this.lo = lo;
            this.hi = hi;
            this.grain = grain;
        }

        @Override
        protected void compute() {
            if (hi - lo <= grain) {
                for (int i = lo; i < hi; i++) {
                    b.body(i);
                }
                return;
            }
            int mid = (lo + hi) >>> 1;
            invokeAll(new Range(b, lo, mid, grain), new Range(b, mid, hi, grain));
        }
    }
}
