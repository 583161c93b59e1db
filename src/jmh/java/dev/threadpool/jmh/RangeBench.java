package dev.threadpool.jmh;

import dev.threadpool.PoolConfig;
import dev.threadpool.SchedulerVariant;
import dev.threadpool.ThreadPool;
import dev.threadpool.WaitGroup;
import java.time.Duration;
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
 * 200,000 indices, each writing {@code mix(i)} into an array, grain 1024, every pool with the same {@code n}
 * threads ({@code threads}, 0 meaning {@code availableProcessors()}). Time per whole range.
 * <ul>
 *   <li>{@link #parallelFor}: the API a user calls, against what a FJP user writes; not the same split, so
 *       the row compares the two ways, not the schedulers alone. Ours, {@code ThreadPool.parallelFor(0, N,
 *       grain, body)} from outside: guided self-scheduling, the caller offers the range to {@code n} helper
 *       tasks and claims chunks itself from one shared cursor, each a share {@code rest / (2 x participants)}
 *       in whole leaves of {@code grain}, so the calling thread is an {@code n + 1}-th participant and the
 *       range is about 29 claims for 3 participants ({@code n} = 2; 44 for 5, 70 for 9: {@link
 *       #guidedClaims}), no object per claim. FORK_JOIN: a {@code RecursiveAction} halving to the grain
 *       ({@code hi - lo <= grain}: 256 leaves of about 781 indices, 511 fresh tasks) with {@code invokeAll},
 *       run by {@code invoke}, whose calling thread parks until the root completes (JDK 25's external
 *       {@code join} helps only in the common pool; this is a pool of its own), so {@code n} threads run
 *       it.</li>
 *   <li>{@link #range_split}: the same binary split to the same grain on both sides, so the schedulers are
 *       compared alone: ours {@code ThreadPool.join} of two fresh halves from the outside caller (which hands
 *       the pair over as one task and waits, running no leaf: {@code ThreadPool.join}'s javadoc), then
 *       {@code join} of fresh halves on the workers; FJP {@code invoke} of the same {@code RecursiveAction}.
 *       256 leaves, 510 fresh nodes on our side and 511 on FJP's (its root is a task), {@code n} threads,
 *       the caller waiting on both sides.</li>
 *   <li>{@link #taskPerIndex}: one submitted task per index, what parallelFor exists to avoid; both sides
 *       allocate one capturing lambda per index and count with the public {@code WaitGroup} (ours
 *       {@code submit(task, group)}, which adds one per submit and calls {@code done()} after the task; FJP
 *       {@code group.add(N)} before the first {@code execute} and {@code group.done()} in the task). Ours'
 *       ring holds 16384 tasks and its submitter waits while it is full; FJP's queues are unbounded.</li>
 * </ul>
 * {@code gapMicros} (parallelFor and range_split, {@link Gap}): 0 runs the ranges back to back, so every range
 * but the first finds the workers awake (ours' PARK workers keep looking for {@code idleWindow}, 50 µs by
 * default, after their last task; FJP's spin briefly before they park); 200 waits 200 µs before each range,
 * outside the timing, so each range starts cold on both sides: the gap is the same wall time for both pools,
 * unlike an {@code idleWindow(Duration.ZERO)} that would change ours alone and leave FJP warm.
 *
 * <pre>mvn -B -q validate test-compile exec:exec@jmh -Djmh.args="RangeBench -f 1 -wi 1 -i 1 -r 1s -w 1s"</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xms1g", "-Xmx1g"})
public class RangeBench implements Fairness.Comparison {
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

    /**
     * The wait before each range of parallelFor and range_split, a state of its own so that only they run per
     * invocation. {@code @Setup(Level.Invocation)} makes JMH time each call on its own, for both gap values so
     * that they are timed the same way. The trade-off: JMH warns about Level.Invocation for short ops, where the
     * per-call timestamps (two {@code nanoTime} reads, some tens of ns) and the fixture's own effects show; a
     * range here takes about 35 to 170 µs (2-core smoke run), so that overhead is under 0.3 % of the score,
     * against a gap that a timed wait inside the method, or a gap-free loop, would count or hide. The wait spins
     * on {@code nanoTime} rather than parking, so the calling thread itself is awake and on its CPU when the
     * range starts, the workers alone cold.
     */
    @State(Scope.Benchmark)
    public static class Gap {
        @Param({"0", "200"})
        public int gapMicros;

        @Setup(Level.Invocation)
        public void pause() {
            if (gapMicros > 0) {
                long end = System.nanoTime() + gapMicros * 1_000L;
                while (System.nanoTime() < end) {
                    Thread.onSpinWait();
                }
            }
        }
    }

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

    /** Leaves of a binary halving of {@code [0, n)} to {@code hi - lo <= grain} (range_split's, FJP's parallelFor). */
    static long splitLeaves(int n, int grain) {
        return n <= grain ? 1 : splitLeaves(n >>> 1, grain) + splitLeaves(n - (n >>> 1), grain);
    }

    /**
     * Claims of ours' guided parallelFor over {@code [0, n)} with {@code participants}, as ParallelFor's
     * {@code claimAndRun} makes them: a share {@code rest / (2 x participants)} in whole leaves, at least one.
     */
    static long guidedClaims(int n, int grain, int participants) {
        long claims = 0;
        for (long lo = 0; lo < n; claims++) {
            long share = (n - lo) / (2L * participants) / grain * grain;
            lo = Math.min(n, lo + Math.max(grain, share));
        }
        return claims;
    }

    /**
     * Bound: -1 on both sides of parallelFor and range_split (FJP unbounded; ours' parallelFor offers at most
     * {@code n} helpers and never waits for room, and a join takes no descriptor but the outside hand-over, so
     * ours' ring bounds neither); taskPerIndex reads both bounds from the pools, where ours' ring does bound it.
     */
    @Override
    public Fairness.Shape shape(String method) {
        int threads = Fairness.threadsOf(ours, fj);
        long leaves = splitLeaves(N, grain);
        return switch (method) {
            case "parallelFor" -> ours == null
                    ? new Fairness.Shape(leaves, threads, -1, Fairness.Counting.CALL_RETURNS, Fairness.Nodes.FRESH,
                            false)
                    : new Fairness.Shape(guidedClaims(N, grain, threads + 1), threads + 1, -1,
                            Fairness.Counting.CALL_RETURNS, Fairness.Nodes.PREALLOCATED, false)
                            .differing("tasks", "guided self-scheduling: ~" + guidedClaims(N, grain, threads + 1)
                                    + " claims of whole 1024-index leaves from one cursor, against FJP's binary"
                                    + " split to " + leaves + " leaves (see range_split for the same split)")
                            .differing("threads", "ours' outside caller claims chunks too (n + 1 participants);"
                                    + " FJP's invoke caller parks (JDK 25 helps only in the common pool)")
                            .differing("nodes", "ours allocates three objects per call, none per claim; the FJP"
                                    + " user's split allocates 511 RecursiveActions per range");
            case "range_split" -> new Fairness.Shape(leaves, threads, -1, Fairness.Counting.CALL_RETURNS,
                    Fairness.Nodes.FRESH, false);
            case "taskPerIndex" -> {
                Fairness.Shape s = new Fairness.Shape(N, threads, Fairness.boundOf(ours, fj),
                        Fairness.Counting.WAIT_GROUP, Fairness.Nodes.FRESH, false);
                yield ours == null ? s : s.differing("bound", "ours holds " + Fairness.boundOf(ours, null)
                        + " tasks (its ring and its workers' claimed batches) and its submitter waits while it is"
                        + " full; FJP's queues are unbounded");
            }
            default -> throw new IllegalArgumentException("RangeBench has no benchmark " + method);
        };
    }

    /** See the class javadoc: ours' guided parallelFor against the FJP user's binary split; not the same split. */
    @Benchmark
    public long[] parallelFor(Gap gap) throws InterruptedException {
        if (fj != null) {
            fj.invoke(new Range(this, 0, N, grain));
        } else {
            ours.parallelFor(0, N, grain, this::body);
        }
        return out;
    }

    /** The identical binary split on both sides; ours' caller hands the root's halves over and waits. */
    @Benchmark
    public long[] range_split(Gap gap) throws InterruptedException {
        if (fj != null) {
            fj.invoke(new Range(this, 0, N, grain));
        } else {
            int mid = N >>> 1; // Range's split of the root, done by the caller (two arithmetic ops)
            ours.join(new Split(ours, this, 0, mid, grain), new Split(ours, this, mid, N, grain));
        }
        return out;
    }

    @Benchmark
    public long[] taskPerIndex() throws InterruptedException {
        if (fj != null) {
            group.add(N); // before the first hand-over, as ours' submit adds before its own
            for (int i = 0; i < N; i++) {
                final int k = i;
                fj.execute(() -> {
                    body(k);
                    group.done();
                });
            }
        } else {
            for (int i = 0; i < N; i++) {
                final int k = i;
                ours.submit(() -> body(k), group);
            }
        }
        if (!group.await(Duration.ofSeconds(120))) {
            throw new IllegalStateException("did not finish within 120 s");
        }
        return out;
    }

    /** range_split's node on our side: {@link Range}'s split and leaf, with {@code ThreadPool.join}. */
    private static final class Split implements Runnable {
        private final ThreadPool pool;
        private final RangeBench b;
        private final int lo;
        private final int hi;
        private final int grain;

        Split(ThreadPool pool, RangeBench b, int lo, int hi, int grain) {
            this.pool = pool;
            this.b = b;
            this.lo = lo;
            this.hi = hi;
            this.grain = grain;
        }

        @Override
        public void run() {
            if (hi - lo <= grain) {
                for (int i = lo; i < hi; i++) {
                    b.body(i);
                }
                return;
            }
            int mid = (lo + hi) >>> 1;
            try {
                pool.join(new Split(pool, b, lo, mid, grain), new Split(pool, b, mid, hi, grain));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    /** FJP's range node (parallelFor's and range_split's): halve to the grain, {@code invokeAll} the halves. */
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
