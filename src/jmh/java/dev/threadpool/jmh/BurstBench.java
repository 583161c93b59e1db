package dev.threadpool.jmh;

import dev.threadpool.ThreadPool;
import dev.threadpool.WaitGroup;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
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
import org.openjdk.jmh.infra.Blackhole;

/**
 * {@code burst_bounded}: {@code producers} threads together submit a burst of {@link #TASKS} short tasks
 * through a small bounded queue ({@code queue} slots, {@link #QUEUE} by default), so they spend most of the burst
 * waiting for space: the
 * back-pressure path (our {@code submit} waiting while full, with its space waiters) is what is measured.
 * Score: tasks per second; {@code gc.alloc.rate.norm} is bytes per task.
 *
 * <p>Every side holds the same number of waiting tasks and counts the same way ({@code BenchFairnessTest}
 * checks both through {@link #shape}):
 * <ul>
 *   <li>ours: {@code queueCapacity(queue)}, {@code submit(task, waitGroup)}, which waits while the ring is full.
 *       Its workers claim carried tasks in batches of up to 8 and hold the rest of a batch out of the ring, so
 *       ours holds up to {@code queue + threads x 7} waiting tasks ({@link Fairness#boundFor}).</li>
 *   <li>{@code TPE_ABQ}: {@code ArrayBlockingQueue}, {@code TPE_LBQ}: {@code LinkedBlockingQueue}, each of that
 *       same capacity ({@code queue + threads x 7}), with {@link Pools#BLOCKING_PUT}, so a producer blocks in
 *       {@code queue.put} as ours waits. CallerRunsPolicy is the other common choice, but it turns producers into
 *       workers, and then the queue bound no longer limits anything: not the case measured here.</li>
 *   <li>{@code FJP}: ForkJoinPool has no bounded queue, so its producers never wait. It is the reference for
 *       "no back-pressure at all", not a like-for-like peer: its shape declares the bound different and the
 *       report's row says "FJP unbounded".</li>
 *   <li>Counting, every side: each producer adds its share of the burst to one {@link WaitGroup} and every
 *       task ends with one {@code done()} on it (ours: {@code submit(task, group)} adds per task, and the pool
 *       calls the {@code done()}; the JDK pools: the producer adds its share once, the task calls it).</li>
 * </ul>
 *
 * <p>Producers are long-lived threads started in setup; each invocation releases them once (a volatile round
 * counter and unpark, no allocation), waits until they have submitted everything, then until every task ran.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xms1g", "-Xmx1g"})
public class BurstBench implements Fairness.Comparison {
    static final int TASKS = 20_000;
    static final int QUEUE = 256;
    /**
     * The bound of every bounded pool here (ours and the TPEs). The default, {@link #QUEUE}, is the workload; a
     * bound of at least {@link #TASKS} is the same burst with no back-pressure (nobody ever waits for space), the
     * like-for-like peer of FJP's unbounded queue (PERFORMANCE_TRACKING 66).
     */
    @Param({"256"})
    public int queue;
    /** Blackhole.consumeCPU tokens per task: a few hundred nanoseconds, so workers are the bottleneck. */
    static final long WORK_TOKENS = 50;
    static final long TIMEOUT_SECONDS = 60;

    @Param({"GLOBAL_QUEUE", "WORK_STEALING", "LANE_EXTENSION", "FJP", "TPE_LBQ", "TPE_ABQ"})
    public String pool;

    @Param({"0"})
    public int threads;

    @Param({"2"})
    public int producers;

    private ThreadPool ours;
    private ExecutorService jdk;
    private final WaitGroup group = new WaitGroup();
    private final Countdown producersLeft = new Countdown();
    private Thread[] producerThreads;
    private volatile int round;
    private volatile boolean stopping;

    private final Runnable oursTask = () -> Blackhole.consumeCPU(WORK_TOKENS);
    private final Runnable jdkTask = () -> {
        Blackhole.consumeCPU(WORK_TOKENS);
        group.done(); // what our pool calls after oursTask
    };
    /** Ours' completed count before the last invocation: the fairness test's measured task count. */
    private long completedBefore;

    @Setup(Level.Trial)
    public void setUp() {
        int n = Pools.threads(threads);
        if (producers < 1 || TASKS % producers != 0) {
            throw new IllegalArgumentException("producers must be >= 1 and divide " + TASKS + ", got " + producers);
        }
        if (queue < 2 || Integer.bitCount(queue) != 1) {
            throw new IllegalArgumentException("queue must be a power of two >= 2, got " + queue);
        }
        ours = Pools.ours(pool, n, queue);
        jdk = ours == null ? Pools.jdkBounded(pool, n, Fairness.boundFor(queue, n)) : null;
        if (ours == null && jdk == null) {
            throw new IllegalArgumentException("pool=" + pool + " is not a pool this benchmark knows");
        }
        int share = TASKS / producers;
        producerThreads = new Thread[producers];
        for (int i = 0; i < producers; i++) {
            Thread t = new Thread(() -> produceLoop(share), "bench-producer-" + i);
            t.setDaemon(true);
            producerThreads[i] = t;
            t.start();
        }
    }

    private void produceLoop(int share) {
        int seen = 0;
        for (;;) {
            while (round == seen) { // volatile read; pairs with the write in burst_bounded
                if (stopping) {
                    return;
                }
                LockSupport.park(this);
            }
            seen++;
            if (ours != null) {
                ThreadPool p = ours;
                Runnable t = oursTask;
                WaitGroup g = group;
                for (int i = 0; i < share; i++) {
                    p.submit(t, g);
                }
            } else {
                ExecutorService e = jdk;
                Runnable t = jdkTask;
                group.add(share); // before the first hand-over: no done() can find the count below zero
                for (int i = 0; i < share; i++) {
                    e.execute(t);
                }
            }
            producersLeft.countDown();
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws InterruptedException {
        stopping = true;
        for (Thread t : producerThreads) {
            LockSupport.unpark(t);
            t.join(TimeUnit.SECONDS.toMillis(TIMEOUT_SECONDS));
            if (t.isAlive()) {
                throw new IllegalStateException(t.getName() + " did not stop");
            }
        }
        Pools.close(ours, jdk);
    }

    @Benchmark
    @OperationsPerInvocation(TASKS)
    public void burst_bounded() throws InterruptedException {
        producersLeft.arm(producers);
        round++; // single writer (the JMH thread); producers read it
        for (Thread t : producerThreads) {
            LockSupport.unpark(t);
        }
        producersLeft.await(TIMEOUT_SECONDS);
        // Every producer has added its share and returned, so the group counts every task: await cannot see
        // zero early.
        if (!group.await(Duration.ofSeconds(TIMEOUT_SECONDS))) {
            throw new IllegalStateException("burst did not finish: " + group.pending() + " outstanding");
        }
    }

    @Override
    public void beforeInvocation() {
        completedBefore = Fairness.completedBefore(ours);
    }

    @Override
    public Fairness.Shape shape(String method) {
        return Fairness.submitted(ours, jdk, completedBefore, TASKS, Fairness.Counting.WAIT_GROUP, false);
    }
}
