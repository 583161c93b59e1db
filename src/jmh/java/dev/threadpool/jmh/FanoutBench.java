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
 * same thread count. Every row holds both sides to the same tree (same split, same leaves, same leaf work) and
 * the same user allocation; where the mechanism differs the row says so here and in {@link #shape}.
 * <ul>
 *   <li>{@link #wsum}: seed 002's wsum, sum of mix(i) over 2^24 elements: split, hand the right half over, keep
 *       the left, leaves of 4096 summed serially into one shared {@code AtomicLong} (4095 handed-over halves,
 *       coarse). Ours submits the halves detached and counts them with a {@code WaitGroup}; FJP forks them and
 *       joins them (a linked list of forked halves per task, the {@code RecursiveAction} javadoc's form), as
 *       its user would: the detached shape against the fork/join one, one object per half on both sides.</li>
 *   <li>{@link #tree}: a fine-grained binary tree of 2^20 - 1 nodes (about a million): every node counts once
 *       and hands both children over; the cost is almost all scheduling. Different mechanisms for the same
 *       tree: ours submits both children detached and the caller awaits a {@code WaitGroup} (the detached
 *       shape); FJP's node {@code invokeAll}s them (the join shape, the only one FJP's user has). Two fresh
 *       nodes per node on both sides.</li>
 *   <li>{@link #tree_join_reused}: a binary tree of joins with 2^20 leaves (2^20 - 1 joins), built once in
 *       setUp and run again every invocation: ours {@code ThreadPool.join(left, right)} per node, FJP a
 *       {@code RecursiveAction} per node with {@code invokeAll(left, right)}. Every leaf counts its own runs,
 *       checked after every iteration on both sides. FJP's tasks run once per initialisation: a node
 *       {@code reinitialize()}s its two children right after its {@code invokeAll} joined them, and the
 *       caller the root after {@code invoke} returned, inside the timing, as a user reusing the tree in their
 *       own loop pays it (see {@link FjJoinNode}). No user allocation in the timed path on either side, so
 *       {@code -prof gc}'s {@code gc.alloc.rate.norm} is each pool's own allocation.</li>
 *   <li>{@link #tree_join_fresh}: the same tree with its nodes created as it recurses, as a user's recursive
 *       algorithm does: ours {@code pool.join(new FreshNode(d - 1), new FreshNode(d - 1))}, FJP
 *       {@code invokeAll(new FjFreshNode(d - 1), new FjFreshNode(d - 1))}; each leaf sets its count to 1 and
 *       each node sums its children's counts after the join, the same way on both sides, and the caller
 *       checks the total (2^20).</li>
 *   <li>{@link #wsum_join}: wsum as a binary tree of joins, two fresh halves per split on both sides (ours
 *       {@code join(left, right)}, FJP {@code invokeAll(left, right)}).</li>
 *   <li>{@link #tree_join_args} and {@link #tree_join_args_reused} (issue 44): the same 2^20-leaf tree over leaf
 *       indices, ours with {@code join(fn, ctx, left, right)}: no node object at all, each half's range packed in
 *       its {@code long} ({@code lo << 32 | hi}), the function static and non-capturing, so ours' user allocates
 *       nothing. FJP's side is the same tree of {@code RecursiveAction}s over the same ranges with
 *       {@code invokeAll}: created as it recurses in {@code tree_join_args}, built once and reinitialized as in
 *       {@code tree_join_reused} in {@code tree_join_args_reused}. Every leaf counts its runs in one shared
 *       {@code long[2^20]} at its index (plain: one runner per leaf and invocation), the same way on both sides,
 *       checked after every iteration. The rows differ in the user's node objects, which is their point: ours
 *       needs none, FJP's tasks are objects.</li>
 * </ul>
 * {@code pool}: GLOBAL_QUEUE, WS_RING (WORK_STEALING, RING local queues), WS_CHASE_LEV, LANE_EXTENSION,
 * FORK_JOIN; AA_FORK_JOIN and AA_WS_RING, the A/A control ({@link Fairness#TWIN_PREFIX}): FORK_JOIN and WS_RING
 * again, each against its twin the run's noise for identical code. Every pool has the same total thread count
 * {@code n} ({@code threads}, 0 meaning {@code availableProcessors()}); LANE_EXTENSION's minimum of one
 * blocking-lane worker is one of its {@code n}, and a blocking-lane worker whose lane is empty takes default-lane
 * tasks and steals join halves like the others (see {@link #ours}). Time per whole run. The heap is fixed at 1 GiB
 * ({@code -Xms1g -Xmx1g}), as docs/BENCHMARKS.md's protocol says, so the young GCs of the rows that allocate nodes
 * have the same room on every side.
 *
 * <pre>mvn -B -q validate test-compile exec:exec@jmh -Djmh.args="FanoutBench -f 1 -wi 1 -i 1 -r 1s -w 1s"</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xms1g", "-Xmx1g"})
public class FanoutBench implements Fairness.Comparison {
    static final long ELEMENTS = 1L << 24;
    static final long LEAF = 4096;
    static final int TREE_DEPTH = 20;

    @Param({"GLOBAL_QUEUE", "WS_RING", "WS_CHASE_LEV", "LANE_EXTENSION", "FORK_JOIN", "AA_FORK_JOIN", "AA_WS_RING"})
    public String pool;

    /** Workers; 0 = {@code Runtime.availableProcessors()}. */
    @Param({"0"})
    public int threads;

    private ThreadPool ours;
    private ForkJoinPool fj;
    private final WaitGroup group = new WaitGroup();
    /** tree_join_reused's prebuilt tree: ours' or FJP's, whichever {@link #pool} is. */
    private JoinNode joinRoot;
    private FjJoinNode fjJoinRoot;
    private long joinInvocations;
    /** tree_join_args(_reused): runs of each leaf, by leaf index, on either side; and the invocations so far. */
    private long[] leafRuns;
    private long argsInvocations;
    private ArgsTree argsTree;
    private FjRangeNode fjRangeRoot;
    private final AtomicLong total = new AtomicLong();

    @Setup(Level.Trial)
    public void setUp() {
        int n = threads > 0 ? threads : Runtime.getRuntime().availableProcessors();
        final String name = Fairness.untwinned(pool); // AA_FORK_JOIN, AA_WS_RING: the A/A control's twins
        if (name.equals("FORK_JOIN")) {
            fj = new ForkJoinPool(n);
            fjJoinRoot = FjJoinNode.build(TREE_DEPTH);
        } else {
            ours = ours(name, n);
            joinRoot = JoinNode.build(ours, TREE_DEPTH);
        }
        leafRuns = new long[1 << TREE_DEPTH];
        argsTree = new ArgsTree(ours, leafRuns);
    }

    /** tree_join_args(_reused): every leaf ran once per invocation, on either side (counted per leaf, plain). */
    @TearDown(Level.Iteration)
    public void checkArgsTree() {
        for (int i = 0; i < leafRuns.length; i++) {
            if (leafRuns[i] != argsInvocations) {
                throw new IllegalStateException(pool + ": tree_join_args leaf " + i + " ran " + leafRuns[i]
                        + " times in " + argsInvocations + " invocations");
            }
        }
    }

    /**
     * Our pool for {@code pool} ({@link #pool}'s values but FORK_JOIN) with {@code n} threads in all, as FJP's
     * parallelism {@code n}; also {@code JoinModes}'. LANE_EXTENSION's minimum blocking-lane worker count is 1,
     * so one of its {@code n} threads is a blocking-lane worker, which (its lane empty in these rows) takes
     * default-lane tasks and steals join halves (docs/DESIGN.md, "join"). So LANE_EXTENSION needs
     * {@code n >= 2}.
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
            case "LANE_EXTENSION" -> b.schedulerVariant(SchedulerVariant.LANE_EXTENSION).blockingWorkers(1).build();
            default -> throw new IllegalArgumentException("pool=" + pool);
        });
    }

    /** tree_join_reused: every leaf ran once per invocation, on either side (counted per leaf, plain). */
    @TearDown(Level.Iteration)
    public void checkJoinTree() {
        if (joinInvocations > 0) {
            long leaves = joinRoot != null ? joinRoot.leafRuns() : fjJoinRoot.leafRuns();
            if (leaves != joinInvocations << TREE_DEPTH) {
                throw new IllegalStateException(pool + ": tree_join_reused ran " + leaves + " leaves in "
                        + joinInvocations + " invocations");
            }
        }
    }

    /**
     * The shape of {@code method} on this pool. Bound: -1 on both sides of every row, here: FJP is unbounded,
     * and ours' bound (its descriptor table, {@link Fairness#boundOf}) does not bound any of these trees: the
     * table holds all 2^20 tasks of {@link #tree}, and a join takes no descriptor (only an outside caller's
     * hand-over does), so no submitter ever waits for room on either side.
     */
    @Override
    public Fairness.Shape shape(String method) {
        int threads = Fairness.threadsOf(ours, fj);
        Fairness.Shape s = switch (method) {
            case "wsum" -> new Fairness.Shape(ELEMENTS / LEAF, threads, -1, ours != null ? Fairness.Counting.WAIT_GROUP
                    : Fairness.Counting.CALL_RETURNS, Fairness.Nodes.FRESH, false);
            case "tree" -> new Fairness.Shape((1L << TREE_DEPTH) - 1, threads, -1, ours != null
                    ? Fairness.Counting.WAIT_GROUP : Fairness.Counting.CALL_RETURNS, Fairness.Nodes.FRESH, false);
            case "tree_join_reused" -> new Fairness.Shape(1L << TREE_DEPTH, threads, -1,
                    Fairness.Counting.CALL_RETURNS, Fairness.Nodes.REUSED, false);
            case "tree_join_fresh" -> new Fairness.Shape(1L << TREE_DEPTH, threads, -1,
                    Fairness.Counting.CALL_RETURNS, Fairness.Nodes.FRESH, false);
            case "wsum_join" -> new Fairness.Shape(ELEMENTS / LEAF, threads, -1, Fairness.Counting.CALL_RETURNS,
                    Fairness.Nodes.FRESH, false);
            case "tree_join_args" -> new Fairness.Shape(1L << TREE_DEPTH, threads, -1,
                    Fairness.Counting.CALL_RETURNS, ours != null ? Fairness.Nodes.NONE : Fairness.Nodes.FRESH, false);
            case "tree_join_args_reused" -> new Fairness.Shape(1L << TREE_DEPTH, threads, -1,
                    Fairness.Counting.CALL_RETURNS, ours != null ? Fairness.Nodes.NONE : Fairness.Nodes.REUSED, false);
            default -> throw new IllegalArgumentException("FanoutBench has no benchmark " + method);
        };
        if (ours != null && method.startsWith("tree_join_args")) {
            s = s.differing("nodes", "ours joins in argument form, join(fn, ctx, l, r): no node object, the range in"
                    + " the half's long; FJP's tasks are objects (" + (method.endsWith("reused")
                    ? "built once, reinitialized" : "created as it recurses") + "), as its user writes them");
        }
        if (ours != null && (method.equals("wsum") || method.equals("tree"))) {
            s = s.differing("counting", "ours submits the halves detached and awaits a WaitGroup (the detached"
                    + " shape); FJP's tasks join their children and invoke returns (fork/join, FJP's only shape)");
        }
        return s;
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
            fj.invoke(new FjSum(total, 0, ELEMENTS, null));
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

    /**
     * wsum's FJP task, written as {@link Sum} is: fork the right half, keep the left, down to a leaf, so both
     * sides allocate one object per handed-over half (4095) and none for the kept left. FJP's task must also
     * join what it forked before it completes (invoke returns after the whole tree): the forked halves are kept
     * in a linked list and joined last-forked first, the {@code RecursiveAction} javadoc's form; ours' tasks end
     * detached and the WaitGroup counts them.
     */
    private static final class FjSum extends RecursiveAction {
        private final AtomicLong total;
        private final long lo;
        private final long hi;
        private final FjSum next;

        FjSum(AtomicLong total, long lo, long hi, FjSum next) {
            this.total = total;
            this.lo = lo;
            this.hi = hi;
            this.next = next;
        }

        @Override
        protected void compute() {
            long l = lo;
            long h = hi;
            FjSum forked = null;
            while (h - l > LEAF) {
                long mid = (l + h) >>> 1;
                forked = new FjSum(total, mid, h, forked);
                forked.fork(); // the right half
                h = mid; // keep the left
            }
            total.addAndGet(leaf(l, h));
            for (FjSum f = forked; f != null; f = f.next) {
                f.join();
            }
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

    /** tree's FJP node: one count, then both children (depth - 1) by {@code invokeAll}, FJP's user's form. */
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

    /**
     * The prebuilt tree, run again: ours hands its root's two children over ({@code join} from outside: the pair
     * is one task, the caller waits), FJP invokes its root, whose {@code compute} {@code invokeAll}s the same
     * two children; then the caller reinitializes FJP's root (its children were reinitialized by it, see
     * {@link FjJoinNode}), inside the timing, as a user reusing the tree pays it.
     */
    @Benchmark
    public long tree_join_reused() throws InterruptedException {
        if (fj != null) {
            fj.invoke(fjJoinRoot);
            fjJoinRoot.reinitialize(); // complete, and invoke's join was its only one: defined here
        } else {
            ours.join(joinRoot.left, joinRoot.right); // from outside: one hand-over, then 2^20 - 2 joins on workers
        }
        return ++joinInvocations;
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

    /**
     * tree_join_reused's FORK_JOIN node (also JoinModes'), the same tree as {@link JoinNode}: a leaf counts its
     * runs; an inner node {@code invokeAll}s its children. A ForkJoinTask runs once per initialisation, and
     * {@link #reinitialize()} is defined only on a task that completed and whose joins all returned. A careful
     * user reusing the tree reinitializes each node's children in the node, right after {@code invokeAll}
     * returned (it joined both, and it is their only joiner): that costs one store pair per node, spread over
     * the workers while the nodes are still in their caches, instead of a serial walk of 2^21 nodes after each
     * run; the caller reinitializes the root after {@code invoke}. Both are inside the timing. Reinitializing
     * keeps {@link #runs} (it resets only the task's status).
     */
    static final class FjJoinNode extends RecursiveAction {
        final FjJoinNode left;
        final FjJoinNode right;
        /** Runs of this leaf; plain: one runner at a time, published to the checker by invoke's return. */
        long runs;

        FjJoinNode(FjJoinNode left, FjJoinNode right) {
            this.left = left;
            this.right = right;
        }

        static FjJoinNode build(int depth) {
            return depth == 0 ? new FjJoinNode(null, null) : new FjJoinNode(build(depth - 1), build(depth - 1));
        }

        long leafRuns() {
            return left == null ? runs : left.leafRuns() + right.leafRuns();
        }

        @Override
        protected void compute() {
            if (left == null) {
                runs++;
                return;
            }
            invokeAll(left, right);
            left.reinitialize(); // both completed and joined (by invokeAll, their only joiner): ready to rerun
            right.reinitialize();
        }
    }

    /**
     * The tree created as it recurses, 2^21 - 2 nodes per run on our side and 2^21 - 1 on FJP's (its root is a
     * task too; ours' outside call hands the root's two children over as the pair): the caller checks the leaf
     * count that the nodes summed up the tree, the same way on both sides.
     */
    @Benchmark
    public long tree_join_fresh() throws InterruptedException {
        long leaves;
        if (fj != null) {
            FjFreshNode root = new FjFreshNode(TREE_DEPTH);
            fj.invoke(root);
            leaves = root.leaves;
        } else {
            FreshNode left = new FreshNode(ours, TREE_DEPTH - 1);
            FreshNode right = new FreshNode(ours, TREE_DEPTH - 1);
            ours.join(left, right);
            leaves = left.leaves + right.leaves;
        }
        if (leaves != 1L << TREE_DEPTH) {
            throw new IllegalStateException(pool + ": tree_join_fresh counted " + leaves + " leaves");
        }
        return leaves;
    }

    /**
     * tree_join_fresh's node on our side: a leaf sets {@link #leaves} to 1; an inner node creates its two children,
     * joins them and sums theirs. Plain field: written by the child's runner, read after the join's return.
     */
    static final class FreshNode implements Runnable {
        private final ThreadPool pool;
        private final int depth;
        long leaves;

        FreshNode(ThreadPool pool, int depth) {
            this.pool = pool;
            this.depth = depth;
        }

        @Override
        public void run() {
            if (depth == 0) {
                leaves = 1;
                return;
            }
            FreshNode left = new FreshNode(pool, depth - 1);
            FreshNode right = new FreshNode(pool, depth - 1);
            try {
                pool.join(left, right);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
            leaves = left.leaves + right.leaves;
        }
    }

    /** tree_join_fresh's FJP node: as {@link FreshNode}, with {@code invokeAll(left, right)} for the join. */
    static final class FjFreshNode extends RecursiveAction {
        private final int depth;
        long leaves;

        FjFreshNode(int depth) {
            this.depth = depth;
        }

        @Override
        protected void compute() {
            if (depth == 0) {
                leaves = 1;
                return;
            }
            FjFreshNode left = new FjFreshNode(depth - 1);
            FjFreshNode right = new FjFreshNode(depth - 1);
            invokeAll(left, right);
            leaves = left.leaves + right.leaves;
        }
    }

    @Benchmark
    public long wsum_join() throws InterruptedException {
        total.set(0);
        if (fj != null) {
            fj.invoke(new FjJoinSum(total, 0, ELEMENTS));
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

    /** wsum_join's FJP task: {@link JoinSum}'s split with {@code invokeAll(left, right)} for the join. */
    private static final class FjJoinSum extends RecursiveAction {
        private final AtomicLong total;
        private final long lo;
        private final long hi;

        FjJoinSum(AtomicLong total, long lo, long hi) {
            this.total = total;
            this.lo = lo;
            this.hi = hi;
        }

        @Override
        protected void compute() {
            if (hi - lo <= LEAF) {
                total.addAndGet(leaf(lo, hi));
                return;
            }
            long mid = (lo + hi) >>> 1;
            invokeAll(new FjJoinSum(total, lo, mid), new FjJoinSum(total, mid, hi));
        }
    }

    // ---- the join tree in argument form (issue 44) -----------------------------------------------------------

    /**
     * Ours: {@code join(ArgsTree::visit, tree, left, right)} from outside over the root's two halves, then 2^20 - 2
     * joins on workers, none allocating; FJP: a fresh {@link FjRangeNode} tree, {@code invokeAll} per node.
     */
    @Benchmark
    public long tree_join_args() throws InterruptedException {
        if (fj != null) {
            fj.invoke(new FjRangeNode(leafRuns, 0, 1 << TREE_DEPTH, null, null));
        } else {
            int half = 1 << (TREE_DEPTH - 1);
            ours.join(ArgsTree::visit, argsTree, ArgsTree.range(0, half), ArgsTree.range(half, 1 << TREE_DEPTH));
        }
        return ++argsInvocations;
    }

    /**
     * {@link #tree_join_args} against FJP's prebuilt tree over the same ranges, reinitialized as
     * {@link FjJoinNode}'s is (each node its children after {@code invokeAll}, the caller the root): ours' side is
     * the same as in {@code tree_join_args}, since it has no nodes to build or reuse.
     */
    @Benchmark
    public long tree_join_args_reused() throws InterruptedException {
        if (fj != null) {
            if (fjRangeRoot == null) {
                // built at the first (warm-up) invocation, not in setUp: only this row's trials hold it
                fjRangeRoot = FjRangeNode.build(leafRuns, 0, 1 << TREE_DEPTH);
            }
            fj.invoke(fjRangeRoot);
            fjRangeRoot.reinitialize(); // complete, and invoke's join was its only one: defined here
        } else {
            int half = 1 << (TREE_DEPTH - 1);
            ours.join(ArgsTree::visit, argsTree, ArgsTree.range(0, half), ArgsTree.range(half, 1 << TREE_DEPTH));
        }
        return ++argsInvocations;
    }

    /** The context of ours' tree in argument form: the pool and the leaf counts; its function is {@link #visit}. */
    record ArgsTree(ThreadPool pool, long[] runs) {
        static long range(int lo, int hi) {
            return (long) lo << 32 | hi;
        }

        /** The node over leaves {@code [range >>> 32, (int) range)}: a leaf counts its run, else a join. */
        static void visit(ArgsTree t, long range) {
            int lo = (int) (range >>> 32);
            int hi = (int) range;
            if (hi - lo == 1) {
                t.runs[lo]++; // plain: one runner per leaf and invocation, published by the join's return
                return;
            }
            int mid = (lo + hi) >>> 1;
            try {
                t.pool.join(ArgsTree::visit, t, range(lo, mid), range(mid, hi));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    /**
     * FJP's node of the same tree over leaf indices: a leaf counts its run in the shared array, as ours' does; an
     * inner node {@code invokeAll}s its children, created here ({@code tree_join_args}) or prebuilt and then
     * reinitialized right after the {@code invokeAll} that joined them ({@code tree_join_args_reused}, as
     * {@link FjJoinNode}).
     */
    static final class FjRangeNode extends RecursiveAction {
        final long[] runs;
        final int lo;
        final int hi;
        final FjRangeNode left;
        final FjRangeNode right;

        FjRangeNode(long[] runs, int lo, int hi, FjRangeNode left, FjRangeNode right) {
            this.runs = runs;
            this.lo = lo;
            this.hi = hi;
            this.left = left;
            this.right = right;
        }

        static FjRangeNode build(long[] runs, int lo, int hi) {
            if (hi - lo == 1) {
                return new FjRangeNode(runs, lo, hi, null, null);
            }
            int mid = (lo + hi) >>> 1;
            return new FjRangeNode(runs, lo, hi, build(runs, lo, mid), build(runs, mid, hi));
        }

        @Override
        protected void compute() {
            if (hi - lo == 1) {
                runs[lo]++; // plain: one runner per leaf and invocation, published by invoke's return
                return;
            }
            if (left != null) {
                invokeAll(left, right);
                left.reinitialize(); // both completed and joined (by invokeAll, their only joiner): ready to rerun
                right.reinitialize();
            } else {
                int mid = (lo + hi) >>> 1;
                invokeAll(new FjRangeNode(runs, lo, mid, null, null), new FjRangeNode(runs, mid, hi, null, null));
            }
        }
    }
}
