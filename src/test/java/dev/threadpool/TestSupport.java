package dev.threadpool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.stream.Stream;

/** The variants under test, bounded waits and the accounting audit shared by the pool tests. */
public final class TestSupport {
    /** Generous: a bug fails the test after this long instead of hanging CI. */
    public static final Duration WAIT = Duration.ofSeconds(30);

    private TestSupport() {}

    // ---- the variants every pool-level test runs on -------------------------------------------------------

    /**
     * One pool-level variant under test: the scheduler, its local queue kind (WORK_STEALING's choice) and, for the
     * wide forms of {@link #POOL_VARIANTS_64}, a worker count that overrides the suite's own ({@code workers} 0:
     * the suite chooses, through {@link #workersOr}).
     */
    public record PoolVariant(SchedulerVariant variant, QueueKind queueKind, int workers) {
        /** The form whose worker count the suite chooses. */
        public PoolVariant(SchedulerVariant variant, QueueKind queueKind) {
            this(variant, queueKind, 0);
        }

        /**
         * A builder with this scheduler and queue kind and every other field at its default; for a wide form
         * also {@code maxThreads(workers)} and, on LANE_EXTENSION, {@link #blockingWorkersAt} of them reserved
         * for the blocking lane.
         */
        public PoolConfig.Builder builder() {
            PoolConfig.Builder b = PoolConfig.builder().schedulerVariant(variant).queueKind(queueKind);
            if (workers > 0) {
                b.maxThreads(workers);
                if (variant == SchedulerVariant.LANE_EXTENSION) {
                    b.blockingWorkers(blockingWorkersAt(workers));
                }
            }
            return b;
        }

        /** The worker count of a wide form, else the suite's {@code suiteWorkers}. */
        public int workersOr(int suiteWorkers) {
            return workers > 0 ? workers : suiteWorkers;
        }

        /** The same scheduler and queue kind at {@code n} workers. */
        public PoolVariant at(int n) {
            return new PoolVariant(variant, queueKind, n);
        }

        @Override
        public String toString() {
            String name = variant == SchedulerVariant.WORK_STEALING ? variant + "/" + queueKind : variant.name();
            return workers > 0 ? name + " x" + workers : name;
        }
    }

    /**
     * Every variant this version provides, in this order. The one list for ThreadPoolContractTest,
     * ExecutorServiceContractTest, SubmissionCountingTest and ObservabilityTest: a new variant (or queue kind)
     * joins here and must then pass all of them. LANE_EXTENSION (whose default lane is WORK_STEALING's) runs
     * with the default local queue, RING.
     */
    public static final List<PoolVariant> POOL_VARIANTS = List.of(
            new PoolVariant(SchedulerVariant.GLOBAL_QUEUE, QueueKind.RING),
            new PoolVariant(SchedulerVariant.WORK_STEALING, QueueKind.RING),
            new PoolVariant(SchedulerVariant.WORK_STEALING, QueueKind.CHASE_LEV),
            new PoolVariant(SchedulerVariant.LANE_EXTENSION, QueueKind.RING));

    /** {@link #POOL_VARIANTS}, for {@code @MethodSource}. */
    public static Stream<PoolVariant> poolVariants() {
        return POOL_VARIANTS.stream();
    }

    /**
     * Every variant of {@link #POOL_VARIANTS} at {@link PoolConfig#MAX_THREADS} (64) workers, the most a pool can
     * have (issue 48: users run the pool on 8 to 64 cores; on a 2-core box these are oversubscribed, which is
     * fine for correctness). LANE_EXTENSION reserves a quarter of them ({@link #blockingWorkersAt}: 16) for the
     * blocking lane and, since {@code maxThreads + maxOverflowWorkers <= 64}, has no overflow workers at this
     * size. ThreadPoolContractTest, ExecutorServiceContractTest, SubmissionCountingTest and ObservabilityTest
     * run their every-variant cases on these too (their one-worker cases stay one-worker).
     */
    public static final List<PoolVariant> POOL_VARIANTS_64 =
            POOL_VARIANTS.stream().map(v -> v.at(PoolConfig.MAX_THREADS)).toList();

    /** {@link #POOL_VARIANTS_64}, for {@code @MethodSource}. */
    public static Stream<PoolVariant> poolVariants64() {
        return POOL_VARIANTS_64.stream();
    }

    /** {@link #POOL_VARIANTS} then {@link #POOL_VARIANTS_64}: every variant at the suite's size and at 64. */
    public static Stream<PoolVariant> poolVariantsAndAt64() {
        return Stream.concat(poolVariants(), poolVariants64());
    }

    /**
     * The blocking-lane share of a wide LANE_EXTENSION pool of {@code workers}: a quarter (16 of 64), so both
     * lanes are wide (the default lane keeps three quarters for CPU work, as a user sizing for cores would).
     */
    public static int blockingWorkersAt(int workers) {
        return Math.max(1, workers / 4);
    }

    /**
     * {@link #POOL_VARIANTS} without the variants of {@code excluded}: the documented way for a test to leave
     * out a scheduler it cannot run on. The test's {@code @MethodSource} names a factory that calls this, and
     * that factory's comment says why (as {@link #oneWorkerVariants()} does).
     */
    public static Stream<PoolVariant> poolVariantsExcept(SchedulerVariant... excluded) {
        List<SchedulerVariant> out = List.of(excluded);
        return poolVariants().filter(v -> !out.contains(v.variant()));
    }

