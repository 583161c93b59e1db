package dev.threadpool.jmh;

import dev.threadpool.ObjLongToDoubleFunction;
import dev.threadpool.ObjLongToLongFunction;
import dev.threadpool.ThreadPool;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RecursiveAction;
import java.util.concurrent.TimeUnit;
import java.util.function.ObjLongConsumer;
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
 * The fork/join programs ForkJoinPool's users write (issue 49), each with the same splits and thresholds on every
 * side: a floor that runs them as plain recursion, ForkJoinPool written as its javadoc teaches, and ours in the best
 * form today's API allows. Time per whole computation.
 *
 * <h2>The shapes ({@link Size#LARGE}; {@link Size#SMALL} for the unit test)</h2>
 * <ul>
 *   <li>{@link #fib}: Fibonacci, threshold 2 ({@code n < 2} is a leaf), the tiniest tasks: every node with
 *       {@code n >= 2} is a split into {@code n - 2} (run in place) and {@code n - 1} (offered, as in the
 *       {@code RecursiveTask} javadoc's example).</li>
 *   <li>{@link #quadrature}: adaptive Simpson quadrature of {@link Quad#f} (a comb of 200 narrow peaks) over
 *       [0, 1]: a node evaluates {@code f} at its two quarter points and splits when the two halves' Simpson
 *       estimates disagree with the whole's by more than {@code 15 eps / 2^depth} (and always above depth
 *       {@link Quad#MIN_DEPTH}). The result is a {@code double}, summed up the tree in the same order on every side,
 *       so it is bit for bit the serial one.</li>
 *   <li>{@link #queens}: counts the solutions of n-queens (bit masks); the top {@link Size#queensSplitRows} rows
 *       are split (a node's candidate columns halved, a node with one candidate places its queen), the rest of
 *       the board is a serial count (a leaf).</li>
 *   <li>{@link #reduce}: the sum of a preallocated {@code long[]}, halved down to leaves of
 *       {@link Size#reduceLeaf} elements.</li>
 *   <li>{@link #stencil}: 1-D Jacobi ({@code next[i] = (cur[i-1] + cur[i] + cur[i+1]) / 3}, fixed ends) for
 *       {@link Size#stencilSteps} steps, each step a split of the array down to {@link Size#stencilLeaf}
 *       elements started from the calling thread; the step ends when the split returns (the barrier), then the
 *       arrays swap.</li>
 *   <li>{@link #matmul}: {@code C += A x B}, square row-major {@code double} matrices, recursive quadrant split
 *       down to {@link Size#matBlock}: a node runs its four quadrants of C in parallel (two splits: top pair
 *       against bottom pair, then left quadrant against right), each quadrant its two k halves one after the
 *       other, so every element of C sums its products in the same order on every side.</li>
 * </ul>
 *
 * <h2>The sides ({@code pool})</h2>
 * <ul>
 *   <li>SERIAL: the same recursion as plain calls on the calling thread: the floor. Allocates nothing.</li>
 *   <li>FORK_JOIN: {@code ForkJoinPool(n)} and {@code invoke} of a root task. At a split the task {@code fork()}s
 *       one half as a new {@code RecursiveAction}, computes the other half in place as a plain call, then
 *       {@code join()}s the forked one and reads its result from the task's own primitive field: the
 *       {@code RecursiveAction} javadoc's form for a result ({@code Applyer}'s {@code double result}), which holds
 *       ForkJoinPool to its least allocation, one task object per split and no box (a
 *       {@code RecursiveTask<Long>} would add a {@code Long} per split beyond the small-value cache).</li>
 *   <li>GLOBAL_QUEUE, WS_RING, WS_CHASE_LEV, LANE_EXTENSION: ours ({@link FanoutBench#ours}: {@code n} threads in
 *       all, LANE_EXTENSION with one blocking worker), with {@code join(fn, ctx, left, right)}: a static
 *       non-capturing function, one context object ({@link Ours}) and each half's node packed in its {@code long},
 *       so a split is no object. Today's API runs both halves through {@code join} (no half in place) and gives no
 *       result back, so results go where they need no holder: a count or a sum into the running worker's own
 *       accumulator ({@code ThreadPool.currentWorkerIndex()}, one padded slot per worker, summed by the caller
 *       after the join returned: fib, queens, reduce); the quadrature's {@code double}s, which must add up in
 *       the tree's order to be exact, into a per-node slot of a per-worker stack of slots ({@link Ours#quad}: the
 *       parent writes both children's parameters into two slots of its worker's stack, the children write their
 *       results there, the parent adds them after the join). The stencil and the multiply write their output
 *       arrays and return nothing. A split allocates nothing on a worker; the outside caller's hand-over of the
 *       root pair (one per op, one per step for the stencil) allocates its task and {@code WaitGroup}.</li>
 *   <li>GLOBAL_QUEUE_FORK, WS_RING_FORK, WS_CHASE_LEV_FORK, LANE_EXTENSION_FORK: the same pools with issue 49's
 *       fork handles ({@link OursFork}), in FJP's own shape: {@code forkLong} / {@code forkDouble} / {@code fork}
 *       the half FJP forks (a static function, this side as its context, the node in its {@code long}), the other
 *       half in place as a plain call, then {@code joinLong} / {@code joinDouble} / {@code join} of the handle,
 *       which returns the forked half's result: no accumulators, no holder. The quadrature's forked node (six
 *       {@code double}s) goes into one slot of the forking worker's stack of slots. The computation starts with
 *       {@code invokeLong} / {@code invokeDouble} from the calling thread, as FJP's {@code invoke}; a split
 *       allocates nothing.</li>
 *   <li>AA_FORK_JOIN, AA_WS_RING_FORK: the A/A control ({@link Fairness#TWIN_PREFIX}), FORK_JOIN and WS_RING_FORK again
 *       under another name: each side against its twin shows the run's noise for identical code.</li>
 * </ul>
 * Every side runs the same nodes with the same thresholds (the split tests and leaf kernels are shared static
 * methods) and its result is checked against the serial one. What a split allocates differs, and that is the
 * comparison: each side is written as its careful user writes it and pays for handing results back in its own
 * way. FJP's only way to get a value out of a half another worker may run is an object it can {@code join()}: one
 * task per split, the result in a field (24 to 64 bytes by shape), and nothing more; ours' argument form needs no
 * object, and pays instead with a worker-index lookup and a plain add per leaf, or two slot writes and a read per
 * split; the floor pays nothing. Neither pool's side allocates anything else per split, and the leaves' work is the
 * same code on every side, so the difference in time and bytes is the pools' and their APIs'; {@link #shape}
 * declares it.
 *
 * <h2>Figures</h2>
 * ms per op (AverageTime). Bytes per split: {@code -prof gc}'s {@code gc.alloc.rate.norm} (bytes per op) divided by
 * {@link #splits} of the shape (docs/BENCHMARKS.md has the table; bench_charts.py's {@code SPLITS} the same
 * numbers). Efficiency: {@code (SERIAL's time / n) / the side's time}, 1.0 being a perfect n-fold speed-up.
 * Results are checked per invocation: every invocation of an iteration must give the same digest (the value, the
 * {@code double}'s bits, or a hash of the output array's bits) and, at the iteration's end, the serial
 * recursion's ({@link #checkResults}). The heap is fixed at 1 GiB ({@code -Xms1g -Xmx1g}) as in FanoutBench; run
 * with the JVM's default heap by replacing the class's {@code jvmArgsAppend} on the command line:
 * {@code -jvmArgsAppend --enable-native-access=ALL-UNNAMED}.
 *
 * <pre>
 * mvn -B -q validate test-compile exec:exec@jmh -Djmh.args="RecursiveShapesBench -f 1 -wi 1 -i 1 -r 1s -w 1s"
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xms1g", "-Xmx1g"})
public class RecursiveShapesBench implements Fairness.Comparison {
    @Param({"SERIAL", "FORK_JOIN", "GLOBAL_QUEUE", "WS_RING", "WS_CHASE_LEV", "LANE_EXTENSION", "GLOBAL_QUEUE_FORK",
            "WS_RING_FORK", "WS_CHASE_LEV_FORK", "LANE_EXTENSION_FORK", "AA_FORK_JOIN", "AA_WS_RING_FORK"})
    public String pool;

    /** Workers; 0 = {@code Runtime.availableProcessors()}. */
    @Param({"0"})
    public int threads;

    /** {@code LARGE} (the benchmark) or {@code SMALL} (the unit test): {@link Size#of}. */
    @Param({"LARGE"})
    public String size;

    private Size sz;
    private Problem problem;
    /** Package-private: the unit test puts a wrong side here to see the check fail. */
    Side side;
    private ThreadPool ours;
    private ForkJoinPool fj;
    /** Per shape: the first digest of this iteration, the invocations since, and a digest that differed. */
    private final long[] digest = new long[Shape.values().length];
    private final long[] runs = new long[Shape.values().length];
    private final long[] differing = new long[Shape.values().length];
    private final boolean[] differed = new boolean[Shape.values().length];

    /** The six programs, by their benchmark method's name. */
    enum Shape {
        FIB("fib"), QUADRATURE("quadrature"), QUEENS("queens"), REDUCE("reduce"), STENCIL("stencil"),
        MATMUL("matmul");

        final String method;

        Shape(String method) {
            this.method = method;
        }

        static Shape of(String method) {
            for (Shape s : values()) {
                if (s.method.equals(method)) {
                    return s;
                }
            }
            throw new IllegalArgumentException("RecursiveShapesBench has no benchmark " + method);
        }
    }

    @Setup(Level.Trial)
    public void setUp() {
        int n = threads > 0 ? threads : Runtime.getRuntime().availableProcessors();
        sz = Size.of(size);
        problem = new Problem(sz);
        side = side(pool, n);
    }

    /**
     * The side for {@code pool} with {@code n} threads: a pool's name alone is ours with {@code join(fn, ctx, l, r)}
     * ({@link Ours}), its {@code _FORK} form ours with fork handles ({@link OursFork}). {@code AA_} before a name
     * ({@link Fairness#TWIN_PREFIX}, the A/A control) builds the same side as the name alone.
     */
    private static final String FORK_SUFFIX = "_FORK";

    private Side side(String pool, int n) {
        final String name = Fairness.untwinned(pool);
        return switch (name) {
            case "SERIAL" -> new Serial();
            case "FORK_JOIN" -> {
                fj = new ForkJoinPool(n);
                yield new ForkJoin(fj);
            }
            default -> {
                boolean fork = name.endsWith(FORK_SUFFIX);
                // GLOBAL_QUEUE, WS_RING, WS_CHASE_LEV, LANE_EXTENSION; else it throws
                ours = FanoutBench.ours(fork ? name.substring(0, name.length() - FORK_SUFFIX.length()) : name, n);
                yield fork ? new OursFork(ours) : new Ours(ours);
            }
        };
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

    // ---- the benchmarks -----------------------------------------------------------------------------------

    @Benchmark
    public long fib() throws InterruptedException {
        return checked(Shape.FIB);
    }

    @Benchmark
    public long quadrature() throws InterruptedException {
        return checked(Shape.QUADRATURE);
    }

    @Benchmark
    public long queens() throws InterruptedException {
        return checked(Shape.QUEENS);
    }

    @Benchmark
    public long reduce() throws InterruptedException {
        return checked(Shape.REDUCE);
    }

    @Benchmark
    public long stencil() throws InterruptedException {
        return checked(Shape.STENCIL);
    }

    @Benchmark
    public long matmul() throws InterruptedException {
        return checked(Shape.MATMUL);
    }

    /** Runs {@code shape} once on {@code side} over {@code problem}: its digest. */
    static long run(Shape shape, Side side, Problem problem) throws InterruptedException {
        Size sz = problem.size;
        return switch (shape) {
            case FIB -> side.fib(sz.fibN);
            case QUADRATURE -> Double.doubleToRawLongBits(side.quadrature(sz.quadEps));
            case QUEENS -> side.queens(sz.queensN, sz.queensSplitRows);
            case REDUCE -> side.reduce(problem.values, sz.reduceLeaf);
            case STENCIL -> problem.stencil(side);
            case MATMUL -> problem.matmul(side);
        };
    }

    /** Runs {@code shape} once on this state's side and records its digest for {@link #checkResults}. */
    private long checked(Shape shape) throws InterruptedException {
        long d = run(shape, side, problem);
        int i = shape.ordinal();
        if (runs[i]++ == 0) {
            digest[i] = d;
        } else if (d != digest[i] && !differed[i]) {
            differed[i] = true;
            differing[i] = d;
        }
        return d;
    }

    /** Every invocation of the iteration gave the serial recursion's result (computed here, once per JVM). */
    @TearDown(Level.Iteration)
    public void checkResults() throws InterruptedException {
        for (Shape s : Shape.values()) {
            int i = s.ordinal();
            if (runs[i] == 0) {
                continue;
            }
            long want = expected(s, problem);
            if (differed[i] || digest[i] != want) {
                throw new IllegalStateException(pool + ": " + s.method + " gave " + Long.toHexString(digest[i])
                        + (differed[i] ? " and " + Long.toHexString(differing[i]) : "") + " in " + runs[i]
                        + " invocations; the serial recursion gives " + Long.toHexString(want));
            }
            runs[i] = 0;
            differed[i] = false;
        }
    }

    private static final Map<String, Long> EXPECTED = new ConcurrentHashMap<>();

    /** The serial recursion's digest of {@code shape} at {@code problem}'s size (computed once per JVM). */
    static long expected(Shape shape, Problem problem) throws InterruptedException {
        String key = shape + "/" + problem.size;
        Long v = EXPECTED.get(key);
        if (v == null) {
            v = run(shape, new Serial(), problem);
            EXPECTED.put(key, v);
        }
        return v;
    }

    private static final Map<String, Long> SPLITS = new ConcurrentHashMap<>();

    /** Splits one op of {@code shape} makes at {@code size}, on every side: the divisor of B per split. */
    static long splits(Shape shape, Size size) {
        return SPLITS.computeIfAbsent(shape + "/" + size, k -> switch (shape) {
            case FIB -> Splits.fib(size.fibN);
            case QUADRATURE -> Splits.quadrature(size.quadEps);
            case QUEENS -> Splits.queens(size.queensN, size.queensSplitRows);
            case REDUCE -> (long) size.reduceLength / size.reduceLeaf - 1;
            case STENCIL -> (long) size.stencilSteps * (size.stencilLength / size.stencilLeaf - 1);
            case MATMUL -> Splits.matmul(size.matN, size.matBlock);
        });
    }

    /**
     * Tasks: the shape's splits (the same on every side; the result check holds each side to them). Threads: from
     * the pools; SERIAL's is its calling thread alone, declared. Bound: -1 everywhere (no side's submitter waits
     * for room: a join takes no descriptor, and FJP and the floor have no bound). Counting: the call returns. Nodes:
     * none for ours (argument form) and the floor (plain calls); FJP forks one task object per split, declared.
     */
    @Override
    public Fairness.Shape shape(String method) {
        Shape s = Shape.of(method);
        int threads = side instanceof Serial ? 1 : Fairness.threadsOf(ours, fj);
        Fairness.Shape shape = new Fairness.Shape(splits(s, sz), threads, -1, Fairness.Counting.CALL_RETURNS,
                fj != null ? Fairness.Nodes.FRESH : Fairness.Nodes.NONE, false);
        if (side instanceof Serial) {
            shape = shape.differing("threads", "the floor: the same splits as plain calls on the calling thread");
        }
        if (fj != null) {
            shape = shape.differing("nodes", "FJP forks one RecursiveAction per split (its result in the task's"
                    + " field) and computes the other half in place; ours' halves are no objects (join(fn, ctx, l,"
                    + " r), or _FORK: forkLong(fn, ctx, arg), the other half in place), the floor's plain calls");
        }
        return shape;
    }

    // ---- sizes and data ---------------------------------------------------------------------------------------

    /**
     * The size of every shape.
     *
     * @param name            LARGE or SMALL
     * @param fibN            Fibonacci's {@code n}
     * @param quadEps         the quadrature's tolerance at the root (halved per level)
     * @param queensN         the board (4 to 15)
     * @param queensSplitRows rows split into tasks (1 to {@code queensN - 1}); the rest is a serial leaf
     * @param reduceLength    elements summed (a power of two)
     * @param reduceLeaf      elements per leaf (a power of two, below {@code reduceLength})
     * @param stencilLength   interior points (a power of two)
     * @param stencilLeaf     points per leaf (a power of two, below {@code stencilLength})
     * @param stencilSteps    steps, each a split and a barrier
     * @param matN            matrix order (a power of two, at most 4096)
     * @param matBlock        the leaf block's order (a power of two, below {@code matN})
     */
    record Size(String name, int fibN, double quadEps, int queensN, int queensSplitRows, int reduceLength,
                int reduceLeaf, int stencilLength, int stencilLeaf, int stencilSteps, int matN, int matBlock) {
        static final Size LARGE = new Size("LARGE", 37, 1e-10, 14, 4, 1 << 23, 1 << 12, 1 << 18, 1 << 12, 200,
                512, 32);
        static final Size SMALL = new Size("SMALL", 16, 1.0, 8, 2, 1 << 12, 1 << 8, 1 << 10, 1 << 7, 4, 64, 16);

        Size {
            requireRange("fibN", fibN, 2, 60);
            requireRange("queensN", queensN, 4, 15);
            requireRange("queensSplitRows", queensSplitRows, 1, queensN - 1);
            requirePowerOfTwoBelow("reduceLeaf", reduceLeaf, "reduceLength", reduceLength);
            requirePowerOfTwoBelow("stencilLeaf", stencilLeaf, "stencilLength", stencilLength);
            requireRange("stencilSteps", stencilSteps, 1, 1 << 20);
            requireRange("matN", matN, 2, 4096);
            requirePowerOfTwoBelow("matBlock", matBlock, "matN", matN);
            if (!(quadEps > 0)) {
                throw new IllegalArgumentException("quadEps must be > 0: quadEps=" + quadEps);
            }
        }

        static Size of(String name) {
            return switch (name) {
                case "LARGE" -> LARGE;
                case "SMALL" -> SMALL;
                default -> throw new IllegalArgumentException("size must be LARGE or SMALL: size=" + name);
            };
        }

        @Override
        public String toString() {
            return name;
        }

        private static void requireRange(String what, int v, int lo, int hi) {
            if (v < lo || v > hi) {
                throw new IllegalArgumentException(what + " must be in [" + lo + ", " + hi + "]: " + what + "=" + v);
            }
        }

        private static void requirePowerOfTwoBelow(String what, int v, String aboveName, int above) {
            if (Integer.bitCount(v) != 1 || Integer.bitCount(above) != 1 || v >= above) {
                throw new IllegalArgumentException(what + " and " + aboveName + " must be powers of two with " + what
                        + " < " + aboveName + ": " + what + "=" + v + ", " + aboveName + "=" + above);
            }
        }
    }

    /** The arrays of one size, made once per trial; the stencil and the multiply reset theirs in every op. */
    static final class Problem {
        final Size size;
        /** reduce's input: {@code mix(i)}. */
        final long[] values;
        /** The stencil's start (interior in [1, length], fixed ends at 0 and length + 1) and its two buffers. */
        final double[] stencilStart;
        final double[] stencilA;
        final double[] stencilB;
        /** {@code C += A x B}, row-major. */
        final double[] matA;
        final double[] matB;
        final double[] matC;

        Problem(Size size) {
            this.size = size;
            values = new long[size.reduceLength];
            for (int i = 0; i < values.length; i++) {
                values[i] = FanoutBench.mix(i);
            }
            int n = size.stencilLength;
            stencilStart = new double[n + 2];
            for (int i = 1; i <= n; i++) {
                stencilStart[i] = unit(i);
            }
            stencilStart[0] = 1.0;
            stencilStart[n + 1] = -1.0;
            stencilA = new double[n + 2];
            stencilB = new double[n + 2];
            int m = size.matN * size.matN;
            matA = new double[m];
            matB = new double[m];
            matC = new double[m];
            for (int i = 0; i < m; i++) {
                matA[i] = unit(i) * 2 - 1;
                matB[i] = unit(i + m) * 2 - 1;
            }
        }

        /** A double in [0, 1) from {@code mix(i)}. */
        static double unit(long i) {
            return (FanoutBench.mix(i) >>> 11) * 0x1.0p-53;
        }

        /** The stencil from its start, {@code stencilSteps} steps on {@code side}; the digest of the last array. */
        long stencil(Side side) throws InterruptedException {
            System.arraycopy(stencilStart, 0, stencilA, 0, stencilStart.length);
            System.arraycopy(stencilStart, 0, stencilB, 0, stencilStart.length); // the fixed ends in both
            for (int step = 0; step < size.stencilSteps; step++) {
                // even steps read A and write B, odd steps the other way: the step returns when every leaf wrote
                side.stencilStep(this, step & 1);
            }
            return digest((size.stencilSteps & 1) == 0 ? stencilA : stencilB);
        }

        /** {@code C = A x B} on {@code side}; the digest of C. */
        long matmul(Side side) throws InterruptedException {
            Arrays.fill(matC, 0.0);
            side.matmul(this);
            return digest(matC);
        }

        double[] stencilSource(int parity) {
            return parity == 0 ? stencilA : stencilB;
        }

        double[] stencilTarget(int parity) {
            return parity == 0 ? stencilB : stencilA;
        }

        /** A digest of an array's bits (position-weighted, so a swap shows). */
        static long digest(double[] a) {
            long h = 0;
            for (int i = 0; i < a.length; i++) {
                h = h * 31 + Double.doubleToRawLongBits(a[i]);
            }
            return h;
        }
    }

    // ---- what every side shares: the split tests and the leaves --------------------------------------------

    /** The quadrature's function and its acceptance test (the same arithmetic on every side). */
    static final class Quad {
        static final double A = 0.0;
        static final double B = 1.0;
        /** Deepest split level; a node at this depth is a leaf whatever its error. */
        static final int MAX_DEPTH = 40;
        /** Every node above this depth splits (its estimates may agree by chance on so coarse a grid). */
        static final int MIN_DEPTH = 6;

        private Quad() {
        }

        /** Periods of the comb over [A, B]: not a power of two, so no level's points all land on one phase. */
        static final int PERIODS = 50;

        /**
         * A comb of {@code 4 x PERIODS} narrow peaks (about {@code 0.01 / PERIODS} wide, 10^6 high): in each period
         * the peaks sit at the roots of a quartic symmetric about the period's middle, so the comb is continuous
         * where periods meet. Only {@code floor}, +, -, *, /: the same bits on every thread.
         */
        static double f(double x) {
            double y = x * PERIODS;
            double t = y - Math.floor(y);
            double q = (t - 0.11) * (t - 0.89) * (t - 0.37) * (t - 0.63);
            return 1.0 / (1e-6 + q * q);
        }

        /** Simpson's rule on [a, b] from f(a), f(mid), f(b). */
        static double simpson(double a, double b, double fa, double fm, double fb) {
            return (b - a) / 6 * (fa + 4 * fm + fb);
        }

        /** Whether a node at {@code depth} is a leaf, its halves estimating {@code left + right} for {@code whole}. */
        static boolean leaf(double left, double right, double whole, double eps, int depth) {
            return depth >= MAX_DEPTH
                    || depth >= MIN_DEPTH && Math.abs(left + right - whole) <= 15 * Math.scalb(eps, -depth);
        }

        /** A leaf's value: the two halves with Richardson's correction. */
        static double leafValue(double left, double right, double whole) {
            double sum = left + right;
            return sum + (sum - whole) / 15;
        }
    }

    /** n-queens by bit masks: a node is (cols, ld, rd, candidates), each {@code n} bits. */
    static final class Queens {
        private Queens() {
        }

        static int full(int n) {
            return (1 << n) - 1;
        }

        static int free(int cols, int ld, int rd, int full) {
            return ~(cols | ld | rd) & full;
        }

        /** The leaf: solutions that complete the board (serial, the classic bit-mask search). */
        static long count(int cols, int ld, int rd, int full) {
            if (cols == full) {
                return 1;
            }
            long n = 0;
            int avail = free(cols, ld, rd, full);
            while (avail != 0) {
                int bit = avail & -avail;
                avail ^= bit;
                n += count(cols | bit, ((ld | bit) << 1) & full, (rd | bit) >>> 1, full);
            }
            return n;
        }

        /** The lowest {@code bitCount(cand) / 2} of {@code cand}'s bits: the half run in place. */
        static int lowHalf(int cand) {
            int k = Integer.bitCount(cand) / 2;
            int lo = 0;
            for (int i = 0; i < k; i++) {
                int bit = cand & -cand;
                lo |= bit;
                cand ^= bit;
            }
            return lo;
        }

        static long pack(int n, int cols, int ld, int rd, int cand) {
            return cols | (long) ld << n | (long) rd << 2 * n | (long) cand << 3 * n;
        }

        static int field(long node, int n, int index) {
            return (int) (node >>> index * n) & full(n);
        }
    }

    /** The split counts, by the same tests as the recursions (for the fairness check and B per split). */
    static final class Splits {
        private Splits() {
        }

        /** Nodes with {@code n >= 2} in fib's tree: fib(n + 1) - 1. */
        static long fib(int n) {
            long a = 0;
            long b = 1;
            for (int i = 0; i < n + 1; i++) {
                long t = a + b;
                a = b;
                b = t;
            }
            return a - 1;
        }

        static long quadrature(double eps) {
            double fa = Quad.f(Quad.A);
            double fb = Quad.f(Quad.B);
            double fm = Quad.f((Quad.A + Quad.B) * 0.5);
            return quad(Quad.A, Quad.B, fa, fm, fb, Quad.simpson(Quad.A, Quad.B, fa, fm, fb), eps, 0);
        }

        private static long quad(double a, double b, double fa, double fm, double fb, double whole, double eps,
                int depth) {
            double m = (a + b) * 0.5;
            double flm = Quad.f((a + m) * 0.5);
            double frm = Quad.f((m + b) * 0.5);
            double left = Quad.simpson(a, m, fa, flm, fm);
            double right = Quad.simpson(m, b, fm, frm, fb);
            if (Quad.leaf(left, right, whole, eps, depth)) {
                return 0;
            }
            return 1 + quad(a, m, fa, flm, fm, left, eps, depth + 1) + quad(m, b, fm, frm, fb, right, eps, depth + 1);
        }

        static long queens(int n, int splitRows) {
            int full = Queens.full(n);
            return queens(0, 0, 0, full, full, splitRows);
        }

        private static long queens(int cols, int ld, int rd, int cand, int full, int splitRows) {
            int k = Integer.bitCount(cand);
            if (k == 0) {
                return 0;
            }
            if (k == 1) {
                int c = cols | cand;
                int l = ((ld | cand) << 1) & full;
                int r = (rd | cand) >>> 1;
                return Integer.bitCount(c) >= splitRows ? 0 : queens(c, l, r, Queens.free(c, l, r, full), full,
                        splitRows);
            }
            int lo = Queens.lowHalf(cand);
            return 1 + queens(cols, ld, rd, lo, full, splitRows) + queens(cols, ld, rd, cand ^ lo, full, splitRows);
        }

        /** Three splits per node larger than the block: 3 x (1 + 8 + 64 + ...). */
        static long matmul(int n, int block) {
            long nodes = 0;
            long level = 1;
            for (int s = n; s > block; s >>= 1) {
                nodes += level;
                level *= 8;
            }
            return 3 * nodes;
        }
    }

    /** The stencil's leaf: points [lo, hi) of {@code dst} from {@code src}. */
    static void stencilLeaf(double[] src, double[] dst, int lo, int hi) {
        for (int i = lo; i < hi; i++) {
            dst[i] = (src[i - 1] + src[i] + src[i + 1]) / 3;
        }
    }

    /** The multiply's leaf: {@code C[i0.., j0..] += A[i0.., k0..] x B[k0.., j0..]}, a block of order {@code s}. */
    static void matKernel(double[] a, double[] b, double[] c, int n, int i0, int j0, int k0, int s) {
        for (int i = i0; i < i0 + s; i++) {
            int ci = i * n;
            for (int k = k0; k < k0 + s; k++) {
                double aik = a[i * n + k];
                int bk = k * n;
                for (int j = j0; j < j0 + s; j++) {
                    c[ci + j] += aik * b[bk + j];
                }
            }
        }
    }

    static long reduceLeaf(long[] a, int lo, int hi) {
        long s = 0;
        for (int i = lo; i < hi; i++) {
            s += a[i];
        }
        return s;
    }

    // ---- the sides --------------------------------------------------------------------------------------------

    /**
     * How one side runs each shape from the calling thread. A side is one form of one pool; a new form is one more
     * subclass (see {@link RecursiveShapesBench#side}).
     */
    abstract static class Side {
        abstract long fib(int n) throws InterruptedException;

        abstract double quadrature(double eps) throws InterruptedException;

        abstract long queens(int n, int splitRows) throws InterruptedException;

        abstract long reduce(long[] values, int leaf) throws InterruptedException;

        /** One stencil step of {@code p} ({@link Problem#stencilSource} of {@code parity} into its target). */
        abstract void stencilStep(Problem p, int parity) throws InterruptedException;

        /** {@code p.matC += p.matA x p.matB}. */
        abstract void matmul(Problem p) throws InterruptedException;
    }

    /** The floor: the same splits as plain recursion on the calling thread. */
    static final class Serial extends Side {
        @Override
        long fib(int n) {
            return fibOf(n);
        }

        static long fibOf(int n) {
            if (n < 2) {
                return n;
            }
            return fibOf(n - 2) + fibOf(n - 1);
        }

        @Override
        double quadrature(double eps) {
            double fa = Quad.f(Quad.A);
            double fb = Quad.f(Quad.B);
            double fm = Quad.f((Quad.A + Quad.B) * 0.5);
            return quad(Quad.A, Quad.B, fa, fm, fb, Quad.simpson(Quad.A, Quad.B, fa, fm, fb), eps, 0);
        }

        static double quad(double a, double b, double fa, double fm, double fb, double whole, double eps, int depth) {
            double m = (a + b) * 0.5;
            double flm = Quad.f((a + m) * 0.5);
            double frm = Quad.f((m + b) * 0.5);
            double left = Quad.simpson(a, m, fa, flm, fm);
            double right = Quad.simpson(m, b, fm, frm, fb);
            if (Quad.leaf(left, right, whole, eps, depth)) {
                return Quad.leafValue(left, right, whole);
            }
            double l = quad(a, m, fa, flm, fm, left, eps, depth + 1);
            return l + quad(m, b, fm, frm, fb, right, eps, depth + 1);
        }

        @Override
        long queens(int n, int splitRows) {
            int full = Queens.full(n);
            return queensNode(0, 0, 0, full, full, splitRows);
        }

        static long queensNode(int cols, int ld, int rd, int cand, int full, int splitRows) {
            int k = Integer.bitCount(cand);
            if (k == 0) {
                return 0;
            }
            if (k == 1) {
                int c = cols | cand;
                int l = ((ld | cand) << 1) & full;
                int r = (rd | cand) >>> 1;
                return Integer.bitCount(c) >= splitRows ? Queens.count(c, l, r, full)
                        : queensNode(c, l, r, Queens.free(c, l, r, full), full, splitRows);
            }
            int lo = Queens.lowHalf(cand);
            long left = queensNode(cols, ld, rd, lo, full, splitRows);
            return left + queensNode(cols, ld, rd, cand ^ lo, full, splitRows);
        }

        @Override
        long reduce(long[] values, int leaf) {
            return sum(values, 0, values.length, leaf);
        }

        static long sum(long[] a, int lo, int hi, int leaf) {
            if (hi - lo <= leaf) {
                return reduceLeaf(a, lo, hi);
            }
            int mid = (lo + hi) >>> 1;
            long left = sum(a, lo, mid, leaf);
            return left + sum(a, mid, hi, leaf);
        }

        @Override
        void stencilStep(Problem p, int parity) {
            step(p.stencilSource(parity), p.stencilTarget(parity), 1, p.size.stencilLength + 1, p.size.stencilLeaf);
        }

        static void step(double[] src, double[] dst, int lo, int hi, int leaf) {
            if (hi - lo <= leaf) {
                stencilLeaf(src, dst, lo, hi);
                return;
            }
            int mid = (lo + hi) >>> 1;
            step(src, dst, lo, mid, leaf);
            step(src, dst, mid, hi, leaf);
        }

        @Override
        void matmul(Problem p) {
            mat(p, 0, 0, 0, p.size.matN);
        }

        /** Node (i, j, k, s): the four quadrants of C (two splits), each its two k halves in order. */
        static void mat(Problem p, int i, int j, int k, int s) {
            if (s <= p.size.matBlock) {
                matKernel(p.matA, p.matB, p.matC, p.size.matN, i, j, k, s);
                return;
            }
            int h = s >>> 1;
            matPair(p, i, j, k, h); // split 1: the top pair against the bottom pair
            matPair(p, i + h, j, k, h);
        }

        static void matPair(Problem p, int i, int j, int k, int h) {
            matQuadrant(p, i, j, k, h); // split 2: the left quadrant against the right
            matQuadrant(p, i, j + h, k, h);
        }

        static void matQuadrant(Problem p, int i, int j, int k, int h) {
            mat(p, i, j, k, h);
            mat(p, i, j, k + h, h);
        }
    }

    /**
     * ForkJoinPool as its javadoc teaches: {@code invoke} a root task; at a split, {@code fork()} one half as a new
     * {@code RecursiveAction}, compute the other in place as a plain call, {@code join()} the forked one and read
     * its primitive result field (the {@code RecursiveAction} javadoc's {@code Applyer} form). One task object per
     * split; the half forked is the one ours offers.
     */
    static final class ForkJoin extends Side {
        private final ForkJoinPool fj;

        ForkJoin(ForkJoinPool fj) {
            this.fj = fj;
        }

        @Override
        long fib(int n) {
            FjFib t = new FjFib(n);
            fj.invoke(t);
            return t.result;
        }

        @Override
        double quadrature(double eps) {
            double fa = Quad.f(Quad.A);
            double fb = Quad.f(Quad.B);
            double fm = Quad.f((Quad.A + Quad.B) * 0.5);
            FjQuad t = new FjQuad(Quad.A, Quad.B, fa, fm, fb, Quad.simpson(Quad.A, Quad.B, fa, fm, fb), eps, 0);
            fj.invoke(t);
            return t.result;
        }

        @Override
        long queens(int n, int splitRows) {
            int full = Queens.full(n);
            FjQueens t = new FjQueens(0, 0, 0, full, full, splitRows);
            fj.invoke(t);
            return t.result;
        }

        @Override
        long reduce(long[] values, int leaf) {
            FjSum t = new FjSum(values, 0, values.length, leaf);
            fj.invoke(t);
            return t.result;
        }

        @Override
        void stencilStep(Problem p, int parity) {
            fj.invoke(new FjStencil(p.stencilSource(parity), p.stencilTarget(parity), 1, p.size.stencilLength + 1,
                    p.size.stencilLeaf));
        }

        @Override
        void matmul(Problem p) {
            fj.invoke(new FjMat(p, FjMat.NODE, 0, 0, 0, p.size.matN));
        }
    }

    /** fib's task: {@code fork} n - 1, n - 2 in place, {@code join}; the result in the task. */
    static final class FjFib extends RecursiveAction {
        private final int n;
        /** Plain: written by the task's runner, read after its {@code join()} (FJP's join orders it). */
        long result;

        FjFib(int n) {
            this.n = n;
        }

        @Override
        protected void compute() {
            result = fib(n);
        }

        static long fib(int n) {
            if (n < 2) {
                return n;
            }
            FjFib right = new FjFib(n - 1);
            right.fork();
            long left = fib(n - 2);
            right.join();
            return left + right.result;
        }
    }

    /** The quadrature's task: a node's parameters; {@code fork} the right half, the left in place. */
    static final class FjQuad extends RecursiveAction {
        private final double a;
        private final double b;
        private final double fa;
        private final double fm;
        private final double fb;
        private final double whole;
        private final double eps;
        private final int depth;
        /** Plain: written by the task's runner, read after its {@code join()}. */
        double result;

        FjQuad(double a, double b, double fa, double fm, double fb, double whole, double eps, int depth) {
            this.a = a;
            this.b = b;
            this.fa = fa;
            this.fm = fm;
            this.fb = fb;
            this.whole = whole;
            this.eps = eps;
            this.depth = depth;
        }

        @Override
        protected void compute() {
            result = quad(a, b, fa, fm, fb, whole, eps, depth);
        }

        static double quad(double a, double b, double fa, double fm, double fb, double whole, double eps, int depth) {
            double m = (a + b) * 0.5;
            double flm = Quad.f((a + m) * 0.5);
            double frm = Quad.f((m + b) * 0.5);
            double left = Quad.simpson(a, m, fa, flm, fm);
            double right = Quad.simpson(m, b, fm, frm, fb);
            if (Quad.leaf(left, right, whole, eps, depth)) {
                return Quad.leafValue(left, right, whole);
            }
            FjQuad r = new FjQuad(m, b, fm, frm, fb, right, eps, depth + 1);
            r.fork();
            double l = quad(a, m, fa, flm, fm, left, eps, depth + 1);
            r.join();
            return l + r.result;
        }
    }

    /** n-queens' task: a node; {@code fork} the high half of the candidates, the low half in place. */
    static final class FjQueens extends RecursiveAction {
        private final int cols;
        private final int ld;
        private final int rd;
        private final int cand;
        private final int full;
        private final int splitRows;
        /** Plain: written by the task's runner, read after its {@code join()}. */
        long result;

        FjQueens(int cols, int ld, int rd, int cand, int full, int splitRows) {
            this.cols = cols;
            this.ld = ld;
            this.rd = rd;
            this.cand = cand;
            this.full = full;
            this.splitRows = splitRows;
        }

        @Override
        protected void compute() {
            result = node(cols, ld, rd, cand, full, splitRows);
        }

        static long node(int cols, int ld, int rd, int cand, int full, int splitRows) {
            int k = Integer.bitCount(cand);
            if (k == 0) {
                return 0;
            }
            if (k == 1) {
                int c = cols | cand;
                int l = ((ld | cand) << 1) & full;
                int r = (rd | cand) >>> 1;
                return Integer.bitCount(c) >= splitRows ? Queens.count(c, l, r, full)
                        : node(c, l, r, Queens.free(c, l, r, full), full, splitRows);
            }
            int lo = Queens.lowHalf(cand);
            FjQueens high = new FjQueens(cols, ld, rd, cand ^ lo, full, splitRows);
            high.fork();
            long left = node(cols, ld, rd, lo, full, splitRows);
            high.join();
            return left + high.result;
        }
    }

    /** reduce's task: {@code fork} the right half, the left in place. */
    static final class FjSum extends RecursiveAction {
        private final long[] a;
        private final int lo;
        private final int hi;
        private final int leaf;
        /** Plain: written by the task's runner, read after its {@code join()}. */
        long result;

        FjSum(long[] a, int lo, int hi, int leaf) {
            this.a = a;
            this.lo = lo;
            this.hi = hi;
            this.leaf = leaf;
        }

        @Override
        protected void compute() {
            result = sum(a, lo, hi, leaf);
        }

        static long sum(long[] a, int lo, int hi, int leaf) {
            if (hi - lo <= leaf) {
                return reduceLeaf(a, lo, hi);
            }
            int mid = (lo + hi) >>> 1;
            FjSum right = new FjSum(a, mid, hi, leaf);
            right.fork();
            long left = sum(a, lo, mid, leaf);
            right.join();
            return left + right.result;
        }
    }

    /** A stencil step's task: {@code fork} the right half, the left in place; no result. */
    static final class FjStencil extends RecursiveAction {
        private final double[] src;
        private final double[] dst;
        private final int lo;
        private final int hi;
        private final int leaf;

        FjStencil(double[] src, double[] dst, int lo, int hi, int leaf) {
            this.src = src;
            this.dst = dst;
            this.lo = lo;
            this.hi = hi;
            this.leaf = leaf;
        }

        @Override
        protected void compute() {
            step(src, dst, lo, hi, leaf);
        }

        static void step(double[] src, double[] dst, int lo, int hi, int leaf) {
            if (hi - lo <= leaf) {
                stencilLeaf(src, dst, lo, hi);
                return;
            }
            int mid = (lo + hi) >>> 1;
            FjStencil right = new FjStencil(src, dst, mid, hi, leaf);
            right.fork();
            step(src, dst, lo, mid, leaf);
            right.join();
        }
    }

    /**
     * The multiply's task, one of {@link Serial#mat}'s three levels ({@code kind}): a node forks its bottom pair
     * and runs its top pair in place; a pair forks its right quadrant and runs its left in place; a quadrant runs
     * its two k halves in order.
     */
    static final class FjMat extends RecursiveAction {
        static final int NODE = 0;
        static final int PAIR = 1;
        static final int QUADRANT = 2;
        private final Problem p;
        private final int kind;
        private final int i;
        private final int j;
        private final int k;
        private final int s;

        FjMat(Problem p, int kind, int i, int j, int k, int s) {
            this.p = p;
            this.kind = kind;
            this.i = i;
            this.j = j;
            this.k = k;
            this.s = s;
        }

        @Override
        protected void compute() {
            switch (kind) {
                case NODE -> node(p, i, j, k, s);
                case PAIR -> pair(p, i, j, k, s);
                default -> quadrant(p, i, j, k, s);
            }
        }

        static void node(Problem p, int i, int j, int k, int s) {
            if (s <= p.size.matBlock) {
                matKernel(p.matA, p.matB, p.matC, p.size.matN, i, j, k, s);
                return;
            }
            int h = s >>> 1;
            FjMat bottom = new FjMat(p, PAIR, i + h, j, k, h);
            bottom.fork();
            pair(p, i, j, k, h);
            bottom.join();
        }

        static void pair(Problem p, int i, int j, int k, int h) {
            FjMat right = new FjMat(p, QUADRANT, i, j + h, k, h);
            right.fork();
            quadrant(p, i, j, k, h);
            right.join();
        }

        static void quadrant(Problem p, int i, int j, int k, int h) {
            node(p, i, j, k, h);
            node(p, i, j, k + h, h);
        }
    }

    /**
     * What both forms of ours share: the pool, the op's parameters (set by the caller before its join or invoke,
     * published by the hand-over) and the quadrature's per-worker stacks of node slots, one row per worker index + 1
     * (row 0 the outside caller's or the root's), with the depth of each in {@link #sp}.
     */
    abstract static class OursSide extends Side {
        /** ints per stack-pointer row: 128 bytes, no two workers on a line pair. */
        static final int SP_STRIDE = 32;
        /** Node slots per worker stack, and doubles per slot (one 64-byte line). */
        static final int REGION_SLOTS = 1024;
        static final int SLOT = 8;
        /** A slot's fields: the node's interval, f at its ends and middle, its Simpson estimate. */
        static final int A = 0;
        static final int B = 1;
        static final int FA = 2;
        static final int FM = 3;
        static final int FB = 4;
        static final int WHOLE = 5;

        final ThreadPool pool;
        final double[] slots;
        final int[] sp;
        double eps;
        int queensN;
        int queensFull;
        int queensSplitRows;
        long[] values;
        int leaf;
        Problem problem;

        OursSide(ThreadPool pool) {
            this.pool = pool;
            int rows = pool.workerSlots() + 1;
            slots = new double[rows * REGION_SLOTS * SLOT];
            sp = new int[(rows + 1) * SP_STRIDE];
        }

        /** Slot {@code slot}'s node: plain, read by the half after its hand-over (a join's or fork's offer). */
        void setSlot(int slot, double a, double b, double fa, double fm, double fb, double whole) {
            int o = slot * SLOT;
            slots[o + A] = a;
            slots[o + B] = b;
            slots[o + FA] = fa;
            slots[o + FM] = fm;
            slots[o + FB] = fb;
            slots[o + WHOLE] = whole;
        }
    }

    /**
     * Ours with {@code join(fn, ctx, left, right)}: this object is every join's context, each function static and
     * non-capturing (one constant object each), each half's node packed in its {@code long}, so a split allocates
     * nothing on a worker. Results, since the API returns none:
     * <ul>
     *   <li>counts and sums (fib, queens, reduce): each leaf adds into its worker's own slot of {@link #acc}
     *       (row {@code currentWorkerIndex() + 1}, 128 bytes apart); the caller zeroes the rows before the join and
     *       sums them after it;</li>
     *   <li>the quadrature's {@code double}s: a per-worker stack of node slots ({@link #quad});</li>
     *   <li>the stencil and the multiply: their output arrays.</li>
     * </ul>
     * Every half runs on a worker (from outside, the root pair is handed over as one task), so a row's writer is its
     * worker alone, and the caller's reads follow its join's return.
     */
    static final class Ours extends OursSide {
        /** longs per accumulator row: 128 bytes, no two workers on a line pair. */
        static final int ACC_STRIDE = 16;
        /** A slot's field beyond OursSide's: the node's result (two slots per nested split here). */
        static final int RESULT = 6;

        static final ObjLongConsumer<Ours> FIB = Ours::fib;
        static final ObjLongConsumer<Ours> QUAD = Ours::quad;
        static final ObjLongConsumer<Ours> QUEENS = Ours::queens;
        static final ObjLongConsumer<Ours> SUM = Ours::sum;
        static final ObjLongConsumer<Ours> STEP = Ours::step;
        static final ObjLongConsumer<Ours> MAT = Ours::mat;

        /** Per row (worker index + 1; row 0 the outside caller): a count or sum; plain, one writer per row. */
        private final long[] acc;

        Ours(ThreadPool pool) {
            super(pool);
            int rows = pool.workerSlots() + 1;
            acc = new long[(rows + 1) * ACC_STRIDE];
        }

        private void join(ObjLongConsumer<Ours> fn, long left, long right) {
            try {
                pool.join(fn, this, left, right);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e); // only an outside caller is interrupted, and it calls pool.join
            }
        }

        /** The calling thread's row: worker index + 1 (the outside caller, -1, is row 0). */
        private int row() {
            return pool.currentWorkerIndex() + 1;
        }

        private void add(long v) {
            acc[(row() + 1) * ACC_STRIDE] += v; // plain: this row's only writer; read by the caller after the join
        }

        private long total() {
            long t = 0;
            for (int i = 0; i < acc.length; i += ACC_STRIDE) {
                t += acc[i];
            }
            return t;
        }

        // ---- fib

        @Override
        long fib(int n) throws InterruptedException {
            if (n < 2) {
                return n;
            }
            Arrays.fill(acc, 0);
            pool.join(FIB, this, n - 2, n - 1);
            return total();
        }

        static void fib(Ours o, long n) {
            if (n < 2) {
                o.add(n);
                return;
            }
            o.join(FIB, n - 2, n - 1);
        }

        // ---- quadrature

        /**
         * The root node runs on the calling thread (its two f evaluations; FJP's root task runs on a worker), its
         * children's parameters in row 0's first two slots, then the join from outside.
         */
        @Override
        double quadrature(double eps) throws InterruptedException {
            this.eps = eps;
            Arrays.fill(sp, 0); // every stack empty (a failed op may have left one deeper)
            double a = Quad.A;
            double b = Quad.B;
            double fa = Quad.f(a);
            double fb = Quad.f(b);
            double fm = Quad.f((a + b) * 0.5);
            double whole = Quad.simpson(a, b, fa, fm, fb);
            double m = (a + b) * 0.5;
            double flm = Quad.f((a + m) * 0.5);
            double frm = Quad.f((m + b) * 0.5);
            double left = Quad.simpson(a, m, fa, flm, fm);
            double right = Quad.simpson(m, b, fm, frm, fb);
            if (Quad.leaf(left, right, whole, eps, 0)) {
                return Quad.leafValue(left, right, whole);
            }
            int l = 0; // row 0, the caller's: nothing else uses it
            setSlot(l, a, m, fa, flm, fm, left);
            setSlot(l + 1, m, b, fm, frm, fb, right);
            pool.join(QUAD, this, quadArg(l, 1), quadArg(l + 1, 1));
            return slots[l * SLOT + RESULT] + slots[(l + 1) * SLOT + RESULT];
        }

        static long quadArg(int slot, int depth) {
            return (long) depth << 32 | slot;
        }

        /**
         * A node in slot {@code (int) arg} at depth {@code arg >>> 32}. A split takes the next two slots of the
         * running worker's stack (its row's region, {@link #sp} the depth in use), writes the children's parameters
         * there, joins, adds the two results the children wrote, gives the slots back and writes its own result into
         * its slot (which may be in another worker's region: its parent's). A worker's splits nest on its call stack
         * (a half it runs while it waits in a join ends before that join returns), so its stack is last in, first
         * out; a thief writes the result of a stolen child into the parent's region, read by the parent after the
         * join.
         */
        static void quad(Ours o, long arg) {
            double[] s = o.slots;
            int at = (int) arg * SLOT;
            int depth = (int) (arg >>> 32);
            double a = s[at + A];
            double b = s[at + B];
            double fa = s[at + FA];
            double fm = s[at + FM];
            double fb = s[at + FB];
            double whole = s[at + WHOLE];
            double m = (a + b) * 0.5;
            double flm = Quad.f((a + m) * 0.5);
            double frm = Quad.f((m + b) * 0.5);
            double left = Quad.simpson(a, m, fa, flm, fm);
            double right = Quad.simpson(m, b, fm, frm, fb);
            if (Quad.leaf(left, right, whole, o.eps, depth)) {
                s[at + RESULT] = Quad.leafValue(left, right, whole); // plain: read by the parent after its join
                return;
            }
            int row = o.row();
            int spAt = (row + 1) * SP_STRIDE;
            int top = o.sp[spAt];
            if (top + 2 > REGION_SLOTS) {
                throw new IllegalStateException("quadrature: worker row " + row + " needs more than " + REGION_SLOTS
                        + " slots (splits nested " + top / 2 + " deep)");
            }
            o.sp[spAt] = top + 2;
            int l = row * REGION_SLOTS + top;
            o.setSlot(l, a, m, fa, flm, fm, left);
            o.setSlot(l + 1, m, b, fm, frm, fb, right);
            o.join(QUAD, quadArg(l, depth + 1), quadArg(l + 1, depth + 1));
            double sum = s[l * SLOT + RESULT] + s[(l + 1) * SLOT + RESULT];
            o.sp[spAt] = top;
            s[at + RESULT] = sum; // plain: read by the parent after its join
        }

        // ---- queens

        @Override
        long queens(int n, int splitRows) throws InterruptedException {
            queensN = n;
            queensFull = Queens.full(n);
            queensSplitRows = splitRows;
            Arrays.fill(acc, 0);
            int lo = Queens.lowHalf(queensFull); // the root: every column a candidate, n >= 4 of them: a split
            pool.join(QUEENS, this, Queens.pack(n, 0, 0, 0, lo), Queens.pack(n, 0, 0, 0, queensFull ^ lo));
            return total();
        }

        static void queens(Ours o, long node) {
            int n = o.queensN;
            int full = o.queensFull;
            int cols = Queens.field(node, n, 0);
            int ld = Queens.field(node, n, 1);
            int rd = Queens.field(node, n, 2);
            int cand = Queens.field(node, n, 3);
            for (;;) {
                int k = Integer.bitCount(cand);
                if (k == 0) {
                    return;
                }
                if (k > 1) {
                    int lo = Queens.lowHalf(cand);
                    o.join(QUEENS, Queens.pack(n, cols, ld, rd, lo), Queens.pack(n, cols, ld, rd, cand ^ lo));
                    return;
                }
                cols |= cand; // one candidate: place it and go on to the next row (no split), as the others do
                ld = ((ld | cand) << 1) & full;
                rd = (rd | cand) >>> 1;
                if (Integer.bitCount(cols) >= o.queensSplitRows) {
                    o.add(Queens.count(cols, ld, rd, full));
                    return;
                }
                cand = Queens.free(cols, ld, rd, full);
            }
        }

        // ---- reduce

        @Override
        long reduce(long[] values, int leaf) throws InterruptedException {
            this.values = values;
            this.leaf = leaf;
            Arrays.fill(acc, 0);
            int mid = values.length >>> 1; // length > leaf: the root is a split
            pool.join(SUM, this, range(0, mid), range(mid, values.length));
            return total();
        }

        static long range(int lo, int hi) {
            return (long) lo << 32 | hi;
        }

        static int rangeLo(long range) {
            return (int) (range >>> 32);
        }

        static int rangeHi(long range) {
            return (int) range;
        }

        static void sum(Ours o, long range) {
            int lo = rangeLo(range);
            int hi = rangeHi(range);
            if (hi - lo <= o.leaf) {
                o.add(reduceLeaf(o.values, lo, hi));
                return;
            }
            int mid = (lo + hi) >>> 1;
            o.join(SUM, range(lo, mid), range(mid, hi));
        }

        // ---- stencil

        @Override
        void stencilStep(Problem p, int parity) throws InterruptedException {
            problem = p;
            int lo = 1;
            int hi = p.size.stencilLength + 1; // length > leaf: the root is a split
            int mid = (lo + hi) >>> 1;
            pool.join(STEP, this, stepArg(parity, lo, mid), stepArg(parity, mid, hi));
        }

        static long stepArg(int parity, int lo, int hi) {
            return (long) parity << 62 | (long) lo << 31 | hi;
        }

        static int stepParity(long arg) {
            return (int) (arg >>> 62);
        }

        static int stepLo(long arg) {
            return (int) (arg >>> 31) & Integer.MAX_VALUE;
        }

        static int stepHi(long arg) {
            return (int) arg & Integer.MAX_VALUE;
        }

        static void step(Ours o, long arg) {
            int parity = stepParity(arg);
            int lo = stepLo(arg);
            int hi = stepHi(arg);
            Problem p = o.problem;
            if (hi - lo <= p.size.stencilLeaf) {
                stencilLeaf(p.stencilSource(parity), p.stencilTarget(parity), lo, hi);
                return;
            }
            int mid = (lo + hi) >>> 1;
            o.join(STEP, stepArg(parity, lo, mid), stepArg(parity, mid, hi));
        }

        // ---- matmul

        static final int PAIR = 1;
        static final int QUADRANT = 2;

        @Override
        void matmul(Problem p) throws InterruptedException {
            problem = p;
            int h = p.size.matN >>> 1; // matN > matBlock: the root node is a split
            pool.join(MAT, this, matArg(PAIR, 0, 0, 0, h), matArg(PAIR, h, 0, 0, h));
        }

        static long matArg(int kind, int i, int j, int k, int h) {
            return (long) kind << 60 | (long) h << 39 | (long) i << 26 | (long) j << 13 | k;
        }

        static int matKind(long arg) {
            return (int) (arg >>> 60);
        }

        static int matH(long arg) {
            return (int) (arg >>> 39) & 0x1FFFFF;
        }

        static int matI(long arg) {
            return (int) (arg >>> 26) & 0x1FFF;
        }

        static int matJ(long arg) {
            return (int) (arg >>> 13) & 0x1FFF;
        }

        static int matK(long arg) {
            return (int) arg & 0x1FFF;
        }

        /** A pair (two quadrants in a row: a split) or a quadrant (its two k halves in order), from its long. */
        static void mat(Ours o, long arg) {
            int kind = matKind(arg);
            int h = matH(arg);
            int i = matI(arg);
            int j = matJ(arg);
            int k = matK(arg);
            if (kind == PAIR) {
                o.join(MAT, matArg(QUADRANT, i, j, k, h), matArg(QUADRANT, i, j + h, k, h));
            } else {
                o.matNode(i, j, k, h);
                o.matNode(i, j, k + h, h);
            }
        }

        private void matNode(int i, int j, int k, int s) {
            Problem p = problem;
            if (s <= p.size.matBlock) {
                matKernel(p.matA, p.matB, p.matC, p.size.matN, i, j, k, s);
                return;
            }
            int h = s >>> 1;
            join(MAT, matArg(PAIR, i, j, k, h), matArg(PAIR, i + h, j, k, h));
        }
    }

    /**
     * Ours with fork handles (issue 49), written as FJP's side is: at a split, {@code fork} the half FJP forks, compute
     * the other in place as a plain call, then join the handle, the forked half's result coming back from
     * {@code joinLong} / {@code joinDouble} (no holder object, no box). Each forked function is static and
     * non-capturing (one constant object each), this object every fork's context, the forked half's node packed in
     * its {@code long}: a split allocates nothing. The quadrature's forked node has six {@code double} parameters,
     * more than a {@code long} carries: the forking worker writes them into the next slot of its own stack of slots
     * ({@link #quadNode}), the half reads them there. The computation starts with {@code invokeLong} /
     * {@code invokeDouble} from the calling thread (one hand-over per op, one per step for the stencil), as FJP's
     * {@code invoke} of a root task.
     */
    static final class OursFork extends OursSide {
        static final ObjLongToLongFunction<OursFork> FIB = OursFork::fib;
        static final ObjLongToDoubleFunction<OursFork> QUAD = OursFork::quad;
        static final ObjLongToLongFunction<OursFork> QUEENS = OursFork::queens;
        static final ObjLongToLongFunction<OursFork> SUM = OursFork::sum;
        static final ObjLongConsumer<OursFork> STEP = OursFork::step;
        static final ObjLongToLongFunction<OursFork> STEP_ROOT = OursFork::stepRoot;
        static final ObjLongConsumer<OursFork> MAT = OursFork::mat;
        static final ObjLongToLongFunction<OursFork> MAT_ROOT = OursFork::matRoot;

        OursFork(ThreadPool pool) {
            super(pool);
        }

        // ---- fib

        @Override
        long fib(int n) throws InterruptedException {
            return pool.invokeLong(FIB, this, n);
        }

        /** FjFib.fib's shape: fork n - 1, n - 2 in place, join. */
        static long fib(OursFork o, long n) {
            if (n < 2) {
                return n;
            }
            long h = o.pool.forkLong(FIB, o, n - 1);
            long left = fib(o, n - 2);
            return left + o.pool.joinLong(h);
        }

        // ---- quadrature

        /** The root's parameters in row 0's slot, then its node on a worker: FJP's root task. */
        @Override
        double quadrature(double eps) throws InterruptedException {
            this.eps = eps;
            Arrays.fill(sp, 0); // every stack empty (a failed op may have left one deeper)
            double fa = Quad.f(Quad.A);
            double fb = Quad.f(Quad.B);
            double fm = Quad.f((Quad.A + Quad.B) * 0.5);
            setSlot(0, Quad.A, Quad.B, fa, fm, fb, Quad.simpson(Quad.A, Quad.B, fa, fm, fb));
            return pool.invokeDouble(QUAD, this, quadArg(0, 0));
        }

        static long quadArg(int slot, int depth) {
            return (long) depth << 32 | slot;
        }

        /** A forked node: its parameters from slot {@code (int) arg}, its depth {@code arg >>> 32}. */
        static double quad(OursFork o, long arg) {
            double[] s = o.slots;
            int at = (int) arg * SLOT;
            return quadNode(o, s[at + A], s[at + B], s[at + FA], s[at + FM], s[at + FB],
                    s[at + WHOLE], (int) (arg >>> 32));
        }

        /**
         * FjQuad.quad's shape: the right child forked (its parameters in the next slot of the running worker's stack,
         * given back after the join), the left in place, {@code left + right} as every side adds them. A worker's
         * splits nest on its call stack (a half it runs while it waits in a join ends before that join returns), so
         * its stack is last in, first out.
         */
        static double quadNode(OursFork o, double a, double b, double fa, double fm, double fb, double whole,
                               int depth) {
            double m = (a + b) * 0.5;
            double flm = Quad.f((a + m) * 0.5);
            double frm = Quad.f((m + b) * 0.5);
            double left = Quad.simpson(a, m, fa, flm, fm);
            double right = Quad.simpson(m, b, fm, frm, fb);
            if (Quad.leaf(left, right, whole, o.eps, depth)) {
                return Quad.leafValue(left, right, whole);
            }
            int row = o.pool.currentWorkerIndex() + 1; // a half always runs on a worker: row >= 1
            int spAt = row * SP_STRIDE;
            int top = o.sp[spAt];
            if (top >= REGION_SLOTS) {
                throw new IllegalStateException("quadrature: worker row " + row + " needs more than "
                        + REGION_SLOTS + " slots (splits nested " + top + " deep)");
            }
            o.sp[spAt] = top + 1; // plain: this row's only writer
            int slot = row * REGION_SLOTS + top;
            o.setSlot(slot, m, b, fm, frm, fb, right);
            long h = o.pool.forkDouble(QUAD, o, quadArg(slot, depth + 1));
            double l = quadNode(o, a, m, fa, flm, fm, left, depth + 1);
            double r = o.pool.joinDouble(h);
            o.sp[spAt] = top;
            return l + r;
        }

        // ---- queens

        @Override
        long queens(int n, int splitRows) throws InterruptedException {
            queensN = n;
            queensFull = Queens.full(n);
            queensSplitRows = splitRows;
            return pool.invokeLong(QUEENS, this, Queens.pack(n, 0, 0, 0, queensFull));
        }

        static long queens(OursFork o, long node) {
            int n = o.queensN;
            return queensNode(o, Queens.field(node, n, 0), Queens.field(node, n, 1), Queens.field(node, n, 2),
                    Queens.field(node, n, 3));
        }

        /** FjQueens.node's shape: the high half of the candidates forked, the low half in place. */
        static long queensNode(OursFork o, int cols, int ld, int rd, int cand) {
            int k = Integer.bitCount(cand);
            if (k == 0) {
                return 0;
            }
            int full = o.queensFull;
            if (k == 1) {
                int c = cols | cand;
                int l = ((ld | cand) << 1) & full;
                int r = (rd | cand) >>> 1;
                return Integer.bitCount(c) >= o.queensSplitRows ? Queens.count(c, l, r, full)
                        : queensNode(o, c, l, r, Queens.free(c, l, r, full));
            }
            int lo = Queens.lowHalf(cand);
            long h = o.pool.forkLong(QUEENS, o, Queens.pack(o.queensN, cols, ld, rd, cand ^ lo));
            long left = queensNode(o, cols, ld, rd, lo);
            return left + o.pool.joinLong(h);
        }

        // ---- reduce

        @Override
        long reduce(long[] values, int leaf) throws InterruptedException {
            this.values = values;
            this.leaf = leaf;
            return pool.invokeLong(SUM, this, Ours.range(0, values.length));
        }

        static long sum(OursFork o, long range) {
            return sumOf(o, Ours.rangeLo(range), Ours.rangeHi(range));
        }

        /** FjSum.sum's shape: the right half forked, the left in place. */
        static long sumOf(OursFork o, int lo, int hi) {
            if (hi - lo <= o.leaf) {
                return reduceLeaf(o.values, lo, hi);
            }
            int mid = (lo + hi) >>> 1;
            long h = o.pool.forkLong(SUM, o, Ours.range(mid, hi));
            long left = sumOf(o, lo, mid);
            return left + o.pool.joinLong(h);
        }

        // ---- stencil

        @Override
        void stencilStep(Problem p, int parity) throws InterruptedException {
            problem = p;
            pool.invokeLong(STEP_ROOT, this, Ours.stepArg(parity, 1, p.size.stencilLength + 1));
        }

        static long stepRoot(OursFork o, long arg) {
            step(o, arg);
            return 0L;
        }

        /** FjStencil.step's shape: the right half forked, the left in place. */
        static void step(OursFork o, long arg) {
            int parity = Ours.stepParity(arg);
            int lo = Ours.stepLo(arg);
            int hi = Ours.stepHi(arg);
            Problem p = o.problem;
            if (hi - lo <= p.size.stencilLeaf) {
                stencilLeaf(p.stencilSource(parity), p.stencilTarget(parity), lo, hi);
                return;
            }
            int mid = (lo + hi) >>> 1;
            long h = o.pool.fork(STEP, o, Ours.stepArg(parity, mid, hi));
            step(o, Ours.stepArg(parity, lo, mid));
            o.pool.join(h);
        }

        // ---- matmul

        @Override
        void matmul(Problem p) throws InterruptedException {
            problem = p;
            int n = p.size.matN;
            pool.invokeLong(MAT_ROOT, this, Ours.matArg(NODE, 0, 0, 0, n));
        }

        static final int NODE = 0;

        static long matRoot(OursFork o, long arg) {
            mat(o, arg);
            return 0L;
        }

        /** A forked node, pair or quadrant, from its long ({@link Ours#matArg}). */
        static void mat(OursFork o, long arg) {
            int kind = Ours.matKind(arg);
            int h = Ours.matH(arg);
            int i = Ours.matI(arg);
            int j = Ours.matJ(arg);
            int k = Ours.matK(arg);
            switch (kind) {
                case NODE -> matNode(o, i, j, k, h);
                case Ours.PAIR -> matPair(o, i, j, k, h);
                default -> matQuadrant(o, i, j, k, h);
            }
        }

        /** FjMat.node's shape: the bottom pair forked, the top pair in place. */
        static void matNode(OursFork o, int i, int j, int k, int s) {
            Problem p = o.problem;
            if (s <= p.size.matBlock) {
                matKernel(p.matA, p.matB, p.matC, p.size.matN, i, j, k, s);
                return;
            }
            int h = s >>> 1;
            long hd = o.pool.fork(MAT, o, Ours.matArg(Ours.PAIR, i + h, j, k, h));
            matPair(o, i, j, k, h);
            o.pool.join(hd);
        }

        /** FjMat.pair's shape: the right quadrant forked, the left in place. */
        static void matPair(OursFork o, int i, int j, int k, int h) {
            long hd = o.pool.fork(MAT, o, Ours.matArg(Ours.QUADRANT, i, j + h, k, h));
            matQuadrant(o, i, j, k, h);
            o.pool.join(hd);
        }

        static void matQuadrant(OursFork o, int i, int j, int k, int h) {
            matNode(o, i, j, k, h);
            matNode(o, i, j, k + h, h);
        }
    }
}
