package dev.threadpool.jmh;

import dev.threadpool.IdleStrategy;
import dev.threadpool.PoolConfig;
import dev.threadpool.SchedulerVariant;
import dev.threadpool.ThreadPool;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.RejectedExecutionHandler;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The pools every workload is measured on, by the name used in the {@code pool} JMH parameter. One name, one
 * configuration, shared by all benchmark classes so that a ratio in one table compares like with like:
 *
 * <table>
 *   <caption>pool names</caption>
 *   <tr><th>name</th><th>what</th></tr>
 *   <tr><td>{@code GLOBAL_QUEUE}, {@code WORK_STEALING}, {@code LANE_EXTENSION}</td>
 *       <td>ours, that scheduler variant, {@link IdleStrategy#PARK} (the default)</td></tr>
 *   <tr><td>the same with suffix {@code _SPIN}</td><td>ours with {@link IdleStrategy#BUSY_SPIN} (latency only)</td></tr>
 *   <tr><td>{@code FJP}</td><td>{@code new ForkJoinPool(threads)}</td></tr>
 *   <tr><td>{@code TPE_LBQ}</td><td>{@code ThreadPoolExecutor(threads, threads)} over an unbounded
 *       {@code LinkedBlockingQueue}: what {@code Executors.newFixedThreadPool} builds</td></tr>
 *   <tr><td>{@code TPE_ABQ}</td><td>{@code ThreadPoolExecutor(threads, threads)} over an
 *       {@code ArrayBlockingQueue} of the capacity the caller passes (the comparisons pass ours' bound,
 *       {@link Fairness#boundFor}), with {@link #BLOCKING_PUT} so a full queue makes the submitter wait, as ours
 *       does</td></tr>
 * </table>
 *
 * <p>All pools get the same thread count; JDK executors have their core threads prestarted because ours starts
 * every worker in {@code create}. A {@code threads} parameter of 0 means {@link Runtime#availableProcessors()}.
 */
final class Pools {
    /** Ring capacity of our pools, and of the TPE_ABQ queue, in the flood workloads. */
    static final int FLOOD_QUEUE = 16_384;

    /** Names of our scheduler variants, in declaration order. */
    static final SchedulerVariant[] OURS = SchedulerVariant.values();

    private Pools() {
    }

    /** {@code threads} with 0 meaning "one per available processor". */
    static int threads(int param) {
        if (param < 0) {
            throw new IllegalArgumentException("threads must be >= 0 (0 = availableProcessors), got " + param);
        }
        return param == 0 ? Runtime.getRuntime().availableProcessors() : param;
    }

    /** True when {@code pool} names one of our variants (with or without the {@code _SPIN} suffix). */
    static boolean isOurs(String pool) {
        return variantOf(pool) != null;
    }

    private static SchedulerVariant variantOf(String pool) {
        String base = pool.endsWith("_SPIN") ? pool.substring(0, pool.length() - "_SPIN".length()) : pool;
        for (SchedulerVariant v : OURS) {
            if (v.name().equals(base)) {
                return v;
            }
        }
        return null;
    }

    /** Our pool for {@code pool}, or null when the name is not one of ours. */
    static ThreadPool ours(String pool, int threads, int queueCapacity) {
        return ours(pool, threads, queueCapacity, null);
    }

    /** As {@link #ours(String, int, int)}, with PARK's idle window set ({@code null}: the default). */
    static ThreadPool ours(String pool, int threads, int queueCapacity, java.time.Duration idleWindow) {
        SchedulerVariant v = variantOf(pool);
        if (v == null) {
            return null;
        }
        IdleStrategy idle = pool.endsWith("_SPIN") ? IdleStrategy.BUSY_SPIN : IdleStrategy.PARK;
        PoolConfig.Builder b = PoolConfig.builder();
        if (idleWindow != null) {
            b.idleWindow(idleWindow);
        }
        return ThreadPool.create(b
                .schedulerVariant(v)
                .maxThreads(threads)
                .queueCapacity(queueCapacity)
                .idleStrategy(idle)
                .threadNamePrefix("bench-" + pool.toLowerCase() + "-")
                .daemon(true)
                .build());
    }

    /** A JDK executor for {@code pool}, or null when the name is not a JDK pool. */
    static ExecutorService jdk(String pool, int threads, int queueCapacity) {
        return switch (pool) {
            case "FJP" -> new ForkJoinPool(threads);
            case "TPE_LBQ" -> tpe(threads, new LinkedBlockingQueue<>());
            case "TPE_ABQ" -> tpe(threads, new ArrayBlockingQueue<>(queueCapacity));
            default -> null;
        };
    }

    /** As {@link #jdk}, but the LinkedBlockingQueue is bounded too (the bounded-burst workload). */
    static ExecutorService jdkBounded(String pool, int threads, int queueCapacity) {
        if (pool.equals("TPE_LBQ")) {
            return tpe(threads, new LinkedBlockingQueue<>(queueCapacity));
        }
        return jdk(pool, threads, queueCapacity);
    }

    private static ThreadPoolExecutor tpe(int threads, BlockingQueue<Runnable> queue) {
        ThreadPoolExecutor e = new ThreadPoolExecutor(threads, threads, 0L, TimeUnit.MILLISECONDS, queue,
                r -> {
                    Thread t = new Thread(r, "bench-tpe");
                    t.setDaemon(true);
                    return t;
                }, BLOCKING_PUT);
        e.prestartAllCoreThreads();
        return e;
    }

    /**
     * Makes a full bounded queue block the submitter, like our {@code submit}: the usual way to get
     * back-pressure out of a ThreadPoolExecutor. (CallerRunsPolicy would instead run the task on the submitting
     * thread, which measures a different thing: the producer stops producing and becomes a worker.) All core
     * threads are prestarted and never time out, so a task put into the queue is always taken.
     */
    static final RejectedExecutionHandler BLOCKING_PUT = (r, executor) -> {
        if (executor.isShutdown()) {
            throw new RejectedExecutionException("executor is shut down");
        }
        try {
            executor.getQueue().put(r);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RejectedExecutionException("interrupted while waiting for queue space", e);
        }
    };

    static void close(ThreadPool ours, ExecutorService jdk) throws InterruptedException {
        if (ours != null) {
            ours.close();
        }
        if (jdk != null) {
            jdk.shutdown();
            if (!jdk.awaitTermination(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("executor did not terminate within 30 s: " + jdk);
            }
        }
    }
}
