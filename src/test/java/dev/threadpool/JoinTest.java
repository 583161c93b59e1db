package dev.threadpool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.threadpool.TestSupport.PoolVariant;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link ThreadPool#join}: both halves run exactly once, failures come back after both ended, nesting and
 * recursion stay bounded on a small pool, the outside caller's path (interrupt, shutdown), and
 * {@link WaitGroup#await()} helping on a worker. Every test runs on every variant unless it says why not.
 */
class JoinTest {

    static Stream<PoolVariant> variants() {
        return TestSupport.poolVariants();
    }

    /** The variants with a one-worker form (LANE_EXTENSION has none: TestSupport.oneWorkerVariants). */
    static Stream<PoolVariant> oneWorker() {
        return TestSupport.oneWorkerVariants();
    }

    private static ThreadPool pool(PoolVariant v, int workers, int capacity) {
        return ThreadPool.create(v.builder().maxThreads(workers).queueCapacity(capacity).build());
    }

    /** Runs {@code body} as a waitable task of {@code pool} (so on a worker) and awaits it. */
    private static void onWorker(ThreadPool pool, ThrowingRunnable body) throws InterruptedException {
        long h = pool.submitWaitable(() -> {
            try {
                body.run();
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        assertTrue(pool.await(h, TestSupport.WAIT), "task did not end in time");
    }

    interface ThrowingRunnable {
        void run() throws Exception;
    }

    /** Counts each leaf of a binary join tree over [lo, hi) in {@code seen}; splits where {@code split} says. */
    private record Tree(ThreadPool pool, AtomicLongArray seen, int lo, int hi, boolean skewed) implements Runnable {
        @Override
        public void run() {
            int n = hi - lo;
            if (n == 1) {
                seen.incrementAndGet(lo);
                return;
            }
            // balanced: halves; skewed: a 1/64 piece on the left, the rest on the right (depth ~ 64 ln n)
            int mid = skewed ? lo + Math.max(1, n / 64) : lo + n / 2;
            try {
                pool.join(new Tree(pool, seen, lo, mid, skewed), new Tree(pool, seen, mid, hi, skewed));
            } catch (InterruptedException e) {
                throw new AssertionError("a worker's join does not throw InterruptedException", e);
            }
        }
    }

    /** A left spine: level k joins (level k - 1, leaf k); leaf k stamps the order it ran in. */
    private record Spine(ThreadPool pool, AtomicLongArray ranAt, AtomicInteger clock, int k) implements Runnable {
        @Override
        public void run() {
            Runnable leaf = () -> ranAt.compareAndSet(k, 0, clock.incrementAndGet());
            if (k == 0) {
                leaf.run();
                return;
            }
            try {
                pool.join(new Spine(pool, ranAt, clock, k - 1), leaf);
            } catch (InterruptedException e) {
                throw new AssertionError("a worker's join does not throw InterruptedException", e);
            }
        }
    }

    private static void assertEachOnce(AtomicLongArray seen) {
        for (int i = 0; i < seen.length(); i++) {
            if (seen.get(i) != 1) {
                fail("leaf " + i + " ran " + seen.get(i) + " times");
            }
        }
    }

    // ---- semantics -------------------------------------------------------------------------------------

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    @Timeout(60)
    void bothHalvesRunFromOutsideAndFromAWorker(PoolVariant v) throws Exception {
        try (ThreadPool pool = pool(v, 2, 1024)) {
            AtomicInteger left = new AtomicInteger();
            AtomicInteger right = new AtomicInteger();
            pool.join(left::incrementAndGet, right::incrementAndGet); // outside: handed over as one task
            assertEquals(1, left.get());
            assertEquals(1, right.get());
            onWorker(pool, () -> pool.join(left::incrementAndGet, right::incrementAndGet));
            assertEquals(2, left.get());
            assertEquals(2, right.get());
            TestSupport.awaitQuiescent(pool);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    @Timeout(120)
    void aRecursiveTreeRunsEveryLeafExactlyOnce(PoolVariant v) throws Exception {
        try (ThreadPool pool = pool(v, 4, 4096)) {
            for (int round = 0; round < 3; round++) {
                AtomicLongArray seen = new AtomicLongArray(1 << 16);
                pool.join(new Tree(pool, seen, 0, 1 << 15, false), new Tree(pool, seen, 1 << 15, 1 << 16, false));
                assertEachOnce(seen);
            }
            PoolStats s = TestSupport.awaitQuiescent(pool);
            assertEquals(3, s.submitted(), "only the outside callers' pairs are tasks: " + s);
        }
    }

    /**
     * The proof of bounded helping: 2^20 (over 10^6) leaves, balanced (wide) and skewed (deep, about
     * 64 ln n levels, more than a worker's 256 join frames, so the deepest joins run both halves inline), on a
     * pool with queueCapacity 64 (joins take no descriptor), offered, stolen and helped with. Completes on every
     * variant without PoolBusyException or StackOverflowError, every leaf once.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    @Timeout(300)
    void aMillionLeavesDeepAndWideOnQueueCapacity64(PoolVariant v) throws Exception {
        try (ThreadPool pool = pool(v, 4, 64)) {
            for (boolean skewed : new boolean[] {false, true}) {
                int n = 1 << 20;
                AtomicLongArray seen = new AtomicLongArray(n);
                new Tree(pool, seen, 0, n, skewed).run(); // the root join from outside, the rest on workers
                assertEachOnce(seen);
            }
            TestSupport.awaitQuiescent(pool);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    @Timeout(60)
    void aFailingHalfComesBackAfterBothEnded(PoolVariant v) throws Exception {
        try (ThreadPool pool = pool(v, 2, 1024)) {
            IllegalStateException leftBoom = new IllegalStateException("left");
            IllegalArgumentException rightBoom = new IllegalArgumentException("right");
            AtomicInteger ran = new AtomicInteger();
            // left fails: right still runs; the cause is left's
            TaskFailedException e = assertThrows(TaskFailedException.class,
                    () -> pool.join(() -> { throw leftBoom; }, ran::incrementAndGet));
            assertSame(leftBoom, e.getCause());
            assertEquals(1, ran.get());
            // right fails, from a worker (stolen or popped back, whichever happened)
            AtomicReference<Throwable> seen = new AtomicReference<>();
            onWorker(pool, () -> {
                try {
                    pool.join(ran::incrementAndGet, () -> { throw rightBoom; });
                } catch (TaskFailedException f) {
                    seen.set(f.getCause());
                }
            });
            assertSame(rightBoom, seen.get());
            assertEquals(2, ran.get());
            // both fail: left's is the cause, right's suppressed
            IllegalStateException l2 = new IllegalStateException("left2");
            IllegalArgumentException r2 = new IllegalArgumentException("right2");
            e = assertThrows(TaskFailedException.class, () -> pool.join(() -> { throw l2; }, () -> { throw r2; }));
            assertSame(l2, e.getCause());
            assertSame(r2, l2.getSuppressed()[0]);
            // the type users catch is public API, not an internal class
            assertSame(JoinFailedException.class, e.getClass());
            // a failure deep in a tree passes through the enclosing joins unwrapped
            AtomicLongArray leaves = new AtomicLongArray(1 << 12);
            RuntimeException deep = new RuntimeException("deep");
            e = assertThrows(TaskFailedException.class, () -> pool.join(new Tree(pool, leaves, 0, 1 << 11, false),
                    () -> {
                        try {
                            pool.join(new Tree(pool, leaves, 1 << 11, 1 << 12, false), () -> { throw deep; });
                        } catch (InterruptedException ie) {
                            throw new AssertionError(ie);
                        }
                    }));
            assertSame(deep, e.getCause());
            assertEachOnce(leaves); // every other half still ran
            assertTrue(pool.recentErrors().isEmpty(), "join failures go to the caller, not the error log");
            TestSupport.awaitQuiescent(pool);
        }
    }

    /**
     * One worker, two descriptors, the outer task holding one: a join takes no descriptor (its frame is its
     * depth), and a left spine of joins nested twice as deep as the worker's 256 frames (PoolCore.JOIN_FRAMES)
     * runs the joins past the frames right after left on the same stack. Every leaf once, in order (no thief);
     * no PoolBusyException, no waiting.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("oneWorker")
    @Timeout(60)
    void joinsNeedNoDescriptorAndRunInlinePastTheFrames(PoolVariant v) throws Exception {
        try (ThreadPool pool = pool(v, 1, 2)) {
            AtomicLongArray seen = new AtomicLongArray(1 << 12);
            onWorker(pool, () -> new Tree(pool, seen, 0, 1 << 12, false).run());
            assertEachOnce(seen);
            int depth = 2 * 256;
            AtomicLongArray ranAt = new AtomicLongArray(depth);
            AtomicInteger clock = new AtomicInteger();
            onWorker(pool, () -> new Spine(pool, ranAt, clock, depth - 1).run());
            for (int k = 0; k < depth; k++) {
                assertEquals(k + 1, ranAt.get(k), "leaf " + k + " of the spine runs once, k-th (left before right)");
            }
            AtomicLong order = new AtomicLong();
            onWorker(pool, () -> pool.join(() -> joinQuietly(pool, () -> order.compareAndSet(0, 1),
                    () -> order.compareAndSet(1, 2)), () -> order.compareAndSet(2, 3)));
            assertEquals(3, order.get(), "one worker, no thief: left, then right, in order");
            TestSupport.awaitQuiescent(pool);
        }
    }

    /** An outside caller interrupted while waiting leaves with InterruptedException; the pair runs on. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    @Timeout(60)
    void anOutsideCallerCanBeInterrupted(PoolVariant v) throws Exception {
        try (ThreadPool pool = pool(v, 2, 1024)) {
            CountDownLatch release = new CountDownLatch(1);
            CountDownLatch leftStarted = new CountDownLatch(1);
            AtomicInteger ran = new AtomicInteger();
            AtomicReference<Throwable> outcome = new AtomicReference<>();
            Thread caller = new Thread(() -> {
                try {
                    pool.join(() -> {
                        leftStarted.countDown();
                        awaitQuietly(release);
                        ran.incrementAndGet();
                    }, ran::incrementAndGet);
                    outcome.set(new AssertionError("returned"));
                } catch (Throwable t) {
                    outcome.set(t);
                }
            });
            caller.start();
            assertTrue(leftStarted.await(TestSupport.WAIT.toSeconds(), TimeUnit.SECONDS));
            caller.interrupt();
            caller.join(TestSupport.WAIT.toMillis());
            assertFalse(caller.isAlive());
            assertTrue(outcome.get() instanceof InterruptedException, "got " + outcome.get());
            release.countDown();
            TestSupport.eventually("both halves ran", () -> ran.get() == 2);
            TestSupport.awaitQuiescent(pool);
        }
    }

    /** A worker's join ignores an interrupt (both halves end first) and keeps the status. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    @Timeout(60)
    void aWorkersJoinKeepsTheInterruptStatus(PoolVariant v) throws Exception {
        try (ThreadPool pool = pool(v, 2, 1024)) {
            AtomicBoolean kept = new AtomicBoolean();
            AtomicInteger ran = new AtomicInteger();
            onWorker(pool, () -> {
                Thread.currentThread().interrupt();
                pool.join(ran::incrementAndGet, ran::incrementAndGet);
                kept.set(Thread.currentThread().isInterrupted());
            });
            assertEquals(2, ran.get());
            assertTrue(kept.get());
        }
    }

    // ---- shutdown --------------------------------------------------------------------------------------

    /**
     * A join from a worker once shutdown began is refused as a submit is; a half offered before it still runs
     * exactly once, and its join returns normally, whichever worker ran it.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    @Timeout(60)
    void shutdownRefusesNewJoinsAndRunsOfferedHalvesOnce(PoolVariant v) throws Exception {
        ThreadPool pool = pool(v, 2, 1024);
        CountDownLatch inLeft = new CountDownLatch(1);
        CountDownLatch shutdownBegun = new CountDownLatch(1);
        AtomicInteger rightRuns = new AtomicInteger();
        AtomicReference<Throwable> outerOutcome = new AtomicReference<>();
        AtomicReference<Throwable> laterJoin = new AtomicReference<>();
        WaitGroup done = new WaitGroup();
        pool.submit(() -> {
            try {
                pool.join(() -> {
                    inLeft.countDown();
                    awaitQuietly(shutdownBegun);
                }, rightRuns::incrementAndGet);
                outerOutcome.set(new Exception("returned"));
                try {
                    pool.join(() -> { }, () -> { });
                } catch (Throwable t) {
                    laterJoin.set(t);
                }
            } catch (Throwable t) {
                outerOutcome.set(t);
            }
        }, done);
        assertTrue(inLeft.await(TestSupport.WAIT.toSeconds(), TimeUnit.SECONDS));
        FutureTask<Boolean> shutdown = new FutureTask<>(() -> pool.shutdown(ShutdownMode.CANCEL_PENDING,
                TestSupport.WAIT));
        new Thread(shutdown).start();
        TestSupport.eventually("shutdown began", pool::isShutdown);
        assertThrows(PoolShutdownException.class, () -> pool.join(() -> { }, () -> { }));
        shutdownBegun.countDown();
        assertTrue(done.await(TestSupport.WAIT));
        assertEquals("returned", outerOutcome.get().getMessage());
        assertEquals(1, rightRuns.get(), "the offered half ran exactly once");
        assertTrue(laterJoin.get() instanceof PoolShutdownException, "got " + laterJoin.get());
        assertTrue(shutdown.get(TestSupport.WAIT.toSeconds(), TimeUnit.SECONDS));
        pool.close();
    }

    /** An outside caller's pair swept by CANCEL_PENDING before it started: TaskCancelledException. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("oneWorker")
    @Timeout(60)
    void anOutsidePairSweptByCancelPendingReportsIt(PoolVariant v) throws Exception {
        ThreadPool pool = pool(v, 1, 1024);
        CountDownLatch blocking = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        pool.submit(() -> {
            blocking.countDown();
            awaitQuietly(release);
        });
        assertTrue(blocking.await(TestSupport.WAIT.toSeconds(), TimeUnit.SECONDS));
        AtomicInteger ran = new AtomicInteger();
        FutureTask<Void> caller = new FutureTask<>(() -> {
            pool.join(ran::incrementAndGet, ran::incrementAndGet);
            return null;
        });
        Thread t = new Thread(caller);
        t.start();
        TestSupport.eventually("the pair is queued", () -> pool.statsSnapshot().queuedTasks() == 1);
        FutureTask<Boolean> shutdown = new FutureTask<>(() -> pool.shutdown(ShutdownMode.CANCEL_PENDING,
                TestSupport.WAIT));
        new Thread(shutdown).start();
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> caller.get(TestSupport.WAIT.toSeconds(), TimeUnit.SECONDS));
        assertTrue(e.getCause() instanceof TaskCancelledException, "got " + e.getCause());
        assertEquals(0, ran.get());
        release.countDown();
        assertTrue(shutdown.get(TestSupport.WAIT.toSeconds(), TimeUnit.SECONDS));
        pool.close();
    }

    // ---- WaitGroup.await on a worker ---------------------------------------------------------------------

    /**
     * One worker: a task submits children with a group and awaits it. The children sit in the only worker's
     * queues; a blocking await would wait for itself. The worker's await helps instead and runs them.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("oneWorker")
    @Timeout(60)
    void waitGroupAwaitOnTheOnlyWorkerHelps(PoolVariant v) throws Exception {
        try (ThreadPool pool = pool(v, 1, 1024)) {
            AtomicInteger children = new AtomicInteger();
            AtomicBoolean timedReturned = new AtomicBoolean();
            onWorker(pool, () -> {
                WaitGroup wg = new WaitGroup();
                for (int i = 0; i < 10; i++) {
                    pool.submit(children::incrementAndGet, wg);
                }
                wg.await();
                WaitGroup wg2 = new WaitGroup();
                pool.submit(children::incrementAndGet, wg2);
                timedReturned.set(wg2.await(TestSupport.WAIT));
            });
            assertEquals(11, children.get());
            assertTrue(timedReturned.get());
            TestSupport.awaitQuiescent(pool);
        }
    }

    private static void joinQuietly(ThreadPool pool, Runnable left, Runnable right) {
        try {
            pool.join(left, right);
        } catch (InterruptedException e) {
            throw new AssertionError("a worker's join does not throw InterruptedException", e);
        }
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            if (!latch.await(TestSupport.WAIT.toSeconds(), TimeUnit.SECONDS)) {
                throw new AssertionError("latch not released in time");
            }
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    /** Stack size docs/CONFIGURATION.md ("Worker stack size") gives for 3,000 nested joins: 3,000 x 2,000 + 256 KiB. */
    static final long DOCUMENTED_STACK_FOR_3000 = 8L << 20;

    /** One level of a left-recursive chain of joins: {@code left} recurses, {@code right} counts itself. */
    private record Chain(ThreadPool pool, int levels, AtomicInteger rights, AtomicInteger bottom) implements Runnable {
        @Override
        public void run() {
            if (levels == 0) {
                bottom.incrementAndGet();
                return;
            }
            try {
                pool.join(new Chain(pool, levels - 1, rights, bottom), rights::incrementAndGet);
            } catch (InterruptedException e) {
                throw new AssertionError("a worker's join does not throw InterruptedException", e);
            }
        }
    }

    /**
     * A chain of 3,000 nested joins on one worker (each level's left recurses) completes with the stack size
     * the docs give for it: the first 256 levels take the worker's join frames, the 2,744 past them run right
     * after left on the same stack (README: "past 256 joins nested on one worker, right simply runs after
     * left"), and every right runs once. Twice per pool, the first on a fresh worker; the JIT state differs from
     * variant to variant (interpreted, C1 or C2 frames: CONFIGURATION.md's table).
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    @Timeout(120)
    void aChainOf3000NestedJoinsCompletesWithTheDocumentedStackSize(PoolVariant v) throws Exception {
        try (ThreadPool pool = ThreadPool.create(v.builder().maxThreads(2).queueCapacity(64)
                .workerStackSize(DOCUMENTED_STACK_FOR_3000).build())) {
            for (int run = 0; run < 2; run++) {
                AtomicInteger rights = new AtomicInteger();
                AtomicInteger bottom = new AtomicInteger();
                long h = pool.submitWaitable(new Chain(pool, 3000, rights, bottom));
                assertTrue(pool.await(h, TestSupport.WAIT), "the chain did not end in time");
                assertEquals(1, bottom.get(), "the deepest left ran once");
                assertEquals(3000, rights.get(), "every right ran once, past the 256 frames too");
            }
            TestSupport.awaitQuiescent(pool);
        }
    }

    /**
     * The same chain, 100,000 deep, on a 256 KiB stack: the StackOverflowError is contained (the task fails with
     * TaskFailedException whose cause chain holds it) and the worker and the pool go on working.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    @Timeout(120)
    void aChainTooDeepForTheStackFailsContained(PoolVariant v) throws Exception {
        try (ThreadPool pool = ThreadPool.create(v.builder().maxThreads(2).queueCapacity(64)
                .workerStackSize(256 << 10).errorHandler((task, error) -> { }).build())) {
            long h = pool.submitWaitable(new Chain(pool, 100_000, new AtomicInteger(), new AtomicInteger()));
            TaskFailedException e = assertThrows(TaskFailedException.class, () -> pool.await(h));
            Throwable c = e;
            while (!(c instanceof StackOverflowError) && c.getCause() != null) {
                c = c.getCause();
            }
            assertTrue(c instanceof StackOverflowError, () -> "expected a StackOverflowError in " + e);
            AtomicInteger rights = new AtomicInteger();
            AtomicInteger bottom = new AtomicInteger();
            long ok = pool.submitWaitable(new Chain(pool, 50, rights, bottom));
            assertTrue(pool.await(ok, TestSupport.WAIT));
            assertEquals(50, rights.get());
            TestSupport.awaitQuiescent(pool);
        }
    }
}
