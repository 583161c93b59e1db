package dev.threadpool.internal.scheduler;

import static dev.threadpool.TestSupport.WAIT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.Lane;
import dev.threadpool.PoolBusyException;
import dev.threadpool.PoolConfig;
import dev.threadpool.PoolStats;
import dev.threadpool.QueueKind;
import dev.threadpool.SchedulerVariant;
import dev.threadpool.ShutdownMode;
import dev.threadpool.TaskFailedException;
import dev.threadpool.TestSupport;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Nesting on a worker's stack: a worker that awaits a handle, needs a descriptor for submitWaitable, finds the
 * ring full or helps a parallelFor runs queued entries while it waits, and those entries can wait and help
 * again. Every such run goes through {@code WorkerLoop.runNested}, which counts {@code inlineDepth} and restores it
 * in a finally, and no worker helps past {@link WorkerLoop#MAX_INLINE_DEPTH}; beyond it a waiter only runs its own
 * task (one level per level of the user's own recursion). These tests measure the nesting of tasks on each
 * thread's stack, check the accounting afterwards, and that shutdown completes.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class NestedHelpingTest {

    /** A scheduler variant with a worker count; LANE_EXTENSION has no one-worker form. */
    record Variant(SchedulerVariant variant, QueueKind queueKind, int workers) {
        @Override
        public String toString() {
            String v = variant == SchedulerVariant.GLOBAL_QUEUE ? variant.name() : variant + "/" + queueKind;
            return v + " x" + workers;
        }
    }

    static Stream<Variant> variants() {
        return Stream.of(new Variant(SchedulerVariant.GLOBAL_QUEUE, QueueKind.RING, 1),
                new Variant(SchedulerVariant.GLOBAL_QUEUE, QueueKind.RING, 2),
                new Variant(SchedulerVariant.WORK_STEALING, QueueKind.RING, 1),
                new Variant(SchedulerVariant.WORK_STEALING, QueueKind.RING, 2),
                new Variant(SchedulerVariant.WORK_STEALING, QueueKind.CHASE_LEV, 1),
                new Variant(SchedulerVariant.WORK_STEALING, QueueKind.CHASE_LEV, 2),
                new Variant(SchedulerVariant.LANE_EXTENSION, QueueKind.RING, 2));
    }

    static Stream<Variant> oneWorkerVariants() {
        return variants().filter(v -> v.workers() == 1);
    }

    private static PoolConfig.Builder config(Variant v, int queueCapacity) {
        return PoolConfig.builder().schedulerVariant(v.variant()).queueKind(v.queueKind()).maxThreads(v.workers())
                .queueCapacity(queueCapacity).daemon(true);
    }

    private static final long WAIT_NANOS = WAIT.toNanos();

    /** Tasks of the workload currently on this thread's stack (each chain level counts one while it runs). */
    private static final ThreadLocal<int[]> NESTING = ThreadLocal.withInitial(() -> new int[1]);

    /** The deepest nesting any thread reached. */
    private final AtomicInteger deepest = new AtomicInteger();

    private void enter() {
        int n = ++NESTING.get()[0];
        deepest.accumulateAndGet(n, Math::max);
    }

    private static void exit() {
        NESTING.get()[0]--;
    }

    /** A task that submits a waitable child running {@code chain(core, depth - 1)} and awaits it. */
    private void chain(PoolCore core, int depth) {
        enter();
        try {
            if (depth == 0) {
                return;
            }
            long child = core.submitWaitable(() -> chain(core, depth - 1), 0);
            if (!core.await(child, WAIT_NANOS)) {
                throw new AssertionError("child at depth " + depth + " did not finish within " + WAIT);
            }
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        } finally {
            exit();
        }
    }

    /** Runs {@code leaf} at the bottom of a chain of {@code depth} awaits (so past the bound when deep enough). */
    private void chainThen(PoolCore core, int depth, Runnable leaf) {
        enter();
        try {
            if (depth == 0) {
                leaf.run();
                return;
            }
            long child = core.submitWaitable(() -> chainThen(core, depth - 1, leaf), 0);
            if (!core.await(child, WAIT_NANOS)) {
                throw new AssertionError("child at depth " + depth + " did not finish within " + WAIT);
            }
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        } finally {
            exit();
        }
    }

    /** Occupies every base worker until {@code release} opens, so what is submitted meanwhile stays queued. */
    private static void holdWorkers(PoolCore core, int workers, CountDownLatch release, CountDownLatch held) {
        for (int w = 0; w < workers; w++) {
            core.submit(() -> {
                held.countDown();
                try {
                    if (!release.await(WAIT.toSeconds(), TimeUnit.SECONDS)) {
                        throw new AssertionError("never released");
                    }
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
            }, 0, null, WaitMode.UNBOUNDED, 0L);
        }
    }

    private static PoolStats awaitQuiescent(PoolCore core) {
        PoolStats[] last = new PoolStats[1];
        TestSupport.eventually("quiescent pool", () -> {
            PoolStats s = core.statsSnapshot();
            last[0] = s;
            return s.queuedTasks() == 0 && s.activeTasks() == 0 && s.taskDescLive() == 0;
        }, () -> String.valueOf(last[0]));
        TestSupport.assertQuiescentAccounting(last[0]);
        return last[0];
    }

    /** The end of every workload: shutdown(DRAIN) must complete in time; then the arena is closed. */
    private static void shutdownWithin(PoolCore core) throws InterruptedException {
        assertTrue(core.shutdown(ShutdownMode.DRAIN, WAIT_NANOS), () -> "shutdown(DRAIN) completes within " + WAIT
                + ": " + core.statsSnapshot());
        core.close();
    }

    /** After a failure: a bounded attempt to free the pool, which must not hide the failure. */
    private static void release(PoolCore core) throws InterruptedException {
        if (!core.isClosed() && core.shutdown(ShutdownMode.CANCEL_PENDING, TimeUnit.SECONDS.toNanos(5))) {
            core.close();
        }
    }

    private static void awaitAll(PoolCore core, List<Long> handles) throws InterruptedException {
        for (long h : handles) {
            assertTrue(core.await(h, WAIT_NANOS), "task 0x" + Long.toHexString(h) + " finished within " + WAIT);
        }
    }

    // ---- recursion of awaits with queued work -----------------------------------------------------------

    /**
     * ROOTS chains of DEPTH awaits each, all queued before any starts, so every awaiting worker finds other
     * chains' tasks queued and helps. Helping may stack up to MAX_INLINE_DEPTH unrelated tasks; past that an
     * awaiter only runs its own child, so no thread nests deeper than MAX_INLINE_DEPTH + DEPTH + 1 (the base
     * task). Without the bound the helping stacked chain on chain (ROOTS x DEPTH levels) until a
     * StackOverflowError struck, in the tasks or in the pool's own bookkeeping. (DEPTH is what fits with a
     * margin: one level of submitWaitable + await takes about 1 KiB of stack compiled and up to about 1.7 KiB
     * interpreted, so the default 1 MiB worker stack holds 600 to 1,000 levels; ROOTS x DEPTH = 9,600 levels is
     * what the unbounded helping tried to stack.)
     */
    @ParameterizedTest
    @MethodSource("variants")
    void recursiveAwaitsWithQueuedWorkNestWithinTheBound(Variant v) throws Exception {
        final int roots = 32;
        final int depth = 300;
        PoolCore core = new PoolCore(config(v, 8192).build());
        try {
            CountDownLatch release = new CountDownLatch(1);
            CountDownLatch held = new CountDownLatch(v.workers());
            holdWorkers(core, v.workers(), release, held);
            assertTrue(held.await(WAIT.toSeconds(), TimeUnit.SECONDS), "every worker held");
            List<Long> handles = new ArrayList<>();
            for (int r = 0; r < roots; r++) {
                handles.add(core.submitWaitable(() -> chain(core, depth), 0));
            }
            release.countDown();
            awaitAll(core, handles);
            PoolStats s = awaitQuiescent(core);
            assertEquals(0, s.failed(), "no chain failed (a StackOverflowError would): " + s);
            assertEquals(roots * (depth + 1L) + v.workers(), s.completed(), "every level completed: " + s);
            int bound = WorkerLoop.MAX_INLINE_DEPTH + depth + 1;
            assertTrue(deepest.get() <= bound, "tasks nested " + deepest.get() + " deep on one thread; the bound is "
                    + bound + " (MAX_INLINE_DEPTH + one chain + the base task)");
            shutdownWithin(core);
        } finally {
            release(core);
        }
    }

    /**
     * Past the bound an awaiter runs its own child inline, and the child's queue entry stays behind, stale,
     * until somebody pops and drops it. A leaf past the bound that awaits many children in turn fills the
     * queues with such entries (here with live detached tasks queued in front of them); a push that then finds
     * no room must neither wait for a worker that will not come (one worker: it is us) nor help past the
     * bound: it runs its own task.
     */
    @ParameterizedTest
    @MethodSource("variants")
    void sequentialAwaitsPastTheBoundDoNotWedgeOnStaleEntries(Variant v) throws Exception {
        final int children = 600;
        final int detached = 8;
        PoolCore core = new PoolCore(config(v, 128).localQueueCapacity(16).build());
        AtomicInteger ran = new AtomicInteger();
        AtomicInteger detachedRan = new AtomicInteger();
        try {
            long root = core.submitWaitable(() -> chainThen(core, WorkerLoop.MAX_INLINE_DEPTH + 8, () -> {
                for (int k = 0; k < detached; k++) {
                    core.submit(detachedRan::incrementAndGet, 0, null, WaitMode.UNBOUNDED, 0L);
                }
                for (int k = 0; k < children; k++) {
                    long h = core.submitWaitable(ran::incrementAndGet, 0);
                    try {
                        if (!core.await(h, WAIT_NANOS)) {
                            throw new AssertionError("child " + k + " did not finish within " + WAIT);
                        }
                    } catch (InterruptedException e) {
                        throw new AssertionError(e);
                    }
                }
            }), 0);
            assertTrue(core.await(root, WAIT_NANOS), "the chain finished within " + WAIT);
            assertEquals(children, ran.get(), "every child ran");
            TestSupport.eventually("every detached task ran", () -> detachedRan.get() == detached);
            awaitQuiescent(core);
            shutdownWithin(core);
        } finally {
            release(core);
        }
    }

    /**
     * A parallelFor past the bound: helpOnce refuses to help there, so the splitter must not fork chunks that
     * only it could run (one worker); it processes the range itself.
     */
    @ParameterizedTest
    @MethodSource("variants")
    void parallelForPastTheBoundCompletes(Variant v) throws Exception {
        final int n = 20_000;
        PoolCore core = new PoolCore(config(v, 512).build());
        AtomicLong sum = new AtomicLong();
        try {
            long root = core.submitWaitable(() -> chainThen(core, WorkerLoop.MAX_INLINE_DEPTH + 4, () -> {
                try {
                    ParallelFor.run(core, 0, n, 16, i -> sum.addAndGet(i));
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
            }), 0);
            assertTrue(core.await(root, WAIT_NANOS), "the chain finished within " + WAIT);
            assertEquals((long) n * (n - 1) / 2, sum.get(), "every index ran once");
            awaitQuiescent(core);
            shutdownWithin(core);
        } finally {
            release(core);
        }
    }

    /**
     * submitWaitable past the bound with every descriptor taken: it cannot help, so it waits for a descriptor
     * to free up and gives up with PoolBusyException (one worker: nobody else frees one). The handles it did
     * get are awaited afterwards and release everything.
     */
    @ParameterizedTest
    @MethodSource("oneWorkerVariants")
    void submitWaitablePastTheBoundWithNoFreeDescriptorThrowsPoolBusy(Variant v) throws Exception {
        PoolCore core = new PoolCore(config(v, 128).build());
        AtomicReference<Throwable> refused = new AtomicReference<>();
        AtomicInteger got = new AtomicInteger();
        try {
            long root = core.submitWaitable(() -> chainThen(core, WorkerLoop.MAX_INLINE_DEPTH + 4, () -> {
                List<Long> handles = new ArrayList<>();
                try {
                    for (int k = 0; k < 256; k++) {
                        handles.add(core.submitWaitable(() -> { }, 0));
                    }
                } catch (PoolBusyException e) {
                    refused.set(e);
                }
                got.set(handles.size());
                try {
                    awaitAll(core, handles);
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
            }), 0);
            assertTrue(core.await(root, WAIT_NANOS), "the chain finished within " + WAIT);
            assertInstanceOf(PoolBusyException.class, refused.get(), "the submit past the last descriptor refused");
            assertTrue(got.get() > 0 && got.get() < 128, "some handles were handed out: " + got.get());
            awaitQuiescent(core);
            shutdownWithin(core);
        } finally {
            release(core);
        }
    }

    // ---- the depth counter -----------------------------------------------------------------------------

    /** The calling worker's nesting counter. */
    private static int inlineDepth() {
        return ((WorkerThread) Thread.currentThread()).inlineDepth;
    }

    /** Pushes a queue entry naming a slot past the table's end: running it throws from the pool's own code. */
    /** Pushes a stale entry (generation 0 is never issued) for slot 0, from the calling worker. */
    private static void pushStaleEntry(PoolCore core) throws ReflectiveOperationException {
        Scheduler scheduler = core.schedulerForTest();
        long stale = 0L; // gen 0, slot 0: tryStart refuses it and runEntry signals a space waiter
        assertTrue(scheduler.tryEnqueue((WorkerThread) Thread.currentThread(), stale, Lane.DEFAULT),
                "stale entry queued");
    }

    /** A field of the worker loop (the room that runs entries), made accessible. */
    private static Field field(String name) throws ReflectiveOperationException {
        Field f = WorkerLoop.class.getDeclaredField(name);
        f.setAccessible(true);
        return f;
    }

    /**
     * runEntry is not supposed to throw, but an Error in the pool's bookkeeping (a StackOverflowError, say)
     * would leave the worker's depth counter raised for good, and it would then help less and less. Here the
     * helped entry's bookkeeping throws: the entry is stale, and the space-waiter signal runEntry sends for it
     * meets a SpaceWaiters swapped out for null (one worker, so nobody else touches it meanwhile). helpOnce must
     * restore the counter.
     */
    @ParameterizedTest
    @MethodSource("oneWorkerVariants")
    void depthCounterIsRestoredWhenAHelpedEntryThrows(Variant v) throws Exception {
        PoolCore core = new PoolCore(config(v, 64).build());
        AtomicReference<Throwable> problem = new AtomicReference<>();
        Field space = field("space");
        try {
            long root = core.submitWaitable(() -> {
                try {
                    assertEquals(0, inlineDepth(), "a task run by the worker loop is not nested");
                    pushStaleEntry(core);
                    WorkerLoop loop = core.loopForTest();
                    Object saved = space.get(loop);
                    space.set(loop, null);
                    RuntimeException thrown;
                    try {
                        thrown = assertThrows(NullPointerException.class, core::helpOnce);
                    } finally {
                        space.set(loop, saved);
                    }
                    assertEquals(0, inlineDepth(), "helpOnce restored the depth after " + thrown);
                } catch (Throwable t) {
                    problem.set(t);
                }
            }, 0);
            assertTrue(core.await(root, WAIT_NANOS), "the root finished");
            assertNull(problem.get(), () -> "inside the worker: " + problem.get());
            awaitQuiescent(core);
            shutdownWithin(core);
        } finally {
            release(core);
        }
    }

    /**
     * Helped tasks that throw (an exception, an Error, a StackOverflowError of their own recursion) are
     * contained like any failure: the awaiter sees TaskFailedException, the depth counter is back, nothing is
     * left running and every descriptor comes back.
     */
    @ParameterizedTest
    @MethodSource("variants")
    void helpedTasksThatThrowAreContained(Variant v) throws Exception {
        PoolCore core = new PoolCore(config(v, 64).build());
        AtomicReference<Throwable> problem = new AtomicReference<>();
        try {
            long root = core.submitWaitable(() -> {
                try {
                    List<Runnable> bad = List.of(
                            () -> {
                                throw new IllegalStateException("boom");
                            },
                            () -> {
                                throw new AssertionError("an Error");
                            },
                            NestedHelpingTest::recurseForever);
                    for (Runnable r : bad) {
                        long h = core.submitWaitable(r, 0);
                        TaskFailedException e = assertThrows(TaskFailedException.class, () -> core.await(h, WAIT_NANOS));
                        assertTrue(e.getCause() != null, "the cause is kept");
                        if (r != bad.get(0) && r != bad.get(1)) {
                            assertInstanceOf(StackOverflowError.class, e.getCause(), "the task's own overflow");
                        }
                        assertEquals(0, inlineDepth(), "the depth is back after " + e.getCause());
                    }
                } catch (Throwable t) {
                    problem.set(t);
                }
            }, 0);
            assertTrue(core.await(root, WAIT_NANOS), "the root finished");
            assertNull(problem.get(), () -> "inside the worker: " + problem.get());
            PoolStats s = awaitQuiescent(core);
            assertEquals(3, s.failed(), "three failures counted: " + s);
            shutdownWithin(core);
        } finally {
            release(core);
        }
    }

    private static int recursion;

    private static void recurseForever() {
        recursion++;
        recurseForever();
    }
}
