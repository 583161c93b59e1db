package dev.threadpool;

import static dev.threadpool.TestSupport.WAIT;
import static dev.threadpool.TestSupport.assertAccounting;
import static dev.threadpool.TestSupport.assertClosedClean;
import static dev.threadpool.TestSupport.awaitQuiescent;
import static dev.threadpool.TestSupport.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.TestSupport.PoolVariant;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The public contract of {@link ThreadPool}, run against every scheduler variant this version provides.
 * Every wait is bounded; nothing here asserts a timing.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ThreadPoolContractTest {

    /**
     * Every variant ({@link TestSupport#POOL_VARIANTS}, the one list) at this suite's 2 workers, then each at 64
     * ({@link TestSupport#POOL_VARIANTS_64}); each must pass the whole suite.
     */
    static Stream<PoolVariant> variants() {
        return TestSupport.poolVariantsAndAt64();
    }

    /** The variants with a one-worker form ({@link TestSupport#oneWorkerVariants()}: not LANE_EXTENSION). */
    static Stream<PoolVariant> oneWorkerVariants() {
        return TestSupport.oneWorkerVariants();
    }

    static PoolConfig.Builder config(PoolVariant v) {
        // daemon workers: a pool leaked by a failing test cannot keep the test JVM alive
        return v.builder().maxThreads(v.workersOr(2)).queueCapacity(64).daemon(true);
    }

    static ThreadPool pool(PoolVariant v) {
        return TestSupport.track(ThreadPool.create(config(v).build()));
    }

    /** The accounting audit after every workload (see TestSupport.auditTracked). */
    @org.junit.jupiter.api.AfterEach
    void auditAccounting() {
        TestSupport.auditTracked();
    }

    // ---- exactly once ----------------------------------------------------------------------------------

    /**
     * submitBatch from tasks that run inline or while their submitter helps (a full pool): each nested call
     * must use its own chunk buffer, never the pending entries of the outer call on the same thread.
     */
    @ParameterizedTest
    @MethodSource("variants")
    void nestedBatchSubmitsThroughAFullPoolLoseNothing(PoolVariant v) throws Exception {
        int outer = 300;
        int inner = 20;
        AtomicIntegerArray runs = new AtomicIntegerArray(outer * (inner + 1));
        try (ThreadPool pool = pool(v)) {
            Runnable[] batch = new Runnable[outer];
            for (int o = 0; o < outer; o++) {
                int base = o * (inner + 1);
                batch[o] = () -> {
                    runs.incrementAndGet(base);
                    Runnable[] leaves = new Runnable[inner];
                    for (int k = 0; k < inner; k++) {
                        int id = base + 1 + k;
                        leaves[k] = () -> runs.incrementAndGet(id);
                    }
                    assertEquals(inner, pool.submitBatch(leaves, 0, inner));
                };
            }
            assertEquals(outer, pool.submitBatch(batch, 0, outer));
            eventually("every outer and inner task ran", () -> {
                for (int i = 0; i < runs.length(); i++) {
                    if (runs.get(i) == 0) {
                        return false;
                    }
                }
                return true;
            });
            awaitQuiescent(pool);
            assertAccounting(pool.statsSnapshot());
        }
        for (int i = 0; i < runs.length(); i++) {
            assertEquals(1, runs.get(i), "task " + i + " ran exactly once");
        }
    }

    @ParameterizedTest
    @MethodSource("variants")
    void everySubmittedTaskRunsExactlyOnce(PoolVariant v) throws Exception {
        int n = 50_000;
        AtomicIntegerArray runs = new AtomicIntegerArray(n);
        try (ThreadPool pool = pool(v)) {
            WaitGroup wg = new WaitGroup();
            for (int i = 0; i < n; i++) {
                int id = i;
                pool.submit(() -> runs.incrementAndGet(id), wg);
            }
            assertTrue(wg.await(WAIT), "all tasks done");
            awaitQuiescent(pool);
            PoolStats s = pool.statsSnapshot();
            assertEquals(n, s.submitted());
            assertEquals(n, s.completed());
            assertAccounting(s);
        }
        for (int i = 0; i < n; i++) {
            assertEquals(1, runs.get(i), "task " + i + " ran once");
        }
    }

    @ParameterizedTest
    @MethodSource("variants")
    void concurrentSubmittersThroughAFullPoolLoseNothing(PoolVariant v) throws Exception {
        int perThread = 20_000;
        int threads = 4;
        AtomicIntegerArray runs = new AtomicIntegerArray(perThread * threads);
        ThreadPool pool = ThreadPool.create(config(v).queueCapacity(8).build());
        List<Thread> ts = new ArrayList<>();
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        for (int t = 0; t < threads; t++) {
            int base = t * perThread;
            int mode = t % 3;
            Thread th = new Thread(() -> {
                try {
                    Runnable[] batch = new Runnable[10];
                    for (int i = 0; i < perThread; ) {
                        if (mode == 0) {
                            int id = base + i++;
                            pool.submit(() -> runs.incrementAndGet(id));
                        } else if (mode == 1) {
                            int id = base + i;
                            if (pool.trySubmit(() -> runs.incrementAndGet(id), Duration.ofMillis(1))) {
                                i++;
                            }
                        } else {
                            int k = Math.min(batch.length, perThread - i);
                            for (int j = 0; j < k; j++) {
                                int id = base + i + j;
                                batch[j] = () -> runs.incrementAndGet(id);
                            }
                            assertEquals(k, pool.submitBatch(batch, 0, k));
                            i += k;
                        }
                    }
                } catch (Throwable e) {
                    errors.add(e);
                }
            });
            ts.add(th);
            th.start();
        }
        for (Thread th : ts) {
            th.join(WAIT.toMillis());
            assertFalse(th.isAlive(), "submitter finished");
        }
        assertTrue(errors.isEmpty(), () -> "submitter errors: " + errors);
        pool.close();
        assertClosedClean(pool);
        for (int i = 0; i < perThread * threads; i++) {
            assertEquals(1, runs.get(i), "task " + i + " ran once");
        }
    }

    @ParameterizedTest
    @MethodSource("variants")
    void tasksSubmittedToAnIdlePoolAllRun(PoolVariant v) throws Exception {
        try (ThreadPool pool = pool(v)) {
            for (int n : new int[] {1, 2, 31}) {
                // every worker parked first: the submit must get through the park handshake
                int workers = pool.config().maxThreads();
                eventually("all workers parked", () -> pool.statsSnapshot().parkedWorkers() == workers);
                PoolStats before = pool.statsSnapshot();
                WaitGroup wg = new WaitGroup();
                for (int i = 0; i < n; i++) {
                    pool.submit(() -> { }, wg);
                }
                assertTrue(wg.await(WAIT), n + " tasks submitted to an idle pool all ran");
                assertTrue(pool.statsSnapshot().completed() >= before.completed() + n);
            }
        }
    }

    // ---- non-waiting and timed submit --------------------------------------------------------------------

    @ParameterizedTest
    @MethodSource("oneWorkerVariants")
    void trySubmitReturnsFalseWhenFullAndTimedTrySubmitGivesUp(PoolVariant v) throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        try (ThreadPool pool = ThreadPool.create(config(v).maxThreads(1).queueCapacity(2).build())) {
            blockTheWorker(pool, release);
            // a running blocker holds one of the 2 descriptors, or (carried) nothing: the ring's 2 cells are free
            int room = TestSupport.carriesOutsideTasks(pool.config()) ? 2 : 1;
            for (int i = 0; i < room; i++) {
                assertTrue(pool.trySubmit(() -> { }), "room for " + (room - i) + " more");
            }
            assertFalse(pool.trySubmit(() -> { }), "full");
            assertFalse(pool.trySubmit(() -> { }, Duration.ZERO), "ZERO = one attempt");
            assertFalse(pool.trySubmit(() -> { }, Duration.ofMillis(20)), "timed attempt gives up while full");
            assertEquals(3, pool.statsSnapshot().rejected());
            release.countDown();
            assertTrue(pool.trySubmit(() -> { }, WAIT), "space appears once the blocker finishes");
        } finally {
            release.countDown();
        }
    }

    /**
     * Fills a one-worker pool of {@code queueCapacity} 2 whose worker runs a blocker: one more task where the
     * blocker holds a descriptor, two where it is carried and holds nothing (TestSupport.carriesOutsideTasks).
     */
    /** Occupies a one-worker pool's worker with a task that waits for {@code release}; returns once it runs. */
    private static void blockTheWorker(ThreadPool pool, CountDownLatch release) throws InterruptedException {
        CountDownLatch running = new CountDownLatch(1);
        pool.submit(() -> { running.countDown(); awaitQuietly(release); });
        assertTrue(running.await(WAIT.toSeconds(), TimeUnit.SECONDS), "the blocker runs");
    }

    private static void fillBehindTheBlocker(ThreadPool pool) {
        int room = TestSupport.carriesOutsideTasks(pool.config()) ? 2 : 1;
        for (int i = 0; i < room; i++) {
            pool.submit(() -> { });
        }
    }

    @ParameterizedTest
    @MethodSource("oneWorkerVariants")
    void blockingSubmitWaitsForSpaceAndThenProceeds(PoolVariant v) throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        try (ThreadPool pool = ThreadPool.create(config(v).maxThreads(1).queueCapacity(2).build())) {
            blockTheWorker(pool, release);
            fillBehindTheBlocker(pool);
            AtomicBoolean third = new AtomicBoolean();
            Thread submitter = new Thread(() -> pool.submit(() -> third.set(true)));
            submitter.start();
            eventually("submitter blocked waiting for space",
                    () -> submitter.getState() == Thread.State.TIMED_WAITING
                            || submitter.getState() == Thread.State.WAITING);
            assertFalse(third.get());
            release.countDown();
            submitter.join(WAIT.toMillis());
            assertFalse(submitter.isAlive());
            eventually("third task ran", third::get);
        } finally {
            release.countDown();
        }
    }

    // ---- lanes -----------------------------------------------------------------------------------------

    /**
     * SubmitOptions.BLOCKING is accepted by every variant and through every submit path. GLOBAL_QUEUE and
     * WORK_STEALING run such tasks on their shared workers; LANE_EXTENSION only on its blocking workers (the
     * default cpuHelpsBlocking is off, and nothing here is submitted from a worker, so nothing runs inline).
     */
    @ParameterizedTest
    @MethodSource("variants")
    void blockingLaneTasksRunThroughEveryPath(PoolVariant v) throws Exception {
        try (ThreadPool pool = pool(v)) {
            final int n = 5 * 40;
            AtomicIntegerArray runs = new AtomicIntegerArray(n);
            AtomicInteger offLane = new AtomicInteger();
            int lanes = v.variant() == SchedulerVariant.LANE_EXTENSION ? pool.config().blockingWorkers()
                    : pool.config().maxThreads();
            WaitGroup wg = new WaitGroup();
            Runnable[] tasks = new Runnable[n];
            for (int i = 0; i < n; i++) {
                final int id = i;
                tasks[i] = () -> {
                    runs.incrementAndGet(id);
                    int w = pool.currentWorkerIndex();
                    if (w < 0 || w >= lanes) {
                        offLane.incrementAndGet();
                    }
                };
            }
            for (int i = 0; i < 40; i++) {
                pool.submit(tasks[i], SubmitOptions.BLOCKING);
                pool.submit(tasks[40 + i], wg, SubmitOptions.BLOCKING);
                assertTrue(pool.trySubmit(tasks[80 + i], WAIT, SubmitOptions.BLOCKING));
                pool.await(pool.submitWaitable(tasks[120 + i], SubmitOptions.BLOCKING));
            }
            assertEquals(40, pool.submitBatch(tasks, 160, 200, SubmitOptions.BLOCKING));
            assertTrue(wg.await(WAIT));
            eventually("every BLOCKING task ran", () -> {
                for (int i = 0; i < n; i++) {
                    if (runs.get(i) == 0) {
                        return false;
                    }
                }
                return true;
            });
            awaitQuiescent(pool);
            for (int i = 0; i < n; i++) {
                assertEquals(1, runs.get(i), "task " + i);
            }
            assertEquals(0, offLane.get(), "BLOCKING tasks ran on the workers of their lane");
        }
    }

    // ---- batch -----------------------------------------------------------------------------------------

    @ParameterizedTest
    @MethodSource("variants")
    void submitBatchSubmitsTheRangeAndValidatesFirst(PoolVariant v) throws Exception {
        try (ThreadPool pool = pool(v)) {
            AtomicInteger ran = new AtomicInteger();
            Runnable[] tasks = new Runnable[1000];
            for (int i = 0; i < tasks.length; i++) {
                tasks[i] = ran::incrementAndGet;
            }
            assertEquals(990, pool.submitBatch(tasks, 5, 995));
            assertEquals(0, pool.submitBatch(tasks, 7, 7));
            eventually("batch ran", () -> ran.get() == 990);
            tasks[500] = null;
            NullPointerException npe = assertThrows(NullPointerException.class, () -> pool.submitBatch(tasks, 0, 1000));
            assertTrue(npe.getMessage().contains("tasks[500]"), npe.getMessage());
            assertMessage(IndexOutOfBoundsException.class,
                    "from and to must satisfy 0 <= from <= to <= tasks.length: from=10, to=5, tasks.length=1000",
                    () -> pool.submitBatch(tasks, 10, 5));
            assertThrows(IndexOutOfBoundsException.class, () -> pool.submitBatch(tasks, 0, 1001));
            assertThrows(NullPointerException.class, () -> pool.submitBatch(null, 0, 0));
            awaitQuiescent(pool);
            assertEquals(990, pool.statsSnapshot().submitted(), "nothing of the invalid batches was submitted");
        }
    }

    /**
     * submitBatch with a group, from outside (through a full pool: 1,000 tasks into 64 cells), from a registered
     * Submitter, with the BLOCKING option and from inside a task: the group's await returns only once every
     * task of the batch has run, and its count is back at zero.
     */
    @ParameterizedTest
    @MethodSource("variants")
    void submitBatchWithAGroupCountsEveryTask(PoolVariant v) throws Exception {
        int n = 1000;
        try (ThreadPool pool = pool(v)) {
            AtomicInteger ran = new AtomicInteger();
            Runnable[] tasks = new Runnable[n];
            Arrays.fill(tasks, (Runnable) ran::incrementAndGet);
            WaitGroup group = new WaitGroup();
            for (int round = 0; round < 4; round++) {
                ran.set(0);
                int submitted = switch (round) {
                    case 0 -> pool.submitBatch(tasks, 0, n, group);
                    case 1 -> {
                        try (Submitter sub = pool.registerSubmitter()) {
                            yield sub.submitBatch(tasks, 0, n, group);
                        }
                    }
                    case 2 -> pool.submitBatch(tasks, 0, n, group, SubmitOptions.BLOCKING);
                    default -> {
                        // from a worker: its batch goes to its own queues (or runs inline when full), and its await
                        // helps; the outer task counts itself in the same group
                        AtomicInteger inner = new AtomicInteger(-1);
                        WaitGroup nested = new WaitGroup();
                        pool.submit(() -> {
                            inner.set(pool.submitBatch(tasks, 0, n, nested));
                            try {
                                nested.await();
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                            }
                        }, group);
                        assertTrue(group.await(WAIT), "the outer task ended");
                        assertEquals(0, nested.pending());
                        yield inner.get();
                    }
                };
                assertEquals(n, submitted, "round " + round);
                assertTrue(group.await(WAIT), "round " + round + ": the batch ended");
                assertEquals(n, ran.get(), "round " + round + ": every task ran before the group reached zero");
                assertEquals(0, group.pending(), "round " + round);
            }
            NullPointerException npe = assertThrows(NullPointerException.class,
                    () -> pool.submitBatch(tasks, 0, n, (WaitGroup) null));
            assertTrue(npe.getMessage().contains("group"), npe.getMessage());
            awaitQuiescent(pool);
            assertAccounting(pool.statsSnapshot());
        }
    }

    /**
     * A batch with a group that shutdown stops part-way: the group counts exactly the tasks the call returns
     * as submitted (the adds of the rest are taken back), so its await returns once those have run.
     */
    @ParameterizedTest
    @MethodSource("oneWorkerVariants")
    void aBatchStoppedByShutdownLeavesItsGroupCountingWhatWasSubmitted(PoolVariant v) throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        ThreadPool pool = ThreadPool.create(config(v).maxThreads(1).queueCapacity(2).build());
        try {
            blockTheWorker(pool, release);
            AtomicInteger ran = new AtomicInteger();
            Runnable[] tasks = new Runnable[10];
            Arrays.fill(tasks, (Runnable) ran::incrementAndGet);
            WaitGroup group = new WaitGroup();
            AtomicInteger submitted = new AtomicInteger(-1);
            ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
            Thread submitter = new Thread(() -> {
                try {
                    submitted.set(pool.submitBatch(tasks, 0, tasks.length, group));
                } catch (Throwable e) {
                    errors.add(e);
                }
            });
            submitter.start();
            eventually("submitter waiting for space", () -> submitter.getState() == Thread.State.TIMED_WAITING
                    || submitter.getState() == Thread.State.WAITING);
            assertFalse(pool.shutdown(ShutdownMode.DRAIN, Duration.ZERO));
            submitter.join(WAIT.toMillis());
            assertFalse(submitter.isAlive(), "the batch gave up when shutdown started");
            assertTrue(errors.isEmpty(), () -> "submitter threw " + errors);
            int room = TestSupport.carriesOutsideTasks(pool.config()) ? 2 : 1;
            assertEquals(room, submitted.get(), "the batch returned what was submitted before shutdown");
            assertEquals(room, group.pending(), "the group counts what was submitted, not the whole batch");
            release.countDown();
            assertTrue(group.await(WAIT), "the submitted tasks drained and the group reached zero");
            assertEquals(room, ran.get());
            assertEquals(0, group.pending());
        } finally {
            release.countDown();
            pool.close();
        }
        assertClosedClean(pool);
    }

    // ---- waitable handles --------------------------------------------------------------------------------

    @ParameterizedTest
    @MethodSource("variants")
    void awaitReturnsAfterTheTaskAndReleasesItsDescriptor(PoolVariant v) throws Exception {
        try (ThreadPool pool = pool(v)) {
            AtomicBoolean ran = new AtomicBoolean();
            long h = pool.submitWaitable(() -> ran.set(true));
            pool.await(h);
            assertTrue(ran.get());
            assertTrue(pool.await(h, Duration.ZERO), "a second await before reuse still reports completion");
            assertEquals(0, awaitQuiescent(pool).taskDescLive());
        }
    }

    @ParameterizedTest
    @MethodSource("variants")
    void awaitOfAFailedTaskThrowsTaskFailedWithTheCause(PoolVariant v) throws Exception {
        try (ThreadPool pool = pool(v)) {
            IllegalStateException boom = new IllegalStateException("boom");
            long h = pool.submitWaitable(() -> { throw boom; });
            TaskFailedException e = assertThrows(TaskFailedException.class, () -> pool.await(h));
            assertSame(boom, e.getCause());
            assertEquals(1, pool.statsSnapshot().failed());
        }
    }

    @ParameterizedTest
    @MethodSource("variants")
    void awaitWithTimeoutReturnsFalseWhileRunning(PoolVariant v) throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        try (ThreadPool pool = pool(v)) {
            long h = pool.submitWaitable(() -> awaitQuietly(release));
            assertFalse(pool.await(h, Duration.ofMillis(10)));
            release.countDown();
            assertTrue(pool.await(h, WAIT));
        } finally {
            release.countDown();
        }
    }

    @ParameterizedTest
    @MethodSource("oneWorkerVariants")
    void cancelWorksOnlyWhileQueued(PoolVariant v) throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        try (ThreadPool pool = ThreadPool.create(config(v).maxThreads(1).build())) {
            CountDownLatch running = new CountDownLatch(1);
            long blocker = pool.submitWaitable(() -> { running.countDown(); awaitQuietly(release); });
            assertTrue(running.await(WAIT.toSeconds(), TimeUnit.SECONDS));
            AtomicBoolean ran = new AtomicBoolean();
            long queued = pool.submitWaitable(() -> ran.set(true));
            assertFalse(pool.cancel(blocker), "running: cannot cancel");
            assertTrue(pool.cancel(queued), "queued: cancelled");
            assertFalse(pool.cancel(queued), "only once");
            assertThrows(TaskCancelledException.class, () -> pool.await(queued));
            release.countDown();
            pool.await(blocker);
            awaitQuiescent(pool);
            assertFalse(ran.get(), "a cancelled task never runs");
            PoolStats s = pool.statsSnapshot();
            assertEquals(1, s.cancelled());
            assertEquals(0, s.taskDescLive());
        } finally {
            release.countDown();
        }
    }

    @ParameterizedTest
    @MethodSource("variants")
    void concurrentAwaitsReleaseTheSlotExactlyOnce(PoolVariant v) throws Exception {
        try (ThreadPool pool = pool(v)) {
            for (int round = 0; round < 200; round++) {
                CountDownLatch go = new CountDownLatch(1);
                long h = pool.submitWaitable(() -> awaitQuietly(go));
                int awaiters = 4;
                AtomicInteger ok = new AtomicInteger();
                ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
                Thread[] ts = new Thread[awaiters];
                for (int i = 0; i < awaiters; i++) {
                    ts[i] = new Thread(() -> {
                        try {
                            if (pool.await(h, WAIT)) {
                                ok.incrementAndGet();
                            }
                        } catch (Throwable e) {
                            errors.add(e);
                        }
                    });
                    ts[i].start();
                }
                go.countDown();
                for (Thread t : ts) {
                    t.join(WAIT.toMillis());
                }
                assertTrue(errors.isEmpty(), () -> "await errors: " + errors);
                assertEquals(awaiters, ok.get(), "every awaiter saw completion");
                assertEquals(0, awaitQuiescent(pool).taskDescLive(), "slot released once, not leaked");
            }
            // had any awaiter released the slot twice, the freelist would hand one slot out twice:
            int n = 64;
            long[] hs = new long[n];
            for (int i = 0; i < n; i++) {
                hs[i] = pool.submitWaitable(() -> { });
            }
            java.util.Set<Integer> slots = new java.util.HashSet<>();
            long slotMask = pool.config().queueCapacity() - 1; // a handle is gen << log2(capacity) | slot
            for (long h : hs) {
                int slot = (int) (h & slotMask);
                assertTrue(slots.add(slot), "slot handed out twice: " + slot);
                pool.await(h);
            }
        }
    }

    @ParameterizedTest
    @MethodSource("variants")
    void lateAwaitOnAReusedSlotAndForeignHandlesAreInvalid(PoolVariant v) throws Exception {
        try (ThreadPool pool = ThreadPool.create(config(v).queueCapacity(2).build())) {
            long h = pool.submitWaitable(() -> { });
            pool.await(h);
            // reuse every slot at least once
            for (int i = 0; i < 4; i++) {
                pool.await(pool.submitWaitable(() -> { }));
            }
            assertThrows(InvalidHandleException.class, () -> pool.await(h));
            assertThrows(InvalidHandleException.class, () -> pool.await(-1L));
            assertThrows(InvalidHandleException.class, () -> pool.await(5L)); // slot 5 of 2
            assertThrows(InvalidHandleException.class, () -> pool.cancel(1L << 40));
        }
    }

    // ---- wait groups -------------------------------------------------------------------------------------

    @ParameterizedTest
    @MethodSource("variants")
    void waitGroupCountsFailuresAndTimesOut(PoolVariant v) throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        try (ThreadPool pool = pool(v)) {
            WaitGroup wg = new WaitGroup();
            pool.submit(() -> { throw new RuntimeException("counted as done"); }, wg);
            pool.submit(() -> awaitQuietly(release), wg);
            assertFalse(wg.await(Duration.ofMillis(10)));
            release.countDown();
            assertTrue(wg.await(WAIT));
            assertEquals(0, wg.pending());
            assertThrows(IllegalArgumentException.class, () -> wg.await(Duration.ofSeconds(-1)));
        } finally {
            release.countDown();
        }
    }

    // ---- failures ----------------------------------------------------------------------------------------

    @ParameterizedTest
    @MethodSource("oneWorkerVariants")
    void taskExceptionsNeverKillAWorkerOrSkewTheAccounting(PoolVariant v) throws Exception {
        AtomicInteger handled = new AtomicInteger();
        TaskErrorHandler handler = (task, error) -> {
            handled.incrementAndGet();
            if (error instanceof StackOverflowError) {
                throw new IllegalStateException("the handler itself fails");
            }
        };
        try (ThreadPool pool = ThreadPool.create(config(v).maxThreads(1).recentErrorCapacity(4)
                .errorHandler(handler).build())) {
            WaitGroup wg = new WaitGroup();
            for (int i = 0; i < 10; i++) {
                pool.submit(() -> { throw new IllegalArgumentException("checked"); }, wg);
            }
            pool.submit(() -> { throw new StackOverflowError("an Error"); }, wg);
            AtomicInteger after = new AtomicInteger();
            for (int i = 0; i < 10; i++) {
                pool.submit(after::incrementAndGet, wg);
            }
            assertTrue(wg.await(WAIT));
            assertEquals(10, after.get(), "the single worker survived every failure");
            PoolStats s = awaitQuiescent(pool);
            assertEquals(11, s.failed());
            assertEquals(10, s.completed());
            assertEquals(11, handled.get());
            assertEquals(1, pool.errorHandlerFailures());
            assertEquals(4, pool.recentErrors().size(), "bounded to recentErrorCapacity");
            assertInstanceOf(StackOverflowError.class, pool.recentErrors().get(3), "most recent last");
            assertAccounting(s);
        }
    }

    @ParameterizedTest
    @MethodSource("oneWorkerVariants")
    void aTaskThatInterruptsItselfDoesNotMakeTheWorkerSpinOrLeakTheInterrupt(PoolVariant v)
            throws Exception {
        try (ThreadPool pool = ThreadPool.create(config(v).maxThreads(1).build())) {
            WaitGroup wg = new WaitGroup();
            pool.submit(() -> Thread.currentThread().interrupt(), wg);
            AtomicBoolean sawInterrupt = new AtomicBoolean(true);
            pool.submit(() -> sawInterrupt.set(Thread.currentThread().isInterrupted()), wg);
            assertTrue(wg.await(WAIT));
            assertFalse(sawInterrupt.get(), "the next task does not inherit the interrupt");
            eventually("worker parked", () -> pool.statsSnapshot().parks() > 0);
            long parks = pool.statsSnapshot().parks();
            // A worker that kept its interrupt status would return from park at once, over and over:
            // its park count would climb without bound. Idle, it parks once and stays parked.
            CountDownLatch never = new CountDownLatch(1);
            assertFalse(never.await(200, TimeUnit.MILLISECONDS)); // a delay, not synchronisation
            long more = pool.statsSnapshot().parks() - parks;
            assertTrue(more < 50, "idle worker re-parked " + more + " times in 200 ms: it is spinning");
            AtomicBoolean stillWorks = new AtomicBoolean();
            WaitGroup wg2 = new WaitGroup();
            pool.submit(() -> stillWorks.set(true), wg2);
            assertTrue(wg2.await(WAIT));
            assertTrue(stillWorks.get());
        }
    }

    // ---- recursion and inline policy ----------------------------------------------------------------------

    @ParameterizedTest
    @MethodSource("oneWorkerVariants")
    void submitFromATaskIntoAFullPoolNeverDeadlocks(PoolVariant v) throws Exception {
        try (ThreadPool pool = ThreadPool.create(config(v).maxThreads(1).queueCapacity(2).build())) {
            int children = 1_000;
            WaitGroup wg = new WaitGroup();
            AtomicInteger ran = new AtomicInteger();
            pool.submit(() -> {
                for (int i = 0; i < children; i++) {
                    pool.submit(ran::incrementAndGet, wg);
                }
            }, wg);
            assertTrue(wg.await(WAIT), "no deadlock");
            assertEquals(children, ran.get());
            PoolStats s = awaitQuiescent(pool);
            assertTrue(s.inlineRuns() > 0, "the full pool ran children inline: " + s);
            assertEquals(children + 1, s.submitted());
            assertEquals(children + 1, s.completed());
            assertAccounting(s);
        }
    }

    @ParameterizedTest
    @MethodSource("oneWorkerVariants")
    void unboundedInlineRecursionIsRefusedNotAStackOverflow(PoolVariant v) throws Exception {
        ThreadPool pool = ThreadPool.create(config(v).maxThreads(1).queueCapacity(2).build());
        AtomicInteger depth = new AtomicInteger();
        AtomicInteger refused = new AtomicInteger();
        class Forever implements Runnable {
            @Override
            public void run() {
                if (refused.get() > 0) {
                    return; // stop growing once the pool has refused
                }
                depth.incrementAndGet();
                for (int child = 0; child < 2; child++) { // the first fills the pool, the second runs inline
                    try {
                        pool.submit(new Forever());
                    } catch (PoolBusyException e) {
                        refused.incrementAndGet();
                    }
                }
            }
        }
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch running = new CountDownLatch(1);
        pool.submit(() -> { running.countDown(); awaitQuietly(release); });
        assertTrue(running.await(WAIT.toSeconds(), TimeUnit.SECONDS));
        pool.submit(new Forever()); // runs once the blocker is released; its children nest inline
        release.countDown();
        eventually("the innermost submits were refused", () -> refused.get() > 0);
        awaitQuiescent(pool); // the nested levels unwind (and submit their last children) before we close
        pool.close();
        assertClosedClean(pool);
        PoolStats s = pool.statsSnapshot();
        assertTrue(depth.get() > 1 && depth.get() <= 70, "nesting bounded: depth=" + depth.get());
        assertEquals(refused.get(), s.rejected(), "each refusal counted once: " + s);
        assertEquals(s.submitted(), s.completed(), () -> "every accepted level completed: " + s + " errors "
                + pool.recentErrors());
    }

    @ParameterizedTest
    @MethodSource("variants")
    void recursiveFanOutFarBeyondCapacityCompletes(PoolVariant v) throws Exception {
        try (ThreadPool pool = ThreadPool.create(config(v).queueCapacity(16).build())) {
            AtomicLong leaves = new AtomicLong();
            WaitGroup wg = new WaitGroup();
            int depth = 14; // 2^14 leaves, 2^15 - 1 tasks through 16 descriptors
            pool.submit(new Fan(pool, wg, leaves, depth), wg);
            assertTrue(wg.await(WAIT));
            assertEquals(1L << depth, leaves.get());
            assertEquals((1L << (depth + 1)) - 1, awaitQuiescent(pool).completed());
        }
    }

    private record Fan(ThreadPool pool, WaitGroup wg, AtomicLong leaves, int depth) implements Runnable {
        @Override
        public void run() {
            if (depth == 0) {
                leaves.incrementAndGet();
                return;
            }
            pool.submit(new Fan(pool, wg, leaves, depth - 1), wg);
            pool.submit(new Fan(pool, wg, leaves, depth - 1), wg);
        }
    }

    @ParameterizedTest
    @MethodSource("oneWorkerVariants")
    void submitWaitableFromAWorkerHelpsInsteadOfDeadlocking(PoolVariant v) throws Exception {
        try (ThreadPool pool = ThreadPool.create(config(v).maxThreads(1).queueCapacity(4).build())) {
            AtomicInteger ran = new AtomicInteger();
            long outer = pool.submitWaitable(() -> {
                try {
                    for (int i = 0; i < 20; i++) {
                        long h = pool.submitWaitable(ran::incrementAndGet);
                        pool.await(h);
                    }
                } catch (InterruptedException e) {
                    throw new RuntimeException(e);
                }
            });
            pool.await(outer, WAIT);
            assertEquals(20, ran.get());
        }
    }

    // ---- shutdown ----------------------------------------------------------------------------------------

    @ParameterizedTest
    @MethodSource("variants")
    void drainRunsEverythingAcceptedThenRefusesSubmits(PoolVariant v) throws Exception {
        ThreadPool pool = ThreadPool.create(config(v).queueCapacity(1024).build());
        AtomicInteger ran = new AtomicInteger();
        for (int i = 0; i < 1000; i++) {
            pool.submit(ran::incrementAndGet);
        }
        assertTrue(pool.shutdown(ShutdownMode.DRAIN, WAIT));
        assertEquals(1000, ran.get());
        assertTrue(pool.isTerminated());
        assertThrows(PoolShutdownException.class, () -> pool.submit(() -> { }));
        assertThrows(PoolShutdownException.class, () -> pool.trySubmit(() -> { }));
        assertThrows(PoolShutdownException.class, () -> pool.submitWaitable(() -> { }));
        assertThrows(PoolShutdownException.class, () -> pool.submitBatch(new Runnable[] {() -> { }}, 0, 1));
        assertTrue(pool.shutdown(ShutdownMode.DRAIN, Duration.ZERO), "idempotent");
        pool.close();
        assertClosedClean(pool);
        assertEquals(1000, pool.statsSnapshot().completed());
    }

    @ParameterizedTest
    @MethodSource("oneWorkerVariants")
    void cancelPendingCancelsWhatIsQueuedAndLetsRunningTasksFinish(PoolVariant v) throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        ThreadPool pool = ThreadPool.create(config(v).maxThreads(1).queueCapacity(256).build());
        CountDownLatch running = new CountDownLatch(1);
        AtomicBoolean runningFinished = new AtomicBoolean();
        pool.submit(() -> { running.countDown(); awaitQuietly(release); runningFinished.set(true); });
        assertTrue(running.await(WAIT.toSeconds(), TimeUnit.SECONDS));
        AtomicInteger queuedRan = new AtomicInteger();
        WaitGroup wg = new WaitGroup();
        for (int i = 0; i < 100; i++) {
            pool.submit(queuedRan::incrementAndGet, wg);
        }
        long waitable = pool.submitWaitable(queuedRan::incrementAndGet);
        Thread shutter = new Thread(() -> {
            try {
                pool.shutdown(ShutdownMode.CANCEL_PENDING, WAIT);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        shutter.start();
        eventually("queued tasks cancelled", () -> pool.statsSnapshot().cancelled() == 101);
        assertTrue(wg.await(WAIT), "cancelled tasks count their wait group down");
        assertThrows(TaskCancelledException.class, () -> pool.await(waitable));
        release.countDown();
        shutter.join(WAIT.toMillis());
        assertFalse(shutter.isAlive());
        assertTrue(runningFinished.get(), "the running task finished");
        assertEquals(0, queuedRan.get(), "no queued task ran");
        pool.close();
        assertClosedClean(pool);
        PoolStats s = pool.statsSnapshot();
        assertEquals(102, s.submitted());
        assertEquals(101, s.cancelled());
        assertEquals(1, s.completed());
    }

    @ParameterizedTest
    @MethodSource("oneWorkerVariants")
    void shutdownHonoursItsTimeoutAndCanBeRetried(PoolVariant v) throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        ThreadPool pool = ThreadPool.create(config(v).maxThreads(1).build());
        try {
            blockTheWorker(pool, release);
            assertFalse(pool.shutdown(ShutdownMode.DRAIN, Duration.ofMillis(20)), "task still running");
            assertFalse(pool.shutdown(ShutdownMode.DRAIN, Duration.ZERO));
            assertThrows(PoolShutdownException.class, () -> pool.submit(() -> { }));
            release.countDown();
            assertTrue(pool.shutdown(ShutdownMode.DRAIN, WAIT));
        } finally {
            release.countDown();
            pool.close();
        }
        assertClosedClean(pool);
    }

    @ParameterizedTest
    @MethodSource("variants")
    void shutdownFromSeveralThreadsAtOnce(PoolVariant v) throws Exception {
        ThreadPool pool = ThreadPool.create(config(v).queueCapacity(1024).build());
        AtomicInteger ran = new AtomicInteger();
        for (int i = 0; i < 1000; i++) {
            pool.submit(ran::incrementAndGet);
        }
        int callers = 4;
        AtomicInteger stoppedInTime = new AtomicInteger();
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        Thread[] ts = new Thread[callers];
        for (int i = 0; i < callers; i++) {
            ShutdownMode mode = i % 2 == 0 ? ShutdownMode.DRAIN : ShutdownMode.CANCEL_PENDING;
            ts[i] = new Thread(() -> {
                try {
                    if (pool.shutdown(mode, WAIT)) {
                        stoppedInTime.incrementAndGet();
                    }
                } catch (Throwable e) {
                    errors.add(e);
                }
            });
            ts[i].start();
        }
        for (Thread t : ts) {
            t.join(WAIT.toMillis());
        }
        assertTrue(errors.isEmpty(), () -> "errors: " + errors);
        assertEquals(callers, stoppedInTime.get());
        pool.close();
        assertClosedClean(pool);
        PoolStats s = pool.statsSnapshot();
        assertEquals(1000, s.completed() + s.cancelled(), "every task ran or was cancelled: " + s);
        assertEquals(s.completed(), ran.get());
    }

    @ParameterizedTest
    @MethodSource("variants")
    void shutdownOrCloseFromAWorkerThrowsInsteadOfDeadlocking(PoolVariant v) throws Exception {
        try (ThreadPool pool = pool(v)) {
            long shut = pool.submitWaitable(() -> {
                try {
                    pool.shutdown(ShutdownMode.DRAIN, WAIT);
                } catch (InterruptedException e) {
                    throw new RuntimeException(e);
                }
            });
            TaskFailedException e1 = assertThrows(TaskFailedException.class, () -> pool.await(shut, WAIT));
            assertInstanceOf(IllegalStateException.class, e1.getCause());
            long close = pool.submitWaitable(pool::close);
            TaskFailedException e2 = assertThrows(TaskFailedException.class, () -> pool.await(close, WAIT));
            assertInstanceOf(IllegalStateException.class, e2.getCause());
            assertFalse(pool.isShutdown(), "the pool keeps running");
        }
    }

    @ParameterizedTest
    @MethodSource("oneWorkerVariants")
    void blockedSubmittersAreReleasedByShutdown(PoolVariant v) throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        ThreadPool pool = ThreadPool.create(config(v).maxThreads(1).queueCapacity(2).build());
        try {
            blockTheWorker(pool, release);
            fillBehindTheBlocker(pool);
            ConcurrentLinkedQueue<Throwable> outcome = new ConcurrentLinkedQueue<>();
            Thread submitter = new Thread(() -> {
                try {
                    pool.submit(() -> { });
                } catch (Throwable e) {
                    outcome.add(e);
                }
            });
            submitter.start();
            eventually("submitter waiting", () -> submitter.getState() == Thread.State.TIMED_WAITING);
            assertFalse(pool.shutdown(ShutdownMode.DRAIN, Duration.ZERO));
            submitter.join(WAIT.toMillis());
            assertFalse(submitter.isAlive(), "a submitter waiting for space gives up when shutdown starts");
            assertInstanceOf(PoolShutdownException.class, outcome.peek());
        } finally {
            release.countDown();
            pool.close();
        }
        assertClosedClean(pool);
    }

    /** shutdown() on other threads while close() frees the arena: no FFM "already closed" may escape. */
    @ParameterizedTest
    @MethodSource("variants")
    void shutdownRacingCloseNeverTouchesAFreedArena(PoolVariant v) throws Exception {
        for (int round = 0; round < 20; round++) {
            ThreadPool pool = pool(v);
            for (int i = 0; i < 200; i++) {
                pool.submit(() -> { });
            }
            ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
            CountDownLatch go = new CountDownLatch(1);
            Thread[] racers = new Thread[2];
            for (int t = 0; t < racers.length; t++) {
                racers[t] = new Thread(() -> {
                    try {
                        go.await();
                        while (!pool.isClosed()) {
                            pool.shutdown(ShutdownMode.DRAIN, WAIT);
                        }
                        pool.shutdown(ShutdownMode.CANCEL_PENDING, WAIT); // after close: returns true
                    } catch (Throwable e) {
                        errors.add(e);
                    }
                });
                racers[t].start();
            }
            go.countDown();
            pool.close();
            for (Thread r : racers) {
                r.join(WAIT.toMillis());
                assertFalse(r.isAlive(), "shutdown caller returned");
            }
            assertTrue(errors.isEmpty(), () -> "round: shutdown racing close threw " + errors);
            assertClosedClean(pool);
        }
    }

    // ---- close -------------------------------------------------------------------------------------------

    @ParameterizedTest
    @MethodSource("variants")
    void afterCloseEveryCallFailsClearlyAndTheArenaIsEmpty(PoolVariant v) throws Exception {
        ThreadPool pool = pool(v);
        long h = pool.submitWaitable(() -> { });
        pool.await(h);
        Submitter sub = pool.registerSubmitter();
        PoolStats open = pool.statsSnapshot();
        assertTrue(open.liveBytes() > 0);
        assertAccounting(open);
        pool.close();
        pool.close(); // idempotent
        assertTrue(pool.isClosed());
        assertClosedClean(pool);
        assertThrows(PoolShutdownException.class, () -> pool.submit(() -> { }));
        assertThrows(PoolShutdownException.class, () -> pool.trySubmit(() -> { }, Duration.ZERO));
        assertThrows(PoolShutdownException.class, () -> pool.submitWaitable(() -> { }));
        assertThrows(PoolShutdownException.class, () -> pool.registerSubmitter());
        assertThrows(PoolShutdownException.class, () -> sub.submit(() -> { }));
        assertThrows(IllegalStateException.class, () -> pool.await(h));
        assertThrows(IllegalStateException.class, () -> pool.cancel(h));
        assertThrows(IllegalStateException.class, pool::purgeWorkerCaches);
        assertTrue(pool.shutdown(ShutdownMode.DRAIN, Duration.ZERO));
        sub.close();
        assertTrue(pool.memoryMap().isEmpty());
        assertEquals(open.totalAllocBytes(), pool.statsSnapshot().totalAllocBytes(), "nothing allocated at close");
    }

    /**
     * Every idle strategy with every timestamp mode. On the 64-worker forms BUSY_SPIN runs once, with timestamps
     * DISABLED and 1,000 tasks instead of 5,000: 64 workers that never park on a 2-core box made creating the
     * pool and submitting to it take 2 to 4 s each (about 7 s a variant); every pairing still runs at the suite's
     * 2 workers.
     */
    @ParameterizedTest
    @MethodSource("variants")
    void everyIdleStrategyRunsEveryTask(PoolVariant v) throws Exception {
        for (IdleStrategy strategy : IdleStrategy.values()) {
            for (TimestampMode ts : TimestampMode.values()) {
                boolean wideSpin = v.workers() > 0 && strategy == IdleStrategy.BUSY_SPIN;
                if (wideSpin && ts != TimestampMode.DISABLED) {
                    continue;
                }
                int n = wideSpin ? 1_000 : 5_000;
                ThreadPool pool = ThreadPool.create(config(v).idleStrategy(strategy).timestampMode(ts)
                        .spinBeforePark(Duration.ofNanos(20_000)).build());
                AtomicInteger ran = new AtomicInteger();
                WaitGroup wg = new WaitGroup();
                for (int i = 0; i < n; i++) {
                    pool.submit(ran::incrementAndGet, wg);
                }
                assertTrue(wg.await(WAIT), strategy + "/" + ts);
                pool.close();
                assertEquals(n, ran.get(), strategy + "/" + ts);
                assertClosedClean(pool);
            }
        }
    }

    // ---- submitters and purge ----------------------------------------------------------------------------

    @ParameterizedTest
    @MethodSource("variants")
    void atMost64SubmittersAndCloseGivesTheSlotBack(PoolVariant v) throws Exception {
        try (ThreadPool pool = pool(v)) {
            List<Submitter> subs = new ArrayList<>();
            for (int i = 0; i < 64; i++) {
                subs.add(pool.registerSubmitter());
            }
            PoolBusyException e = assertThrows(PoolBusyException.class, pool::registerSubmitter);
            assertTrue(e.getMessage().contains("64"), e.getMessage());
            Submitter first = subs.get(0);
            AtomicInteger ran = new AtomicInteger();
            WaitGroup wg = new WaitGroup();
            wg.add(1);
            first.submit(() -> { ran.incrementAndGet(); wg.done(); });
            first.close();
            first.close();
            assertThrows(IllegalStateException.class, () -> first.submit(() -> { }));
            Submitter again = pool.registerSubmitter();
            assertEquals(first.slot(), again.slot(), "the freed slot is reused");
            assertTrue(wg.await(WAIT));
            assertEquals(1, ran.get(), "work submitted before close is not lost");
            for (Submitter s : subs) {
                s.close();
            }
            again.close();
        }
    }

    @ParameterizedTest
    @MethodSource("variants")
    void purgeWorkerCachesNeedsAQuiescentPool(PoolVariant v) throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        try (ThreadPool pool = pool(v)) {
            pool.purgeWorkerCaches();
            blockTheWorker(pool, release);
            PoolBusyException e = assertThrows(PoolBusyException.class, pool::purgeWorkerCaches);
            assertTrue(e.getMessage().contains("activeTasks=1"), e.getMessage());
            release.countDown();
            awaitQuiescent(pool);
            pool.purgeWorkerCaches();
        } finally {
            release.countDown();
        }
    }

    // ---- bad input ---------------------------------------------------------------------------------------

    @ParameterizedTest
    @MethodSource("variants")
    void badArgumentsGetClearExceptions(PoolVariant v) throws Exception {
        try (ThreadPool pool = pool(v)) {
            assertMessage(NullPointerException.class, "task", () -> pool.submit(null));
            assertMessage(NullPointerException.class, "task", () -> pool.trySubmit(null));
            assertMessage(NullPointerException.class, "task", () -> pool.submitWaitable(null));
            assertMessage(NullPointerException.class, "options", () -> pool.submit(() -> { }, (SubmitOptions) null));
            assertMessage(NullPointerException.class, "group", () -> pool.submit(() -> { }, (WaitGroup) null));
            assertMessage(NullPointerException.class, "timeout", () -> pool.trySubmit(() -> { }, null));
            assertMessage(IllegalArgumentException.class, "timeout must be >= 0",
                    () -> pool.trySubmit(() -> { }, Duration.ofMillis(-1)));
            assertMessage(IllegalArgumentException.class, "timeout must be >= 0",
                    () -> pool.shutdown(ShutdownMode.DRAIN, Duration.ofSeconds(-1)));
            assertMessage(IllegalArgumentException.class, "timeout must be >= 0",
                    () -> pool.await(0L, Duration.ofNanos(-1)));
            assertMessage(NullPointerException.class, "mode", () -> pool.shutdown(null, WAIT));
            assertMessage(InvalidHandleException.class, "not a task handle", () -> pool.await(-1L));
            // a detached task's slot is not a waitable handle
            long h = pool.submitWaitable(() -> { });
            pool.await(h);
            assertFalse(pool.isShutdown());
        }
    }

    @ParameterizedTest
    @MethodSource("variants")
    void blockingLaneOptionIsAcceptedAndRuns(PoolVariant v) throws Exception {
        try (ThreadPool pool = pool(v)) {
            AtomicBoolean ran = new AtomicBoolean();
            long h = pool.submitWaitable(() -> ran.set(true), SubmitOptions.BLOCKING);
            pool.await(h);
            assertTrue(ran.get());
            WaitGroup wg = new WaitGroup();
            wg.add(1);
            pool.submit(wg::done, SubmitOptions.BLOCKING);
            assertTrue(wg.await(WAIT));
        }
    }

    // ---- helpers -----------------------------------------------------------------------------------------

    interface ThrowingRunnable {
        void run() throws Exception;
    }

    static <T extends Throwable> void assertMessage(Class<T> type, String fragment, ThrowingRunnable r) {
        T e = assertThrows(type, r::run);
        assertTrue(e.getMessage() != null && e.getMessage().contains(fragment),
                () -> "message of " + type.getSimpleName() + " should mention '" + fragment + "': " + e.getMessage());
    }

    static void awaitQuietly(CountDownLatch latch) {
        try {
            if (!latch.await(WAIT.toSeconds(), TimeUnit.SECONDS)) {
                throw new IllegalStateException("test latch not released within " + WAIT);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
