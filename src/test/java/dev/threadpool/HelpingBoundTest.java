package dev.threadpool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.TestSupport.PoolVariant;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A worker that waits (await, a full pool, a full ring) helps by running queued entries, nested on its own
 * stack. That nesting must stay bounded ({@code MAX_INLINE_DEPTH} levels of unrelated work), or a queue full
 * of tasks that each await a child nests one level per queued task until a StackOverflowError strikes, in
 * user code or inside the pool's bookkeeping after a task returned (a slot left RUNNING, DRAIN hanging).
 */
class HelpingBoundTest {

    /** Outer tasks queued at once: far more than any stack holds when each nests a helping level. */
    private static final int OUTER = 20_000;
    /** Room for every outer task and its child at once, so no submit waits and helping is all await's. */
    private static final int CAPACITY = 1 << 16;
    /**
     * Stack frames an outer task may see: the worker loop, at most MAX_INLINE_DEPTH (64) nested helping levels
     * of a few frames each, plus the await of the outer task itself. Unbounded nesting reaches tens of
     * thousands of frames (or overflows) with {@link #OUTER} queued tasks.
     */
    private static final int MAX_FRAMES = 2_000;

    static Stream<Arguments> variantsAndWorkers() {
        return TestSupport.poolVariants().flatMap(v -> v.variant() == SchedulerVariant.LANE_EXTENSION
                ? Stream.of(Arguments.of(v, 2)) // LANE_EXTENSION has no one-worker form (TestSupport)
                : Stream.of(Arguments.of(v, 1), Arguments.of(v, 2)));
    }

    /**
     * Every outer task submits a waitable child and awaits it. The worker's await helps, and the next queued
     * entry is usually another outer task (FIFO inject ring), which awaits in turn: without a bound, one nesting
     * level per queued task.
     */
    @ParameterizedTest(name = "{0}, {1} worker(s)")
    @MethodSource("variantsAndWorkers")
    @Timeout(120)
    void awaitsThatHelpNestBoundedly(PoolVariant v, int workers) throws Exception {
        AtomicInteger maxFrames = new AtomicInteger();
        AtomicInteger childrenRun = new AtomicInteger();
        AtomicReference<Throwable> firstFailure = new AtomicReference<>();
        WaitGroup outerDone = new WaitGroup();
        ThreadPool pool = ThreadPool.create(v.builder().maxThreads(workers).queueCapacity(CAPACITY).build());
        try {
            ThreadPool p = pool;
            for (int i = 0; i < OUTER; i++) {
                p.submit(() -> {
                    try {
                        long h = p.submitWaitable(childrenRun::incrementAndGet);
                        p.await(h);
                        int frames = StackWalker.getInstance().walk(Stream::count).intValue();
                        maxFrames.accumulateAndGet(frames, Math::max);
                    } catch (Throwable t) {
                        firstFailure.compareAndSet(null, t);
                        throw new RuntimeException(t);
                    }
                }, outerDone);
            }
            assertTrue(outerDone.await(TestSupport.WAIT), "every outer task ended: pending=" + outerDone.pending()
                    + ", first failure: " + firstFailure.get() + ", " + pool.statsSnapshot());
            if (firstFailure.get() != null) {
                throw new AssertionError("an outer task failed", firstFailure.get());
            }
            PoolStats s = TestSupport.awaitQuiescent(pool);
            assertEquals(OUTER, childrenRun.get(), "every child ran once");
            assertEquals(0, s.failed(), "no task failed: " + s);
            assertEquals(2L * OUTER, s.completed(), "outer tasks and children completed: " + s);
            assertTrue(maxFrames.get() < MAX_FRAMES, "stack frames seen by an outer task: " + maxFrames.get()
                    + " (bound " + MAX_FRAMES + ")");
        } finally {
            assertTrue(pool.shutdown(ShutdownMode.DRAIN, TestSupport.WAIT), "shutdown within " + TestSupport.WAIT);
            pool.close();
        }
        assertEquals(0, pool.statsSnapshot().liveBytes(), "liveBytes after close");
    }

