package dev.threadpool.metrics;

import dev.threadpool.LatencySummary;
import dev.threadpool.PoolStats;
import dev.threadpool.ThreadPool;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.BaseUnits;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;

/**
 * Binds a pool's {@link ThreadPool#statsSnapshot()} figures to a Micrometer {@link MeterRegistry}.
 *
 * <pre>{@code
 * new ThreadPoolMetrics(pool, Tags.of("pool", "orders")).bindTo(registry);
 * }</pre>
 *
 * <p>Names follow Micrometer's own {@code ExecutorServiceMetrics} where a meter means the same thing
 * ({@code executor.completed}, {@code executor.active}, {@code executor.queued}, {@code executor.pool.size},
 * {@code executor.pool.core}, {@code executor.pool.max}, {@code executor.steals}, same types and base units);
 * the pool's own figures are named {@code threadpool.*}. The full table, and how it maps to JFR and JMX, is in
 * {@code docs/OBSERVABILITY.md}.
 *
 * <p>Every meter is a {@link FunctionCounter} or a {@link Gauge} whose state object is the pool, held weakly
 * as Micrometer does by default: nothing is counted for Micrometer on the pool's paths, and each read of a
 * meter takes one {@code statsSnapshot} (meant for scrape intervals, not a hot loop). After the pool closes
 * the meters read its final snapshot. Latency gauges are bound only for a pool that records latencies
 * ({@code TimestampMode.FULL}).
 */
public final class ThreadPoolMetrics implements MeterBinder {
    private final ThreadPool pool;
    private final Iterable<Tag> tags;

    /**
     * Binds {@code pool} with no extra tags.
     *
     * @param pool the pool whose snapshots the meters read (not null); held weakly by the meters
     */
    public ThreadPoolMetrics(ThreadPool pool) {
        this(pool, Tags.empty());
    }

