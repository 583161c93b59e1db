package dev.threadpool;

import static dev.threadpool.TestSupport.WAIT;
import static dev.threadpool.TestSupport.awaitQuiescent;
import static dev.threadpool.TestSupport.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.ArgumentTasksTest.Book;
import dev.threadpool.ArgumentTasksTest.Failing;
import dev.threadpool.TestSupport.PoolVariant;
import dev.threadpool.ThreadPoolContractTest.ThrowingRunnable;
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
import java.util.function.ObjLongConsumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The batch form of tasks in argument form, {@code submitBatch(fn, ctx, args, from, to)} and its overloads (issue 44;
 * DESIGN.md, "Tasks with arguments"): one task per element of {@code args[from..to)}, with the chunking,
 * back-pressure, return value and group counting of {@code submitBatch(Runnable[], from, to)}. Every element runs
 * exactly once with its context, on every variant, from outside, from a worker and from a registered
 * {@link Submitter}; bad input is refused naming the parameter before anything is submitted; a full pool makes the
 * caller wait (or, on a worker, run inline); shutdown part-way returns what was submitted, and what was submitted
 * runs (DRAIN) or comes back as a report naming its argument (CANCEL_PENDING); a failing element fails alone; and the
 * pool keeps no context once the batch's tasks have ended.
 */
class ArgumentBatchTest {

    /** Every variant at this suite's 2 workers, then at 64 (TestSupport.poolVariantsAndAt64). */
    static Stream<PoolVariant> variants() {
        return TestSupport.poolVariantsAndAt64();
    }

    /**
     * The one-worker variants (LANE_EXTENSION needs two), each with tasks from outside carried (the default) and on
     * descriptors (TimestampMode.FULL), so that both of the batch's paths meet a full pool.
     */
    static Stream<Arguments> oneWorkerPaths() {
        return TestSupport.oneWorkerVariants().flatMap(v -> Stream.of(
                Arguments.of(v, TimestampMode.DISABLED), Arguments.of(v, TimestampMode.FULL)));
    }

    static PoolConfig.Builder config(PoolVariant v) {
        // daemon workers: a pool leaked by a failing test cannot keep the test JVM alive
        return v.builder().maxThreads(v.workersOr(2)).queueCapacity(64).daemon(true);
    }

    static ThreadPool pool(PoolVariant v) {
        return TestSupport.track(ThreadPool.create(config(v).build()));
    }

    /** A one-worker pool of 2 descriptors and 2 carried cells, tasks from outside carried or not. */
    static ThreadPool tinyPool(PoolVariant v, TimestampMode stamps) {
        return TestSupport.track(ThreadPool.create(config(v).maxThreads(1).queueCapacity(2).timestampMode(stamps)
                .build()));
    }

    @AfterEach
    void auditAccounting() {
        TestSupport.auditTracked();
    }

