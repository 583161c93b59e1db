package dev.threadpool.jmh;

import com.lmax.disruptor.BlockingWaitStrategy;
import com.lmax.disruptor.EventHandler;
import com.lmax.disruptor.EventTranslatorOneArg;
import com.lmax.disruptor.RingBuffer;
import com.lmax.disruptor.SleepingWaitStrategy;
import com.lmax.disruptor.WaitStrategy;
import com.lmax.disruptor.dsl.Disruptor;
import com.lmax.disruptor.dsl.ProducerType;
import dev.threadpool.ThreadPool;
import dev.threadpool.WaitGroup;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.concurrent.ExecutorService;
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
 * {@code orders_1m} (issue 44, "Show it"): one feed thread (the JMH thread) dispatches {@link #ORDERS} orders, a
 * {@code long} id each, to {@code threads} workers (2 by default) that each update a preallocated
 * {@link Engine} of position books; then waits until every order has been handled. Score: orders per second
 * ({@code @OperationsPerInvocation}, as {@link PoolFloodBench}'s tasks per second).
 *
 * <h2>The sides ({@code pool})</h2>
 * <table>
 *   <caption>what each side's feed thread writes per order</caption>
 *   <tr><th>{@code pool}</th><th>per order</th></tr>
 *   <tr><td>{@code GLOBAL_QUEUE}, {@code WORK_STEALING}, {@code LANE_EXTENSION}</td>
 *       <td>ours in argument form: {@code pool.submit(Engine::onOrder, engine, id)}, a static, non-capturing
 *       method reference (one constant object), the engine and the id: no object per order</td></tr>
 *   <tr><td>{@code GLOBAL_QUEUE_LAMBDA}, {@code WORK_STEALING_LAMBDA}</td>
 *       <td>ours with the capturing lambda a user writes without the argument form,
 *       {@code pool.submit(() -> Engine.onOrder(engine, id))}: one lambda per order (24 bytes, an engine
 *       reference and a long), what the argument form saves</td></tr>
 *   <tr><td>{@code FJP}, {@code TPE_ABQ}</td>
 *       <td>{@code new ForkJoinPool(threads)} and {@code ThreadPoolExecutor(threads, threads)} over an
 *       {@code ArrayBlockingQueue} of ours' bound ({@link Pools}), with the same capturing lambda through
 *       {@code execute}: the JDK executors take a {@code Runnable} and nothing else</td></tr>
 *   <tr><td>{@code DISRUPTOR_BLOCKING}, {@code DISRUPTOR_SLEEPING}</td>
 *       <td>the LMAX Disruptor 4.0.0: {@code ring.publishEvent(TRANSLATOR, id)} into a ring of preallocated
 *       {@link Order} events (an {@link EventTranslatorOneArg} that writes the id), and {@code threads}
 *       {@link EventHandler}s, handler {@code k} handling the events whose sequence modulo {@code threads} is
 *       {@code k} (the Disruptor FAQ's way to have each event consumed once; 4.0 removed {@code WorkerPool}).
 *       {@code ProducerType.SINGLE}: one feed thread, which is what a Disruptor user declares for one (ours'
 *       {@code submit} takes any thread, and pays a CAS per claim for it)</td></tr>
 * </table>
 *
 * <h2>The Disruptor's wait strategies, and why two</h2>
 * The pools' workers park when idle: ours spin for their idle window (50 µs) and then park, FJP's spin briefly
 * and park, TPE's block on the queue's condition. No Disruptor strategy does exactly that, so two rows bracket it:
 * <ul>
 *   <li>{@code DISRUPTOR_BLOCKING}: {@code BlockingWaitStrategy}, the Disruptor's default and its most
 *       CPU-conservative one: a handler with nothing to do waits on a monitor, as the pools' workers park. Its
 *       price is on the feed thread: every publish takes that monitor to {@code notifyAll}, waiter or not.</li>
 *   <li>{@code DISRUPTOR_SLEEPING}: {@code SleepingWaitStrategy()} (100 spins, 100 yields, then
 *       {@code parkNanos(100)} in a loop, about 50-60 µs a sleep on Linux's default timer slack): what the
 *       Disruptor's documentation suggests where the producer should pay nothing for the consumers' waiting
 *       (the publish never signals). Its idle handlers poll rather than block: closest to ours' spin-then-park,
 *       though they never park for good.</li>
 * </ul>
 * {@code BusySpinWaitStrategy} and {@code YieldingWaitStrategy} keep both handlers on a CPU: with the feed thread
 * that is three runnable threads on this 2-core box, and the pools' workers do not do that either.
 *
 * <h2>Fair comparison (docs/BENCHMARKS.md; {@code BenchFairnessTest} checks {@link #shape})</h2>
 * <ul>
 *   <li><b>Work:</b> every side calls the same {@link Engine#onOrder} once per order, which updates one book
 *       with three atomic adds and counts the order on the group; the books are shared by the workers (any
 *       worker of a pool may run any order), hence atomic adds on every side. The book is picked by a hash of
 *       the id, so no side gains cache affinity from the ids: the Disruptor's handler {@code k} takes every
 *       {@code threads}-th sequence, which with {@code id & mask} as the book would have given each handler books
 *       of its own.</li>
 *   <li><b>Counting:</b> one {@link WaitGroup} on every side, used the same way: the feed thread adds
 *       {@link #ORDERS} once before the first hand-over, {@link Engine#onOrder} calls {@code done()} at its end
 *       (on the running thread's stripe), the feed thread awaits the group. Ours uses the plain detached
 *       {@code submit}, not {@code submit(..., group)}, so that the counting is the handler's on every side.</li>
 *   <li><b>Threads:</b> {@code threads} workers or handlers on every side (JDK core threads prestarted).</li>
 *   <li><b>Bound:</b> ours holds {@link Pools#FLOOD_QUEUE} orders in its ring plus 7 a worker may hold claimed,
 *       TPE_ABQ's queue exactly as many ({@link Fairness#boundFor}); the Disruptor's ring must be a power of two,
 *       so it gets {@link Pools#FLOOD_QUEUE} slots (14 fewer, declared); FJP has no bound (declared).</li>
 *   <li><b>User allocation:</b> the argument form and the Disruptor make no object per order
 *       ({@code Fairness.Nodes.NONE}: the pool's cell or the ring's event carries the id); the lambda rows
 *       allocate one capturing lambda per order, on purpose (declared: that is what the row shows).</li>
 * </ul>
 *
 * <h2>Checks</h2>
 * Every iteration starts from zeroed books and ends by comparing them with a serial replay of its invocations
 * ({@link #checkBooks}): a lost or doubled order fails the run. {@code OrderDispatchBenchTest} runs every side
 * once at a small size with a per-order tally (each order handled exactly once).
 *
 * <h2>Running it; B/order</h2>
 * <pre>
 * mvn -B -q -o -DskipTests test-compile dependency:build-classpath -Dmdep.outputFile=target/cp.txt -Dmdep.includeScope=test
 * java -cp target/test-classes:target/classes:$(cat target/cp.txt) org.openjdk.jmh.Main OrderDispatchBench -prof gc
 * </pre>
 * With {@code -prof gc}, {@code gc.alloc.rate.norm} is already bytes per order: JMH divides by the operations
 * ({@code @OperationsPerInvocation(ORDERS)}), so it is the invocation's allocation, every thread's, divided by
 * 1M. (In single-shot mode, {@code -bm ss}, it would be per invocation: divide it by 1,000,000 yourself.)
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xms1g", "-Xmx1g"})
public class OrderDispatchBench implements Fairness.Comparison {
    static final int ORDERS = 1_000_000;

    @Param({"GLOBAL_QUEUE", "WORK_STEALING", "LANE_EXTENSION", "GLOBAL_QUEUE_LAMBDA", "WORK_STEALING_LAMBDA",
            "FJP", "TPE_ABQ", "DISRUPTOR_BLOCKING", "DISRUPTOR_SLEEPING"})
    public String pool;

    /** Workers (handlers) on every side; 0 = {@code Runtime.availableProcessors()}. The case is 2. */
    @Param({"2"})
    public int threads;

    private Side side;
    /** The books one invocation leaves from zero: a serial replay, made once. */
    private long[] expected;
    private long invocations;
    private long ordersBefore;

    @Setup(Level.Trial)
    public void setUp() {
        side = Side.open(pool, Pools.threads(threads), new Engine(0));
        expected = Engine.replay(ORDERS);
    }

    @Setup(Level.Iteration)
    public void zeroBooks() {
        // plain writes while nothing runs; the next hand-over (a submit, execute or publish) publishes them
        Arrays.fill(side.engine.books, 0L);
        invocations = 0;
    }

    @Benchmark
    @OperationsPerInvocation(ORDERS)
    public void orders_1m() throws InterruptedException {
        side.dispatch(ORDERS);
        invocations++;
    }

    /** The books after this iteration's invocations must be that many serial replays: no order lost or doubled. */
    @TearDown(Level.Iteration)
    public void checkBooks() {
        side.engine.check(expected, invocations, pool);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws InterruptedException {
        side.close();
    }

    @Override
    public void beforeInvocation() {
        ordersBefore = side.engine.ordersHandled();
    }

    @Override
    public Fairness.Shape shape(String method) {
        if (!method.equals("orders_1m")) {
            throw new IllegalArgumentException("OrderDispatchBench has no benchmark " + method);
        }
        return side.shape(side.engine.ordersHandled() - ordersBefore);
    }

    // ---- the work ---------------------------------------------------------------------------------------------

    /**
     * The order handler's state: {@link #BOOKS} position books, one 64-byte stride each in one preallocated
     * {@code long[]}, updated by whichever worker runs an order.
     * <pre>
     *   books: long[BOOKS * STRIDE]
     *     book b @ b * STRIDE:  POSITION (+0) net signed quantity | NOTIONAL (+1) signed quantity x price
     *                           | ORDERS (+2) orders handled | 5 longs of padding
     * </pre>
     */
    static final class Engine {
        static final int BOOKS = 1024;
        /** Longs per book: 64 bytes, so two books never share more than a line's tail. */
        static final int STRIDE = 8;
        static final int POSITION = 0;
        static final int NOTIONAL = 1;
        static final int ORDERS_AT = 2;
        private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);
        private static final VarHandle INTS = MethodHandles.arrayElementVarHandle(int[].class);

        final long[] books = new long[BOOKS * STRIDE];
        /** Counts the orders of the dispatch in flight: added by the feed thread, done by {@link #onOrder}. */
        final WaitGroup filled = new WaitGroup();
        /** Test only: how many times each order id was handled; null in the benchmark. */
        final int[] tally;

        /** An engine; {@code tallyOrders > 0} keeps a per-id tally of that many ids (the test's). */
        Engine(int tallyOrders) {
            if (tallyOrders < 0) {
                throw new IllegalArgumentException("tallyOrders must be >= 0, got " + tallyOrders);
            }
            tally = tallyOrders > 0 ? new int[tallyOrders] : null;
        }

        /**
         * Handles order {@code id}: derives its side, quantity and price from the id, adds them to its book, counts
         * it. The one body every side runs, as {@code ObjLongConsumer<Engine>} ({@code Engine::onOrder}), in a
         * lambda, or from a Disruptor handler.
         */
        static void onOrder(Engine e, long id) {
            long h = mix(id);
            int at = (int) (h & (BOOKS - 1)) * STRIDE;
            long qty = 1 + ((h >>> 16) & 0xFF);
            long price = 10_000 + ((h >>> 24) & 0x3FF);
            long signed = (h & (1L << 40)) != 0 ? qty : -qty; // buy or sell
            long[] b = e.books;
            // Atomic adds: two workers may hold orders of one book at once. Their order does not matter (sums);
            // the feed thread reads the books after the group's await, which every done() below happens-before.
            LONGS.getAndAdd(b, at + POSITION, signed);
            LONGS.getAndAdd(b, at + NOTIONAL, signed * price);
            LONGS.getAndAdd(b, at + ORDERS_AT, 1L);
            int[] t = e.tally;
            if (t != null) {
                INTS.getAndAdd(t, (int) id, 1); // read by the test after the group's await, as the books
            }
            e.filled.done(); // last: the order is handled
        }

        /** SplitMix64's finalizer: the order's attributes and book from its id, the same on every side. */
        static long mix(long z) {
            z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
            z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
            return z ^ (z >>> 31);
        }

        /** The books that orders {@code [0, orders)} leave, handled one by one on one thread. */
        static long[] replay(int orders) {
            Engine e = new Engine(0);
            e.filled.add(orders);
            for (long id = 0; id < orders; id++) {
                onOrder(e, id);
            }
            return e.books;
        }

        /** Orders handled so far (the books' ORDERS words); call after the group's await. */
        long ordersHandled() {
            long n = 0;
            for (int at = ORDERS_AT; at < books.length; at += STRIDE) {
                n += books[at];
            }
            return n;
        }

        /** Throws unless the books are {@code times} x {@code expected}, word for word. */
        void check(long[] expected, long times, String side) {
            for (int i = 0; i < books.length; i++) {
                if (books[i] != expected[i] * times) {
                    throw new IllegalStateException(side + ": book word " + i + " (book " + i / STRIDE + ") is "
                            + books[i] + " after " + times + " dispatches, expected " + expected[i] * times
                            + ": an order was lost or handled twice");
                }
            }
        }
    }

    // ---- the sides --------------------------------------------------------------------------------------------

    /** One side: how its feed thread hands orders {@code [0, n)} over, on its pool, ring or executor. */
    abstract static class Side {
        final Engine engine;
        final String name;

        Side(String name, Engine engine) {
            this.name = name;
            this.engine = engine;
        }

        /** The side named {@code pool} with {@code threads} workers (or handlers) on {@code engine}. */
        static Side open(String pool, int threads, Engine engine) {
            String base = pool.endsWith("_LAMBDA") ? pool.substring(0, pool.length() - "_LAMBDA".length()) : pool;
            if (Pools.isOurs(base) && !base.endsWith("_SPIN")) {
                ThreadPool p = Pools.ours(base, threads, Pools.FLOOD_QUEUE);
                return base.equals(pool) ? new OursArgs(pool, engine, p) : new OursLambda(pool, engine, p);
            }
            if (pool.startsWith("DISRUPTOR_")) {
                return new DisruptorSide(pool, engine, threads);
            }
            ExecutorService jdk = pool.equals("FJP") || pool.equals("TPE_ABQ")
                    ? Pools.jdk(pool, threads, Fairness.boundFor(Pools.FLOOD_QUEUE, threads)) : null;
            if (jdk == null) {
                throw new IllegalArgumentException("pool=" + pool + " is not a side OrderDispatchBench knows");
            }
            return new Jdk(pool, engine, jdk);
        }

        /** One dispatch: counts {@code n} orders on the group, hands ids {@code [0, n)} over, waits for all. */
        final void dispatch(int n) throws InterruptedException {
            engine.filled.add(n); // before the first hand-over, so no done() can find the count below zero
            feed(n);
            Floods.await(engine.filled);
        }

        /** The feed loop: each id of {@code [0, n)} handed over once, as a user of this side writes it. */
        abstract void feed(int n);

        /** The shape of the last dispatch of {@code orders} orders, read from the live objects. */
        abstract Fairness.Shape shape(long orders);

        abstract void close() throws InterruptedException;
    }

    /** Ours, argument form: nothing allocated per order. */
    static final class OursArgs extends Side {
        final ThreadPool pool;

        OursArgs(String name, Engine engine, ThreadPool pool) {
            super(name, engine);
            this.pool = pool;
        }

        @Override
        void feed(int n) {
            ThreadPool p = pool;
            Engine e = engine;
            for (long id = 0; id < n; id++) {
                p.submit(Engine::onOrder, e, id);
            }
        }

        @Override
        Fairness.Shape shape(long orders) {
            return new Fairness.Shape(orders, Fairness.threadsOf(pool, null), Fairness.boundOf(pool, null),
                    Fairness.Counting.WAIT_GROUP, Fairness.Nodes.NONE, false);
        }

        @Override
        void close() throws InterruptedException {
            Pools.close(pool, null);
        }
    }

    /** Ours with a capturing lambda per order: the row that shows what the argument form saves. */
    static final class OursLambda extends Side {
        final ThreadPool pool;

        OursLambda(String name, Engine engine, ThreadPool pool) {
            super(name, engine);
            this.pool = pool;
        }

        @Override
        void feed(int n) {
            ThreadPool p = pool;
            Engine e = engine;
            for (long i = 0; i < n; i++) {
                long id = i;
                p.submit(() -> Engine.onOrder(e, id));
            }
        }

        @Override
        Fairness.Shape shape(long orders) {
            return new Fairness.Shape(orders, Fairness.threadsOf(pool, null), Fairness.boundOf(pool, null),
                    Fairness.Counting.WAIT_GROUP, Fairness.Nodes.FRESH, false)
                    .differing("nodes", LAMBDA_PER_ORDER);
        }

        @Override
        void close() throws InterruptedException {
            Pools.close(pool, null);
        }
    }

    static final String LAMBDA_PER_ORDER = "a capturing lambda per order, () -> Engine.onOrder(engine, id): what a"
            + " user of submit(Runnable) or execute writes; the row shows what the argument form saves";

    /** ForkJoinPool or ThreadPoolExecutor: {@code execute} of a capturing lambda per order. */
    static final class Jdk extends Side {
        final ExecutorService executor;

        Jdk(String name, Engine engine, ExecutorService executor) {
            super(name, engine);
            this.executor = executor;
        }

        @Override
        void feed(int n) {
            ExecutorService x = executor;
            Engine e = engine;
            for (long i = 0; i < n; i++) {
                long id = i;
                x.execute(() -> Engine.onOrder(e, id));
            }
        }

        @Override
        Fairness.Shape shape(long orders) {
            return Fairness.declareUnbounded(new Fairness.Shape(orders, Fairness.threadsOf(null, executor),
                    Fairness.boundOf(null, executor), Fairness.Counting.WAIT_GROUP, Fairness.Nodes.FRESH, false)
                    .differing("nodes", LAMBDA_PER_ORDER), executor);
        }

        @Override
        void close() throws InterruptedException {
            Pools.close(null, executor);
        }
    }

    /** A Disruptor event: one order's id, written by the translator in place. */
    static final class Order {
        long id;
    }

    /** The Disruptor side: {@code publishEvent(TRANSLATOR, id)}; handler k takes the sequences k mod threads. */
    static final class DisruptorSide extends Side {
        /** Writes the order's id into the claimed event (one constant object). */
        static final EventTranslatorOneArg<Order, Long> TRANSLATOR = (event, sequence, id) -> event.id = id;

        final Disruptor<Order> disruptor;
        final RingBuffer<Order> ring;
        /** Threads the Disruptor started for its handlers (its thread factory counts them). */
        final AtomicInteger handlerThreads = new AtomicInteger();

        DisruptorSide(String name, Engine engine, int threads) {
            super(name, engine);
            WaitStrategy wait = switch (name) {
                case "DISRUPTOR_BLOCKING" -> new BlockingWaitStrategy();
                case "DISRUPTOR_SLEEPING" -> new SleepingWaitStrategy();
                default -> throw new IllegalArgumentException("pool=" + name + " is not a Disruptor side");
            };
            disruptor = new Disruptor<>(Order::new, Pools.FLOOD_QUEUE, r -> {
                Thread t = new Thread(r, "bench-disruptor-" + handlerThreads.getAndIncrement());
                t.setDaemon(true);
                return t;
            }, ProducerType.SINGLE, wait);
            @SuppressWarnings("unchecked")
            EventHandler<Order>[] handlers = new EventHandler[threads];
            for (int k = 0; k < threads; k++) {
                handlers[k] = new Taker(engine, k, threads);
            }
            disruptor.handleEventsWith(handlers);
            ring = disruptor.start();
        }

        @Override
        void feed(int n) {
            RingBuffer<Order> r = ring;
            for (long id = 0; id < n; id++) {
                r.publishEvent(TRANSLATOR, id);
            }
        }

        @Override
        Fairness.Shape shape(long orders) {
            // NONE as ours' argument form: no object per order; the id rides in the ring's preallocated event
            return new Fairness.Shape(orders, handlerThreads.get(), ring.getBufferSize(),
                    Fairness.Counting.WAIT_GROUP, Fairness.Nodes.NONE, false)
                    .differing("bound", "a Disruptor ring's size must be a power of two: " + ring.getBufferSize()
                            + " slots, the size of ours' ring, without the 7 a worker of ours may hold claimed"
                            + " beyond it");
        }

        @Override
        void close() {
            disruptor.halt();
        }
    }

    /**
     * Handler {@code mine} of {@code of}: sees every event, handles those whose sequence is {@code mine} modulo
     * {@code of} (the Disruptor FAQ's "each event once" with several handlers).
     */
    static final class Taker implements EventHandler<Order> {
        private final Engine engine;
        private final long mine;
        private final long of;
        /** {@code of - 1} when {@code of} is a power of two (a mask instead of a division), else -1. */
        private final long mask;

        Taker(Engine engine, int mine, int of) {
            this.engine = engine;
            this.mine = mine;
            this.of = of;
            this.mask = Integer.bitCount(of) == 1 ? of - 1 : -1;
        }

        @Override
        public void onEvent(Order order, long sequence, boolean endOfBatch) {
            long k = mask >= 0 ? sequence & mask : sequence % of;
            if (k == mine) {
                Engine.onOrder(engine, order.id);
            }
        }
    }
}
