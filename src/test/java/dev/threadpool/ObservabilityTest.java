package dev.threadpool;

import static dev.threadpool.TestSupport.WAIT;
import static dev.threadpool.TestSupport.assertAccounting;
import static dev.threadpool.TestSupport.assertClosedClean;
import static dev.threadpool.TestSupport.awaitQuiescent;
import static dev.threadpool.TestSupport.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.TestSupport.PoolVariant;
import dev.threadpool.internal.memory.PoolMemory;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** statsSnapshot contents (depth, peak, busy/idle, latency histograms) and worker scratch. */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ObservabilityTest {

    @org.junit.jupiter.api.AfterEach
    void auditAccounting() {
        TestSupport.auditTracked();
    }

    /** Every variant at this suite's 2 workers, then at 64 ({@link TestSupport#poolVariantsAndAt64()}). */
    static java.util.stream.Stream<PoolVariant> variants() {
        return TestSupport.poolVariantsAndAt64();
    }

    private static void await(CountDownLatch l) {
        try {
            assertTrue(l.await(WAIT.toMillis(), TimeUnit.MILLISECONDS), "latch timed out");
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    // ---- queue depth ------------------------------------------------------------------------------------

    @ParameterizedTest
    @MethodSource("dev.threadpool.TestSupport#oneWorkerVariants") // LANE_EXTENSION: the test below
    void queueDepthCurrentAndPeakPerLane(PoolVariant v) throws Exception {
        try (ThreadPool pool = TestSupport.track(ThreadPool.create(ThreadPoolContractTest.config(v).maxThreads(1).build()))) {
            CountDownLatch running = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            pool.submit(() -> {
                running.countDown();
                await(release);
            });
            await(running);
            for (int i = 0; i < 10; i++) {
                pool.submit(() -> { });
            }
            PoolStats s = pool.statsSnapshot();
            assertAccounting(s);
            assertEquals(10, s.lane(Lane.DEFAULT).depth(), "ten entries behind the blocked one: " + s);
            assertTrue(s.lane(Lane.DEFAULT).peakDepth() >= 10, "peak covers the depth: " + s);
            assertEquals(0, s.lane(Lane.BLOCKING).depth(), "no blocking lane in this variant");
            assertEquals(10, s.queueDepth());
            assertEquals(Lane.values().length, s.lanes().size());
            release.countDown();
            PoolStats q = awaitQuiescent(pool);
            assertEquals(0, q.queueDepth(), "drained: " + q);
            assertTrue(q.peakQueueDepth() >= 10, "the peak stays: " + q);
            assertAccounting(q);
        }
    }

    /** LANE_EXTENSION: each lane's depth and peak, with both of its workers held. */
    @Test
    void laneExtensionReportsDepthPerLane() throws Exception {
        try (ThreadPool pool = TestSupport.track(ThreadPool.create(PoolConfig.builder()
                .schedulerVariant(SchedulerVariant.LANE_EXTENSION).maxThreads(2).blockingWorkers(1)
                .maxOverflowWorkers(0).blockingPromotionTimeout(Duration.ofHours(1)).queueCapacity(64).daemon(true)
                .build()))) {
            CountDownLatch running = new CountDownLatch(2);
            CountDownLatch release = new CountDownLatch(1);
            pool.submit(() -> { running.countDown(); await(release); }, SubmitOptions.BLOCKING);
            pool.submit(() -> { running.countDown(); await(release); });
            await(running);
            for (int i = 0; i < 7; i++) {
                pool.submit(() -> { });
            }
            for (int i = 0; i < 3; i++) {
                pool.submit(() -> { }, SubmitOptions.BLOCKING);
            }
            PoolStats s = pool.statsSnapshot();
            assertAccounting(s);
            assertEquals(7, s.lane(Lane.DEFAULT).depth(), "seven default-lane entries queued: " + s);
            assertEquals(3, s.lane(Lane.BLOCKING).depth(), "three blocking-lane entries queued: " + s);
            assertTrue(s.lane(Lane.BLOCKING).peakDepth() >= 3, "peak covers the depth: " + s);
            assertEquals(10, s.queueDepth());
            release.countDown();
            PoolStats q = awaitQuiescent(pool);
            assertEquals(0, q.lane(Lane.BLOCKING).depth(), "drained: " + q);
            assertTrue(q.lane(Lane.BLOCKING).peakDepth() >= 3, "the peak stays: " + q);
        }
    }

    // ---- busy / idle ------------------------------------------------------------------------------------

    @ParameterizedTest
    @MethodSource("variants")
    void busyTimeGrowsWhileATaskRunsAndIdleTimeWhileParked(PoolVariant v) throws Exception {
        try (ThreadPool pool = TestSupport.track(ThreadPool.create(ThreadPoolContractTest.config(v).maxThreads(v.workersOr(2)).build()))) {
            CountDownLatch running = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            int[] worker = new int[1];
            pool.submit(() -> {
                worker[0] = pool.currentWorkerIndex();
                running.countDown();
                await(release);
            });
            await(running);
            int w = worker[0];
            long busy0 = pool.statsSnapshot().workers().get(w).busyNanos();
            eventually("busy time of the running worker grows",
                    () -> pool.statsSnapshot().workers().get(w).busyNanos() > busy0);
            int other = w == 0 ? 1 : 0;
            eventually("the other worker parks", () -> pool.statsSnapshot().workers().get(other).parks() > 0);
            long idle0 = pool.statsSnapshot().workers().get(other).idleNanos();
            eventually("idle time of the parked worker grows (the span in progress counts)",
                    () -> pool.statsSnapshot().workers().get(other).idleNanos() > idle0);
            release.countDown();
            PoolStats s = awaitQuiescent(pool);
            for (WorkerStats ws : s.workers()) {
                assertTrue(ws.busyNanos() >= 0 && ws.idleNanos() >= 0, "never negative: " + ws);
                assertEquals(ws.started(), ws.tasksRun());
            }
            assertTrue(s.busyNanos() > 0 && s.idleNanos() > 0, "totals: " + s);
            assertEquals(1, s.workers().get(w).tasksRun());
        }
    }

    /**
     * A BUSY_SPIN worker never parks and reads no clock when it finds work (Idle, "The idle clock"): its idle span
     * ends at an estimate. The estimate must not swallow the task it found, nor stop the spin from counting as idle.
     */
    @Test
    void aSpinningWorkersIdleEndIsEstimatedWithoutSwallowingTheTask() throws Exception {
        try (ThreadPool pool = TestSupport.track(ThreadPool.create(PoolConfig.builder()
                .schedulerVariant(SchedulerVariant.GLOBAL_QUEUE).maxThreads(1)
                .idleStrategy(IdleStrategy.BUSY_SPIN).build()))) {
            long idle0 = pool.statsSnapshot().workers().get(0).idleNanos();
            eventually("a spinning worker's idle time grows",
                    () -> pool.statsSnapshot().workers().get(0).idleNanos() > idle0);
            CountDownLatch running = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            long[] ran = new long[1];
            WaitGroup g = new WaitGroup();
            pool.submit(() -> {
                long t0 = System.nanoTime();
                running.countDown();
                await(release);
                ran[0] = System.nanoTime() - t0;
            }, g);
            await(running);
            long busy0 = pool.statsSnapshot().workers().get(0).busyNanos();
            eventually("busy time grows while the task runs",
                    () -> pool.statsSnapshot().workers().get(0).busyNanos() > busy0);
            release.countDown();
            assertTrue(g.await(Duration.ofSeconds(30)), "the task ended");
            PoolStats s = awaitQuiescent(pool);
            WorkerStats w = s.workers().get(0);
            // busy covers the task's own run; the estimate's error is nanoseconds a look, far below the millisecond
            assertTrue(w.busyNanos() >= ran[0] - TimeUnit.MILLISECONDS.toNanos(1),
                    "busy " + w.busyNanos() + " ns, task ran " + ran[0] + " ns");
            assertTrue(w.idleNanos() > 0 && w.busyNanos() >= 0, "both measured: " + w);
        }
    }

    // ---- latency histograms --------------------------------------------------------------------------------

    @ParameterizedTest
    @MethodSource("variants")
    void fullTimestampsRecordQueueWaitExecutionAndWakeLatency(PoolVariant v) throws Exception {
        try (ThreadPool pool = TestSupport.track(ThreadPool.create(ThreadPoolContractTest.config(v).queueCapacity(1024)
                .timestampMode(TimestampMode.FULL).build()))) {
            int n = 500;
            WaitGroup g = new WaitGroup();
            for (int i = 0; i < n; i++) {
                pool.submit(() -> Math.sqrt(ThreadLocalRandomHolder.next()), g);
            }
            assertTrue(g.await(WAIT));
            PoolStats s = awaitQuiescent(pool);
            LatencyStats l = s.latency();
            assertTrue(l.enabled());
            assertEquals(n, l.queueWait().count(), "every queued task: " + l);
            assertEquals(n, l.execution().count(), "every queued task: " + l);
            for (LatencySummary sum : new LatencySummary[] {l.queueWait(), l.execution()}) {
                assertTrue(sum.p50() <= sum.p90() && sum.p90() <= sum.p99() && sum.p99() <= sum.p999()
                        && sum.p999() <= sum.max(), "ordered percentiles: " + sum);
            }
            // wake latency: park every worker, then wake one with a single task
            int workers = pool.config().maxThreads();
            eventually("all workers parked", () -> pool.statsSnapshot().parkedWorkers() == workers);
            long wakeCount0 = pool.statsSnapshot().latency().wake().count();
            CountDownLatch ran = new CountDownLatch(1);
            pool.submit(ran::countDown);
            await(ran);
            eventually("a wake recorded", () -> pool.statsSnapshot().latency().wake().count() > wakeCount0,
                    () -> String.valueOf(pool.statsSnapshot()));
            PoolStats after = pool.statsSnapshot();
            long perWorker = 0;
            for (WorkerStats ws : after.workers()) {
                perWorker += ws.wakeLatency().count();
            }
            assertEquals(after.latency().wake().count(), perWorker, "the merged wake histogram sums the workers'");
            assertTrue(after.latency().wake().count() <= after.wakeups(), "a wake latency per deliberate wakeup at most");
            assertTrue(pool.memoryMap().stream().anyMatch(b -> b.purpose().contains("histogram")));
            assertAccounting(after);
        }
    }

    @Test
    void disabledTimestampsRecordNothingAndAllocateNoHistogram() throws Exception {
        ThreadPool pool = TestSupport.track(ThreadPool.create(PoolConfig.builder().maxThreads(2).daemon(true).build()));
        try {
            WaitGroup g = new WaitGroup();
            for (int i = 0; i < 100; i++) {
                pool.submit(() -> { }, g);
            }
            assertTrue(g.await(WAIT));
            PoolStats s = awaitQuiescent(pool);
            assertEquals(LatencyStats.DISABLED, s.latency());
            assertFalse(pool.memoryMap().stream().anyMatch(b -> b.purpose().contains("histogram")));
        } finally {
            pool.close();
        }
        assertClosedClean(pool);
    }

    @Test
    void theSystemPropertyCompilesTimestampsOutEvenForFullPools() throws Exception {
        dev.threadpool.audit.ChildJvm.Result on = dev.threadpool.audit.ChildJvm.run(
                dev.threadpool.audit.TimestampsOffMain.class, java.util.List.of());
        assertEquals(0, on.exitCode(), on.output());
        assertTrue(on.output().contains("enabled=true samples=1000 histogramBlocks=3"), on.output());
        dev.threadpool.audit.ChildJvm.Result off = dev.threadpool.audit.ChildJvm.run(
                dev.threadpool.audit.TimestampsOffMain.class, java.util.List.of("-Ddev.threadpool.timestamps=false"));
        assertEquals(0, off.exitCode(), off.output());
        assertTrue(off.output().contains("enabled=false samples=0 histogramBlocks=0"), off.output());
    }

    /** A tiny bit of work the JIT cannot drop. */
    static final class ThreadLocalRandomHolder {
        static double next() {
            return java.util.concurrent.ThreadLocalRandom.current().nextDouble();
        }
    }

    // ---- worker scratch -------------------------------------------------------------------------------------

    private static <T> T onWorker(ThreadPool pool, java.util.concurrent.Callable<T> body) throws Exception {
        AtomicReference<Object> out = new AtomicReference<>();
        long h = pool.submitWaitable(() -> {
            try {
                out.set(body.call());
            } catch (Throwable t) {
                out.set(t);
            }
        });
        pool.await(h);
        Object r = out.get();
        if (r instanceof Throwable t) {
            throw new AssertionError("task failed: " + t, t);
        }
        @SuppressWarnings("unchecked")
        T t = (T) r;
        return t;
    }

    @Test
    void scratchIsLazyCountedBoundedAndPurgedExactly() throws Exception {
        long cap = 8192;
        ThreadPool pool = TestSupport.track(ThreadPool.create(PoolConfig.builder().maxThreads(1).daemon(true)
                .workerScratchCapBytes(cap).build()));
        try {
            PoolStats before = awaitQuiescent(pool);
            assertEquals(0, before.scratchBytes());
            assertFalse(pool.memoryMap().stream().anyMatch(b -> b.purpose().startsWith("worker scratch")),
                    "a pool that never used scratch allocated none");
            assertThrows(IllegalStateException.class, pool::scratch, "not from a non-worker thread");

            long sum = onWorker(pool, () -> {
                WorkerScratch s = pool.scratch();
                assertTrue(s == pool.scratch(), "one object per worker");
                assertThrows(IllegalStateException.class, () -> s.allocate(8, 8), "needs begin()");
                long outer = s.begin();
                MemorySegment a = s.allocate(100, 1);
                long inner = s.begin();
                MemorySegment b = s.allocate(256, 64);
                assertEquals(0, b.address() % 64, "aligned");
                assertThrows(IllegalStateException.class, () -> s.finish(outer), "LIFO");
                assertThrows(IllegalArgumentException.class, () -> s.allocate(8, 3), "alignment");
                assertThrows(ScratchExhaustedException.class, () -> s.allocate(cap, 1), "over the cap");
                for (int i = 0; i < 32; i++) {
                    b.setAtIndex(ValueLayout.JAVA_LONG, i, i);
                }
                long total = 0;
                for (int i = 0; i < 32; i++) {
                    total += b.getAtIndex(ValueLayout.JAVA_LONG, i);
                }
                s.finish(inner);
                assertEquals(100, s.used(), "inner mark given back");
                a.set(ValueLayout.JAVA_BYTE, 0, (byte) 1);
                s.finish(outer);
                assertEquals(0, s.used());
                MemorySegment whole = null;
                long m = s.begin();
                whole = s.allocate(cap, 1); // exactly the cap fits
                s.finish(m);
                return total + whole.byteSize() - cap;
            });
            assertEquals(31 * 32 / 2, sum);

            PoolStats used = awaitQuiescent(pool);
            long counted = PoolMemory.countedSize(cap);
            assertEquals(counted, used.scratchBytes(), "the buffer is counted: " + used);
            assertEquals(counted, used.workers().get(0).scratchBytes());
            assertEquals(before.liveBytes() + counted, used.liveBytes(), "liveBytes grew by the buffer exactly");
            assertTrue(pool.memoryMap().stream().anyMatch(b -> b.purpose().equals("worker scratch 0") && b.releasable()));
            assertAccounting(used);

            pool.purgeWorkerCaches();
            PoolStats purged = pool.statsSnapshot();
            assertEquals(before.liveBytes(), purged.liveBytes(), "purge lowers liveBytes exactly");
            assertEquals(0, purged.scratchBytes());
            assertEquals(used.totalFreeBytes() + counted, purged.totalFreeBytes());
            assertAccounting(purged);

            // used again after a purge: allocated afresh
            onWorker(pool, () -> {
                WorkerScratch s = pool.scratch();
                long m = s.begin();
                s.allocate(16, 8);
                s.finish(m);
                return null;
            });
            assertEquals(counted, awaitQuiescent(pool).scratchBytes());
        } finally {
            pool.close();
        }
        assertClosedClean(pool);
    }

    @Test
    void purgeRefusesABusyPoolAndOldSegmentsFailAfterPurge() throws Exception {
        ThreadPool pool = TestSupport.track(ThreadPool.create(PoolConfig.builder().maxThreads(1).daemon(true).build()));
        try {
            CountDownLatch holding = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            AtomicReference<MemorySegment> kept = new AtomicReference<>();
            pool.submit(() -> {
                WorkerScratch s = pool.scratch();
                long m = s.begin();
                kept.set(s.allocate(64, 8));
                holding.countDown();
                await(release);
                s.finish(m);
            });
            await(holding);
            assertThrows(PoolBusyException.class, pool::purgeWorkerCaches, "a task is running");
            release.countDown();
            awaitQuiescent(pool);
            pool.purgeWorkerCaches();
            assertThrows(IllegalStateException.class, () -> kept.get().get(ValueLayout.JAVA_BYTE, 0),
                    "a purged buffer is inaccessible, never freed memory");
            assertEquals(0, pool.statsSnapshot().scratchBytes());
        } finally {
            pool.close();
        }
        assertClosedClean(pool);
    }

    @Test
    void disabledScratchSaysSo() throws Exception {
        try (ThreadPool pool = TestSupport.track(ThreadPool.create(PoolConfig.builder().maxThreads(1).daemon(true)
                .workerScratchCapBytes(0).build()))) {
            String msg = onWorker(pool, () -> {
                WorkerScratch s = pool.scratch();
                long m = s.begin();
                try {
                    s.allocate(1, 1);
                    return "allocated";
                } catch (ScratchExhaustedException e) {
                    return e.getMessage();
                } finally {
                    s.finish(m);
                }
            });
            assertTrue(msg.contains("workerScratchCapBytes=0"), msg);
            assertEquals(0, awaitQuiescent(pool).scratchBytes());
        }
    }

    @Test
    void anIdleWorkerFreesItsScratchAfterScratchIdlePurge() throws Exception {
        ThreadPool pool = TestSupport.track(ThreadPool.create(PoolConfig.builder().maxThreads(1).daemon(true)
                .scratchIdlePurge(Duration.ofMillis(5)).build()));
        try {
            long base = awaitQuiescent(pool).liveBytes();
            onWorker(pool, () -> {
                WorkerScratch s = pool.scratch();
                long m = s.begin();
                s.allocate(1024, 8);
                s.finish(m);
                return null;
            });
            eventually("the idle worker freed its scratch", () -> pool.statsSnapshot().scratchBytes() == 0);
            assertEquals(base, pool.statsSnapshot().liveBytes(), "exactly what the buffer cost came back");
            assertAccounting(pool.statsSnapshot());
        } finally {
            pool.close();
        }
        assertClosedClean(pool);
    }

    @Test
    void scratchIdlePurgeIsValidated() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> PoolConfig.builder().scratchIdlePurge(Duration.ofNanos(10)).build());
        assertTrue(e.getMessage().contains("scratchIdlePurge"), e.getMessage());
        assertThrows(NullPointerException.class, () -> PoolConfig.builder().scratchIdlePurge(null).build());
        assertEquals(Duration.ZERO, PoolConfig.defaults().scratchIdlePurge());
        assertEquals(Duration.ofSeconds(1),
                PoolConfig.builder().scratchIdlePurge(Duration.ofSeconds(1)).build().scratchIdlePurge());
    }
}
