package dev.threadpool;

import static dev.threadpool.TestSupport.WAIT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.threadpool.TestSupport.PoolVariant;
import java.math.BigInteger;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Fork handles ({@link ThreadPool#fork(Runnable)}, {@code fork(fn, ctx, arg)}, {@code forkLong}, {@code forkDouble},
 * {@code forkObject} and their joins; {@code invokeLong}, {@code invokeDouble}, {@code invoke}): typed results of whole
 * trees exact on every variant, every half exactly once (joined, joined out of order after a misuse, never joined,
 * failing, past the frames, in a chain too deep for the stack), each misuse refused with the rule it broke, failures
 * after both sides ended, interrupts kept, shutdown mid-fork. The allocation checks are in
 * {@link ForkAllocationTest}.
 */
class ForkJoinHandlesTest {

    static Stream<PoolVariant> variants() {
        return TestSupport.poolVariants();
    }

    private static ThreadPool pool(PoolVariant v, int workers) {
        return TestSupport.track(ThreadPool.create(v.builder().maxThreads(workers).daemon(true).build()));
    }

    /** Runs {@code body} as a waitable task of {@code pool} (so on a worker), awaits it and rethrows its failure. */
    static void onWorker(ThreadPool pool, Runnable body) throws InterruptedException {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        long h = pool.submitWaitable(() -> {
            try {
                body.run();
            } catch (Throwable t) {
                failure.set(t);
            }
        });
        assertTrue(pool.await(h, WAIT), "task did not end in time");
        if (failure.get() instanceof RuntimeException e) {
            throw e;
        }
        if (failure.get() instanceof Error e) {
            throw e;
        }
    }

    static long range(int lo, int hi) {
        return (long) lo << 32 | (hi & 0xFFFF_FFFFL);
    }

    // ---- the trees: each form's classic shape ---------------------------------------------------------

    /** Fibonacci with the smallest tasks: fork n - 1, compute n - 2 in place. */
    static long fib(ThreadPool pool, long n) {
        if (n < 2) {
            return n;
        }
        long h = pool.forkLong(ForkJoinHandlesTest::fib, pool, n - 1);
        long b = fib(pool, n - 2);
        return b + pool.joinLong(h);
    }

    static long fibSerial(long n) {
        return n < 2 ? n : fibSerial(n - 1) + fibSerial(n - 2);
    }

    /** The context of the range trees: the pool, the data, a count per index (each index must be seen once). */
    record Data(ThreadPool pool, long[] values, AtomicLongArray seen, int grain) {
        Data(ThreadPool pool, int n, int grain) {
            this(pool, values(n), new AtomicLongArray(n), grain);
        }

        static long[] values(int n) {
            long[] a = new long[n];
            for (int i = 0; i < n; i++) {
                a[i] = (i * 0x9E3779B97F4A7C15L) >>> 40; // spread, and small enough that sums stay exact
            }
            return a;
        }

        long expectedSum() {
            long s = 0;
            for (long x : values) {
                s += x;
            }
            return s;
        }

        long leaf(int lo, int hi) {
            long s = 0;
            for (int i = lo; i < hi; i++) {
                seen.incrementAndGet(i);
                s += values[i];
            }
            return s;
        }

        void assertEachOnce() {
            for (int i = 0; i < seen.length(); i++) {
                if (seen.get(i) != 1) {
                    fail("index " + i + " seen " + seen.get(i) + " times");
                }
            }
        }

        /** forkLong / joinLong: the right half forked, the left in place. */
        static long sumLong(Data d, long range) {
            int lo = (int) (range >>> 32);
            int hi = (int) range;
            if (hi - lo <= d.grain) {
                return d.leaf(lo, hi);
            }
            int mid = (lo + hi) >>> 1;
            long h = d.pool.forkLong(Data::sumLong, d, range(mid, hi));
            long left = sumLong(d, range(lo, mid));
            return left + d.pool.joinLong(h);
        }

        /** forkDouble / joinDouble: the same sum as a double (exact: every partial sum is below 2^53). */
        static double sumDouble(Data d, long range) {
            int lo = (int) (range >>> 32);
            int hi = (int) range;
            if (hi - lo <= d.grain) {
                return d.leaf(lo, hi);
            }
            int mid = (lo + hi) >>> 1;
            long h = d.pool.forkDouble(Data::sumDouble, d, range(mid, hi));
            double left = sumDouble(d, range(lo, mid));
            return left + d.pool.joinDouble(h);
        }

        /** forkObject / joinObject: the sum as a BigInteger, so the result is an object of each half's own. */
        static BigInteger sumObject(Data d, long range) {
            int lo = (int) (range >>> 32);
            int hi = (int) range;
            if (hi - lo <= d.grain) {
                return BigInteger.valueOf(d.leaf(lo, hi));
            }
            int mid = (lo + hi) >>> 1;
            long h = d.pool.forkObject(Data::sumObject, d, range(mid, hi));
            BigInteger left = sumObject(d, range(lo, mid));
            BigInteger right = d.pool.joinObject(h);
            return left.add(right);
        }

        /** fork(fn, ctx, arg) / join: no result, each leaf counted. */
        static void visit(Data d, long range) {
            int lo = (int) (range >>> 32);
            int hi = (int) range;
            if (hi - lo <= d.grain) {
                d.leaf(lo, hi);
                return;
            }
            int mid = (lo + hi) >>> 1;
            long h = d.pool.fork(Data::visit, d, range(mid, hi));
            visit(d, range(lo, mid));
            d.pool.join(h);
        }

        /** fork(Runnable) / join: a node object per fork, as a user of the Runnable form writes it. */
        void visitRunnable(int lo, int hi) {
            if (hi - lo <= grain) {
                leaf(lo, hi);
                return;
            }
            int mid = (lo + hi) >>> 1;
            long h = pool.fork(() -> visitRunnable(mid, hi));
            visitRunnable(lo, mid);
            pool.join(h);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    @Timeout(120)
    void everyFormGivesTheExactResultOfAWholeTreeAndSeesEachIndexOnce(PoolVariant v) throws Exception {
        try (ThreadPool pool = pool(v, 4)) {
            assertEquals(fibSerial(22), pool.invokeLong(ForkJoinHandlesTest::fib, pool, 22), "fib from outside");
            long[] onWorker = new long[1];
            onWorker(pool, () -> onWorker[0] = fib(pool, 20));
            assertEquals(fibSerial(20), onWorker[0], "fib from a worker");

            int n = 1 << 16;
            Data longs = new Data(pool, n, 1);
            assertEquals(longs.expectedSum(), pool.invokeLong(Data::sumLong, longs, range(0, n)));
            longs.assertEachOnce();

            Data doubles = new Data(pool, n, 2);
            assertEquals((double) doubles.expectedSum(), pool.invokeDouble(Data::sumDouble, doubles, range(0, n)));
            doubles.assertEachOnce();

            Data objects = new Data(pool, n, 4);
            BigInteger sum = pool.invoke(Data::sumObject, objects, range(0, n));
            assertEquals(BigInteger.valueOf(objects.expectedSum()), sum);
            objects.assertEachOnce();

            Data voids = new Data(pool, n, 1);
            onWorker(pool, () -> Data.visit(voids, range(0, n)));
            voids.assertEachOnce();

            Data runnables = new Data(pool, n, 1);
            onWorker(pool, () -> runnables.visitRunnable(0, n));
            runnables.assertEachOnce();

            PoolStats s = TestSupport.awaitQuiescent(pool);
            assertEquals(0, s.failed(), "nothing failed: " + s);
        }
    }

    /** Several outside callers' trees at once: halves stolen between workers, none lost, none run twice. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    @Timeout(120)
    void concurrentTreesFromSeveralCallersAreExact(PoolVariant v) throws Exception {
        try (ThreadPool pool = pool(v, 4)) {
            int callers = 4;
            int n = 1 << 14;
            Data[] data = new Data[callers];
            Thread[] threads = new Thread[callers];
            AtomicReference<Throwable> failure = new AtomicReference<>();
            for (int c = 0; c < callers; c++) {
                Data d = new Data(pool, n, 1);
                data[c] = d;
                threads[c] = new Thread(() -> {
                    try {
                        for (int round = 0; round < 3; round++) {
                            long got = pool.invokeLong(Data::sumLong, d, range(0, n));
                            if (got != d.expectedSum()) {
                                throw new AssertionError("sum " + got + ", expected " + d.expectedSum());
                            }
                        }
                    } catch (Throwable t) {
                        failure.compareAndSet(null, t);
                    }
                });
                threads[c].start();
            }
            for (Thread t : threads) {
                t.join(WAIT.toMillis());
                assertTrue(!t.isAlive(), "a caller did not end in time");
            }
            assertNull(failure.get(), () -> "a caller failed: " + failure.get());
            for (Data d : data) {
                for (int i = 0; i < n; i++) {
                    assertEquals(3, d.seen.get(i), "index " + i + " over three rounds");
                }
            }
        }
    }

    /** Forks and joins mixed at every level: joins inside in-place code, forks inside join halves. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    @Timeout(120)
    void forksAndJoinsNestInsideEachOther(PoolVariant v) throws Exception {
        try (ThreadPool pool = pool(v, 4)) {
            int n = 1 << 15;
            Data d = new Data(pool, n, 2);
            assertEquals(d.expectedSum(), pool.invokeLong(ForkJoinHandlesTest::mixed, d, range(0, n)));
            d.assertEachOnce();
        }
    }

    /** Level by level: a forkLong, a join(fn, ctx, l, r) of two quarter sums, then the other forms. */
    static long mixed(Data d, long range) {
        int lo = (int) (range >>> 32);
        int hi = (int) range;
        if (hi - lo <= d.grain) {
            return d.leaf(lo, hi);
        }
        int mid = (lo + hi) >>> 1;
        long h = d.pool.forkLong(ForkJoinHandlesTest::mixed, d, range(mid, hi));
        long[] quarters = new long[2];
        int q = (lo + mid) >>> 1;
        if (q > lo && mid > q) {
            try {
                d.pool.join((long[] out, long r) -> {
                    int qlo = (int) (r >>> 32);
                    out[qlo == lo ? 0 : 1] = mixed(d, r);
                }, quarters, range(lo, q), range(q, mid));
            } catch (InterruptedException e) {
                throw new AssertionError("a worker's join does not throw InterruptedException", e);
            }
        } else {
            quarters[0] = mixed(d, range(lo, mid));
        }
        return quarters[0] + quarters[1] + d.pool.joinLong(h);
    }

    // ---- misuse -------------------------------------------------------------------------------------------

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    @Timeout(60)
    void forkAndJoinFromOutsideThePoolAreRefusedNamingTheRule(PoolVariant v) throws Exception {
        try (ThreadPool pool = pool(v, 2)) {
            AtomicInteger ran = new AtomicInteger();
            IllegalStateException fork = assertThrows(IllegalStateException.class, () -> pool.fork(ran::incrementAndGet));
            assertTrue(fork.getMessage().contains("not one of this pool's workers"), fork.getMessage());
            assertThrows(IllegalStateException.class, () -> pool.forkLong((Object c, long a) -> a, null, 1));
            assertThrows(IllegalStateException.class, () -> pool.forkDouble((Object c, long a) -> a, null, 1));
            assertThrows(IllegalStateException.class, () -> pool.forkObject((Object c, long a) -> c, null, 1));
            assertThrows(IllegalStateException.class, () -> pool.fork((Object c, long a) -> { }, null, 1));
            assertEquals(0, ran.get());
            // a real handle of a worker, joined from outside: refused, and its fork still joined by the pool
            long[] handle = new long[1];
            onWorker(pool, () -> handle[0] = pool.fork(ran::incrementAndGet)); // never joined by the task: settled
            assertEquals(1, ran.get(), "the task's end joined its fork");
            IllegalStateException join = assertThrows(IllegalStateException.class, () -> pool.join(handle[0]));
            assertTrue(join.getMessage().contains("not one of this pool's workers"), join.getMessage());
            InvalidHandleException notFork = assertThrows(InvalidHandleException.class, () -> pool.joinLong(42));
            assertTrue(notFork.getMessage().contains("not a fork handle"), notFork.getMessage());
            assertThrows(NullPointerException.class, () -> pool.fork((Runnable) null));
            assertThrows(NullPointerException.class, () -> pool.forkLong(null, null, 1));
            assertThrows(NullPointerException.class, () -> pool.invokeLong(null, null, 1));
        }
    }

    /**
     * Each misuse on a worker is refused with the rule it broke and changes nothing: the forks stay open, a correct
     * join afterwards works, and every half runs exactly once.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    @Timeout(60)
    void misusesOnAWorkerAreRefusedAndEveryHalfStillRunsOnce(PoolVariant v) throws Exception {
        try (ThreadPool pool = pool(v, 2)) {
            AtomicLongArray runs = new AtomicLongArray(8);
            onWorker(pool, () -> {
                // out of order, then in order
                long a = pool.fork(() -> runs.incrementAndGet(0));
                long b = pool.forkLong((AtomicLongArray r, long i) -> r.incrementAndGet((int) i), runs, 1);
                IllegalStateException order = assertThrows(IllegalStateException.class, () -> pool.join(a));
                assertTrue(order.getMessage().contains("out of order"), order.getMessage());
                // the wrong join method for b's form
                InvalidHandleException form = assertThrows(InvalidHandleException.class, () -> pool.join(b));
                assertTrue(form.getMessage().contains("joinLong"), form.getMessage());
                assertEquals(1, pool.joinLong(b));
                pool.join(a);
                // twice
                InvalidHandleException twice = assertThrows(InvalidHandleException.class, () -> pool.join(a));
                assertTrue(twice.getMessage().contains("joined already"), twice.getMessage());
                // stale: its position reused by a later fork
                long c = pool.fork(() -> runs.incrementAndGet(2));
                pool.join(c);
                InvalidHandleException stale = assertThrows(InvalidHandleException.class, () -> pool.join(a));
                assertTrue(stale.getMessage().contains("stale"), stale.getMessage());
                // not a fork handle: a task handle, and a number
                long task = pool.submitWaitable(() -> runs.incrementAndGet(3));
                InvalidHandleException notFork = assertThrows(InvalidHandleException.class, () -> pool.join(task));
                assertTrue(notFork.getMessage().contains("not a fork handle"), notFork.getMessage());
                awaitQuietly(pool, task);
                // inside a join that began after the fork
                long d = pool.fork(() -> runs.incrementAndGet(4));
                AtomicReference<Throwable> inside = new AtomicReference<>();
                joinQuietly(pool, () -> {
                    try {
                        pool.join(d);
                    } catch (Throwable t) {
                        inside.set(t);
                    }
                }, () -> { });
                assertInstanceOf(IllegalStateException.class, inside.get());
                pool.join(d);
                // after the code that forked it returned: left forks, right joins (stolen right: another worker)
                long[] leaked = new long[1];
                AtomicReference<Throwable> after = new AtomicReference<>();
                joinQuietly(pool, () -> leaked[0] = pool.fork(() -> runs.incrementAndGet(5)), () -> { });
                try {
                    pool.join(leaked[0]);
                } catch (Throwable t) {
                    after.set(t);
                }
                // refused (the pool ran it when its join's left half ended), or already joined by that join
                assertTrue(after.get() instanceof IllegalStateException || after.get() instanceof InvalidHandleException,
                        "got " + after.get());
            });
            for (int k = 0; k <= 5; k++) {
                assertEquals(1, runs.get(k), "half " + k + " ran once");
            }
        }
    }

    /** A handle joined on another worker is refused there; its own worker joins it afterwards. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    @Timeout(60)
    void aForkIsJoinedOnlyByItsWorker(PoolVariant v) throws Exception {
        try (ThreadPool pool = pool(v, 2)) {
            AtomicInteger ran = new AtomicInteger();
            CountDownLatch forked = new CountDownLatch(1);
            CountDownLatch tried = new CountDownLatch(1);
            long[] handle = new long[1];
            AtomicReference<Throwable> elsewhere = new AtomicReference<>();
            AtomicReference<Throwable> owner = new AtomicReference<>();
            long first = pool.submitWaitable(() -> {
                try {
                    handle[0] = pool.fork(ran::incrementAndGet);
                    forked.countDown();
                    if (!tried.await(WAIT.toSeconds(), TimeUnit.SECONDS)) { // blocks this worker: the other runs
                        throw new AssertionError("the other worker did not try in time");
                    }
                    pool.join(handle[0]);
                } catch (Throwable t) {
                    owner.set(t);
                }
            });
            assertTrue(forked.await(WAIT.toSeconds(), TimeUnit.SECONDS));
            long second = pool.submitWaitable(() -> {
                try {
                    pool.join(handle[0]);
                } catch (Throwable t) {
                    elsewhere.set(t);
                } finally {
                    tried.countDown();
                }
            });
            assertTrue(pool.await(second, WAIT));
            assertTrue(pool.await(first, WAIT));
            assertInstanceOf(IllegalStateException.class, elsewhere.get());
            assertTrue(elsewhere.get().getMessage().contains("not forked on this worker"), elsewhere.get().getMessage());
            assertNull(owner.get());
            assertEquals(1, ran.get());
        }
    }

    // ---- forks never joined ----------------------------------------------------------------------------

    /**
     * A task that returns with forks open: the pool joins them before the task's outcome, so its await sees every
     * half run once; a failure among them is the task's; a task that throws keeps its own throwable, theirs
     * suppressed on it. The worker's next task forks and joins as usual.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    @Timeout(60)
    void forksNeverJoinedRunOnceWhenTheirTaskEnds(PoolVariant v) throws Exception {
        try (ThreadPool pool = pool(v, 2)) {
            AtomicLongArray runs = new AtomicLongArray(64);
            long h = pool.submitWaitable(() -> {
                for (int i = 0; i < 40; i++) {
                    int k = i;
                    if (i % 2 == 0) {
                        pool.fork((AtomicLongArray r, long j) -> r.incrementAndGet((int) j), runs, k);
                    } else {
                        pool.forkLong((AtomicLongArray r, long j) -> r.incrementAndGet((int) j), runs, k);
                    }
                }
            });
            pool.await(h); // normally
            for (int i = 0; i < 40; i++) {
                assertEquals(1, runs.get(i), "half " + i);
            }

            IllegalArgumentException boom = new IllegalArgumentException("an unjoined half failed");
            long failing = pool.submitWaitable(() -> {
                pool.fork(() -> runs.incrementAndGet(40));
                pool.fork(() -> {
                    throw boom;
                });
            });
            TaskFailedException e = assertThrows(TaskFailedException.class, () -> pool.await(failing));
            assertSame(boom, e.getCause());
            assertEquals(1, runs.get(40));

            IllegalStateException own = new IllegalStateException("the task's own");
            long throwing = pool.submitWaitable(() -> {
                pool.fork(() -> runs.incrementAndGet(41));
                pool.fork(() -> {
                    throw boom;
                });
                throw own;
            });
            e = assertThrows(TaskFailedException.class, () -> pool.await(throwing));
            assertSame(own, e.getCause());
            assertTrue(List.of(own.getSuppressed()).contains(boom), "the unjoined half's failure suppressed on it");
            assertEquals(1, runs.get(41));

            // the in-place code throws between fork and join: the half still runs once
            long inPlace = pool.submitWaitable(() -> {
                long f = pool.forkLong((AtomicLongArray r, long j) -> r.incrementAndGet((int) j), runs, 42);
                if (runs.get(63) == 0) {
                    throw own;
                }
                pool.joinLong(f);
            });
            e = assertThrows(TaskFailedException.class, () -> pool.await(inPlace));
            assertSame(own, e.getCause());
            assertEquals(1, runs.get(42));

            // the worker is itself again: a whole tree, exact
            Data d = new Data(pool, 1 << 12, 1);
            assertEquals(d.expectedSum(), pool.invokeLong(Data::sumLong, d, range(0, 1 << 12)));
            d.assertEachOnce();
        }
    }

    /**
     * Forks left open inside a join's half, a fork's half and a stolen half are joined by whoever ends that code;
     * the join of an older fork joins those left open above it. Every half once; every outer result exact.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    @Timeout(60)
    void forksLeftOpenInsideHalvesRunOnce(PoolVariant v) throws Exception {
        try (ThreadPool pool = pool(v, 2)) {
            int n = 1 << 10;
            AtomicLongArray runs = new AtomicLongArray(n);
            long total = pool.invokeLong(ForkJoinHandlesTest::leaky, new Leaky(pool, runs), range(0, n));
            assertEquals((long) n * (n - 1) / 2, total, "every index summed once");
            for (int i = 0; i < n; i++) {
                assertEquals(1, runs.get(i), "leaf " + i);
            }
        }
    }

    record Leaky(ThreadPool pool, AtomicLongArray runs) {}

    /**
     * A sum over indices in which each pair of leaves is a join whose halves each fork their leaf's count and never
     * join it: the forks are left open inside the join's halves (inline or stolen), so the join of an older fork, a
     * stolen half's end or the task's end joins them.
     */
    static long leaky(Leaky l, long range) {
        int lo = (int) (range >>> 32);
        int hi = (int) range;
        if (hi - lo == 2) {
            try {
                l.pool.join((Leaky c, long i) -> c.pool.fork(ForkJoinHandlesTest::count, c.runs, i), l, lo, lo + 1);
            } catch (InterruptedException e) {
                throw new AssertionError("a worker's join does not throw InterruptedException", e);
            }
            return lo + (lo + 1);
        }
        int mid = (lo + hi) >>> 1;
        long h = l.pool.forkLong(ForkJoinHandlesTest::leaky, l, range(mid, hi));
        long left = leaky(l, range(lo, mid));
        return left + l.pool.joinLong(h); // settles the forks left open above it, if any are left
    }

    static void count(AtomicLongArray runs, long i) {
        runs.incrementAndGet((int) i);
    }

    // ---- failures, interrupts, shutdown --------------------------------------------------------------------

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    @Timeout(60)
    void aFailingHalfComesBackFromItsJoinAndADeepFailurePassesUnwrapped(PoolVariant v) throws Exception {
        try (ThreadPool pool = pool(v, 2)) {
            IllegalStateException boom = new IllegalStateException("half");
            AtomicInteger inPlace = new AtomicInteger();
            onWorker(pool, () -> {
                long h = pool.forkDouble((Object c, long a) -> {
                    throw boom;
                }, null, 0);
                inPlace.incrementAndGet(); // the in-place code runs, then the join reports the half's failure
                JoinFailedException e = assertThrows(JoinFailedException.class, () -> pool.joinDouble(h));
                assertSame(boom, e.getCause());
            });
            assertEquals(1, inPlace.get());
            // deep in a tree: one JoinFailedException, the leaf's throwable its cause
            RuntimeException deep = new RuntimeException("deep");
            TaskFailedException e = assertThrows(TaskFailedException.class,
                    () -> pool.invokeLong(ForkJoinHandlesTest::failAt, new Object[] {pool, deep}, range(0, 1 << 10)));
            assertInstanceOf(JoinFailedException.class, e);
            assertSame(deep, e.getCause());
            assertTrue(pool.recentErrors().isEmpty(), "fork failures go to the joiner, not the error log");
        }
    }

    /** A sum tree whose leaf 777 throws. */
    static long failAt(Object[] ctx, long range) {
        ThreadPool pool = (ThreadPool) ctx[0];
        int lo = (int) (range >>> 32);
        int hi = (int) range;
        if (hi - lo == 1) {
            if (lo == 777) {
                throw (RuntimeException) ctx[1];
            }
            return lo;
        }
        int mid = (lo + hi) >>> 1;
        long h = pool.forkLong(ForkJoinHandlesTest::failAt, ctx, range(mid, hi));
        long left = failAt(ctx, range(lo, mid));
        return left + pool.joinLong(h);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    @Timeout(60)
    void aJoinKeepsTheInterruptStatus(PoolVariant v) throws Exception {
        try (ThreadPool pool = pool(v, 2)) {
            AtomicBoolean kept = new AtomicBoolean();
            long[] got = new long[1];
            onWorker(pool, () -> {
                Thread.currentThread().interrupt();
                long h = pool.forkLong((Object c, long a) -> a * 2, null, 21);
                got[0] = pool.joinLong(h);
                kept.set(Thread.currentThread().isInterrupted());
            });
            assertEquals(42, got[0]);
            assertTrue(kept.get());
        }
    }

    /** A fork once shutdown began is refused; a half forked before runs exactly once and its join returns. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    @Timeout(60)
    void shutdownRefusesNewForksAndRunsForkedHalvesOnce(PoolVariant v) throws Exception {
        ThreadPool pool = ThreadPool.create(v.builder().maxThreads(2).build());
        CountDownLatch forked = new CountDownLatch(1);
        CountDownLatch shutdownBegun = new CountDownLatch(1);
        AtomicInteger runs = new AtomicInteger();
        AtomicReference<Throwable> later = new AtomicReference<>();
        long[] result = new long[1];
        WaitGroup done = new WaitGroup();
        pool.submit(() -> {
            long h = pool.forkLong((AtomicInteger r, long a) -> r.incrementAndGet() + a, runs, 10);
            forked.countDown();
            awaitQuietly(shutdownBegun);
            try {
                pool.fork(runs::incrementAndGet);
            } catch (Throwable t) {
                later.set(t);
            }
            result[0] = pool.joinLong(h);
        }, done);
        assertTrue(forked.await(WAIT.toSeconds(), TimeUnit.SECONDS));
        FutureTask<Boolean> shutdown = new FutureTask<>(() -> pool.shutdown(ShutdownMode.CANCEL_PENDING, WAIT));
        new Thread(shutdown).start();
        TestSupport.eventually("shutdown began", pool::isShutdown);
        assertThrows(PoolShutdownException.class, () -> pool.invokeLong((Object c, long a) -> a, null, 1));
        shutdownBegun.countDown();
        assertTrue(done.await(WAIT));
        assertInstanceOf(PoolShutdownException.class, later.get());
        assertEquals(11, result[0], "the half forked before shutdown ran once and its result came back");
        assertEquals(1, runs.get());
        assertTrue(shutdown.get(WAIT.toSeconds(), TimeUnit.SECONDS));
        pool.close();
    }

    // ---- depth -------------------------------------------------------------------------------------------

    /** One level of a chain: fork a counting half, recurse in place, join. Forks nest as deep as the chain. */
    static long chain(Object[] ctx, long levels) {
        ThreadPool pool = (ThreadPool) ctx[0];
        AtomicLong forks = (AtomicLong) ctx[1];
        if (levels == 0) {
            return 0;
        }
        long h = pool.forkLong((AtomicLong runs, long a) -> runs.incrementAndGet() * 0 + 1, (AtomicLong) ctx[2], 0);
        forks.incrementAndGet(); // after the fork returned its handle
        long below = chain(ctx, levels - 1);
        return below + pool.joinLong(h);
    }

    /**
     * 3,000 forks nested on one worker (the in-place code recurses) with the stack the docs give for 3,000 nested
     * joins: the first 256 that offer take the frames, the rest are kept and run at their joins; every half once.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    @Timeout(120)
    void aChainOf3000NestedForksCompletes(PoolVariant v) throws Exception {
        try (ThreadPool pool = TestSupport.track(ThreadPool.create(v.builder().maxThreads(2).daemon(true)
                .workerStackSize(JoinTest.DOCUMENTED_STACK_FOR_3000).build()))) {
            for (int run = 0; run < 2; run++) {
                AtomicLong forks = new AtomicLong();
                AtomicLong runs = new AtomicLong();
                long got = pool.invokeLong(ForkJoinHandlesTest::chain, new Object[] {pool, forks, runs}, 3000);
                assertEquals(3000, got);
                assertEquals(3000, runs.get(), "every half once");
            }
        }
    }

    /**
     * The chain too deep for a 256 KiB stack: the StackOverflowError is contained (the call fails with it in its
     * cause chain), every half forked before it still ran exactly once (the pool joined them when the task ended),
     * and the pool goes on working.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    @Timeout(120)
    void aChainTooDeepForTheStackFailsContainedAndEveryForkedHalfRunsOnce(PoolVariant v) throws Exception {
        try (ThreadPool pool = TestSupport.track(ThreadPool.create(v.builder().maxThreads(2).daemon(true)
                .workerStackSize(256 << 10).errorHandler((task, error) -> { }).build()))) {
            AtomicLong forks = new AtomicLong();
            AtomicLong runs = new AtomicLong();
            TaskFailedException e = assertThrows(TaskFailedException.class,
                    () -> pool.invokeLong(ForkJoinHandlesTest::chain, new Object[] {pool, forks, runs}, 1_000_000));
            Throwable c = e;
            while (!(c instanceof StackOverflowError) && c.getCause() != null) {
                c = c.getCause();
            }
            assertInstanceOf(StackOverflowError.class, c, () -> "expected a StackOverflowError in " + e);
            assertTrue(forks.get() > 256, "forked past the frames: " + forks.get());
            // every fork that returned its handle ran its half once; the overflow may strike inside a fork after its
            // half was offered (before the handle came back), and that half runs once too
            assertTrue(runs.get() == forks.get() || runs.get() == forks.get() + 1,
                    "every half forked ran exactly once: forks " + forks.get() + ", runs " + runs.get());
            AtomicLong forks2 = new AtomicLong();
            AtomicLong runs2 = new AtomicLong();
            assertEquals(50, pool.invokeLong(ForkJoinHandlesTest::chain, new Object[] {pool, forks2, runs2}, 50));
            Data d = new Data(pool, 1 << 12, 1);
            assertEquals(d.expectedSum(), pool.invokeLong(Data::sumLong, d, range(0, 1 << 12)));
        }
    }

    // ---- invoke ----------------------------------------------------------------------------------------

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    @Timeout(60)
    void invokeRunsOnAWorkerAndWrapsAFailure(PoolVariant v) throws Exception {
        try (ThreadPool pool = pool(v, 2)) {
            assertEquals(7, pool.invokeLong((Object c, long a) -> a + (c == null ? 1 : 0), null, 6));
            assertEquals(2.5, pool.invokeDouble((String c, long a) -> a / 2.0 + c.length() - 3, "abc", 5));
            assertEquals("x7", pool.invoke((String c, long a) -> c + a, "x", 7));
            assertTrue(pool.invoke((Object c, long a) -> Thread.currentThread().getName(), null, 0)
                    .startsWith(pool.config().threadNamePrefix()), "ran on a worker");
            IllegalStateException boom = new IllegalStateException("fn");
            TaskFailedException e = assertThrows(TaskFailedException.class, () -> pool.invokeLong((Object c, long a) -> {
                throw boom;
            }, null, 0));
            assertSame(boom, e.getCause());
            // on a worker: the same exception, the function called in place
            AtomicReference<Throwable> inside = new AtomicReference<>();
            String[] thread = new String[2];
            onWorker(pool, () -> {
                thread[0] = Thread.currentThread().getName();
                try {
                    thread[1] = pool.invoke((Object c, long a) -> Thread.currentThread().getName(), null, 0);
                    pool.invokeLong((Object c, long a) -> {
                        throw boom;
                    }, null, 0);
                } catch (Throwable t) {
                    inside.set(t);
                }
            });
            assertEquals(thread[0], thread[1], "called in place on a worker");
            assertInstanceOf(TaskFailedException.class, inside.get());
            assertSame(boom, inside.get().getCause());
        }
    }

    @Test
    @Timeout(60)
    void invokeAfterShutdownIsRefused() throws Exception {
        ThreadPool pool = ThreadPool.create(PoolConfig.builder().maxThreads(2).daemon(true).build());
        assertTrue(pool.shutdown(ShutdownMode.DRAIN, WAIT));
        assertThrows(PoolShutdownException.class, () -> pool.invokeLong((Object c, long a) -> a, null, 1));
        pool.close();
        assertThrows(PoolShutdownException.class, () -> pool.invokeDouble((Object c, long a) -> a, null, 1));
    }

    // ---- helpers -----------------------------------------------------------------------------------------

    private static void joinQuietly(ThreadPool pool, Runnable left, Runnable right) {
        try {
            pool.join(left, right);
        } catch (InterruptedException e) {
            throw new AssertionError("a worker's join does not throw InterruptedException", e);
        }
    }

    private static void awaitQuietly(ThreadPool pool, long handle) {
        try {
            pool.await(handle);
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            if (!latch.await(WAIT.toSeconds(), TimeUnit.SECONDS)) {
                throw new AssertionError("latch not released in time");
            }
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }
}
