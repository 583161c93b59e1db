package dev.threadpool.jmh;

import dev.threadpool.PoolConfig;
import dev.threadpool.QueueKind;
import dev.threadpool.SchedulerVariant;
import dev.threadpool.ThreadPool;
import dev.threadpool.WaitGroup;
import java.time.Duration;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RecursiveAction;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
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
 * Recursive fan-out, the workload work stealing is for, on every queue topology and on ForkJoinPool with the
 * same thread count.
 * <ul>
 *   <li>{@link #wsum}: seed 002's wsum, sum of mix(i) over 2^24 elements: split, submit the right half, keep
 *       the left, leaves of 4096 summed serially (4095 submitted tasks, coarse).</li>
 *   <li>{@link #tree}: a fine-grained binary tree of 2^20 - 1 tasks (about a million): every node does a
 *       few nanoseconds of work and submits both children; the cost is almost all scheduling.</li>
 *   <li>{@link #tree_join}: a binary tree of {@code ThreadPool.join}s with 2^20 leaves (2^20 - 1 joins);
 *       FORK_JOIN: a RecursiveAction with {@code invokeAll(left, right)} per node. Our nodes are built once in setUp and
 *       reused (each leaf counts its own runs, checked after every iteration), so {@code -prof gc}'s
 *       {@code gc.alloc.rate.norm} is the pool's own allocation; FJP's nodes are allocated per run, as
 *       ForkJoinTasks must be (a task completes once).</li>
 *   <li>{@link #wsum_join}: wsum with {@code join(left, right)} per split instead of submit + WaitGroup.</li>
 * </ul>
 * {@code pool}: GLOBAL_QUEUE, WS_RING (WORK_STEALING, RING local queues), WS_CHASE_LEV, LANE_EXTENSION,
 * FORK_JOIN (RecursiveAction, fork/join; the {@code _join} benchmarks run the FJP form there). {@code threads} 0 means {@code availableProcessors()}. Time per whole run.
 *
 * <pre>mvn -B -q validate test-compile exec:exec@jmh -Djmh.args="FanoutBench -f 1 -wi 1 -i 1 -r 1s -w 1s"</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED"})
public class FanoutBench {
    static final long ELEMENTS = 1L << 24;
    static final long LEAF = 4096;
    static final int TREE_DEPTH = 20;

    @Param({"GLOBAL_QUEUE", "WS_RING", "WS_CHASE_LEV", "LANE_EXTENSION", "FORK_JOIN"})
    public String pool;

    /** Workers; 0 = {@code Runtime.availableProcessors()}. */
    @Param({"0"})
    public int threads;

    private ThreadPool ours;
    private ForkJoinPool fj;
    private final WaitGroup group = new WaitGroup();
    private JoinNode joinRoot;
    private long joinInvocations;
    private final AtomicLong total = new AtomicLong();

    @Setup(Level.Trial)
    public void setUp() {
        int n = threads > 0 ? threads : Runtime.getRuntime().availableProcessors();
        if (pool.equals("FORK_JOIN")) {
            fj = new ForkJoinPool(n);
        } else {
            ours = ours(pool, n);
        }
        if (ours != null) {
            joinRoot = JoinNode.build(ours, TREE_DEPTH);
        }
    }

    /**
     * Our pool for {@code pool} ({@link #pool}'s values but FORK_JOIN) with {@code n} workers; LANE_EXTENSION gets
     * {@code n} default-lane workers and one reserved for the blocking lane. Also {@code JoinModes}'.
     */
    static ThreadPool ours(String pool, int n) {
        // A table that holds the whole tree (2^20 descriptors): with less, a submit into the full pool runs the
        // child inline, and past MAX_INLINE_DEPTH nested inline runs it throws PoolBusyException (the node's
        // subtree is then lost and tree() fails its count). That policy is measured elsewhere; here the
        // schedulers are compared with room for every task.
        PoolConfig.Builder b = PoolConfig.builder().maxThreads(Math.min(n, 64)).queueCapacity(1 << 20).daemon(true);
        return ThreadPool.create(switch (pool) {
            case "GLOBAL_QUEUE" -> b.schedulerVariant(SchedulerVariant.GLOBAL_QUEUE).build();
            case "WS_RING" -> b.schedulerVariant(SchedulerVariant.WORK_STEALING).queueKind(QueueKind.RING).build();
            case "WS_CHASE_LEV" -> b.schedulerVariant(SchedulerVariant.WORK_STEALING).queueKind(QueueKind.CHASE_LEV)
                    .build();
            case "LANE_EXTENSION" -> b.schedulerVariant(SchedulerVariant.LANE_EXTENSION)
                    .maxThreads(Math.min(n + 1, 64)).blockingWorkers(1).build(); // n default-lane workers
            default -> throw new IllegalArgumentException("pool=" + pool);
        });
    }

    /** tree_join: every leaf ran once per invocation (counted per leaf, plain, by whoever ran it). */
    @TearDown(Level.Iteration)
    public void checkJoinTree() {
        if (joinRoot != null && joinInvocations > 0) {
            long leaves = joinRoot.leafRuns();
            if (leaves != joinInvocations << TREE_DEPTH) {
                throw new IllegalStateException(pool + ": tree_join ran " + leaves + " leaves in " + joinInvocations
                        + " invocations");
            }
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

    static long mix(long x) {
        x ^= x >>> 33;
        x *= 0xff51afd7ed558ccdL;
        x ^= x >>> 33;
        x *= 0xc4ceb9fe1a85ec53L;
        x ^= x >>> 33;
        return x;
    }

    static long leaf(long lo, long hi) {
        long s = 0;
        for (long i = lo; i < hi; i++) {
            s += mix(i);
        }
        return s;
    }

    private void await() throws InterruptedException {
        if (!group.await(Duration.ofSeconds(120))) {
            throw new IllegalStateException(pool + ": did not finish within 120 s");
        }
    }

    // ---- wsum ------------------------------------------------------------------------------------------

    @Benchmark
    public long wsum() throws InterruptedException {
        total.set(0);
        if (fj != null) {
            fj.invoke(new FjSum(total, 0, ELEMENTS));
        } else {
            ours.submit(new Sum(ours, group, total, 0, ELEMENTS), group);
            await();
        }
        return total.get();
    }

    private record Sum(ThreadPool pool, WaitGroup wg, AtomicLong total, long lo, long hi) implements Runnable {
        @Override
        public void run() {
            long l = lo;
            long h = hi;
            while (h - l > LEAF) {
                long mid = (l + h) >>> 1;
                pool.submit(new Sum(pool, wg, total, mid, h), wg);
                h = mid;
            }
            total.addAndGet(leaf(l, h));
        }
    }

    private static final class FjSum extends RecursiveAction {
        private final AtomicLong total;
        private final long lo;
        private final long hi;

        FjSum(AtomicLong total, long lo, long hi) {
            this.total = total;
            this.lo = lo;
            this.hi = hi;
        }

        @Override
        protected void compute() {
            long l = lo;
            long h = hi;
            FjSum forked = null;
            if (h - l > LEAF) {
                long mid = (l + h) >>> 1;
                forked = new FjSum(total, mid, h);
                forked.fork(); // the right half
                new FjSum(total, l, mid).compute(); // keep the left
                forked.join();
                return;
            }
            total.addAndGet(leaf(l, h));
        }
    }

    // ---- fine-grained tree -----------------------------------------------------------------------------

    @Benchmark
    public long tree() throws InterruptedException {
        total.set(0);
        if (fj != null) {
            fj.invoke(new FjNode(total, TREE_DEPTH - 1));
        } else {
            ours.submit(new Node(ours, group, total, TREE_DEPTH - 1), group);
            await();
        }
        if (total.get() != (1L << TREE_DEPTH) - 1) {
            throw new IllegalStateException(pool + ": tree ran " + total.get() + " nodes");
        }
        return total.get();
    }

    /** A node: one count, then both children (depth - 1) as tasks. */
    private record Node(ThreadPool pool, WaitGroup wg, AtomicLong total, int depth) implements Runnable {
        @Override
        public void run() {
            total.getAndIncrement();
            if (depth > 0) {
                pool.submit(new Node(pool, wg, total, depth - 1), wg);
                pool.submit(new Node(pool, wg, total, depth - 1), wg);
            }
        }
    }

    private static final class FjNode extends RecursiveAction {
        private final AtomicLong total;
        private final int depth;

        FjNode(AtomicLong total, int depth) {
            this.total = total;
            this.depth = depth;
        }

        @Override
        protected void compute() {
            total.getAndIncrement();
            if (depth > 0) {
                invokeAll(new FjNode(total, depth - 1), new FjNode(total, depth - 1));
            }
        }
    }

    // ---- join ------------------------------------------------------------------------------------------

    @Benchmark
    public long tree_join() throws InterruptedException {
        if (fj != null) {
            fj.invoke(new FjJoinNode(TREE_DEPTH));
            return 1L << TREE_DEPTH;
        }
        ours.join(joinRoot.left, joinRoot.right); // from outside: one hand-over, then 2^20 - 2 joins on workers
        joinInvocations++;
        return joinInvocations;
    }

    /** A node of the preallocated join tree: a leaf counts its runs; an inner node joins its children. */
    static final class JoinNode implements Runnable {
        final ThreadPool pool;
        final JoinNode left;
        final JoinNode right;
        /** Runs of this leaf; plain: one runner at a time, published to the checker by the join's return. */
        long runs;

        JoinNode(ThreadPool pool, JoinNode left, JoinNode right) {
            this.pool = pool;
            this.left = left;
            this.right = right;
        }

        static JoinNode build(ThreadPool pool, int depth) {
            return depth == 0 ? new JoinNode(pool, null, null)
                    : new JoinNode(pool, build(pool, depth - 1), build(pool, depth - 1));
        }

        long leafRuns() {
            return left == null ? runs : left.leafRuns() + right.leafRuns();
        }

        @Override
        public void run() {
            if (left == null) {
                runs++;
                return;
            }
            try {
                pool.join(left, right);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    /** tree_join's FORK_JOIN node, fresh per run as ForkJoinTasks must be (also JoinModes'). */
    static final class FjJoinNode extends RecursiveAction {
        private final int depth;
        long runs;

        FjJoinNode(int depth) {
            this.depth = depth;
        }

        @Override
        protected void compute() {
            if (depth == 0) {
                runs++;
                return;
            }
            invokeAll(new FjJoinNode(depth - 1), new FjJoinNode(depth - 1));
        }
    }

    @Benchmark
    public long wsum_join() throws InterruptedException {
        total.set(0);
        if (fj != null) {
            fj.invoke(new FjSum(total, 0, ELEMENTS));
        } else {
            ours.join(new JoinSum(ours, total, 0, ELEMENTS / 2), new JoinSum(ours, total, ELEMENTS / 2, ELEMENTS));
        }
        return total.get();
    }

    private record JoinSum(ThreadPool pool, AtomicLong total, long lo, long hi) implements Runnable {
        @Override
        public void run() {
            if (hi - lo <= LEAF) {
                total.addAndGet(leaf(lo, hi));
                return;
            }
            long mid = (lo + hi) >>> 1;
            try {
                pool.join(new JoinSum(pool, total, lo, mid), new JoinSum(pool, total, mid, hi));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }
    }
}