    /**
     * Binds {@code pool}; every meter carries {@code tags} (e.g. {@code Tags.of("pool", "orders")}).
     *
     * @param pool the pool whose snapshots the meters read (not null); held weakly by the meters
     * @param tags added to every meter (not null; may be empty), copied at construction
     * @throws NullPointerException if {@code pool} or {@code tags} is null
     */
    public ThreadPoolMetrics(ThreadPool pool, Iterable<Tag> tags) {
        this.pool = Objects.requireNonNull(pool, "pool");
        this.tags = Tags.of(Objects.requireNonNull(tags, "tags"));
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        // Micrometer's ExecutorServiceMetrics names (ThreadPoolExecutor / ForkJoinPool), same meaning.
        counter(registry, "executor.completed", BaseUnits.TASKS,
                "The approximate total number of tasks that have completed execution (returned or threw)",
                s -> s.completed() + s.failed());
        gauge(registry, "executor.active", BaseUnits.THREADS,
                "The approximate number of threads that are actively executing tasks", PoolStats::activeTasks);
        gauge(registry, "executor.queued", BaseUnits.TASKS,
                "The approximate number of tasks that are queued for execution", PoolStats::queuedTasks);
        int core = pool.config().maxThreads();
        gauge(registry, "executor.pool.size", BaseUnits.THREADS, "The current number of threads in the pool",
                s -> core + s.overflowLive());
        Gauge.builder("executor.pool.core", pool, p -> p.config().maxThreads()).tags(tags)
                .description("The core number of threads for the pool").baseUnit(BaseUnits.THREADS).register(registry);
        Gauge.builder("executor.pool.max", pool, ThreadPool::workerSlots).tags(tags)
                .description("The maximum allowed number of threads in the pool (overflow workers included)")
                .baseUnit(BaseUnits.THREADS).register(registry);
        counter(registry, "executor.steals", null, "The total number of tasks stolen from one worker's queue"
                + " by another", PoolStats::steals);

        // The pool's own.
        counter(registry, "threadpool.tasks.submitted", BaseUnits.TASKS, "Tasks accepted", PoolStats::submitted);
        counter(registry, "threadpool.tasks.failed", BaseUnits.TASKS, "Tasks that threw", PoolStats::failed);
        counter(registry, "threadpool.tasks.cancelled", BaseUnits.TASKS, "Tasks cancelled before they started",
                PoolStats::cancelled);
        counter(registry, "threadpool.tasks.rejected", BaseUnits.TASKS,
                "Submissions refused after they had started (pool full, or shutdown while waiting)",
                PoolStats::rejected);
        counter(registry, "threadpool.tasks.inline", BaseUnits.TASKS,
                "Tasks a worker ran inline because the pool was full", PoolStats::inlineRuns);
        gauge(registry, "threadpool.queue.depth", BaseUnits.TASKS, "Entries queued now, over every lane",
                PoolStats::queueDepth);
        gauge(registry, "threadpool.queue.peak", BaseUnits.TASKS, "The lanes' peak queue depths, summed",
                PoolStats::peakQueueDepth);
        counter(registry, "threadpool.parks", null, "Times a worker parked", PoolStats::parks);
        counter(registry, "threadpool.wakeups", null, "Times a worker was woken on purpose", PoolStats::wakeups);
        gauge(registry, "threadpool.workers.parked", BaseUnits.THREADS, "Workers parked now",
                PoolStats::parkedWorkers);
        gauge(registry, "threadpool.overflow.live", BaseUnits.THREADS,
                "Overflow workers alive now (LANE_EXTENSION)", PoolStats::overflowLive);
        counter(registry, "threadpool.stalls", BaseUnits.TASKS,
                "Default-lane tasks seen running past the promotion timeout (LANE_EXTENSION)", PoolStats::stallsSeen);
        gauge(registry, "threadpool.memory.live", BaseUnits.BYTES, "Off-heap bytes in use", PoolStats::liveBytes);
        gauge(registry, "threadpool.memory.peak", BaseUnits.BYTES, "The most off-heap bytes ever in use",
                PoolStats::peakLiveBytes);
        counter(registry, "threadpool.memory.allocated", BaseUnits.BYTES, "Off-heap bytes ever allocated",
                PoolStats::totalAllocBytes);
        counter(registry, "threadpool.memory.freed", BaseUnits.BYTES, "Off-heap bytes ever given back",
                PoolStats::totalFreeBytes);
        gauge(registry, "threadpool.memory.scratch", BaseUnits.BYTES, "Worker scratch buffers' counted bytes",
                PoolStats::scratchBytes);

        if (pool.statsSnapshot().latency().enabled()) {
            latency(registry, "threadpool.latency.queue.wait", "Submit to start of tasks run from a queue",
                    s -> s.latency().queueWait());
            latency(registry, "threadpool.latency.execution", "Start to end of tasks run from a queue",
                    s -> s.latency().execution());
            latency(registry, "threadpool.latency.wake", "Deliberate unpark of a worker to it running again",
                    s -> s.latency().wake());
        }
    }

    /** Gauges {@code name{quantile=0.5|0.9|0.99|0.999|1.0}} in seconds (Micrometer's base time unit). */
    private void latency(MeterRegistry registry, String name, String description,
            Function<PoolStats, LatencySummary> summary) {
        record Q(String tag, ToDoubleFunction<LatencySummary> f) {}
        for (Q q : new Q[] {new Q("0.5", LatencySummary::p50), new Q("0.9", LatencySummary::p90),
                new Q("0.99", LatencySummary::p99), new Q("0.999", LatencySummary::p999),
                new Q("1.0", LatencySummary::max)}) {
            Gauge.builder(name, pool, p -> q.f().applyAsDouble(summary.apply(p.statsSnapshot())) / 1e9)
                    .tags(tags).tag("quantile", q.tag()).description(description + ", seconds (from ns)")
                    .baseUnit("seconds").register(registry);
        }
    }

    private void counter(MeterRegistry registry, String name, String unit, String description,
            ToDoubleFunction<PoolStats> f) {
        FunctionCounter.builder(name, pool, p -> f.applyAsDouble(p.statsSnapshot())).tags(tags)
                .description(description).baseUnit(unit).register(registry);
    }

    private void gauge(MeterRegistry registry, String name, String unit, String description,
            ToDoubleFunction<PoolStats> f) {
        Gauge.builder(name, pool, p -> f.applyAsDouble(p.statsSnapshot())).tags(tags).description(description)
                .baseUnit(unit).register(registry);
    }
}