    /**
     * Awaits of a task that runs on another worker, from a worker with a queue full of tasks that do the same:
     * the awaiter cannot run the awaited task itself, so it helps, and every helped task awaits in turn. The
     * pool's nesting must stop at the bound (the deepest awaiter then waits) instead of going one level per
     * queued task.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.threadpool.TestSupport#poolVariants")
    @Timeout(120)
    void awaitsOfATaskRunningElsewhereHelpBoundedly(PoolVariant v) throws Exception {
        AtomicInteger maxFrames = new AtomicInteger();
        AtomicReference<Throwable> firstFailure = new AtomicReference<>();
        java.util.concurrent.CountDownLatch blockerStarted = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        WaitGroup outerDone = new WaitGroup();
        ThreadPool pool = ThreadPool.create(v.builder().maxThreads(2).queueCapacity(CAPACITY).build());
        try {
            ThreadPool p = pool;
            long blocker = p.submitWaitable(() -> {
                blockerStarted.countDown();
                try {
                    if (!release.await(TestSupport.WAIT.toNanos(), java.util.concurrent.TimeUnit.NANOSECONDS)) {
                        throw new AssertionError("never released");
                    }
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
            });
            assertTrue(blockerStarted.await(TestSupport.WAIT.toNanos(), java.util.concurrent.TimeUnit.NANOSECONDS),
                    "the blocker started");
            for (int i = 0; i < OUTER; i++) {
                p.submit(() -> {
                    try {
                        p.await(blocker);
                        int frames = StackWalker.getInstance().walk(Stream::count).intValue();
                        maxFrames.accumulateAndGet(frames, Math::max);
                    } catch (Throwable t) {
                        firstFailure.compareAndSet(null, t);
                        throw new RuntimeException(t);
                    }
                }, outerDone);
            }
            // every worker but the blocker's is now nested in awaits, as deep as it goes
            TestSupport.eventually("helping reached the bound", () -> pool.statsSnapshot().started() > 64);
            release.countDown();
            assertTrue(outerDone.await(TestSupport.WAIT), "every outer task ended: pending=" + outerDone.pending()
                    + ", first failure: " + firstFailure.get() + ", " + pool.statsSnapshot());
            if (firstFailure.get() != null) {
                throw new AssertionError("an outer task failed", firstFailure.get());
            }
            PoolStats s = TestSupport.awaitQuiescent(pool);
            assertEquals(0, s.failed(), "no task failed: " + s);
            assertTrue(maxFrames.get() < MAX_FRAMES, "stack frames seen by an outer task: " + maxFrames.get()
                    + " (bound " + MAX_FRAMES + ")");
        } finally {
            release.countDown();
            assertTrue(pool.shutdown(ShutdownMode.DRAIN, TestSupport.WAIT), "shutdown within " + TestSupport.WAIT);
            pool.close();
        }
    }

    /**
     * A chain of awaits as deep as the user's recursion: each task awaits its child. At the nesting bound an
     * awaiter no longer helps unrelated work, but it still runs its own child when that child is still queued,
     * so a one-worker pool cannot deadlock on a chain longer than the bound.
     */
    @ParameterizedTest(name = "{0}, {1} worker(s)")
    @MethodSource("variantsAndWorkers")
    @Timeout(120)
    void aRecursiveAwaitChainDeeperThanTheBoundCompletes(PoolVariant v, int workers) throws Exception {
        final int depth = 500; // well past MAX_INLINE_DEPTH (64), well within a worker's stack
        AtomicInteger ran = new AtomicInteger();
        try (ThreadPool pool = ThreadPool.create(v.builder().maxThreads(workers).queueCapacity(1024).build())) {
            // unrelated queued work, so helping has something other than the chain to pick
            WaitGroup fillers = new WaitGroup();
            for (int i = 0; i < 200; i++) {
                pool.submit(ran::incrementAndGet, fillers);
            }
            long root = pool.submitWaitable(new Chain(pool, depth, ran));
            assertTrue(pool.await(root, TestSupport.WAIT), "the chain's root completed");
            assertTrue(fillers.await(TestSupport.WAIT), "fillers done");
            assertEquals(200 + depth + 1, ran.get(), "every link and filler ran once");
            PoolStats s = TestSupport.awaitQuiescent(pool);
            assertEquals(0, s.failed(), "no task failed: " + s);
        }
    }

    /** A task that, while {@code left > 0}, submits the next link as a waitable and awaits it. */
    private record Chain(ThreadPool pool, int left, AtomicInteger ran) implements Runnable {
        @Override
        public void run() {
            ran.incrementAndGet();
            if (left == 0) {
                return;
            }
            try {
                long h = pool.submitWaitable(new Chain(pool, left - 1, ran));
                if (!pool.await(h, Duration.ofSeconds(60))) {
                    throw new AssertionError("link " + (left - 1) + " did not finish");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }
}
