package dev.threadpool;

import static dev.threadpool.TestSupport.WAIT;
import static dev.threadpool.TestSupport.assertClosedClean;
import static dev.threadpool.TestSupport.awaitQuiescent;
import static dev.threadpool.TestSupport.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.TestSupport.PoolVariant;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The {@link ExecutorService} contract of {@link ThreadPool#asExecutorService()} and {@link ThreadPool#asExecutor()},
 * covering what the JSR-166 TCK checks for executors (AbstractExecutorServiceTest, ExecutorsTest,
 * ThreadPoolExecutorTest's lifecycle cases): submit/get, null arguments, invokeAll/invokeAny edge cases,
 * timeouts, cancellation, shutdown semantics, rejection after shutdown, awaitTermination. Every wait is bounded.
 * Runs on every variant of {@link TestSupport#POOL_VARIANTS}.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ExecutorServiceContractTest {
    private static final long WAIT_S = WAIT.toSeconds();
    /** This suite's worker count; the wide forms ({@link TestSupport#POOL_VARIANTS_64}) have 64. */
    private static final int WORKERS = 2;

    /**
     * Every variant ({@link TestSupport#POOL_VARIANTS}, the one list) at {@link #WORKERS} workers, then each at 64
     * ({@link TestSupport#POOL_VARIANTS_64}).
     */
    static Stream<PoolVariant> variants() {
        return TestSupport.poolVariantsAndAt64();
    }

    static ThreadPool pool(PoolVariant v) {
        PoolConfig.Builder b = v.builder().maxThreads(v.workersOr(WORKERS)).queueCapacity(64).daemon(true)
                .threadNamePrefix("es-" + v + "-");
        if (v.variant() == SchedulerVariant.LANE_EXTENSION) {
            // every worker in maxThreads, some of them the blocking lane's (1 of 2; 16 of 64, the wide form's
            // split): they help the default lane when their own is empty, so maxThreads default-lane blockers
            // occupy every worker; no overflow workers and no stall promotion, so "occupy every worker" means
            // what it says in the tests below
            b.maxThreads(v.workersOr(WORKERS)).blockingWorkers(v.workers() > 0 ? TestSupport.blockingWorkersAt(
                    v.workers()) : 1).maxOverflowWorkers(0).blockingPromotionTimeout(Duration.ofHours(1));
        }
        return ThreadPool.create(b.build());
    }

    /** The pool's workers: every one of them is occupied by the tests that need "every worker busy". */
    static int workers(ThreadPool pool) {
        return pool.config().maxThreads();
    }

    /** Blocks {@code n} workers until {@code release} opens; returns once all n are inside. */
    static void occupyWorkers(ExecutorService es, int n, CountDownLatch release) throws InterruptedException {
        CountDownLatch inside = new CountDownLatch(n);
        for (int i = 0; i < n; i++) {
            es.execute(() -> {
                inside.countDown();
                awaitQuietly(release);
            });
        }
        assertTrue(inside.await(WAIT_S, TimeUnit.SECONDS), "blockers started");
    }

    static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(WAIT_S, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static void closeAndCheck(ThreadPool pool, ExecutorService es) {
        es.close();
        assertTrue(es.isTerminated());
        assertTrue(pool.isClosed(), "closing the view closes the pool");
        assertClosedClean(pool);
    }

    // ---- views ----------------------------------------------------------------------------------------

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    void viewsAreCachedAndExecuteRuns(PoolVariant v) throws Exception {
        ThreadPool pool = pool(v);
        assertSame(pool.asExecutor(), pool.asExecutor());
        assertSame(pool.asExecutorService(), pool.asExecutorService());
        CountDownLatch ran = new CountDownLatch(2);
        pool.asExecutor().execute(ran::countDown);
        pool.asExecutorService().execute(ran::countDown);
        assertTrue(ran.await(WAIT_S, TimeUnit.SECONDS));
        assertThrows(NullPointerException.class, () -> pool.asExecutor().execute(null));
        assertThrows(NullPointerException.class, () -> pool.asExecutorService().execute(null));
        closeAndCheck(pool, pool.asExecutorService());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    void asExecutorAllocatesNothingPerTask(PoolVariant v) throws Exception {
        ThreadPool pool = pool(v);
        var mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        Assumptions.assumeTrue(mx.isThreadAllocatedMemorySupported() && mx.isThreadAllocatedMemoryEnabled());
        Executor ex = pool.asExecutor();
        AtomicInteger count = new AtomicInteger();
        Runnable task = count::incrementAndGet;
        int rounds = 200, perRound = 32; // 32 < queueCapacity: the submitter never waits for space
        long tid = Thread.currentThread().threadId();
        long before = 0;
        for (int r = 0; r < rounds; r++) {
            if (r == rounds / 2) {
                before = mx.getThreadAllocatedBytes(tid); // the first half warms up
            }
            for (int i = 0; i < perRound; i++) {
                ex.execute(task);
            }
            spinUntil(count, (r + 1) * perRound);
        }
        long allocated = mx.getThreadAllocatedBytes(tid) - before;
        long tasks = (long) rounds / 2 * perRound;
        // one object per task would be >= 16 bytes each; allow a few stray bytes in all (JIT, the MXBean)
        assertTrue(allocated < tasks, "execute allocated " + allocated + " bytes for " + tasks + " tasks");
        pool.close();
        assertClosedClean(pool);
    }

    /** Waits without allocating until {@code count} reaches {@code target}; bounded by {@link TestSupport#WAIT}. */
    private static void spinUntil(AtomicInteger count, int target) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (count.get() < target) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("tasks did not run in time: " + count.get() + " of " + target);
            }
            java.util.concurrent.locks.LockSupport.parkNanos(10_000L);
        }
    }

    // ---- submit / get ---------------------------------------------------------------------------------

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    void submitReturnsFuturesWithTheResult(PoolVariant v) throws Exception {
        ThreadPool pool = pool(v);
        ExecutorService es = pool.asExecutorService();
        Future<?> r = es.submit(() -> { });
        Future<String> rr = es.submit(() -> { }, "given");
        Future<Integer> c = es.submit(() -> 42);
        assertNull(r.get(WAIT_S, TimeUnit.SECONDS));
        assertEquals("given", rr.get(WAIT_S, TimeUnit.SECONDS));
        assertEquals(42, c.get(WAIT_S, TimeUnit.SECONDS));
        assertTrue(r.isDone() && rr.isDone() && c.isDone());
        assertFalse(c.isCancelled());
        assertEquals(Future.State.SUCCESS, c.state());
        closeAndCheck(pool, es);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    void nullArgumentsThrowNullPointerException(PoolVariant v) throws Exception {
        ThreadPool pool = pool(v);
        ExecutorService es = pool.asExecutorService();
        assertThrows(NullPointerException.class, () -> es.submit((Runnable) null));
        assertThrows(NullPointerException.class, () -> es.submit((Runnable) null, "x"));
        assertThrows(NullPointerException.class, () -> es.submit((Callable<?>) null));
        assertThrows(NullPointerException.class, () -> es.invokeAll(null));
        assertThrows(NullPointerException.class, () -> es.invokeAll(null, 1, TimeUnit.SECONDS));
        assertThrows(NullPointerException.class, () -> es.invokeAll(List.of(() -> 1), 1, null));
        assertThrows(NullPointerException.class, () -> es.invokeAny(null));
        assertThrows(NullPointerException.class, () -> es.invokeAny(null, 1, TimeUnit.SECONDS));
        assertThrows(NullPointerException.class, () -> es.invokeAny(List.of(() -> 1), 1, null));
        List<Callable<Integer>> withNull = Arrays.asList(() -> 1, null);
        assertThrows(NullPointerException.class, () -> es.invokeAll(withNull));
        CountDownLatch never = new CountDownLatch(1);
        List<Callable<Integer>> blockingThenNull = Arrays.asList(() -> {
            never.await(WAIT_S, TimeUnit.SECONDS); // still running when invokeAny reaches the null (cancelled then)
            return 1;
        }, null);
        assertThrows(NullPointerException.class, () -> es.invokeAny(blockingThenNull));
        assertThrows(NullPointerException.class, () -> es.awaitTermination(1, null));
        closeAndCheck(pool, es);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    void aThrowingTaskFailsItsFutureWithExecutionException(PoolVariant v) throws Exception {
        ThreadPool pool = pool(v);
        ExecutorService es = pool.asExecutorService();
        IllegalStateException boom = new IllegalStateException("boom");
        Future<Object> f = es.submit(() -> {
            throw boom;
        });
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(WAIT_S, TimeUnit.SECONDS));
        assertSame(boom, e.getCause());
        assertEquals(Future.State.FAILED, f.state());
        assertSame(boom, f.exceptionNow());
        // FutureTask catches the throwable: to the pool the task completed
        PoolStats s = awaitQuiescent(pool);
        assertEquals(0, s.failed());
        closeAndCheck(pool, es);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    void getWithTimeoutThrowsTimeoutExceptionWhileRunning(PoolVariant v) throws Exception {
        ThreadPool pool = pool(v);
        ExecutorService es = pool.asExecutorService();
        CountDownLatch release = new CountDownLatch(1);
        Future<String> f = es.submit(() -> {
            release.await(WAIT_S, TimeUnit.SECONDS);
            return "done";
        });
        assertThrows(TimeoutException.class, () -> f.get(1, TimeUnit.MILLISECONDS));
        assertThrows(TimeoutException.class, () -> f.get(0, TimeUnit.NANOSECONDS));
        assertFalse(f.isDone());
        release.countDown();
        assertEquals("done", f.get(WAIT_S, TimeUnit.SECONDS));
        closeAndCheck(pool, es);
    }

    // ---- cancel ---------------------------------------------------------------------------------------

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    void cancelOfAQueuedTaskMeansItNeverRuns(PoolVariant v) throws Exception {
        ThreadPool pool = pool(v);
        ExecutorService es = pool.asExecutorService();
        CountDownLatch release = new CountDownLatch(1);
        occupyWorkers(es, workers(pool), release);
        AtomicBoolean ran = new AtomicBoolean();
        Future<?> f = es.submit(() -> ran.set(true));
        assertTrue(f.cancel(false));
        assertTrue(f.isCancelled());
        assertTrue(f.isDone());
        assertFalse(f.cancel(false), "a second cancel fails");
        assertThrows(CancellationException.class, f::get);
        assertThrows(CancellationException.class, () -> f.get(1, TimeUnit.SECONDS));
        release.countDown();
        awaitQuiescent(pool);
        assertFalse(ran.get(), "a cancelled FutureTask does not run its body");
        closeAndCheck(pool, es);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    void cancelWithInterruptInterruptsTheRunningTaskAndTheWorkerSurvives(PoolVariant v) throws Exception {
        ThreadPool pool = pool(v);
        ExecutorService es = pool.asExecutorService();
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch interrupted = new CountDownLatch(1);
        CountDownLatch never = new CountDownLatch(1);
        Future<?> f = es.submit(() -> {
            started.countDown();
            try {
                never.await(WAIT_S, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                interrupted.countDown();
            }
        });
        assertTrue(started.await(WAIT_S, TimeUnit.SECONDS));
        assertTrue(f.cancel(true));
        assertTrue(interrupted.await(WAIT_S, TimeUnit.SECONDS), "the running task saw the interrupt");
        assertThrows(CancellationException.class, () -> f.get(WAIT_S, TimeUnit.SECONDS));
        // the interrupt does not leak into the next task on that worker
        List<Callable<Boolean>> probes = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            probes.add(() -> Thread.currentThread().isInterrupted());
        }
        for (Future<Boolean> p : es.invokeAll(probes)) {
            assertFalse(p.get());
        }
        closeAndCheck(pool, es);
    }

    // ---- invokeAll ------------------------------------------------------------------------------------

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    void invokeAllReturnsEveryOutcomeInOrder(PoolVariant v) throws Exception {
        ThreadPool pool = pool(v);
        ExecutorService es = pool.asExecutorService();
        assertTrue(es.invokeAll(Collections.<Callable<Integer>>emptyList()).isEmpty());
        assertTrue(es.invokeAll(Collections.<Callable<Integer>>emptyList(), 1, TimeUnit.SECONDS).isEmpty());
        List<Callable<Integer>> tasks = new ArrayList<>();
        for (int i = 0; i < 100; i++) { // more than queueCapacity: invokeAll waits for space as it goes
            int k = i;
            tasks.add(() -> {
                if (k % 10 == 3) {
                    throw new ArithmeticException("task " + k);
                }
                return k * k;
            });
        }
        List<Future<Integer>> fs = es.invokeAll(tasks);
        assertEquals(tasks.size(), fs.size());
        for (int i = 0; i < fs.size(); i++) {
            Future<Integer> f = fs.get(i);
            assertTrue(f.isDone(), "invokeAll returns only when all are done");
            if (i % 10 == 3) {
                ExecutionException e = assertThrows(ExecutionException.class, f::get);
                assertInstanceOf(ArithmeticException.class, e.getCause());
            } else {
                assertEquals(i * i, f.get());
            }
        }
        List<Future<Integer>> timed = es.invokeAll(tasks.subList(0, 3), WAIT_S, TimeUnit.SECONDS);
        assertEquals(List.of(0, 1, 4), List.of(timed.get(0).get(), timed.get(1).get(), timed.get(2).get()));
        closeAndCheck(pool, es);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    void timedInvokeAllCancelsWhatHasNotFinished(PoolVariant v) throws Exception {
        ThreadPool pool = pool(v);
        ExecutorService es = pool.asExecutorService();
        CountDownLatch never = new CountDownLatch(1);
        Callable<String> quick = () -> "quick";
        Callable<String> stuck = () -> {
            never.await(WAIT_S, TimeUnit.SECONDS);
            return "stuck";
        };
        List<Future<String>> fs = es.invokeAll(List.of(quick, stuck), 50, TimeUnit.MILLISECONDS);
        assertEquals(2, fs.size());
        for (Future<String> f : fs) {
            assertTrue(f.isDone(), "every future is done after a timed invokeAll");
        }
        assertTrue(fs.get(1).isCancelled(), "the stuck task was cancelled at the deadline");
        // "quick" either finished or was cancelled, never anything else
        assertTrue(fs.get(0).isCancelled() || "quick".equals(fs.get(0).get()));
        List<Future<String>> zero = es.invokeAll(List.of(stuck, stuck), 0, TimeUnit.NANOSECONDS);
        for (Future<String> f : zero) {
            assertTrue(f.isDone());
        }
        closeAndCheck(pool, es);
    }

    // ---- invokeAny ------------------------------------------------------------------------------------

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    void invokeAnyEdgeCases(PoolVariant v) throws Exception {
        ThreadPool pool = pool(v);
        ExecutorService es = pool.asExecutorService();
        assertThrows(IllegalArgumentException.class, () -> es.invokeAny(Collections.<Callable<Integer>>emptyList()));
        assertThrows(IllegalArgumentException.class,
                () -> es.invokeAny(Collections.<Callable<Integer>>emptyList(), 1, TimeUnit.SECONDS));
        Callable<Integer> fails = () -> {
            throw new ArithmeticException("no");
        };
        ExecutionException all = assertThrows(ExecutionException.class, () -> es.invokeAny(List.of(fails, fails)));
        assertInstanceOf(ArithmeticException.class, all.getCause());
        assertThrows(ExecutionException.class, () -> es.invokeAny(List.of(fails), WAIT_S, TimeUnit.SECONDS));
        assertEquals(7, es.invokeAny(List.of(fails, () -> 7, fails)));
        assertEquals(7, es.invokeAny(List.of(fails, () -> 7), WAIT_S, TimeUnit.SECONDS));
        closeAndCheck(pool, es);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    void invokeAnyCancelsTheRestAndTimesOut(PoolVariant v) throws Exception {
        ThreadPool pool = pool(v);
        ExecutorService es = pool.asExecutorService();
        CountDownLatch never = new CountDownLatch(1);
        CountDownLatch slowStarted = new CountDownLatch(1);
        CountDownLatch slowInterrupted = new CountDownLatch(1);
        Callable<String> slow = () -> {
            slowStarted.countDown();
            try {
                never.await(WAIT_S, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                slowInterrupted.countDown();
                throw e;
            }
            return "slow";
        };
        Callable<String> fast = () -> {
            slowStarted.await(WAIT_S, TimeUnit.SECONDS); // the slow one is running when we win
            return "fast";
        };
        assertEquals("fast", es.invokeAny(List.of(slow, fast)));
        assertTrue(slowInterrupted.await(WAIT_S, TimeUnit.SECONDS), "the loser was cancelled with interrupt");

        Callable<String> stuck = () -> {
            never.await(WAIT_S, TimeUnit.SECONDS);
            return "stuck";
        };
        assertThrows(TimeoutException.class, () -> es.invokeAny(List.of(stuck), 20, TimeUnit.MILLISECONDS));
        closeAndCheck(pool, es); // the timed-out task was cancelled (interrupted): close does not wait WAIT
    }

    // ---- CompletableFuture ----------------------------------------------------------------------------

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    void completableFutureRunsOnThePool(PoolVariant v) throws Exception {
        ThreadPool pool = pool(v);
        AtomicInteger onWorker = new AtomicInteger(-2);
        CompletableFuture<Void> run = CompletableFuture.runAsync(() -> onWorker.set(pool.currentWorkerIndex()),
                pool.asExecutor());
        run.get(WAIT_S, TimeUnit.SECONDS);
        assertTrue(onWorker.get() >= 0, "ran on a pool worker");
        CompletableFuture<Integer> chain = CompletableFuture.supplyAsync(() -> 20, pool.asExecutorService())
                .thenApplyAsync(x -> x + 1, pool.asExecutor())
                .thenCombineAsync(CompletableFuture.supplyAsync(() -> 2, pool.asExecutor()), (a, b) -> a * b,
                        pool.asExecutorService());
        assertEquals(42, chain.get(WAIT_S, TimeUnit.SECONDS));
        CompletableFuture<Object> failed = CompletableFuture.supplyAsync(() -> {
            throw new IllegalStateException("cf");
        }, pool.asExecutor());
        ExecutionException e = assertThrows(ExecutionException.class, () -> failed.get(WAIT_S, TimeUnit.SECONDS));
        assertInstanceOf(IllegalStateException.class, e.getCause());
        closeAndCheck(pool, pool.asExecutorService());
    }

    // ---- shutdown -------------------------------------------------------------------------------------

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    void shutdownLetsQueuedWorkRunRejectsNewWorkAndTerminatesByItself(PoolVariant v) throws Exception {
        ThreadPool pool = pool(v);
        ExecutorService es = pool.asExecutorService();
        assertFalse(es.isShutdown());
        assertFalse(es.isTerminated());
        assertFalse(es.awaitTermination(1, TimeUnit.MILLISECONDS), "not shut down: the wait times out");
        CountDownLatch release = new CountDownLatch(1);
        occupyWorkers(es, workers(pool), release);
        AtomicInteger ran = new AtomicInteger();
        List<Future<?>> queued = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            queued.add(es.submit(ran::incrementAndGet));
        }
        es.shutdown(); // returns at once although the workers are blocked
        assertTrue(es.isShutdown());
        assertFalse(es.isTerminated());
        assertThrows(RejectedExecutionException.class, () -> es.execute(() -> { }));
        assertThrows(RejectedExecutionException.class, () -> es.submit(() -> 1));
        assertThrows(RejectedExecutionException.class, () -> pool.asExecutor().execute(() -> { }));
        assertThrows(RejectedExecutionException.class, () -> es.invokeAll(List.of(() -> 1)));
        es.shutdown(); // idempotent
        release.countDown();
        // nobody calls awaitTermination: termination completes by itself
        eventually("terminated without awaitTermination", es::isTerminated);
        assertEquals(10, ran.get(), "queued work ran");
        for (Future<?> f : queued) {
            assertTrue(f.isDone());
        }
        assertTrue(es.awaitTermination(0, TimeUnit.SECONDS));
        assertTrue(es.shutdownNow().isEmpty(), "nothing left to sweep after termination");
        closeAndCheck(pool, es);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    void shutdownFromInsideATaskWorks(PoolVariant v) throws Exception {
        ThreadPool pool = pool(v);
        ExecutorService es = pool.asExecutorService();
        Future<Boolean> f = es.submit(() -> {
            es.shutdown();
            return es.isShutdown() && !es.awaitTermination(1, TimeUnit.MILLISECONDS);
        });
        assertTrue(f.get(WAIT_S, TimeUnit.SECONDS));
        assertTrue(es.awaitTermination(WAIT_S, TimeUnit.SECONDS));
        assertThrows(IllegalStateException.class, () -> {
            try (ThreadPool p2 = pool(v)) {
                ExecutorService es2 = p2.asExecutorService();
                try {
                    es2.submit(es2::close).get(WAIT_S, TimeUnit.SECONDS);
                } catch (ExecutionException e) {
                    throw e.getCause(); // close() from a worker refuses instead of waiting for itself
                }
            }
        });
        closeAndCheck(pool, es);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    void shutdownNowReturnsTheTasksThatNeverRanAndInterruptsRunningOnes(PoolVariant v) throws Exception {
        ThreadPool pool = pool(v);
        ExecutorService es = pool.asExecutorService();
        CountDownLatch never = new CountDownLatch(1);
        int workers = workers(pool);
        CountDownLatch inside = new CountDownLatch(workers);
        AtomicInteger interrupted = new AtomicInteger();
        for (int i = 0; i < workers; i++) {
            es.execute(() -> {
                inside.countDown();
                try {
                    never.await(WAIT_S, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    interrupted.incrementAndGet();
                }
            });
        }
        assertTrue(inside.await(WAIT_S, TimeUnit.SECONDS));
        AtomicInteger ran = new AtomicInteger();
        int queuedCount = 20;
        List<Runnable> plain = new ArrayList<>();
        List<Future<?>> futures = new ArrayList<>();
        for (int i = 0; i < queuedCount; i++) {
            if (i % 2 == 0) {
                Runnable r = ran::incrementAndGet;
                plain.add(r);
                es.execute(r);
            } else {
                futures.add(es.submit(ran::incrementAndGet));
            }
        }
        List<Runnable> neverRan = es.shutdownNow();
        assertTrue(es.isShutdown());
        assertThrows(RejectedExecutionException.class, () -> es.execute(() -> { }));
        assertTrue(es.awaitTermination(WAIT_S, TimeUnit.SECONDS), "interrupted blockers let it terminate");
        assertEquals(queuedCount, neverRan.size() + ran.get(), "each queued task either ran or was returned");
        if (v.variant() != SchedulerVariant.LANE_EXTENSION) { // overflow workers may run some of them there
            assertEquals(queuedCount, neverRan.size(), "every worker was blocked: nothing queued ran");
            assertEquals(workers, interrupted.get(), "every running task was interrupted");
            assertTrue(neverRan.containsAll(plain), "execute()d tasks come back as themselves");
            for (Future<?> f : futures) {
                assertTrue(neverRan.contains((Runnable) f), "submit()ted tasks come back as their FutureTask");
                assertFalse(f.isDone(), "returned tasks are the caller's: not cancelled (as ThreadPoolExecutor)");
            }
        }
        PoolStats s = pool.statsSnapshot();
        assertEquals(neverRan.size(), s.cancelled(), "the pool counted them cancelled");
        closeAndCheck(pool, es);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    void aPoolLevelCancelPendingCancelsTheFuturesItSweeps(PoolVariant v) throws Exception {
        ThreadPool pool = pool(v);
        ExecutorService es = pool.asExecutorService();
        CountDownLatch release = new CountDownLatch(1);
        occupyWorkers(es, workers(pool), release);
        Future<Integer> f = es.submit(() -> 1);
        Thread releaser = Thread.ofPlatform().start(() -> {
            eventually("cancel sweep", () -> pool.statsSnapshot().cancelled() > 0 || f.isDone());
            release.countDown();
        });
        assertTrue(pool.shutdown(ShutdownMode.CANCEL_PENDING, WAIT));
        releaser.join(WAIT.toMillis());
        assertTrue(f.isCancelled(), "nobody received the swept future: it must not hang");
        assertThrows(CancellationException.class, () -> f.get(1, TimeUnit.SECONDS));
        assertTrue(es.isTerminated());
        closeAndCheck(pool, es);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    void awaitTerminationTimesOutAndCloseWaitsForTheWork(PoolVariant v) throws Exception {
        ThreadPool pool = pool(v);
        ExecutorService es = pool.asExecutorService();
        CountDownLatch release = new CountDownLatch(1);
        occupyWorkers(es, 1, release);
        es.shutdown();
        assertFalse(es.awaitTermination(10, TimeUnit.MILLISECONDS), "a task still runs");
        assertFalse(es.awaitTermination(-1, TimeUnit.SECONDS), "negative timeout: no wait");
        Thread.currentThread().interrupt();
        assertThrows(InterruptedException.class, () -> es.awaitTermination(WAIT_S, TimeUnit.SECONDS));
        release.countDown();
        assertTrue(es.awaitTermination(WAIT_S, TimeUnit.SECONDS));
        assertTrue(es.isTerminated());
        closeAndCheck(pool, es);
        es.close(); // idempotent
        assertThrows(RejectedExecutionException.class, () -> es.execute(() -> { }));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    void closeInterruptedCallsShutdownNowAndRestoresTheInterrupt(PoolVariant v) throws Exception {
        ThreadPool pool = pool(v);
        ExecutorService es = pool.asExecutorService();
        CountDownLatch never = new CountDownLatch(1);
        CountDownLatch inside = new CountDownLatch(1);
        es.execute(() -> {
            inside.countDown();
            try {
                never.await(WAIT_S, TimeUnit.SECONDS);
            } catch (InterruptedException expected) {
                // shutdownNow's interrupt ends the task
            }
        });
        assertTrue(inside.await(WAIT_S, TimeUnit.SECONDS));
        Thread.currentThread().interrupt();
        es.close(); // awaitTermination throws at once -> shutdownNow -> the blocker is interrupted
        assertTrue(Thread.interrupted(), "close restores the interrupt status");
        assertTrue(pool.isClosed());
        assertClosedClean(pool);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    void aTaskCountedOnceThroughEveryPath(PoolVariant v) throws Exception {
        ThreadPool pool = pool(v);
        ExecutorService es = pool.asExecutorService();
        int n = 500;
        CountDownLatch done = new CountDownLatch(n);
        for (int i = 0; i < n; i++) {
            switch (i % 3) {
                case 0 -> es.execute(done::countDown);
                case 1 -> es.submit(done::countDown);
                default -> CompletableFuture.runAsync(done::countDown, pool.asExecutor());
            }
        }
        assertTrue(done.await(WAIT_S, TimeUnit.SECONDS));
        PoolStats s = awaitQuiescent(pool);
        assertEquals(n, s.completed());
        assertEquals(n, s.submitted());
        closeAndCheck(pool, es);
        assertEquals(Duration.ZERO.toNanos(), pool.statsSnapshot().liveBytes());
    }
}