    /**
     * Whether detached default-lane tasks submitted from outside a pool of {@code config} (not through a
     * WORK_STEALING Submitter, which has its own queue) are carried by a ring cell with no descriptor: then
     * {@code queueCapacity} bounds them while queued only (a running one holds nothing), as ThreadPoolExecutor's
     * bounded queue does; otherwise a task holds its descriptor until it ends. Every variant carries them
     * except under TimestampMode.FULL, which keeps every task on a descriptor.
     */
    public static boolean carriesOutsideTasks(PoolConfig config) {
        return config.timestampMode() != TimestampMode.FULL;
    }

    /**
     * The variants that can run with a single worker (maxThreads = 1), for the tests that need "the one worker
     * is busy". LANE_EXTENSION has at least one blocking and one default worker, and the blocking worker helps
     * the default lane, so it has no one-worker form. These tests therefore do not run on it (LaneExtensionTest
     * holds every worker with latches for its own checks, but does not repeat these one by one).
     */
    public static Stream<PoolVariant> oneWorkerVariants() {
        return poolVariantsExcept(SchedulerVariant.LANE_EXTENSION);
    }

    /** Polls {@code condition} until it holds or {@link #WAIT} passes (then fails with {@code what}). */
    public static void eventually(String what, BooleanSupplier condition) {
        eventually(what, condition, () -> "");
    }

    public static void eventually(String what, BooleanSupplier condition, Supplier<String> detail) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        long park = 10_000L;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                fail("timed out after " + WAIT + " waiting for: " + what + " " + detail.get());
            }
            LockSupport.parkNanos(park);
            park = Math.min(park * 2, 5_000_000L);
        }
    }

    /** Waits until nothing is queued or running and every detached descriptor is back. */
    public static PoolStats awaitQuiescent(ThreadPool pool) {
        PoolStats[] last = new PoolStats[1];
        eventually("quiescent pool", () -> {
            PoolStats s = pool.statsSnapshot();
            last[0] = s;
            return s.queuedTasks() == 0 && s.activeTasks() == 0 && s.taskDescLive() == 0;
        }, () -> String.valueOf(last[0]));
        assertQuiescentAccounting(last[0]);
        return last[0];
    }

    /** The memory-accounting invariants every snapshot must satisfy. */
    public static void assertAccounting(PoolStats s) {
        assertEquals(s.totalAllocBytes() - s.totalFreeBytes(), s.liveBytes(), "liveBytes = alloc - free: " + s);
        assertTrue(s.peakLiveBytes() >= s.liveBytes(), "peakLiveBytes >= liveBytes: " + s);
        assertTrue(s.completed() + s.failed() <= s.started(), "finished <= started: " + s);
        assertTrue(s.started() + s.cancelled() <= s.submitted(), "started + cancelled <= submitted: " + s);
        assertTrue(s.taskDescLive() >= 0, "taskDescLive >= 0: " + s);
        assertFalse(s.accountingSkewDetected(), "no accounting skew: " + s);
        long scratch = 0;
        for (WorkerStats w : s.workers()) {
            assertTrue(w.busyNanos() >= 0 && w.idleNanos() >= 0, "busy/idle never negative: " + w);
            assertTrue(w.localQueueLength() >= 0, "local queue length >= 0: " + w);
            scratch += w.scratchBytes();
        }
        assertEquals(scratch, s.scratchBytes(), "scratchBytes sums the workers': " + s);
        assertTrue(s.scratchBytes() <= s.liveBytes(), "scratch is part of liveBytes: " + s);
        for (LaneStats l : s.lanes()) {
            assertTrue(l.depth() >= 0 && l.peakDepth() >= l.depth(), "0 <= depth <= peak: " + l);
        }
        LatencyStats lat = s.latency();
        assertTrue(lat.queueWait().count() <= s.started() && lat.execution().count() <= s.started(),
                "latency samples <= started: " + lat);
        assertTrue(s.overflowLive() >= 0, "overflowLive >= 0: " + s);
    }

    /** {@link #assertAccounting} plus what must hold once nothing is queued or running. */
    public static void assertQuiescentAccounting(PoolStats s) {
        assertAccounting(s);
        assertEquals(0, s.taskDescLive(), "taskDescLive back to zero when quiescent: " + s);
        assertEquals(0, s.queuedTasks(), "nothing queued: " + s);
        assertEquals(0, s.activeTasks(), "nothing running: " + s);
    }

    private static final List<ThreadPool> TRACKED = new ArrayList<>();

    /** Registers {@code pool} for {@link #auditTracked()}; returns it. */
    public static synchronized ThreadPool track(ThreadPool pool) {
        TRACKED.add(pool);
        return pool;
    }

    /**
     * The audit run after every workload of a test class: each tracked pool is checked with
     * {@link #assertClosedClean} if closed, else with {@link #assertAccounting}; the list is then cleared.
     */
    public static synchronized void auditTracked() {
        try {
            for (ThreadPool p : TRACKED) {
                if (p.isClosed()) {
                    assertClosedClean(p);
                } else {
                    assertAccounting(p.statsSnapshot());
                }
            }
        } finally {
            TRACKED.clear();
        }
    }

    /** After close: nothing live, everything freed, every accepted task accounted for. */
    public static void assertClosedClean(ThreadPool pool) {
        PoolStats s = pool.statsSnapshot();
        assertAccounting(s);
        assertEquals(0, s.liveBytes(), "liveBytes after close: " + s);
        assertEquals(s.totalAllocBytes(), s.totalFreeBytes(), "alloc == free after close: " + s);
        assertEquals(0, s.taskDescLive(), "taskDescLive after close: " + s);
        assertEquals(s.submitted(), s.completed() + s.failed() + s.cancelled(), "every task ended: " + s);
        assertTrue(s.totalAllocBytes() > 0, "the pool allocated something: " + s);
        assertEquals(0, s.scratchBytes(), "no scratch after close: " + s);
    }
}
