package dev.threadpool;

import static dev.threadpool.TestSupport.WAIT;
import static dev.threadpool.TestSupport.assertClosedClean;
import static dev.threadpool.TestSupport.awaitQuiescent;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** {@link ThreadPool#parallelFor}: every index exactly once, splitting, nesting, failures, small pools. */
class ParallelForTest {

    static Stream<TestSupport.PoolVariant> variants() {
        return TestSupport.poolVariants();
    }

    static PoolConfig.Builder config(TestSupport.PoolVariant v) {
        return v.builder().maxThreads(4).queueCapacity(1024).daemon(true);
    }

    private static void assertEachOnce(AtomicIntegerArray seen, int from, int to) {
        for (int i = 0; i < seen.length(); i++) {
            int expected = i >= from && i < to ? 1 : 0;
            if (seen.get(i) != expected) {
                fail("index " + i + " ran " + seen.get(i) + " times, expected " + expected);
            }
        }
    }

    @ParameterizedTest
    @MethodSource("variants")
    void everyIndexExactlyOnceAndTheWorkIsSplit(TestSupport.PoolVariant v) throws Exception {
        ThreadPool pool = ThreadPool.create(config(v).build());
        final int n = 200_000;
        AtomicIntegerArray seen = new AtomicIntegerArray(n + 10);
        long before = pool.statsSnapshot().submitted();
        pool.parallelFor(5, n + 5, 1000, i -> seen.incrementAndGet(i));
        assertEachOnce(seen, 5, n + 5);
        long tasks = pool.statsSnapshot().submitted() - before;
        assertTrue(tasks < n / 1000 * 2, "split into about n / grain chunks, not one per index: " + tasks);
        awaitQuiescent(pool);
        pool.close();
        assertClosedClean(pool);
    }

    @ParameterizedTest
    @MethodSource("variants")
    void emptyRangeAndGrainLargerThanTheRange(TestSupport.PoolVariant v) throws Exception {
        try (ThreadPool pool = ThreadPool.create(config(v).build())) {
            AtomicInteger calls = new AtomicInteger();
            pool.parallelFor(7, 7, 1, i -> calls.incrementAndGet());
            assertEquals(0, calls.get());
            AtomicIntegerArray seen = new AtomicIntegerArray(100);
            pool.parallelFor(10, 90, 1_000_000, i -> seen.incrementAndGet(i));
            assertEachOnce(seen, 10, 90);
            AtomicIntegerArray one = new AtomicIntegerArray(64);
            pool.parallelFor(0, 64, 1, i -> one.incrementAndGet(i)); // grain 1: leaves of one index
            assertEachOnce(one, 0, 64);
        }
    }

    @ParameterizedTest
    @MethodSource("variants")
    void extremeBoundsDoNotOverflow(TestSupport.PoolVariant v) throws Exception {
        try (ThreadPool pool = ThreadPool.create(config(v).build())) {
            AtomicInteger calls = new AtomicInteger();
            pool.parallelFor(Integer.MAX_VALUE - 1000, Integer.MAX_VALUE, 7, i -> calls.incrementAndGet());
            assertEquals(1000, calls.get());
            calls.set(0);
            pool.parallelFor(Integer.MIN_VALUE, Integer.MIN_VALUE + 1000, 7, i -> calls.incrementAndGet());
            assertEquals(1000, calls.get());
        }
    }

    @ParameterizedTest
    @MethodSource("variants")
    void nestedParallelForFromInsideATask(TestSupport.PoolVariant v) throws Exception {
        ThreadPool pool = ThreadPool.create(config(v).build());
        final int outer = 64;
        final int inner = 2_000;
        AtomicIntegerArray seen = new AtomicIntegerArray(outer * inner);
        AtomicReference<Throwable> err = new AtomicReference<>();
        CountDownLatch done = new CountDownLatch(1);
        pool.submit(() -> {
            try {
                pool.parallelFor(0, outer, 1, o -> {
                    try {
                        pool.parallelFor(0, inner, 50, i -> seen.incrementAndGet(o * inner + i));
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                });
            } catch (Throwable t) {
                err.set(t);
            } finally {
                done.countDown();
            }
        });
        assertTrue(done.await(WAIT.toSeconds(), TimeUnit.SECONDS), "nested parallelFor finished");
        if (err.get() != null) {
            throw new AssertionError(err.get());
        }
        assertEachOnce(seen, 0, outer * inner);
        awaitQuiescent(pool);
        pool.close();
        assertClosedClean(pool);
    }

    @ParameterizedTest
    @MethodSource("variants")
    void theFirstFailureIsRethrownAfterEveryIndexRanOrWasSkipped(TestSupport.PoolVariant v)
            throws Exception {
        ThreadPool pool = ThreadPool.create(config(v).build());
        final int n = 100_000;
        RuntimeException boom = new IllegalArgumentException("boom at 4242");
        AtomicInteger running = new AtomicInteger();
        AtomicInteger after = new AtomicInteger();
        AtomicReference<Boolean> returned = new AtomicReference<>(false);
        TaskFailedException e = assertThrows(TaskFailedException.class, () -> pool.parallelFor(0, n, 100, i -> {
            running.incrementAndGet();
            if (returned.get()) {
                after.incrementAndGet();
            }
            running.decrementAndGet();
            if (i == 4242) {
                throw boom;
            }
        }));
        returned.set(true);
        assertSame(boom, e.getCause());
        assertTrue(e.getMessage().contains("from=0") && e.getMessage().contains("to=" + n), e.getMessage());
        assertEquals(0, running.get(), "no body call is still running when parallelFor throws");
        awaitQuiescent(pool);
        assertEquals(0, after.get(), "no body call starts after parallelFor threw");
        pool.close();
        assertClosedClean(pool);
    }

    @ParameterizedTest
    @MethodSource("variants")
    void hugeRangeWithASmallQueueCapacityDoesNotDeadlock(TestSupport.PoolVariant v) throws Exception {
        ThreadPool pool = ThreadPool.create(config(v).queueCapacity(4).maxThreads(2).build());
        final int n = 2_000_000;
        AtomicIntegerArray seen = new AtomicIntegerArray(n);
        pool.parallelFor(0, n, 1, i -> seen.incrementAndGet(i));
        assertEachOnce(seen, 0, n);
        // nested, from a worker, in the same tiny pool
        AtomicIntegerArray nested = new AtomicIntegerArray(10_000);
        CountDownLatch done = new CountDownLatch(1);
        AtomicReference<Throwable> err = new AtomicReference<>();
        pool.submit(() -> {
            try {
                pool.parallelFor(0, 100, 1, o -> {
                    try {
                        pool.parallelFor(o * 100, o * 100 + 100, 1, i -> nested.incrementAndGet(i));
                    } catch (InterruptedException ie) {
                        throw new IllegalStateException(ie);
                    }
                });
            } catch (Throwable t) {
                err.set(t);
            } finally {
                done.countDown();
            }
        });
        assertTrue(done.await(WAIT.toSeconds(), TimeUnit.SECONDS));
        if (err.get() != null) {
            throw new AssertionError(err.get());
        }
        assertEachOnce(nested, 0, 10_000);
        awaitQuiescent(pool);
        pool.close();
        assertClosedClean(pool);
    }

    @ParameterizedTest
    @MethodSource("variants")
    void badArgumentsNameTheParameter(TestSupport.PoolVariant v) throws Exception {
        try (ThreadPool pool = ThreadPool.create(config(v).build())) {
            IllegalArgumentException a = assertThrows(IllegalArgumentException.class,
                    () -> pool.parallelFor(5, 4, 1, i -> { }));
            assertTrue(a.getMessage().contains("from") && a.getMessage().contains("to=4"), a.getMessage());
            IllegalArgumentException g = assertThrows(IllegalArgumentException.class,
                    () -> pool.parallelFor(0, 4, 0, i -> { }));
            assertTrue(g.getMessage().contains("grain") && g.getMessage().contains(">= 1"), g.getMessage());
            NullPointerException b = assertThrows(NullPointerException.class,
                    () -> pool.parallelFor(0, 4, 1, null));
            assertTrue(b.getMessage().contains("body"), b.getMessage());
        }
        ThreadPool closed = ThreadPool.create(config(v).build());
        closed.close();
        assertThrows(PoolShutdownException.class, () -> closed.parallelFor(0, 10, 1, i -> { }));
    }

    /** Holds every worker of {@code pool} in a task until {@code release} opens; returns when all have started. */
    private static void holdEveryWorker(ThreadPool pool, int workers, CountDownLatch release) {
        CountDownLatch started = new CountDownLatch(workers);
        for (int w = 0; w < workers; w++) {
            pool.submit(() -> {
                started.countDown();
                try {
                    release.await(WAIT.toSeconds(), TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
        }
        try {
            assertTrue(started.await(WAIT.toSeconds(), TimeUnit.SECONDS), "every worker holds a task");
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    /**
     * From outside the pool the caller takes part: with every worker held it runs the whole range itself and
     * returns (no wait on a worker, no deadlock); its helper tasks, left queued, run afterwards and find nothing
     * to claim, so no index runs twice.
     */
    @ParameterizedTest
    @MethodSource("variants")
    void anOutsideCallerRunsTheRangeItselfWhileEveryWorkerIsBusy(TestSupport.PoolVariant v) throws Exception {
        ThreadPool pool = ThreadPool.create(config(v).build());
        CountDownLatch release = new CountDownLatch(1);
        holdEveryWorker(pool, 4, release);
        final int n = 10_000;
        AtomicIntegerArray seen = new AtomicIntegerArray(n);
        AtomicInteger onCaller = new AtomicInteger();
        Thread caller = Thread.currentThread();
        long before = pool.statsSnapshot().submitted();
        pool.parallelFor(0, n, 10, i -> {
            seen.incrementAndGet(i);
            if (Thread.currentThread() == caller) {
                onCaller.incrementAndGet();
            }
        });
        assertEachOnce(seen, 0, n);
        assertTrue(onCaller.get() > 0, "the caller ran indices itself");
        long helpers = pool.statsSnapshot().submitted() - before;
        assertTrue(helpers >= 1 && helpers <= 4, "one helper task per worker at most, got " + helpers);
        release.countDown();
        awaitQuiescent(pool);
        assertEachOnce(seen, 0, n); // the queued helpers ran after the call and claimed nothing
        pool.close();
        assertClosedClean(pool);
    }

    /**
     * Helpers swept by shutdownNow before they ran cancel nothing of the call (the caller already ran their
     * share), and running a swept helper later claims nothing.
     */
    @ParameterizedTest
    @MethodSource("variants")
    void sweptHelpersCancelNothingAndRunningThemLaterDoesNothing(TestSupport.PoolVariant v) throws Exception {
        ThreadPool pool = ThreadPool.create(config(v).build());
        CountDownLatch release = new CountDownLatch(1);
        holdEveryWorker(pool, 4, release);
        AtomicIntegerArray seen = new AtomicIntegerArray(1000);
        pool.parallelFor(0, 1000, 1, i -> seen.incrementAndGet(i));
        assertEachOnce(seen, 0, 1000);
        java.util.List<Runnable> swept = pool.asExecutorService().shutdownNow();
        release.countDown();
        assertTrue(!swept.isEmpty(), "the queued helpers were swept");
        for (Runnable r : swept) {
            r.run(); // a helper whose range has run out: claims nothing
        }
        assertEachOnce(seen, 0, 1000);
        assertTrue(pool.asExecutorService().awaitTermination(WAIT.toSeconds(), TimeUnit.SECONDS));
        pool.close(); // frees the arena (termination alone keeps it for the stats)
        assertClosedClean(pool);
    }

    /**
     * An outside caller interrupted while it waits for a chunk a worker still runs: InterruptedException, and
     * that chunk still runs to its end, once.
     */
    @ParameterizedTest
    @MethodSource("variants")
    void anInterruptedOutsideCallerThrowsAndTheWorkersChunkStillEnds(TestSupport.PoolVariant v) throws Exception {
        ThreadPool pool = ThreadPool.create(config(v).maxThreads(2).build());
        CountDownLatch workerIn = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicIntegerArray seen = new AtomicIntegerArray(2);
        AtomicInteger ended = new AtomicInteger();
        Thread caller = Thread.currentThread();
        assertThrows(InterruptedException.class, () -> pool.parallelFor(0, 2, 1, i -> {
            seen.incrementAndGet(i);
            try {
                if (Thread.currentThread() == caller) {
                    // a helper holds the other index before the caller runs out and waits, interrupted
                    assertTrue(workerIn.await(WAIT.toSeconds(), TimeUnit.SECONDS), "a worker took a chunk");
                    Thread.currentThread().interrupt();
                } else {
                    workerIn.countDown();
                    assertTrue(release.await(WAIT.toSeconds(), TimeUnit.SECONDS), "released");
                }
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
            ended.incrementAndGet();
        }));
        assertEquals(1, ended.get(), "the caller's index ended; the worker's is still running");
        release.countDown();
        TestSupport.eventually("the worker's chunk ended", () -> ended.get() == 2);
        assertEachOnce(seen, 0, 2);
        awaitQuiescent(pool);
        pool.close();
        assertClosedClean(pool);
    }
}