    /** {@code n} arguments, {@code args[i] = i}. */
    static long[] ids(int n) {
        long[] a = new long[n];
        for (int i = 0; i < n; i++) {
            a[i] = i;
        }
        return a;
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

    /** Waits until {@code t} waits (parked, with or without a timeout): a submitter held back by a full pool. */
    private static void awaitWaiting(Thread t) {
        eventually(t.getName() + " waits for room", () -> t.getState() == Thread.State.WAITING
                || t.getState() == Thread.State.TIMED_WAITING, () -> "state " + t.getState());
    }

    // ---- exactly once ----------------------------------------------------------------------------------

    /**
     * Every overload, from outside, from a registered Submitter and from a worker, over ranges that span several
     * chunks of 64 and do not start at 0 (a queue of 64 fills on the way: the waits and, on a worker, caller-runs):
     * each (context, argument) pair of the range runs exactly once, nothing outside the range runs, and each call
     * returns the range's length.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    @Timeout(120)
    void everyElementOfEveryFormRunsOnceWithItsContext(PoolVariant v) throws Exception {
        try (ThreadPool pool = pool(v)) {
            final int forms = 7;
            final int span = 150; // two full chunks and a part
            final int stride = span + 10;
            long[] args = ids(forms * stride);
            Book a = new Book(args.length);
            Book b = new Book(args.length);
            WaitGroup group = new WaitGroup();
            int[] returned = new int[forms];
            AtomicInteger fromWorker = new AtomicInteger(-1);
            try (Submitter s = pool.registerSubmitter()) {
                int k = 0;
                // form f covers [f * stride + 5, f * stride + 5 + span); its context alternates by form
                returned[k] = pool.submitBatch(Book::onOrder, a, args, from(k), from(k) + span);
                k++;
                returned[k] = pool.submitBatch(Book::onOrder, b, args, from(k), from(k) + span, SubmitOptions.DEFAULT);
                k++;
                returned[k] = pool.submitBatch(Book::onOrder, a, args, from(k), from(k) + span, group);
                k++;
                returned[k] = pool.submitBatch(Book::onOrder, b, args, from(k), from(k) + span, group,
                        SubmitOptions.DEFAULT);
                k++;
                returned[k] = s.submitBatch(Book::onOrder, a, args, from(k), from(k) + span);
                k++;
                returned[k] = s.submitBatch(Book::onOrder, b, args, from(k), from(k) + span, group);
                k++;
                final int at = from(k);
                pool.submit(() -> fromWorker.set(pool.submitBatch(Book::onOrder, a, args, at, at + span, group)),
                        group);
            }
            assertTrue(group.await(WAIT));
            returned[forms - 1] = fromWorker.get();
            int expectA = 4 * span;
            int expectB = 3 * span;
            a.awaitTotal(expectA);
            b.awaitTotal(expectB);
            awaitQuiescent(pool);
            assertEquals(expectA, a.total.get());
            assertEquals(expectB, b.total.get());
            for (int f = 0; f < forms; f++) {
                assertEquals(span, returned[f], "form " + f + " returned the range's length");
                Book own = f % 2 == 0 ? a : b;
                Book other = own == a ? b : a;
                for (int i = f * stride; i < (f + 1) * stride; i++) {
                    boolean inRange = i >= from(f) && i < from(f) + span;
                    assertEquals(inRange ? 1 : 0, own.runs.get(i), "form " + f + ", argument " + i);
                    assertEquals(0, other.runs.get(i), "form " + f + ", argument " + i + ": its own context only");
                }
            }
            assertEquals(forms * span + 1, pool.statsSnapshot().submitted(), "the batches and the worker's task");
        }
    }

    /** The first index of form {@code f} in {@link #everyElementOfEveryFormRunsOnceWithItsContext}. */
    private static int from(int f) {
        return f * 160 + 5;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    @Timeout(120)
    void aBlockingLaneBatchRunsOnItsLane(PoolVariant v) throws Exception {
        try (ThreadPool pool = pool(v)) {
            final int n = 200;
            Book book = new Book(2 * n);
            book.laneWorkers = v.variant() == SchedulerVariant.LANE_EXTENSION ? pool.config().blockingWorkers()
                    : pool.config().maxThreads();
            book.pool = pool;
            long[] args = ids(2 * n);
            WaitGroup group = new WaitGroup();
            assertEquals(n, pool.submitBatch(Book::onOrder, book, args, 0, n, SubmitOptions.BLOCKING));
            assertEquals(n, pool.submitBatch(Book::onOrder, book, args, n, 2 * n, group, SubmitOptions.BLOCKING));
            assertTrue(group.await(WAIT));
            book.awaitTotal(2 * n);
            awaitQuiescent(pool);
            book.assertEachOnce(0, 2 * n);
            assertEquals(0, book.offLane.get(), "BLOCKING batch tasks ran on the workers of their lane");
        }
    }

    /**
     * Batches submitted by the tasks of a batch, through a full pool (a queue of 64): the inner calls run inline
     * or while their worker helps, nested in the outer call on the same thread, and must use chunk buffers of
     * their own. Every outer and inner argument runs once.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.threadpool.TestSupport#poolVariants")
    @Timeout(120)
    void nestedBatchesThroughAFullPoolLoseNothing(PoolVariant v) throws Exception {
        final int outer = 300;
        final int inner = 20;
        try (ThreadPool pool = pool(v)) {
            Nest nest = new Nest(pool, outer, inner);
            long[] outerArgs = ids(outer);
            assertEquals(outer, pool.submitBatch(Nest::outer, nest, outerArgs, 0, outer));
            eventually("every outer and inner task ran", () -> nest.total.get() == outer * (inner + 1),
                    () -> "total=" + nest.total.get());
            awaitQuiescent(pool);
            for (int i = 0; i < nest.runs.length(); i++) {
                assertEquals(1, nest.runs.get(i), "task " + i + " ran exactly once");
            }
            assertEquals(0, nest.wrongCounts.get(), "every inner batch returned its length");
        }
    }

    /** The context of {@link #nestedBatchesThroughAFullPoolLoseNothing}. */
    static final class Nest {
        final ThreadPool pool;
        final int inner;
        final AtomicIntegerArray runs;
        final AtomicInteger total = new AtomicInteger();
        final AtomicInteger wrongCounts = new AtomicInteger();
        final long[] innerArgs;

        Nest(ThreadPool pool, int outer, int inner) {
            this.pool = pool;
            this.inner = inner;
            this.runs = new AtomicIntegerArray(outer * (inner + 1));
            this.innerArgs = ids(outer * (inner + 1));
        }

        /** Outer task {@code o}: counts itself, then submits its inner tasks as one batch in argument form. */
        static void outer(Nest n, long o) {
            int base = (int) o * (n.inner + 1);
            n.hit(base);
            if (n.pool.submitBatch(Nest::leaf, n, n.innerArgs, base + 1, base + 1 + n.inner) != n.inner) {
                n.wrongCounts.incrementAndGet();
            }
        }

        static void leaf(Nest n, long id) {
            n.hit((int) id);
        }

        void hit(int id) {
            runs.incrementAndGet(id);
            total.incrementAndGet();
        }
    }

    // ---- arguments -----------------------------------------------------------------------------------------

    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.threadpool.TestSupport#poolVariants")
    @Timeout(60)
    void badInputIsRefusedNamingTheParameterAndNothingIsSubmitted(PoolVariant v) throws Exception {
        try (ThreadPool pool = pool(v)) {
            ObjLongConsumer<Object> none = null;
            Book book = new Book(10);
            long[] args = ids(10);
            WaitGroup group = new WaitGroup();
            Submitter s = pool.registerSubmitter();
            List<ThrowingRunnable> nullFn = List.of(
                    () -> pool.submitBatch(none, book, args, 0, 10),
                    () -> pool.submitBatch(none, book, args, 0, 10, SubmitOptions.DEFAULT),
                    () -> pool.submitBatch(none, book, args, 0, 10, group),
                    () -> pool.submitBatch(none, book, args, 0, 10, group, SubmitOptions.DEFAULT),
                    () -> s.submitBatch(none, book, args, 0, 10),
                    () -> s.submitBatch(none, book, args, 0, 10, group),
                    () -> pool.submitBatch(none, book, args, 3, 3)); // an empty range too
            for (ThrowingRunnable call : nullFn) {
                ThreadPoolContractTest.assertMessage(NullPointerException.class, "fn must not be null", call);
            }
            List<ThrowingRunnable> nullArgs = List.of(
                    () -> pool.submitBatch(Book::onOrder, book, null, 0, 0),
                    () -> pool.submitBatch(Book::onOrder, book, null, 0, 0, SubmitOptions.DEFAULT),
                    () -> pool.submitBatch(Book::onOrder, book, null, 0, 0, group),
                    () -> pool.submitBatch(Book::onOrder, book, null, 0, 0, group, SubmitOptions.DEFAULT),
                    () -> s.submitBatch(Book::onOrder, book, null, 0, 0),
                    () -> s.submitBatch(Book::onOrder, book, null, 0, 0, group));
            for (ThrowingRunnable call : nullArgs) {
                ThreadPoolContractTest.assertMessage(NullPointerException.class, "args must not be null", call);
            }
            int[][] badRanges = {{-1, 5}, {6, 5}, {0, 11}, {11, 11}, {Integer.MIN_VALUE, 0}};
            for (int[] r : badRanges) {
                List<ThrowingRunnable> calls = List.of(
                        () -> pool.submitBatch(Book::onOrder, book, args, r[0], r[1]),
                        () -> pool.submitBatch(Book::onOrder, book, args, r[0], r[1], SubmitOptions.DEFAULT),
                        () -> pool.submitBatch(Book::onOrder, book, args, r[0], r[1], group),
                        () -> pool.submitBatch(Book::onOrder, book, args, r[0], r[1], group, SubmitOptions.BLOCKING),
                        () -> s.submitBatch(Book::onOrder, book, args, r[0], r[1]),
                        () -> s.submitBatch(Book::onOrder, book, args, r[0], r[1], group));
                for (ThrowingRunnable call : calls) {
                    ThreadPoolContractTest.assertMessage(IndexOutOfBoundsException.class,
                            "from and to must satisfy 0 <= from <= to <= args.length: from=" + r[0] + ", to=" + r[1]
                                    + ", args.length=10", call);
                }
            }
            ThreadPoolContractTest.assertMessage(NullPointerException.class, "group",
                    () -> pool.submitBatch(Book::onOrder, book, args, 0, 10, (WaitGroup) null));
            ThreadPoolContractTest.assertMessage(NullPointerException.class, "group",
                    () -> pool.submitBatch(Book::onOrder, book, args, 0, 10, null, SubmitOptions.DEFAULT));
            ThreadPoolContractTest.assertMessage(NullPointerException.class, "group",
                    () -> s.submitBatch(Book::onOrder, book, args, 0, 10, null));
            ThreadPoolContractTest.assertMessage(NullPointerException.class, "options",
                    () -> pool.submitBatch(Book::onOrder, book, args, 0, 10, (SubmitOptions) null));
            ThreadPoolContractTest.assertMessage(NullPointerException.class, "options",
                    () -> pool.submitBatch(Book::onOrder, book, args, 0, 10, group, null));
            // an empty range submits nothing and returns 0, by every form
            assertEquals(0, pool.submitBatch(Book::onOrder, book, args, 4, 4));
            assertEquals(0, pool.submitBatch(Book::onOrder, book, args, 10, 10, SubmitOptions.DEFAULT));
            assertEquals(0, pool.submitBatch(Book::onOrder, book, args, 0, 0, group));
            assertEquals(0, pool.submitBatch(Book::onOrder, book, args, 0, 0, group, SubmitOptions.BLOCKING));
            assertEquals(0, s.submitBatch(Book::onOrder, book, args, 0, 0));
            assertEquals(0, s.submitBatch(Book::onOrder, book, new long[0], 0, 0, group));
            s.close();
            assertThrows(IllegalStateException.class, () -> s.submitBatch(Book::onOrder, book, args, 0, 1));
            assertThrows(IllegalStateException.class, () -> s.submitBatch(Book::onOrder, book, args, 0, 1, group));
            PoolStats st = pool.statsSnapshot();
            assertEquals(0, st.submitted(), "nothing was submitted: " + st);
            assertEquals(0, group.pending(), "a refused batch leaves the group untouched");
            assertEquals(0, book.total.get());
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.threadpool.TestSupport#poolVariants")
    @Timeout(60)
    void aNullContextIsPassedOnToEveryTaskOfTheBatch(PoolVariant v) throws Exception {
        try (ThreadPool pool = pool(v)) {
            final int n = 100;
            AtomicIntegerArray runs = new AtomicIntegerArray(4 * n);
            AtomicInteger notNull = new AtomicInteger();
            ObjLongConsumer<Object> fn = (ctx, arg) -> {
                if (ctx != null) {
                    notNull.incrementAndGet();
                }
                runs.incrementAndGet((int) arg);
            };
            long[] args = ids(4 * n);
            WaitGroup group = new WaitGroup();
            assertEquals(n, pool.submitBatch(fn, null, args, 0, n, group));
            assertEquals(n, pool.submitBatch(fn, null, args, n, 2 * n, group, SubmitOptions.BLOCKING));
            try (Submitter s = pool.registerSubmitter()) {
                assertEquals(n, s.submitBatch(fn, null, args, 2 * n, 3 * n, group));
            }
            pool.submit(() -> pool.submitBatch(fn, null, args, 3 * n, 4 * n, group), group); // a worker's own
            assertTrue(group.await(WAIT));
            awaitQuiescent(pool);
            for (int i = 0; i < 4 * n; i++) {
                assertEquals(1, runs.get(i), "argument " + i);
            }
            assertEquals(0, notNull.get(), "every task got the null context its batch was submitted with");
        }
    }

    // ---- groups --------------------------------------------------------------------------------------------

    /**
     * A batch with a group, as submitBatch(Runnable[], ..., group): the group's await returns only once every task
     * of the batch has run, and its count is back at zero; from outside through a full pool, from a Submitter, on
     * the blocking lane and from a worker (whose await helps).
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    @Timeout(120)
    void aGroupCountsEveryTaskOfTheBatch(PoolVariant v) throws Exception {
        final int n = 1000;
        try (ThreadPool pool = pool(v)) {
            long[] args = ids(n);
            WaitGroup group = new WaitGroup();
            for (int round = 0; round < 4; round++) {
                Book book = new Book(n);
                int submitted = switch (round) {
                    case 0 -> pool.submitBatch(Book::onOrder, book, args, 0, n, group);
                    case 1 -> {
                        try (Submitter sub = pool.registerSubmitter()) {
                            yield sub.submitBatch(Book::onOrder, book, args, 0, n, group);
                        }
                    }
                    case 2 -> pool.submitBatch(Book::onOrder, book, args, 0, n, group, SubmitOptions.BLOCKING);
                    default -> {
                        AtomicInteger inner = new AtomicInteger(-1);
                        WaitGroup nested = new WaitGroup();
                        pool.submit(() -> {
                            inner.set(pool.submitBatch(Book::onOrder, book, args, 0, n, nested));
                            try {
                                assertTrue(nested.await(WAIT));
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
                assertEquals(n, book.total.get(), "round " + round + ": every task ran before the group reached 0");
                book.assertEachOnce(0, n);
                assertEquals(0, group.pending(), "round " + round);
            }
            awaitQuiescent(pool);
        }
    }

    // ---- full pools ----------------------------------------------------------------------------------------

    /**
     * Back-pressure: a batch of 10 into a pool that holds 2 while its one worker is blocked waits (the first ones
     * accepted, the caller parked, nothing lost, nothing run yet); released, the batch completes, returns 10 and
     * each argument runs once.
     */
    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("oneWorkerPaths")
    @Timeout(60)
    void aBatchIntoAFullPoolWaitsForRoom(PoolVariant v, TimestampMode stamps) throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        try (ThreadPool pool = tinyPool(v, stamps)) {
            blockTheWorker(pool, release);
            final int n = 10;
            Book book = new Book(n);
            long[] args = ids(n);
            WaitGroup group = new WaitGroup();
            AtomicInteger submitted = new AtomicInteger(-1);
            ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
            Thread submitter = new Thread(() -> {
                try {
                    submitted.set(pool.submitBatch(Book::onOrder, book, args, 0, n, group));
                } catch (Throwable e) {
                    errors.add(e);
                }
            }, "batch-submitter");
            submitter.start();
            awaitWaiting(submitter);
            assertEquals(-1, submitted.get(), "the batch has not returned: it waits for room");
            assertEquals(0, book.total.get(), "the one worker is blocked: nothing ran");
            int room = TestSupport.carriesOutsideTasks(pool.config()) ? 2 : 1;
            assertTrue(group.pending() >= room, "the accepted ones are counted: " + group.pending());
            release.countDown();
            submitter.join(WAIT.toMillis());
            assertFalse(submitter.isAlive(), "the batch completed once room was made");
            assertTrue(errors.isEmpty(), () -> "submitter threw " + errors);
            assertEquals(n, submitted.get());
            assertTrue(group.await(WAIT));
            awaitQuiescent(pool);
            book.assertEachOnce(0, n);
            assertEquals(n + 1, pool.statsSnapshot().submitted(), "the batch and the blocker");
        } finally {
            release.countDown();
        }
    }

    /** A worker's batch into a full pool runs what finds no room inline (caller-runs) instead of waiting. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.threadpool.TestSupport#oneWorkerVariants")
    @Timeout(60)
    void aWorkersBatchIntoAFullPoolRunsTasksInline(PoolVariant v) throws Exception {
        try (ThreadPool pool = tinyPool(v, TimestampMode.DISABLED)) {
            final int n = 200;
            Book book = new Book(n);
            long[] args = ids(n);
            WaitGroup group = new WaitGroup();
            AtomicInteger submitted = new AtomicInteger(-1);
            pool.submit(() -> submitted.set(pool.submitBatch(Book::onOrder, book, args, 0, n, group)), group);
            assertTrue(group.await(WAIT));
            PoolStats s = awaitQuiescent(pool);
            assertEquals(n, submitted.get());
            book.assertEachOnce(0, n);
            assertTrue(s.inlineRuns() > 0, "the full pool ran some inline (caller-runs): " + s);
        }
    }

    // ---- shutdown ------------------------------------------------------------------------------------------

    /**
     * A batch that shutdown (DRAIN) stops part-way: it returns what was submitted, the group counts exactly those,
     * and those run once the worker is free; the rest never run.
     */
    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("oneWorkerPaths")
    @Timeout(60)
    void aBatchStoppedByDrainReturnsWhatWasSubmittedAndThoseRun(PoolVariant v, TimestampMode stamps)
            throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        ThreadPool pool = tinyPool(v, stamps);
        try {
            blockTheWorker(pool, release);
            final int n = 10;
            Book book = new Book(n);
            long[] args = ids(n);
            WaitGroup group = new WaitGroup();
            AtomicInteger submitted = new AtomicInteger(-1);
            ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
            Thread submitter = new Thread(() -> {
                try {
                    submitted.set(pool.submitBatch(Book::onOrder, book, args, 0, n, group));
                } catch (Throwable e) {
                    errors.add(e);
                }
            }, "batch-submitter");
            submitter.start();
            awaitWaiting(submitter);
            assertFalse(pool.shutdown(ShutdownMode.DRAIN, Duration.ZERO));
            submitter.join(WAIT.toMillis());
            assertFalse(submitter.isAlive(), "the batch gave up when shutdown started");
            assertTrue(errors.isEmpty(), () -> "submitter threw " + errors);
            int room = TestSupport.carriesOutsideTasks(pool.config()) ? 2 : 1;
            assertEquals(room, submitted.get(), "the batch returned what was submitted before shutdown");
            assertEquals(room, group.pending(), "the group counts what was submitted, not the whole batch");
            release.countDown();
            assertTrue(group.await(WAIT), "the submitted tasks drained and the group reached zero");
            book.awaitTotal(room);
            book.assertEachOnce(0, room);
            assertEquals(room, book.total.get(), "the tasks not submitted never ran");
            assertThrows(PoolShutdownException.class, () -> pool.submitBatch(Book::onOrder, book, args, 0, n),
                    "a batch after shutdown began, with nothing submitted, is refused");
        } finally {
            release.countDown();
            pool.close();
        }
        TestSupport.assertClosedClean(pool);
    }

    /**
     * A batch that shutdownNow (CANCEL_PENDING) stops part-way: it returns what was submitted, and each of those
     * comes back once in shutdownNow's list, as a Runnable that names its argument and, run, makes the call the pool
     * would have made (with its own context); the group still reaches zero and the stats count them cancelled.
     */
    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("oneWorkerPaths")
    @Timeout(60)
    void aBatchStoppedByShutdownNowHandsBackWhatWasSubmitted(PoolVariant v, TimestampMode stamps)
            throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        ThreadPool pool = tinyPool(v, stamps);
        try {
            ExecutorService es = pool.asExecutorService(); // installs the sweep's receiver
            blockTheWorker(pool, release);
            final int n = 10;
            Book book = new Book(n);
            long[] args = ids(n);
            WaitGroup group = new WaitGroup();
            AtomicInteger submitted = new AtomicInteger(-1);
            ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
            Thread submitter = new Thread(() -> {
                try {
                    submitted.set(pool.submitBatch(Book::onOrder, book, args, 0, n, group));
                } catch (Throwable e) {
                    errors.add(e);
                }
            }, "batch-submitter");
            submitter.start();
            awaitWaiting(submitter);
            List<Runnable> swept = es.shutdownNow();
            submitter.join(WAIT.toMillis());
            assertFalse(submitter.isAlive(), "the batch gave up when shutdown started");
            assertTrue(errors.isEmpty(), () -> "submitter threw " + errors);
            release.countDown();
            assertTrue(es.awaitTermination(WAIT.toSeconds(), TimeUnit.SECONDS));
            int room = TestSupport.carriesOutsideTasks(pool.config()) ? 2 : 1;
            assertEquals(room, submitted.get(), "the batch returned what was submitted before shutdown");
            assertTrue(group.await(WAIT), "a swept task counts its group down");
            assertEquals(0, book.total.get(), "the one worker was blocked: nothing of the batch ran in the pool");
            assertEquals(room, swept.size(), "every submitted task came back: " + swept);
            for (Runnable r : swept) {
                assertTrue(r.toString().contains("arg=") && r.toString().contains("ctx=" + book),
                        "a swept task of the batch names its context and argument: " + r);
                r.run(); // the caller owns it: running it makes the call the pool would have made
            }
            book.assertEachOnce(0, room);
            assertEquals(room, book.total.get());
            pool.close();
            assertEquals(room, pool.statsSnapshot().cancelled(), "the swept tasks are counted cancelled");
        } finally {
            release.countDown();
            pool.close();
        }
        TestSupport.assertClosedClean(pool);
    }

    // ---- failures ------------------------------------------------------------------------------------------

    /**
     * Elements whose call throws fail alone: every element is called once, the others complete, each failure is
     * counted, kept and reported to the error handler with a Runnable that names its argument, as a single task in
     * argument form's; from outside and from a worker.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.threadpool.TestSupport#poolVariants")
    @Timeout(60)
    void aFailingElementDoesNotStopTheOthersAndIsReportedLikeATask(PoolVariant v) throws Exception {
        ConcurrentLinkedQueue<Runnable> reported = new ConcurrentLinkedQueue<>();
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        try (ThreadPool pool = TestSupport.track(ThreadPool.create(config(v).recentErrorCapacity(64)
                .errorHandler((task, t) -> { reported.add(task); errors.add(t); }).build()))) {
            Failing f = new Failing();
            final int n = 40;
            long[] args = ids(n);
            WaitGroup group = new WaitGroup();
            assertEquals(20, pool.submitBatch(Failing::run, f, args, 0, 20, group)); // from outside
            pool.submit(() -> pool.submitBatch(Failing::run, f, args, 20, n, group), group); // from a worker
            assertTrue(group.await(WAIT));
            PoolStats s = awaitQuiescent(pool);
            assertEquals(n / 2, s.failed(), "the odd arguments: " + s);
            assertEquals(n / 2 + 1, s.completed(), "the even ones and the task that submitted the second half: " + s);
            assertEquals(n, f.calls.size(), "every element was called");
            for (long i = 0; i < n; i++) {
                assertTrue(f.calls.contains(i), "element " + i + " was called");
            }
            assertEquals(n / 2, pool.recentErrors().size());
            for (Throwable t : errors) {
                assertTrue(t instanceof IllegalStateException && t.getMessage().startsWith("odd "), t.toString());
            }
            eventually("every failure handled", () -> reported.size() == n / 2);
            List<String> names = new ArrayList<>();
            for (Runnable r : reported) {
                names.add(r.toString());
            }
            for (long odd = 1; odd < n; odd += 2) {
                final long o = odd;
                assertTrue(names.stream().anyMatch(x -> x.contains("arg=" + o + "]")), "reported " + o + ": " + names);
            }
        }
    }

    // ---- no context retained ---------------------------------------------------------------------------------

    /** Submits a batch with a fresh context down one path and waits for its tasks to end. */
    interface BatchWith {
        void submit(ThreadPool pool, Object ctx, long[] args, WaitGroup group) throws Exception;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.threadpool.TestSupport#poolVariants")
    @Timeout(120)
    void aReleasedContextIsCollectable(PoolVariant v) throws Exception {
        try (ThreadPool pool = pool(v)) {
            List<BatchWith> paths = List.of(
                    (p, ctx, a, g) -> p.submitBatch(ArgumentTasksTest::touch, ctx, a, 0, a.length, g), // carried
                    (p, ctx, a, g) -> p.submitBatch(ArgumentTasksTest::touch, ctx, a, 0, a.length, g,
                            SubmitOptions.BLOCKING), // descriptors
                    (p, ctx, a, g) -> p.submit(() -> p.submitBatch(ArgumentTasksTest::touch, ctx, a, 0, a.length, g),
                            g), // a worker's own
                    (p, ctx, a, g) -> {
                        try (Submitter s = p.registerSubmitter()) {
                            s.submitBatch(ArgumentTasksTest::touch, ctx, a, 0, a.length, g);
                        }
                    });
            long[] args = ids(100);
            for (int k = 0; k < paths.size(); k++) {
                WeakReference<Object> ref = submitAndForget(pool, paths.get(k), args);
                ArgumentTasksTest.assertCollected("the context of path " + k + ", its batch ended", ref);
            }
            awaitQuiescent(pool);
        }
    }

    /** Submits a batch of a fresh context down {@code path}, waits for its tasks; returns the context weakly. */
    private static WeakReference<Object> submitAndForget(ThreadPool pool, BatchWith path, long[] args)
            throws Exception {
        AtomicInteger ctx = new AtomicInteger();
        WaitGroup group = new WaitGroup();
        path.submit(pool, ctx, args, group);
        assertTrue(group.await(WAIT));
        eventually("the batch ran", () -> ctx.get() == args.length);
        return new WeakReference<>(ctx);
    }
}
