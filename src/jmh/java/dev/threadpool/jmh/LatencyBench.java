package dev.threadpool.jmh;

import com.lmax.disruptor.BlockingWaitStrategy;
import com.lmax.disruptor.BusySpinWaitStrategy;
import com.lmax.disruptor.EventHandler;
import com.lmax.disruptor.RingBuffer;
import com.lmax.disruptor.WaitStrategy;
import com.lmax.disruptor.dsl.Disruptor;
import com.lmax.disruptor.dsl.ProducerType;
import dev.threadpool.ThreadPool;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;
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
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.Blackhole;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.runner.IterationType;

/**
 * Submit-to-start latency of one probe task, recorded per probe into an HdrHistogram: from
 * {@code System.nanoTime()} just before the submit call on the JMH thread to the first instruction of the task
 * on a worker. One probe is in flight at a time; the JMH thread waits until the probe has started, then records
 * the difference.
 *
 * <ul>
 *   <li>{@code wake_latency}: an <em>idle</em> pool. The JMH thread looks for the probe's start about a
 *       microsecond, then parks until the probe unparks it ({@link #awaitParked}), so its CPU is free for the
 *       worker it woke; after each probe it pauses {@link #IDLE_PAUSE_NANOS} so the workers go back to their idle
 *       strategy (park, or spin for {@code _SPIN}), and the probe measures waking one.</li>
 *   <li>{@code ping_pong}: the next probe is submitted at once when the previous one has started (issue 15's
 *       event loop, whose submitter spins, yielding after {@link #SPINS_BEFORE_YIELD} looks): one event in
 *       flight, no pause, so the worker that ran the last one has only just run dry.
 *       It measures whether the pool catches an event that arrives right after the last one.</li>
 *   <li>{@code submit_latency}: a <em>loaded</em> pool. Each probe is submitted right behind {@code threads}
 *       load tasks of about a microsecond of CPU each, so it reaches workers that are awake and busy: the
 *       hand-off through the queue plus a little queueing, not the wake. The next probe waits until the load
 *       has drained, so the queue depth stays bounded.</li>
 * </ul>
 *
 * <p>Pools: ours with {@code PARK} and {@code BUSY_SPIN} ({@code _SPIN}) idle strategies, the JDK pools, and
 * the LMAX Disruptor as the low-latency reference: one ring of 1024 slots and one consumer thread running each
 * event's task, with {@code BusySpinWaitStrategy} ({@code DISRUPTOR_BUSY}) or {@code BlockingWaitStrategy}
 * ({@code DISRUPTOR_BLOCKING}). The Disruptor has one consumer whatever {@code threads} says: it is the floor of
 * a hand-off, not a pool. Those two are single-producer rings ({@code ProducerType.SINGLE}: one thread may publish,
 * nothing checks it), the contract of a registered {@code Submitter}; {@code submit} takes tasks from any thread,
 * as {@code DISRUPTOR_BUSY_MULTI} does ({@code ProducerType.MULTI}, a CAS on the ring's cursor per publish, and
 * BusySpin). Issue 15's BUSY_SPIN target is stated against {@code DISRUPTOR_BUSY}; the ratio table shows both
 * (PERFORMANCE_TRACKING 65).
 *
 * <p><b>Where the percentiles go.</b> JMH's primary score is the mean time per probe round trip (including the
 * pause in {@code wake_latency}), which is not the latency asked for. The HdrHistogram of the measurement
 * iterations (warm-up iterations are discarded) is written at the end of each fork as one CSV row, appended to
 * the file named by the environment variable {@code BENCH_LATENCY_OUT} (default
 * {@code target/jmh/latency.csv}), and printed to the JMH log. Columns: {@code benchmark, pool, threads, count,
 * p50_ns, p90_ns, p99_ns, p999_ns, max_ns, mean_ns, round}; {@code round} is the environment variable
 * {@code BENCH_ROUND} that run-benchmarks.sh sets per round (empty when unset), by which the chart script pairs
 * our fork with a peer's fork of the same round. The chart script reads that file. With
 * {@code -jvmArgsAppend -Dbench.wakeCounts=true}, {@code wake_latency} also prints per fork where its probes ran
 * and how often the kernel preempted the submitter for the woken worker ({@link WakeCounts}).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 2, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xms1g", "-Xmx1g"})
public class LatencyBench {
    /**
     * Long enough for a PARK worker (two looks, and an idle window of 50 us only while the gaps were shorter) and
     * the JDK pools' workers to park.
     */
    static final long IDLE_PAUSE_NANOS = 100_000;
    /** Blackhole.consumeCPU tokens of one load task: about a microsecond. */
    static final long LOAD_TOKENS = 500;
    /** A probe that has not started after this long was lost: fail rather than hang. */
    static final long PROBE_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(10);
    static final int SPINS_BEFORE_YIELD = 1 << 12;
    /** {@code wake_latency}: looks for the probe's start before parking (about a microsecond here). */
    static final int WAKE_SPINS = 64;
    static final int DISRUPTOR_RING = 1024;
    static final String OUT_ENV = "BENCH_LATENCY_OUT";
    /** The round of run-benchmarks.sh this fork belongs to, written to the CSV's last column (empty if unset). */
    static final String ROUND_ENV = "BENCH_ROUND";
    /** {@code round} last, so a reader of the older ten columns still reads the file. */
    static final String CSV_HEADER =
            "benchmark,pool,threads,count,p50_ns,p90_ns,p99_ns,p999_ns,max_ns,mean_ns,round";

    @Param({"GLOBAL_QUEUE", "WORK_STEALING", "LANE_EXTENSION",
            "GLOBAL_QUEUE_SPIN", "WORK_STEALING_SPIN", "LANE_EXTENSION_SPIN",
            "FJP", "TPE_LBQ", "TPE_ABQ", "DISRUPTOR_BUSY", "DISRUPTOR_BUSY_MULTI", "DISRUPTOR_BLOCKING"})
    public String pool;

    @Param({"0"})
    public int threads;

    private int workers;
    private ThreadPool ours;
    private ExecutorService jdk;
    private Disruptor<Slot> disruptor;
    private RingBuffer<Slot> ring;

    /** Start time written by the probe; 0 while it has not started. */
    private volatile long probeStart;
    /** {@code wake_latency}'s JMH thread while it may park waiting for the probe; null otherwise. */
    private volatile Thread parkedWaiter;
    private final AtomicInteger loadLeft = new AtomicInteger();
    /** {@link WakeCounts}' counters ({@code -Dbench.wakeCounts=true}); null otherwise. */
    private final WakeCounts wakeCounts = WakeCounts.ENABLED ? new WakeCounts() : null;
    /** The probe's CPU with {@link WakeCounts} on; -1 until the probe has read it. */
    private volatile int probeCpu = -1;
    private final Runnable probe = () -> {
        probeStart = System.nanoTime(); // volatile write; read by the waiting JMH thread
        if (WakeCounts.ENABLED) {
            probeCpu = WakeCounts.cpu(); // after the stamp: not in the latency; before the unpark below
        }
        // volatile read after the volatile write: a Dekker pair with awaitParked's write of parkedWaiter and read
        // of probeStart (both seq_cst), so a waiter about to park is either seen here or sees the start there.
        // After the stamp, so not in the latency; null (one load) outside wake_latency.
        Thread waiter = parkedWaiter;
        if (waiter != null) {
            LockSupport.unpark(waiter);
        }
    };
    private final Runnable load = () -> {
        Blackhole.consumeCPU(LOAD_TOKENS);
        loadLeft.decrementAndGet();
    };
    private final Histogram histogram = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);

    /** A Disruptor slot carries the task to run; the consumer runs it in place. */
    static final class Slot {
        Runnable task;
    }

    @Setup(Level.Trial)
    public void setUp() {
        workers = Pools.threads(threads);
        if (pool.startsWith("DISRUPTOR_")) {
            WaitStrategy wait = switch (pool) {
                case "DISRUPTOR_BUSY", "DISRUPTOR_BUSY_MULTI" -> new BusySpinWaitStrategy();
                case "DISRUPTOR_BLOCKING" -> new BlockingWaitStrategy();
                default -> throw new IllegalArgumentException("pool=" + pool + " is not a Disruptor this benchmark knows");
            };
            disruptor = new Disruptor<>(Slot::new, DISRUPTOR_RING, r -> {
                Thread t = new Thread(r, "bench-disruptor");
                t.setDaemon(true);
                return t;
            }, pool.endsWith("_MULTI") ? ProducerType.MULTI : ProducerType.SINGLE, wait);
            EventHandler<Slot> handler = (slot, sequence, endOfBatch) -> slot.task.run();
            disruptor.handleEventsWith(handler);
            ring = disruptor.start();
            return;
        }
        ours = Pools.ours(pool, workers, Pools.FLOOD_QUEUE);
        jdk = ours == null ? Pools.jdk(pool, workers, Pools.FLOOD_QUEUE) : null;
        if (ours == null && jdk == null) {
            throw new IllegalArgumentException("pool=" + pool + " is not a pool this benchmark knows");
        }
    }

    @Setup(Level.Iteration)
    public void iterationStart() {
        if (wakeCounts != null) {
            wakeCounts.iterationStart();
        }
    }

    @TearDown(Level.Iteration)
    public void dropWarmup(IterationParams iteration) {
        boolean warmup = iteration.getType() == IterationType.WARMUP;
        if (warmup) {
            histogram.reset();
        }
        if (wakeCounts != null) {
            wakeCounts.iterationEnd(!warmup);
        }
    }

    @TearDown(Level.Trial)
    public void tearDown(BenchmarkParams params) throws InterruptedException {
        writeRow(params.getBenchmark());
        if (wakeCounts != null && params.getBenchmark().endsWith(".wake_latency")) {
            System.out.println(wakeCounts.summary(pool));
        }
        if (disruptor != null) {
            disruptor.halt();
        }
        Pools.close(ours, jdk);
    }

    @Benchmark
    public void wake_latency() {
        int submitCpu = wakeCounts != null ? WakeCounts.cpu() : -1; // before the stamp: not in the latency
        long t0 = submitProbe();
        long start = awaitParked(t0);
        record(t0, start);
        if (wakeCounts != null) {
            wakeCounts.record(submitCpu, awaitProbeCpu(t0), start - t0);
        }
        // pacing, not synchronisation: let the workers go idle. The whole pause: a probe that saw parkedWaiter just
        // before we cleared it leaves a permit behind, which would end one park early.
        long until = System.nanoTime() + IDLE_PAUSE_NANOS;
        for (long left = IDLE_PAUSE_NANOS; left > 0; left = until - System.nanoTime()) {
            LockSupport.parkNanos(left);
        }
    }

    /**
     * Ping-pong: the next probe is submitted as soon as the previous one has started, with no pause. One event
     * in flight at a time, as an event loop handing each event to the pool: the worker that ran the previous
     * probe has just gone idle, so this measures whether the pool catches the next event while still awake.
     */
    @Benchmark
    public void ping_pong() {
        probeOnce();
    }

    @Benchmark
    public void submit_latency() {
        loadLeft.set(workers); // volatile write before the load is handed over
        for (int i = 0; i < workers; i++) {
            submit(load);
        }
        probeOnce();
        int spins = 0;
        while (loadLeft.get() != 0) {
            spins = backOff(spins);
        }
    }

    private void probeOnce() {
        long t0 = submitProbe();
        long start;
        int spins = 0;
        while ((start = probeStart) == 0) {
            spins = backOff(spins);
            if ((spins & 0xFFFF) == 0 && System.nanoTime() - t0 > PROBE_TIMEOUT_NANOS) {
                throw new IllegalStateException("probe did not start within 10 s on " + pool);
            }
        }
        record(t0, start);
    }

    /** Clears the probe's start, stamps and submits the probe; returns the stamp. */
    private long submitProbe() {
        probeStart = 0;
        long t0 = System.nanoTime();
        submit(probe);
        return t0;
    }

    /**
     * {@code wake_latency}'s wait: {@link #WAKE_SPINS} looks (about a microsecond), then park until the probe
     * unparks us. The waiting thread gives its CPU up at once: the kernel queues most woken workers on the
     * submitter's own CPU, so a waiter that keeps it (the spin-then-yield of {@link #probeOnce}) puts its own
     * spin into the wake it measures (PERFORMANCE_TRACKING 71), and a yield is no way to give it up where the
     * pool's own workers spin ({@code _SPIN}: the JMH thread starved behind them, 72). Where the probe
     * started does not depend on this thread: the latency is the probe's stamp less the submit's.
     */
    private long awaitParked(long t0) {
        long start;
        for (int k = 0; k < WAKE_SPINS; k++) {
            if ((start = probeStart) != 0) {
                return start;
            }
            Thread.onSpinWait();
        }
        parkedWaiter = Thread.currentThread(); // volatile write, then the volatile read of probeStart: see probe
        try {
            while ((start = probeStart) == 0) {
                LockSupport.parkNanos(this, PROBE_TIMEOUT_NANOS); // the probe's unpark, or a spurious return
                if ((start = probeStart) == 0 && System.nanoTime() - t0 > PROBE_TIMEOUT_NANOS) {
                    throw new IllegalStateException("probe did not start within 10 s on " + pool);
                }
            }
            return start;
        } finally {
            parkedWaiter = null;
        }
    }

    /** The probe's CPU ({@link WakeCounts}): written just after the start this thread has seen, so at once. */
    private int awaitProbeCpu(long t0) {
        int cpu;
        while ((cpu = probeCpu) == -1) {
            Thread.onSpinWait();
            if (System.nanoTime() - t0 > PROBE_TIMEOUT_NANOS) {
                throw new IllegalStateException("probe did not report its CPU within 10 s on " + pool);
            }
        }
        probeCpu = -1; // for the next probe, which is submitted after this store
        return cpu;
    }

    private void record(long t0, long start) {
        recordClamped(histogram, start - t0);
    }

    /** Records {@code nanos} into {@code h}, clamped to what it can hold (a clock step back reads as 0). */
    static void recordClamped(Histogram h, long nanos) {
        h.recordValue(Math.min(Math.max(nanos, 0), h.getHighestTrackableValue()));
    }

    private static int backOff(int spins) {
        if (spins < SPINS_BEFORE_YIELD) {
            Thread.onSpinWait();
        } else {
            Thread.yield(); // 2 cores: let the worker we are waiting for run
        }
        return spins + 1;
    }

    private void submit(Runnable task) {
        if (ours != null) {
            ours.submit(task);
        } else if (jdk != null) {
            jdk.execute(task);
        } else {
            long seq = ring.next();
            ring.get(seq).task = task;
            ring.publish(seq); // release: the consumer reads the slot after seeing the sequence
        }
    }

    private void writeRow(String benchmark) {
        String method = benchmark.substring(benchmark.lastIndexOf('.') + 1);
        Histogram h = histogram;
        String round = System.getenv(ROUND_ENV);
        String row = String.format(Locale.ROOT, "%s,%s,%d,%d,%d,%d,%d,%d,%d,%.1f,%s", method, pool, workers,
                h.getTotalCount(), h.getValueAtPercentile(50), h.getValueAtPercentile(90),
                h.getValueAtPercentile(99), h.getValueAtPercentile(99.9), h.getMaxValue(), h.getMean(),
                round == null ? "" : round.strip());
        System.out.println();
        System.out.println("HdrHistogram (" + CSV_HEADER + "): " + row);
        String out = System.getenv(OUT_ENV);
        Path file = Path.of(out == null || out.isBlank() ? "target/jmh/latency.csv" : out);
        try {
            if (file.getParent() != null) {
                Files.createDirectories(file.getParent());
            }
            boolean fresh = !Files.exists(file) || Files.size(file) == 0;
            String text = (fresh ? CSV_HEADER + "\n" : "") + row + "\n";
            Files.writeString(file, text, StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write latency row to " + file, e);
        }
    }
}
