package dev.threadpool;

import static dev.threadpool.TestSupport.WAIT;
import static dev.threadpool.TestSupport.awaitQuiescent;
import static dev.threadpool.TestSupport.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.TestSupport.PoolVariant;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.ObjLongConsumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Tasks in argument form ({@code submit(fn, ctx, arg)} and its family; DESIGN.md, "Tasks with arguments"): the
 * contract of every form on every variant. Each (context, argument) pair runs exactly once; a null function is
 * refused naming {@code fn}, a null context is passed on; groups, lanes, handles ({@code await}, {@code cancel}),
 * {@code trySubmit} on a full pool (false, nothing kept), the deadline form, a function that throws, shutdown with
 * queued argument tasks, a registered {@link Submitter}'s forms, caller-runs, and that the pool keeps no context
 * once its task has ended (a released context is collectable).
 */
class ArgumentTasksTest {

    /** Every variant at this suite's 2 workers, then at 64 (TestSupport.poolVariantsAndAt64). */
    static Stream<PoolVariant> variants() {
        return TestSupport.poolVariantsAndAt64();
    }

    static PoolConfig.Builder config(PoolVariant v) {
        // daemon workers: a pool leaked by a failing test cannot keep the test JVM alive
        return v.builder().maxThreads(v.workersOr(2)).queueCapacity(64).daemon(true);
    }

    static ThreadPool pool(PoolVariant v) {
        return TestSupport.track(ThreadPool.create(config(v).build()));
    }

    @AfterEach
    void auditAccounting() {
        TestSupport.auditTracked();
    }

    /** A context: counts the runs of each argument, and says on which worker the last one ran. */
    static final class Book {
        final AtomicIntegerArray runs;
        final AtomicInteger total = new AtomicInteger();
        final AtomicInteger offLane = new AtomicInteger();
        volatile int laneWorkers = Integer.MAX_VALUE;
        volatile ThreadPool pool;

        Book(int n) {
            this.runs = new AtomicIntegerArray(n);
        }

        /** The static, non-capturing function every form is given ({@code Book::onOrder}). */
        static void onOrder(Book b, long id) {
            b.runs.incrementAndGet((int) id);
            ThreadPool p = b.pool;
            if (p != null) {
                int w = p.currentWorkerIndex();
                if (w < 0 || w >= b.laneWorkers) {
                    b.offLane.incrementAndGet();
                }
            }
            b.total.incrementAndGet();
        }

        void awaitTotal(int n) {
            eventually(n + " runs", () -> total.get() >= n, () -> "total=" + total.get());
        }

        void assertEachOnce(int from, int to) {
            for (int i = from; i < to; i++) {
                assertEquals(1, runs.get(i), "argument " + i + " ran once");
            }
        }
    }

