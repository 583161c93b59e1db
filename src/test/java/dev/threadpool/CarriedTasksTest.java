package dev.threadpool;

import static dev.threadpool.TestSupport.WAIT;
import static dev.threadpool.TestSupport.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.atomic.AtomicReference;
import dev.threadpool.TestSupport.PoolVariant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Carried tasks (DESIGN.md, "Carried tasks"), on every variant with a one-worker form (LANE_EXTENSION's own
 * cases are at the end): a detached task submitted from outside the pool takes no descriptor; it is bounded by the carried ring's {@code queueCapacity} cells while queued and holds
 * nothing while it runs. Everything else about it is any task's: counted, run once, failures reported,
 * cancelled by CANCEL_PENDING and handed to {@code shutdownNow}.
 */
class CarriedTasksTest {

    private static PoolConfig.Builder oneWorker(PoolVariant v, int capacity) {
        return v.builder().maxThreads(1).queueCapacity(capacity).daemon(true);
    }

    private static void awaitQuietly(CountDownLatch l) {
        try {
            l.await(WAIT.toSeconds(), TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.threadpool.TestSupport#oneWorkerVariants")
    @Timeout(60)
    void carriedTasksHoldNoDescriptorAndTheRingBoundsThemWhileQueued(PoolVariant v) throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        try (ThreadPool pool = ThreadPool.create(oneWorker(v, 4).build())) {
            assertTrue(TestSupport.carriesOutsideTasks(pool.config()));
            CountDownLatch running = new CountDownLatch(1);
            pool.submit(() -> { running.countDown(); awaitQuietly(release); });
            assertTrue(running.await(WAIT.toSeconds(), TimeUnit.SECONDS));
            AtomicInteger ran = new AtomicInteger();
            for (int i = 0; i < 4; i++) {
                assertTrue(pool.trySubmit(ran::incrementAndGet), "cell " + i + " of 4 is free");
            }
            PoolStats full = pool.statsSnapshot();
            assertFalse(pool.trySubmit(ran::incrementAndGet), "4 queued: the carried ring is full");
            assertFalse(pool.trySubmit(ran::incrementAndGet, java.time.Duration.ofMillis(20)), "timed: gives up");
            PoolStats after = pool.statsSnapshot();
            assertEquals(0, full.taskDescLive(), "carried tasks hold no descriptor: " + full);
            assertEquals(5, full.submitted(), "the blocker and the four queued: " + full);
            assertEquals(4, full.queuedTasks(), full.toString());
            assertEquals(5, after.submitted(), "a refused submit's accept was taken back: " + after);
            assertEquals(2, after.rejected(), after.toString());
            // the descriptors are untouched: a waitable task still gets one (and its own ring cell)
            long h = pool.submitWaitable(ran::incrementAndGet);
            assertEquals(1, pool.statsSnapshot().taskDescLive());
            release.countDown();
            pool.await(h, WAIT);
            eventually("every queued task ran", () -> ran.get() == 5);
        } finally {
            release.countDown();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.threadpool.TestSupport#oneWorkerVariants")
    @Timeout(60)
    void aWaitableTaskIsNotStarvedByAFullCarriedRing(PoolVariant v) throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        try (ThreadPool pool = ThreadPool.create(oneWorker(v, 64).build())) {
            CountDownLatch running = new CountDownLatch(1);
            pool.submit(() -> { running.countDown(); awaitQuietly(release); });
            assertTrue(running.await(WAIT.toSeconds(), TimeUnit.SECONDS));
            AtomicInteger order = new AtomicInteger();
            for (int i = 0; i < 64; i++) {
                pool.submit(order::incrementAndGet);
            }
            int[] waitableRanAt = {-1};
            long h = pool.submitWaitable(() -> waitableRanAt[0] = order.getAndIncrement());
            release.countDown();
            pool.await(h, WAIT);
            // the worker alternates which ring it tries first, and a batch it claimed from the carried ring (at most
            // MAX_BATCH tasks) runs before it looks again: the waitable runs within the first batch, not last
            int bound = dev.threadpool.internal.queue.CarriedBatches.MAX_BATCH;
            assertTrue(waitableRanAt[0] <= bound, "the waitable ran after " + waitableRanAt[0] + " carried tasks");
        } finally {
            release.countDown();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.threadpool.TestSupport#oneWorkerVariants")
    @Timeout(60)
    void aCarriedTaskThatThrowsIsReportedAndCountedAndTheWorkerLivesOn(PoolVariant v) throws Exception {
        AtomicReference<Throwable> handled = new AtomicReference<>();
        try (ThreadPool pool = ThreadPool.create(oneWorker(v, 16)
                .errorHandler((task, t) -> handled.set(t)).build())) {
            RuntimeException boom = new RuntimeException("boom");
            WaitGroup wg = new WaitGroup();
            pool.submit(() -> { throw boom; }, wg);
            pool.submit(() -> { }, wg);
            assertTrue(wg.await(WAIT));
            eventually("the failure was counted", () -> pool.statsSnapshot().failed() == 1);
            assertSame(boom, handled.get());
            assertSame(boom, pool.recentErrors().get(0));
            PoolStats s = TestSupport.awaitQuiescent(pool);
            assertEquals(1, s.completed(), s.toString());
            assertEquals(0, s.taskDescLive(), s.toString());
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.threadpool.TestSupport#oneWorkerVariants")
    @Timeout(60)
    void shutdownNowCancelsQueuedCarriedTasksAndHandsThemBack(PoolVariant v) throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        ThreadPool pool = ThreadPool.create(oneWorker(v, 16).build());
        try {
            ExecutorService es = pool.asExecutorService();
            CountDownLatch running = new CountDownLatch(1);
            es.execute(() -> { running.countDown(); awaitQuietly(release); });
            assertTrue(running.await(WAIT.toSeconds(), TimeUnit.SECONDS));
            WaitGroup wg = new WaitGroup();
            Runnable[] queued = new Runnable[10];
            AtomicInteger ran = new AtomicInteger();
            for (int i = 0; i < queued.length; i++) {
                queued[i] = ran::incrementAndGet;
                pool.submit(queued[i], wg);
            }
            List<Runnable> never = es.shutdownNow();
            assertEquals(queued.length, never.size(), "every queued carried task handed back");
            for (Runnable r : queued) {
                assertTrue(never.contains(r));
            }
            assertTrue(wg.await(WAIT), "their group was released");
            release.countDown();
            assertTrue(es.awaitTermination(WAIT.toSeconds(), TimeUnit.SECONDS));
            assertEquals(0, ran.get(), "none of them ran");
            PoolStats s = pool.statsSnapshot();
            assertEquals(queued.length, s.cancelled(), s.toString());
            assertEquals(queued.length + 1, s.submitted(), s.toString());
        } finally {
            release.countDown();
            pool.close();
        }
        TestSupport.assertClosedClean(pool);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.threadpool.TestSupport#oneWorkerVariants")
    @Timeout(60)
    void timestampModeFullKeepsEveryTaskOnADescriptor(PoolVariant v) throws Exception {
        try (ThreadPool pool = ThreadPool.create(oneWorker(v, 16).timestampMode(TimestampMode.FULL).build())) {
            assertFalse(TestSupport.carriesOutsideTasks(pool.config()));
            CountDownLatch release = new CountDownLatch(1);
            CountDownLatch running = new CountDownLatch(1);
            pool.submit(() -> { running.countDown(); awaitQuietly(release); });
            assertTrue(running.await(WAIT.toSeconds(), TimeUnit.SECONDS));
            assertEquals(1, pool.statsSnapshot().taskDescLive(), "the running task holds its descriptor");
            release.countDown();
        }
    }

    /**
     * WORK_STEALING gives a registered Submitter a queue of its own, which holds descriptors (owner pushes, no
     * CAS): its tasks are not carried. Elsewhere a Submitter's tasks take the outside path and are carried.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.threadpool.TestSupport#oneWorkerVariants")
    @Timeout(60)
    void aSubmitterWithAQueueOfItsOwnKeepsDescriptors(PoolVariant v) throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        try (ThreadPool pool = ThreadPool.create(oneWorker(v, 16).build())) {
            CountDownLatch running = new CountDownLatch(1);
            pool.submit(() -> { running.countDown(); awaitQuietly(release); });
            assertTrue(running.await(WAIT.toSeconds(), TimeUnit.SECONDS));
            WaitGroup wg = new WaitGroup();
            AtomicInteger ran = new AtomicInteger();
            pool.submit(ran::incrementAndGet, wg);
            assertEquals(0, pool.statsSnapshot().taskDescLive(), "a plain outside submit is carried");
            try (Submitter sub = pool.registerSubmitter()) {
                sub.submit(() -> { ran.incrementAndGet(); wg.done(); });
                wg.add(1);
                boolean ownQueue = v.variant() == SchedulerVariant.WORK_STEALING;
                assertEquals(ownQueue ? 1 : 0, pool.statsSnapshot().taskDescLive(),
                        ownQueue ? "the Submitter's own queue holds a descriptor" : "the Submitter's task is carried");
            }
            release.countDown();
            assertTrue(wg.await(WAIT));
            assertEquals(2, ran.get());
        } finally {
            release.countDown();
        }
    }

    /**
     * LANE_EXTENSION: a default-lane task from outside is carried (WORK_STEALING's carried ring), a blocking-lane
     * one never is (the blocking lane's ring holds descriptors' entries), and a carried task that stalls a
     * default worker is seen by the watchdog like any other (LaneExtensionTest covers the overflow worker).
     */
    @Test
    @Timeout(60)
    void laneExtensionCarriesTheDefaultLaneOnly() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        try (ThreadPool pool = ThreadPool.create(PoolConfig.builder().schedulerVariant(SchedulerVariant.LANE_EXTENSION)
                .maxThreads(2).blockingWorkers(1).maxOverflowWorkers(0).queueCapacity(16).daemon(true).build())) {
            CountDownLatch running = new CountDownLatch(2);
            pool.submit(() -> { running.countDown(); awaitQuietly(release); }, SubmitOptions.BLOCKING);
            pool.submit(() -> { running.countDown(); awaitQuietly(release); });
            assertTrue(running.await(WAIT.toSeconds(), TimeUnit.SECONDS));
            assertEquals(1, pool.statsSnapshot().taskDescLive(), "the running blocking-lane task only");
            WaitGroup wg = new WaitGroup();
            for (int i = 0; i < 3; i++) {
                pool.submit(() -> { }, wg, SubmitOptions.BLOCKING);
                pool.submit(() -> { }, wg);
            }
            PoolStats s = pool.statsSnapshot();
            assertEquals(4, s.taskDescLive(), "the three queued blocking-lane tasks took descriptors: " + s);
            assertEquals(8, s.submitted(), s.toString());
            release.countDown();
            assertTrue(wg.await(WAIT));
        } finally {
            release.countDown();
        }
    }

    /**
     * A submitter that found the carried ring full resumes once the ring has drained to half, not at the first
     * free cell (Submission, "Waiting for a carried cell": one wake per half ring); a timed submit whose deadline
     * passes while a cell is free takes it all the same (its last try).
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.threadpool.TestSupport#oneWorkerVariants")
    @Timeout(60)
    void aWaitingSubmitterResumesAtHalfNotAtTheFirstFreeCell(PoolVariant v) throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch holdFirst = new CountDownLatch(1);
        CountDownLatch holdSecond = new CountDownLatch(1);
        ThreadPool pool = ThreadPool.create(oneWorker(v, 8).build());
        try { // not try-with-resources: close() must come after the latches' release, or a failure here hangs it
            CountDownLatch running = new CountDownLatch(1);
            pool.submit(() -> { running.countDown(); awaitQuietly(release); });
            assertTrue(running.await(WAIT.toSeconds(), TimeUnit.SECONDS));
            CountDownLatch firstRunning = new CountDownLatch(1);
            CountDownLatch secondRunning = new CountDownLatch(1);
            pool.submit(() -> { firstRunning.countDown(); awaitQuietly(holdFirst); });
            pool.submit(() -> { secondRunning.countDown(); awaitQuietly(holdSecond); });
            AtomicInteger ran = new AtomicInteger();
            for (int i = 0; i < 6; i++) {
                pool.submit(ran::incrementAndGet);
            }
            AtomicBoolean pushed = new AtomicBoolean();
            Thread submitter = new Thread(() -> {
                pool.submit(ran::incrementAndGet);
                pushed.set(true);
            });
            submitter.start();
            eventually("the submitter waits: 8 of 8 cells queued", () -> parked(submitter));
            release.countDown(); // the worker pops the next task (7 of 8 queued) and is held in it
            assertTrue(firstRunning.await(WAIT.toSeconds(), TimeUnit.SECONDS));
            // A cell is free but the ring is above half: the submitter keeps waiting (it polls every millisecond and
            // re-checks the mark, so 20 ms give it 20 chances to push where it should not).
            long until = System.nanoTime() + 20_000_000L;
            while (System.nanoTime() - until < 0) {
                assertFalse(pushed.get(), "pushed with 7 of 8 cells queued");
                LockSupport.parkNanos(1_000_000L);
            }
            assertEquals(7, pool.statsSnapshot().queuedTasks());
            assertTrue(pool.trySubmit(ran::incrementAndGet), "a new submit takes the free cell at once");
            // Full again. A timed submit waits; meanwhile the worker pops one more (7 of 8, above half): at its
            // deadline the timed submit tries once more and takes that cell, while the waiter still waits.
            Thread caller = Thread.currentThread();
            Thread freer = new Thread(() -> {
                eventually("the timed submit waits", () -> parked(caller));
                holdFirst.countDown();
            });
            freer.start();
            assertTrue(pool.trySubmit(ran::incrementAndGet, java.time.Duration.ofSeconds(1)),
                    "the timed submit took the cell freed before its deadline");
            assertTrue(secondRunning.await(WAIT.toSeconds(), TimeUnit.SECONDS));
            freer.join(WAIT.toMillis());
            assertFalse(pushed.get(), "the waiter still waits: 8 of 8 queued");
            holdSecond.countDown(); // the ring drains; at half the submitter is signalled and pushes
            submitter.join(WAIT.toMillis());
            assertFalse(submitter.isAlive(), "the submitter resumed once the ring drained");
            eventually("every task ran", () -> ran.get() == 9);
        } finally {
            release.countDown();
            holdFirst.countDown();
            holdSecond.countDown();
            pool.close();
        }
    }

    /**
     * A worker that runs carried tasks one after another, with no idle spell between them, yields its CPU once
     * every 64 of them (DESIGN.md, "Yielding to outside submitters"), and counts it in {@code WorkerStats.yields}.
     * The blocker and the 3,200 tasks queued behind it run as one run: the worker never finds the ring empty
     * until the last, so the count is exact: 3,201 / 64 = 50.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.threadpool.TestSupport#oneWorkerVariants")
    @Timeout(60)
    void aWorkerYieldsItsCpuOnceEvery64CarriedTasksInARun(PoolVariant v) throws Exception {
        final int queued = 64 * 50;
        CountDownLatch release = new CountDownLatch(1);
        ThreadPool pool = ThreadPool.create(oneWorker(v, 4096).build());
        try {
            CountDownLatch running = new CountDownLatch(1);
            pool.submit(() -> { running.countDown(); awaitQuietly(release); });
            assertTrue(running.await(WAIT.toSeconds(), TimeUnit.SECONDS));
            WaitGroup group = new WaitGroup();
            AtomicInteger ran = new AtomicInteger();
            for (int i = 0; i < queued; i++) {
                pool.submit(ran::incrementAndGet, group);
            }
            assertEquals(0, pool.statsSnapshot().workers().get(0).yields(), "nothing has run past the blocker yet");
            release.countDown();
            assertTrue(group.await(WAIT), "the queued tasks ran");
            PoolStats s = pool.statsSnapshot();
            assertEquals(queued, ran.get());
            assertEquals((queued + 1) / 64, s.workers().get(0).yields(), s.toString());
        } finally {
            release.countDown();
            pool.close();
        }
    }

    /**
     * A search ends the run: a worker that goes idle between carried tasks (an event loop handing it one event at
     * a time) never yields, so the yield costs ping-pong latency nothing.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.threadpool.TestSupport#oneWorkerVariants")
    @Timeout(60)
    void aWorkerThatGoesIdleBetweenCarriedTasksNeverYields(PoolVariant v) throws Exception {
        try (ThreadPool pool = ThreadPool.create(oneWorker(v, 64).build())) {
            for (int i = 0; i < 3 * 64; i++) {
                long parks = pool.statsSnapshot().parks();
                WaitGroup group = new WaitGroup();
                pool.submit(() -> { }, group);
                assertTrue(group.await(WAIT), "task " + i + " ran");
                eventually("the worker parks after task " + i, () -> pool.statsSnapshot().parks() > parks);
            }
            PoolStats s = pool.statsSnapshot();
            assertEquals(3 * 64, s.completed());
            assertEquals(0, s.workers().get(0).yields(), s.toString());
        }
    }

    private static boolean parked(Thread t) {
        Thread.State s = t.getState();
        return s == Thread.State.WAITING || s == Thread.State.TIMED_WAITING;
    }
}