    private static void awaitQuietly(CountDownLatch l) {
        try {
            l.await(WAIT.toSeconds(), TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Occupies a one-worker pool's worker with a task that waits for {@code release}; returns once it runs. */
    private static void blockTheWorker(ThreadPool pool, CountDownLatch release) throws InterruptedException {
        CountDownLatch running = new CountDownLatch(1);
        pool.submit(() -> { running.countDown(); awaitQuietly(release); });
        assertTrue(running.await(WAIT.toSeconds(), TimeUnit.SECONDS), "the blocker runs");
    }

    // ---- exactly once ----------------------------------------------------------------------------------

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    @Timeout(120)
    void everyFormRunsEachContextAndArgumentExactlyOnce(PoolVariant v) throws Exception {
        try (ThreadPool pool = pool(v)) {
            final int rounds = 40;
            final int forms = 12;
            final int last = rounds * forms; // one more id, through Submitter.trySubmit
            Book a = new Book(last + 1);
            Book b = new Book(last + 1);
            WaitGroup group = new WaitGroup();
            try (Submitter s = pool.registerSubmitter()) {
                for (int r = 0; r < rounds; r++) {
                    int i = r * forms;
                    Book book = (r & 1) == 0 ? a : b; // two contexts: each (ctx, arg) pair is its own
                    pool.submit(Book::onOrder, book, i);
                    pool.submit(Book::onOrder, book, i + 1, SubmitOptions.DEFAULT);
                    pool.submit(Book::onOrder, book, i + 2, group);
                    pool.submit(Book::onOrder, book, i + 3, group, SubmitOptions.DEFAULT);
                    while (!pool.trySubmit(Book::onOrder, book, i + 4)) {
                        Thread.onSpinWait(); // a small pool may be full for a moment
                    }
                    assertTrue(pool.trySubmit(Book::onOrder, book, i + 5, WAIT));
                    assertTrue(pool.trySubmit(Book::onOrder, book, i + 6, WAIT, SubmitOptions.DEFAULT));
                    pool.await(pool.submitWaitable(Book::onOrder, book, i + 7));
                    pool.await(pool.submitWaitable(Book::onOrder, book, i + 8, SubmitOptions.DEFAULT));
                    s.submit(Book::onOrder, book, i + 9);
                    pool.await(s.submitWaitable(Book::onOrder, book, i + 10));
                    // from a worker: its own submit (LIFO slot and local queue, inject, or inline when full)
                    final int at = i + 11;
                    pool.submit(() -> pool.submit(Book::onOrder, book, at), group);
                }
                while (!s.trySubmit(Book::onOrder, a, last)) {
                    Thread.onSpinWait();
                }
            }
            assertTrue(group.await(WAIT));
            int expectA = rounds / 2 * forms + 1;
            int expectB = rounds / 2 * forms;
            a.awaitTotal(expectA);
            b.awaitTotal(expectB);
            awaitQuiescent(pool);
            assertEquals(expectA, a.total.get());
            assertEquals(expectB, b.total.get());
            for (int r = 0; r < rounds; r++) {
                Book book = (r & 1) == 0 ? a : b;
                Book other = book == a ? b : a;
                for (int k = 0; k < forms; k++) {
                    int i = r * forms + k;
                    assertEquals(1, book.runs.get(i), "form " + k + " of round " + r + " ran once");
                    assertEquals(0, other.runs.get(i), "form " + k + " of round " + r + " ran with its own ctx only");
                }
            }
            assertEquals(1, a.runs.get(last), "Submitter.trySubmit's task ran once");
            assertEquals(0, b.runs.get(last));
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    @Timeout(120)
    void blockingLaneArgumentTasksRunOnTheirLane(PoolVariant v) throws Exception {
        try (ThreadPool pool = pool(v)) {
            final int rounds = 30;
            Book book = new Book(rounds * 5);
            book.laneWorkers = v.variant() == SchedulerVariant.LANE_EXTENSION ? pool.config().blockingWorkers()
                    : pool.config().maxThreads();
            book.pool = pool;
            WaitGroup group = new WaitGroup();
            try (Submitter s = pool.registerSubmitter()) {
                for (int r = 0; r < rounds; r++) {
                    int i = r * 5;
                    pool.submit(Book::onOrder, book, i, SubmitOptions.BLOCKING);
                    pool.submit(Book::onOrder, book, i + 1, group, SubmitOptions.BLOCKING);
                    assertTrue(pool.trySubmit(Book::onOrder, book, i + 2, WAIT, SubmitOptions.BLOCKING));
                    pool.await(pool.submitWaitable(Book::onOrder, book, i + 3, SubmitOptions.BLOCKING));
                    s.submit(Book::onOrder, book, i + 4, SubmitOptions.BLOCKING);
                }
            }
            assertTrue(group.await(WAIT));
            book.awaitTotal(rounds * 5);
            awaitQuiescent(pool);
            book.assertEachOnce(0, rounds * 5);
            assertEquals(0, book.offLane.get(), "BLOCKING argument tasks ran on the workers of their lane");
        }
    }

    // ---- arguments ---------------------------------------------------------------------------------------

    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.threadpool.TestSupport#poolVariants")
    @Timeout(60)
    void aNullFunctionIsRefusedNamingFnAndNothingIsSubmitted(PoolVariant v) throws Exception {
        try (ThreadPool pool = pool(v)) {
            ObjLongConsumer<Object> none = null;
            Object ctx = new Object();
            WaitGroup group = new WaitGroup();
            List<ThreadPoolContractTest.ThrowingRunnable> calls = new ArrayList<>();
            calls.add(() -> pool.submit(none, ctx, 1));
            calls.add(() -> pool.submit(none, ctx, 1, SubmitOptions.DEFAULT));
            calls.add(() -> pool.submit(none, ctx, 1, group));
            calls.add(() -> pool.submit(none, ctx, 1, group, SubmitOptions.BLOCKING));
            calls.add(() -> pool.trySubmit(none, ctx, 1));
            calls.add(() -> pool.trySubmit(none, ctx, 1, WAIT));
            calls.add(() -> pool.trySubmit(none, ctx, 1, WAIT, SubmitOptions.DEFAULT));
            calls.add(() -> pool.submitWaitable(none, ctx, 1));
            calls.add(() -> pool.submitWaitable(none, ctx, 1, SubmitOptions.DEFAULT));
            Submitter s = pool.registerSubmitter();
            calls.add(() -> s.submit(none, ctx, 1));
            calls.add(() -> s.submit(none, ctx, 1, SubmitOptions.DEFAULT));
            calls.add(() -> s.trySubmit(none, ctx, 1));
            calls.add(() -> s.submitWaitable(none, ctx, 1));
            for (ThreadPoolContractTest.ThrowingRunnable call : calls) {
                ThreadPoolContractTest.assertMessage(NullPointerException.class, "fn must not be null", call);
            }
            // the other arguments are checked too, by name, as for the Runnable forms
            ThreadPoolContractTest.assertMessage(NullPointerException.class, "group",
                    () -> pool.submit(Book::onOrder, new Book(1), 0, (WaitGroup) null));
            ThreadPoolContractTest.assertMessage(NullPointerException.class, "options",
                    () -> pool.submit(Book::onOrder, new Book(1), 0, (SubmitOptions) null));
            ThreadPoolContractTest.assertMessage(NullPointerException.class, "timeout",
                    () -> pool.trySubmit(Book::onOrder, new Book(1), 0, (Duration) null));
            ThreadPoolContractTest.assertMessage(IllegalArgumentException.class, "timeout",
                    () -> pool.trySubmit(Book::onOrder, new Book(1), 0, Duration.ofNanos(-1)));
            s.close();
            assertThrows(IllegalStateException.class, () -> s.submit(Book::onOrder, new Book(1), 0));
            assertThrows(IllegalStateException.class, () -> s.trySubmit(Book::onOrder, new Book(1), 0));
            assertThrows(IllegalStateException.class, () -> s.submitWaitable(Book::onOrder, new Book(1), 0));
            PoolStats st = pool.statsSnapshot();
            assertEquals(0, st.submitted(), "nothing was submitted: " + st);
            assertEquals(0, group.pending(), "a refused argument leaves the group untouched");
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.threadpool.TestSupport#poolVariants")
    @Timeout(60)
    void aNullContextIsPassedOnByEveryForm(PoolVariant v) throws Exception {
        try (ThreadPool pool = pool(v)) {
            final int n = 10;
            AtomicIntegerArray runs = new AtomicIntegerArray(n);
            AtomicInteger notNull = new AtomicInteger();
            ObjLongConsumer<Object> fn = (ctx, arg) -> {
                if (ctx != null) {
                    notNull.incrementAndGet();
                }
                runs.incrementAndGet((int) arg);
            };
            WaitGroup group = new WaitGroup();
            try (Submitter s = pool.registerSubmitter()) {
                pool.submit(fn, null, 0);
                pool.submit(fn, null, 1, group);
                assertTrue(pool.trySubmit(fn, null, 2, WAIT));
                pool.await(pool.submitWaitable(fn, null, 3));
                pool.submit(fn, null, 4, SubmitOptions.BLOCKING);
                s.submit(fn, null, 5);
                pool.await(s.submitWaitable(fn, null, 6));
                pool.submit(() -> pool.submit(fn, null, 7), group); // a worker's own submit
                while (!pool.trySubmit(fn, null, 8)) {
                    Thread.onSpinWait();
                }
                while (!s.trySubmit(fn, null, 9)) {
                    Thread.onSpinWait();
                }
            }
            assertTrue(group.await(WAIT));
            eventually("every task ran", () -> {
                for (int i = 0; i < n; i++) {
                    if (runs.get(i) == 0) {
                        return false;
                    }
                }
                return true;
            });
            awaitQuiescent(pool);
            for (int i = 0; i < n; i++) {
                assertEquals(1, runs.get(i), "form " + i);
            }
            assertEquals(0, notNull.get(), "every task got the null context it was submitted with");
        }
    }

    // ---- full pools -----------------------------------------------------------------------------------

    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.threadpool.TestSupport#oneWorkerVariants")
    @Timeout(60)
    void trySubmitOnAFullPoolReturnsFalseAndKeepsNothing(PoolVariant v) throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        try (ThreadPool pool = TestSupport.track(ThreadPool.create(config(v).maxThreads(1).queueCapacity(2).build()))) {
            blockTheWorker(pool, release);
            Book book = new Book(8);
            // a running blocker holds one of the 2 descriptors, or (carried) nothing: the ring's 2 cells are free
            int room = TestSupport.carriesOutsideTasks(pool.config()) ? 2 : 1;
            for (int i = 0; i < room; i++) {
                assertTrue(pool.trySubmit(Book::onOrder, book, i), "room for " + (room - i) + " more");
            }
            WeakReference<Object> refused = trySubmitRefused(pool);
            assertFalse(pool.trySubmit(Book::onOrder, book, 5, Duration.ZERO), "ZERO = one attempt");
            assertFalse(pool.trySubmit(Book::onOrder, book, 6, Duration.ofMillis(20)), "timed: gives up while full");
            assertEquals(3, pool.statsSnapshot().rejected());
            release.countDown();
            assertTrue(pool.trySubmit(Book::onOrder, book, 7, WAIT), "space appears once the blocker finishes");
            book.awaitTotal(room + 1);
            awaitQuiescent(pool);
            book.assertEachOnce(0, room);
            assertEquals(0, book.runs.get(5) + book.runs.get(6), "a refused task never runs");
            assertEquals(1, book.runs.get(7));
            assertCollected("the refused task's context", refused);
            PoolStats s = pool.statsSnapshot();
            assertEquals(room + 2, s.submitted(), "refused tasks are not counted as submitted: " + s);
        } finally {
            release.countDown();
        }
    }

    /** A trySubmit of a fresh context into the full pool: refused; returns the context, held only weakly. */
    private static WeakReference<Object> trySubmitRefused(ThreadPool pool) {
        Book ctx = new Book(8);
        assertFalse(pool.trySubmit(Book::onOrder, ctx, 4), "full");
        return new WeakReference<>(ctx);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.threadpool.TestSupport#oneWorkerVariants")
    @Timeout(60)
    void aWorkerSubmittingIntoAFullPoolRunsArgumentTasksInline(PoolVariant v) throws Exception {
        try (ThreadPool pool = TestSupport.track(ThreadPool.create(config(v).maxThreads(1).queueCapacity(2).build()))) {
            final int n = 50;
            Book book = new Book(n);
            WaitGroup group = new WaitGroup();
            pool.submit(() -> {
                for (int i = 0; i < n; i++) {
                    pool.submit(Book::onOrder, book, i, group); // the one worker is busy here: inline when full
                }
            }, group);
            assertTrue(group.await(WAIT));
            book.awaitTotal(n);
            PoolStats s = awaitQuiescent(pool);
            book.assertEachOnce(0, n);
            assertTrue(s.inlineRuns() > 0, "the full pool ran some inline (caller-runs): " + s);
        }
    }

    // ---- handles --------------------------------------------------------------------------------------

    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.threadpool.TestSupport#oneWorkerVariants")
    @Timeout(60)
    void awaitAndCancelAcceptArgumentHandles(PoolVariant v) throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        try (ThreadPool pool = TestSupport.track(ThreadPool.create(config(v).maxThreads(1).build()))) {
            blockTheWorker(pool, release);
            Book book = new Book(4);
            long first = pool.submitWaitable(Book::onOrder, book, 0);
            Submitter s = pool.registerSubmitter();
            long second = s.submitWaitable(Book::onOrder, book, 1);
            long third = pool.submitWaitable(Book::onOrder, book, 2, SubmitOptions.DEFAULT);
            WeakReference<Object> cancelledCtx = cancelQueued(pool);
            assertTrue(pool.cancel(second), "queued: cancelled");
            assertFalse(pool.cancel(second), "only once");
            assertFalse(pool.await(first, Duration.ZERO), "queued behind the blocker");
            release.countDown();
            pool.await(first);
            assertThrows(TaskCancelledException.class, () -> pool.await(second));
            assertTrue(pool.await(third, WAIT));
            assertFalse(pool.cancel(third), "already ran");
            s.close();
            awaitQuiescent(pool);
            assertEquals(1, book.runs.get(0));
            assertEquals(0, book.runs.get(1), "the cancelled task never ran");
            assertEquals(1, book.runs.get(2));
            assertCollected("a cancelled waitable's context, once its await released the slot", cancelledCtx);
            assertThrows(TaskCancelledException.class, () -> pool.await(second), "the same outcome, until reuse");
        } finally {
            release.countDown();
        }
    }

    /** A waitable of a fresh context, cancelled while queued and then awaited; returns the context weakly. */
    private static WeakReference<Object> cancelQueued(ThreadPool pool) throws InterruptedException {
        Book ctx = new Book(1);
        long h = pool.submitWaitable(Book::onOrder, ctx, 0);
        assertTrue(pool.cancel(h));
        assertThrows(TaskCancelledException.class, () -> pool.await(h));
        assertEquals(0, ctx.total.get());
        return new WeakReference<>(ctx);
    }

    // ---- failures -------------------------------------------------------------------------------------

    /** A context that records every call and throws for odd arguments. */
    static final class Failing {
        final ConcurrentLinkedQueue<Long> calls = new ConcurrentLinkedQueue<>();

        static void run(Failing f, long arg) {
            f.calls.add(arg);
            if ((arg & 1) != 0) {
                throw new IllegalStateException("odd " + arg);
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.threadpool.TestSupport#poolVariants")
    @Timeout(60)
    void aThrowingFunctionIsHandledAsAThrowingTask(PoolVariant v) throws Exception {
        ConcurrentLinkedQueue<Runnable> reported = new ConcurrentLinkedQueue<>();
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        try (ThreadPool pool = TestSupport.track(ThreadPool.create(config(v)
                .errorHandler((task, t) -> { reported.add(task); errors.add(t); }).build()))) {
            Failing f = new Failing();
            WaitGroup group = new WaitGroup();
            pool.submit(Failing::run, f, 1, group); // carried (outside)
            pool.submit(Failing::run, f, 3, group, SubmitOptions.BLOCKING); // a descriptor
            pool.submit(() -> pool.submit(Failing::run, f, 5, group), group); // a worker's own submit
            long h = pool.submitWaitable(Failing::run, f, 7);
            TaskFailedException e = assertThrows(TaskFailedException.class, () -> pool.await(h));
            assertEquals("odd 7", e.getCause().getMessage());
            assertTrue(group.await(WAIT));
            pool.submit(Failing::run, f, 8, group); // the workers live on
            assertTrue(group.await(WAIT));
            PoolStats s = awaitQuiescent(pool);
            assertEquals(4, s.failed(), "1, 3, 5 and 7: " + s);
            assertEquals(2, s.completed(), "8 and the task that submitted 5: " + s);
            assertEquals(4, pool.recentErrors().size());
            for (Throwable t : errors) {
                assertTrue(t instanceof IllegalStateException && t.getMessage().startsWith("odd "), t.toString());
            }
            // the handler got every failure with a Runnable that names the argument and repeats the call
            eventually("every failure handled", () -> reported.size() == 4);
            List<String> names = new ArrayList<>();
            for (Runnable r : reported) {
                names.add(r.toString());
            }
            for (long odd : new long[] {1, 3, 5, 7}) {
                assertTrue(names.stream().anyMatch(n -> n.contains("arg=" + odd)), "reported " + odd + ": " + names);
            }
            Runnable again = reported.peek();
            int before = f.calls.size();
            assertThrows(IllegalStateException.class, again::run, "run() makes the same call, which throws again");
            assertEquals(before + 1, f.calls.size());
            assertTrue(f.calls.contains(8L));
        }
    }

    // ---- shutdown ---------------------------------------------------------------------------------------

    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.threadpool.TestSupport#oneWorkerVariants")
    @Timeout(60)
    void shutdownNowHandsBackEveryQueuedArgumentTaskOnceAndTheRestRun(PoolVariant v) throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        ThreadPool pool = TestSupport.track(ThreadPool.create(config(v).maxThreads(1).queueCapacity(64).build()));
        try {
            ExecutorService es = pool.asExecutorService(); // installs the sweep's receiver
            blockTheWorker(pool, release);
            final int n = 30;
            Book book = new Book(n);
            WaitGroup group = new WaitGroup();
            Submitter s = pool.registerSubmitter();
            for (int i = 0; i < 10; i++) {
                pool.submit(Book::onOrder, book, i, group); // carried, or a descriptor under FULL timestamps
                s.submit(Book::onOrder, book, 10 + i); // a Submitter's: carried, or its own queue (WORK_STEALING)
            }
            long[] handles = new long[10];
            for (int i = 0; i < 10; i++) {
                handles[i] = pool.submitWaitable(Book::onOrder, book, 20 + i); // descriptors
            }
            s.close();
            List<Runnable> swept = es.shutdownNow(); // CANCEL_PENDING: every queued task comes back, once
            release.countDown();
            assertTrue(es.awaitTermination(WAIT.toSeconds(), TimeUnit.SECONDS));
            assertTrue(group.await(WAIT), "a swept task counts its group down");
            for (long h : handles) {
                assertThrows(TaskCancelledException.class, () -> pool.await(h), "a swept waitable is cancelled");
            }
            assertEquals(0, book.total.get(), "the one worker was blocked: nothing queued ran in the pool");
            assertEquals(n, swept.size(), "every queued task came back: " + swept);
            for (Runnable r : swept) {
                assertTrue(r.toString().contains("arg="), "a swept argument task names its argument: " + r);
                r.run(); // the caller owns it: running it makes the call the pool would have made
            }
            book.assertEachOnce(0, n); // each came back exactly once
            pool.close();
            PoolStats st = pool.statsSnapshot();
            assertEquals(n, st.cancelled(), "every queued task is counted cancelled: " + st);
            TestSupport.assertClosedClean(pool);
        } finally {
            release.countDown();
            pool.close();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.threadpool.TestSupport#oneWorkerVariants")
    @Timeout(60)
    void drainRunsEveryQueuedArgumentTaskOnce(PoolVariant v) throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        ThreadPool pool = TestSupport.track(ThreadPool.create(config(v).maxThreads(1).queueCapacity(64).build()));
        try {
            blockTheWorker(pool, release);
            final int n = 30;
            Book book = new Book(n);
            for (int i = 0; i < 20; i++) {
                pool.submit(Book::onOrder, book, i);
            }
            long[] handles = new long[10];
            for (int i = 0; i < 10; i++) {
                handles[i] = pool.submitWaitable(Book::onOrder, book, 20 + i);
            }
            Thread shutter = new Thread(() -> {
                try {
                    pool.shutdown(ShutdownMode.DRAIN, WAIT);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            shutter.start();
            eventually("shutdown began", pool::isShutdown);
            assertThrows(PoolShutdownException.class, () -> pool.submit(Book::onOrder, book, 0));
            release.countDown();
            shutter.join(WAIT.toMillis());
            assertFalse(shutter.isAlive());
            for (long h : handles) {
                pool.await(h); // ran: DRAIN runs everything accepted
            }
            pool.close();
            book.assertEachOnce(0, n);
            assertEquals(0, pool.statsSnapshot().cancelled());
            TestSupport.assertClosedClean(pool);
        } finally {
            release.countDown();
            pool.close();
        }
    }

    // ---- no context retained ------------------------------------------------------------------------------

    /** Holds a context only weakly once the task it was submitted with has been handed to the pool. */
    interface SubmitWith {
        void submit(ThreadPool pool, Object ctx) throws Exception;
    }

    static void touch(Object ctx, long arg) {
        ((AtomicInteger) ctx).incrementAndGet();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.threadpool.TestSupport#poolVariants")
    @Timeout(120)
    void aReleasedContextIsCollectable(PoolVariant v) throws Exception {
        try (ThreadPool pool = pool(v)) {
            WaitGroup group = new WaitGroup();
            List<SubmitWith> paths = List.of(
                    (p, ctx) -> p.submit(ArgumentTasksTest::touch, ctx, 1, group), // carried (outside)
                    (p, ctx) -> p.submit(ArgumentTasksTest::touch, ctx, 2, group, SubmitOptions.BLOCKING),
                    (p, ctx) -> p.await(p.submitWaitable(ArgumentTasksTest::touch, ctx, 3)), // descriptor, waitable
                    (p, ctx) -> p.submit(() -> p.submit(ArgumentTasksTest::touch, ctx, 4, group), group), // worker
                    (p, ctx) -> {
                        try (Submitter s = p.registerSubmitter()) {
                            group.add(1);
                            s.submit((c, a) -> { touch(c, a); group.done(); }, ctx, 5);
                        }
                    });
            for (int k = 0; k < paths.size(); k++) {
                WeakReference<Object> ref = submitAndForget(pool, paths.get(k), group);
                assertCollected("the context of path " + k + ", its task ended", ref);
            }
            awaitQuiescent(pool);
        }
    }

    /** Submits a fresh context down {@code path}, waits for its task to end; returns the context weakly. */
    private static WeakReference<Object> submitAndForget(ThreadPool pool, SubmitWith path, WaitGroup group)
            throws Exception {
        AtomicInteger ctx = new AtomicInteger();
        path.submit(pool, ctx);
        assertTrue(group.await(WAIT));
        eventually("the task ran", () -> ctx.get() == 1);
        return new WeakReference<>(ctx);
    }

    /**
     * Waits, with a collection before each look and bounded by {@link TestSupport#WAIT}, until {@code ref} is
     * cleared: nothing strong reaches the object (a worker drops a carried batch's copies at its next look).
     */
    static void assertCollected(String what, WeakReference<?> ref) {
        eventually(what + " is collectable", () -> {
            System.gc();
            return ref.get() == null;
        });
        assertNull(ref.get());
    }

    // ---- a helper's own type check ---------------------------------------------------------------------

    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.threadpool.TestSupport#poolVariants")
    @Timeout(60)
    void aFunctionOfASupertypeTakesASubtypesContext(PoolVariant v) throws Exception {
        try (ThreadPool pool = pool(v)) {
            AtomicReference<Object> seen = new AtomicReference<>();
            ObjLongConsumer<Object> any = (ctx, arg) -> seen.set(ctx);
            String ctx = "a String context for an ObjLongConsumer<Object>";
            pool.await(pool.submitWaitable(any, ctx, 0)); // <? super T>: T = String, fn of Object
            assertSame(ctx, seen.get());
        }
    }
}
