package dev.threadpool;

import static dev.threadpool.TestSupport.WAIT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.TestSupport.PoolVariant;
import java.lang.management.ManagementFactory;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link ThreadPool#join(java.util.function.ObjLongConsumer, Object, long, long)}, fork/join in argument form
 * (issue 44): every leaf of a recursion over indices runs exactly once with its context, on a worker and from
 * outside, on every variant; failures come back after both halves ended, as the {@code Runnable} form's do; a
 * null function is refused and a null context passed on; shutdown refuses new joins; no context is kept once its
 * join returned; and a worker's joins allocate nothing (the thread allocated-bytes counter of every worker, around
 * warm trees).
 */
class JoinArgumentsTest {

    static Stream<PoolVariant> variants() {
        return TestSupport.poolVariants();
    }

    /** The context of a counting tree: its pool and a count per leaf. */
    static final class Leaves {
        final ThreadPool pool;
        final AtomicLongArray seen;
        /** Leaves of at most this many indices run in a loop. */
        final int grain;

        Leaves(ThreadPool pool, int n, int grain) {
            this.pool = pool;
            this.seen = new AtomicLongArray(n);
            this.grain = grain;
        }

        /** The tree's function: {@code range} is {@code lo << 32 | hi}; static and non-capturing. */
        static void count(Leaves t, long range) {
            int lo = (int) (range >>> 32);
            int hi = (int) range;
            if (hi - lo <= t.grain) {
                for (int i = lo; i < hi; i++) {
                    t.seen.incrementAndGet(i);
                }
                return;
            }
            int mid = (lo + hi) >>> 1;
            try {
                t.pool.join(Leaves::count, t, range(lo, mid), range(mid, hi));
            } catch (InterruptedException e) {
                throw new AssertionError("a worker's join does not throw InterruptedException", e);
            }
        }

        void assertEachOnce() {
            for (int i = 0; i < seen.length(); i++) {
                assertEquals(1, seen.get(i), "leaf " + i + " ran " + seen.get(i) + " times");
            }
        }
    }

    static long range(int lo, int hi) {
        return (long) lo << 32 | (hi & 0xFFFF_FFFFL);
    }

    private static ThreadPool pool(PoolVariant v, int workers) {
        return TestSupport.track(ThreadPool.create(v.builder().maxThreads(workers).daemon(true).build()));
    }

    /** Runs {@code body} as a waitable task of {@code pool} (so on a worker), awaits it and rethrows its failure. */
    private static void onWorker(ThreadPool pool, Runnable body) throws InterruptedException {
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

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    @Timeout(120)
    void aTreeOfJoinsRunsEveryLeafOnceOnAWorkerAndFromOutside(PoolVariant v) throws Exception {
        try (ThreadPool pool = pool(v, 2)) {
            int n = 1 << 16;
            Leaves fromWorker = new Leaves(pool, n, 1);
            onWorker(pool, () -> Leaves.count(fromWorker, range(0, n)));
            fromWorker.assertEachOnce();

            Leaves fromOutside = new Leaves(pool, n, 4);
            pool.join(Leaves::count, fromOutside, range(0, n / 2), range(n / 2, n));
            fromOutside.assertEachOnce();
        }
    }

    /** Many trees at once from several outside threads: halves stolen between workers, none lost or run twice. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    @Timeout(120)
    void concurrentTreesEachRunEveryLeafOnce(PoolVariant v) throws Exception {
        try (ThreadPool pool = pool(v, 4)) {
            int trees = 4;
            int n = 1 << 14;
            List<Leaves> all = new ArrayList<>();
            List<Thread> callers = new ArrayList<>();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            for (int t = 0; t < trees; t++) {
                Leaves leaves = new Leaves(pool, n, 1);
                all.add(leaves);
                Thread caller = new Thread(() -> {
                    try {
                        for (int round = 0; round < 4; round++) {
                            pool.join(Leaves::count, leaves, range(0, n / 2), range(n / 2, n));
                        }
                    } catch (Throwable e) {
                        failure.set(e);
                    }
                });
                callers.add(caller);
                caller.start();
            }
            for (Thread caller : callers) {
                caller.join(WAIT.toMillis());
                assertTrue(!caller.isAlive(), "an outside caller's joins did not end in time");
            }
            assertNull(failure.get(), () -> "a caller failed: " + failure.get());
            for (Leaves leaves : all) {
                for (int i = 0; i < n; i++) {
                    assertEquals(4, leaves.seen.get(i), "leaf " + i + " over four rounds");
                }
            }
        }
    }

    /** The context each call gets, a null context included: the pool passes on exactly what it was given. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    @Timeout(60)
    void eachHalfGetsTheContextAndItsArgument(PoolVariant v) throws Exception {
        try (ThreadPool pool = pool(v, 2)) {
            List<String> calls = java.util.Collections.synchronizedList(new ArrayList<>());
            Object ctx = new Object();
            onWorker(pool, () -> {
                try {
                    pool.join((Object c, long a) -> calls.add((c == ctx) + ":" + a), ctx, 7, -9);
                    pool.join((Object c, long a) -> calls.add((c == null) + ":" + a), null, Long.MIN_VALUE,
                            Long.MAX_VALUE);
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
            });
            assertEquals(sorted("true:7", "true:-9", "true:" + Long.MIN_VALUE, "true:" + Long.MAX_VALUE),
                    calls.stream().sorted().toList(), "each call once, with the context it was given");
        }
    }

    private static List<String> sorted(String... s) {
        return Stream.of(s).sorted().toList();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    @Timeout(60)
    void aFailingHalfComesBackAfterBothEnded(PoolVariant v) throws Exception {
        try (ThreadPool pool = pool(v, 2)) {
            AtomicLong ran = new AtomicLong();
            IllegalStateException boom = new IllegalStateException("left");
            IllegalArgumentException bang = new IllegalArgumentException("right");
            // left throws: the right half still runs, the join then throws with left's throwable as its cause
            JoinFailedException left = assertThrows(JoinFailedException.class, () -> onWorker(pool, () -> {
                try {
                    pool.join((AtomicLong r, long a) -> {
                        r.incrementAndGet();
                        if (a == 0) {
                            throw boom;
                        }
                    }, ran, 0, 1);
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
            }));
            assertSame(boom, left.getCause());
            assertEquals(2, ran.get(), "both halves ran");
            // both throw: left's is the cause, right's suppressed
            JoinFailedException both = assertThrows(JoinFailedException.class,
                    () -> pool.join((Object c, long a) -> {
                        throw a == 0 ? boom : bang;
                    }, null, 0, 1));
            assertSame(boom, both.getCause());
            assertTrue(List.of(both.getCause().getSuppressed()).contains(bang), "right's failure suppressed");
        }
    }

    @Test
    @Timeout(60)
    void aNullFunctionIsRefusedAndShutdownRefusesNewJoins() throws Exception {
        ThreadPool pool = ThreadPool.create(PoolConfig.builder().maxThreads(2).daemon(true).build());
        NullPointerException npe = assertThrows(NullPointerException.class, () -> pool.join(null, null, 0, 1));
        assertTrue(npe.getMessage().contains("fn"), npe.getMessage());
        assertTrue(pool.shutdown(ShutdownMode.DRAIN, WAIT), "shutdown ended in time");
        assertThrows(PoolShutdownException.class, () -> pool.join((Object c, long a) -> { }, null, 0, 1));
    }

    /**
     * No context outlives its join: once a tree of joins (some halves stolen, some taken back) has returned, the
     * pool's frames hold no reference to it, so it is collectable. Bounded: a few GCs.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    @Timeout(60)
    void aContextIsNotKeptOnceItsJoinReturned(PoolVariant v) throws Exception {
        try (ThreadPool pool = pool(v, 2)) {
            WeakReference<Leaves> ref = runTreeAndForget(pool);
            for (int i = 0; i < 50 && ref.get() != null; i++) {
                System.gc();
                Thread.onSpinWait();
            }
            assertNull(ref.get(), "the tree's context is still reachable after its joins returned");
        }
    }

    private static WeakReference<Leaves> runTreeAndForget(ThreadPool pool) throws InterruptedException {
        Leaves leaves = new Leaves(pool, 1 << 12, 1);
        onWorker(pool, () -> Leaves.count(leaves, range(0, 1 << 12)));
        pool.join(Leaves::count, leaves, range(0, 1 << 11), range(1 << 11, 1 << 12));
        return new WeakReference<>(leaves);
    }

    /** A tree's function that counts leaves in a plain per-tree total (one tree at a time runs it). */
    static final class Sum {
        final ThreadPool pool;
        final AtomicLong leaves = new AtomicLong();

        Sum(ThreadPool pool) {
            this.pool = pool;
        }

        static void run(Sum s, long range) {
            int lo = (int) (range >>> 32);
            int hi = (int) range;
            if (hi - lo == 1) {
                s.leaves.incrementAndGet();
                return;
            }
            int mid = (lo + hi) >>> 1;
            try {
                s.pool.join(Sum::run, s, range(lo, mid), range(mid, hi));
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }
    }

    /**
     * A worker's joins allocate nothing: around warm trees of {@code 2^12} leaves run from a task, every base
     * worker's allocated-bytes counter stays within {@link ZeroAllocationTest#MARGIN} in all (one object per join
     * would be 16 bytes or more each, over 1.6 MB for the 102,375 joins measured). Both workers take part (halves
     * offered, taken back or stolen), so the thief's path is measured too.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    @Timeout(120)
    void aWorkersJoinsAllocateNothing(PoolVariant v) throws Exception {
        var mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        Assumptions.assumeTrue(mx.isThreadAllocatedMemorySupported() && mx.isThreadAllocatedMemoryEnabled());
        String prefix = "join-args-alloc-" + v.variant() + "-" + v.queueKind() + "-";
        try (ThreadPool pool = TestSupport.track(ThreadPool.create(v.builder().maxThreads(2).daemon(true)
                .threadNamePrefix(prefix).build()))) {
            Sum sum = new Sum(pool);
            int leaves = 1 << 12;
            int warm = 50;
            int measured = 25;
            Runnable trees = () -> {
                for (int t = 0; t < warm; t++) {
                    Sum.run(sum, range(0, leaves));
                }
            };
            onWorker(pool, trees); // warm: every path compiled, every lazily made object made
            long[] ids = workerIds(pool);
            long[] before = mx.getThreadAllocatedBytes(ids);
            onWorker(pool, () -> {
                for (int t = 0; t < measured; t++) {
                    Sum.run(sum, range(0, leaves));
                }
            });
            long[] after = mx.getThreadAllocatedBytes(ids);
            long allocated = 0;
            for (int k = 0; k < ids.length; k++) {
                allocated += after[k] - before[k];
            }
            assertEquals((long) (warm + measured) * leaves, sum.leaves.get(), "every leaf ran once");
            long joins = (long) measured * (leaves - 1);
            // the measured window's one task (its lambda, handle and await) is the submitting thread's, not a
            // worker's; a worker runs it: its containment allocates nothing
            assertTrue(allocated < ZeroAllocationTest.MARGIN, v + ": the workers allocated " + allocated
                    + " bytes for " + joins + " joins (" + (double) allocated / joins + " B/join)");
        }
    }

    /**
     * An outside caller's hand-over allocates nothing after its first: its pair and the pair's WaitGroup are kept
     * for its next outside join on the pool (Joining.outsideCalls). What remains is the JDK's queue node when the
     * caller's await parks (about 32 bytes; the pool's blocking waits all pay it), so the bound is 64 bytes a call,
     * where a new pair and WaitGroup per call were over 1,000 (1,096 on 2 CPUs, 16 KiB on 64).
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    @Timeout(120)
    void anOutsideCallersHandOverIsReused(PoolVariant v) throws Exception {
        var mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        Assumptions.assumeTrue(mx.isThreadAllocatedMemorySupported() && mx.isThreadAllocatedMemoryEnabled());
        try (ThreadPool pool = pool(v, 2)) {
            Sum sum = new Sum(pool);
            int calls = 2_000;
            for (int i = 0; i < calls; i++) { // warm
                pool.join(Sum::run, sum, range(0, 8), range(8, 16));
            }
            long before = mx.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < calls; i++) {
                pool.join(Sum::run, sum, range(0, 8), range(8, 16));
            }
            long allocated = mx.getCurrentThreadAllocatedBytes() - before;
            assertEquals(2L * calls * 16, sum.leaves.get(), "every leaf of every call ran once");
            assertTrue(allocated < 64L * calls, v + ": the outside caller allocated " + allocated + " bytes for "
                    + calls + " joins (" + (double) allocated / calls + " B a call)");
        }
    }

    /**
     * A thread that is a worker of another pool joins on this one from outside; while it waits it helps its own
     * pool (WaitGroup.await on a worker), and the task it runs there joins on this pool again: the inner join gets
     * a hand-over pair of its own (the outer one is armed), and both trees run every leaf once.
     */
    @Test
    @Timeout(60)
    void aNestedOutsideJoinFromAnotherPoolsWorkerGetsItsOwnPair() throws Exception {
        try (ThreadPool a = TestSupport.track(ThreadPool.create(PoolConfig.builder().maxThreads(1).daemon(true)
                .build()));
                ThreadPool b = TestSupport.track(ThreadPool.create(PoolConfig.builder().maxThreads(1).daemon(true)
                        .build()))) {
            int n = 1 << 10;
            Leaves outer = new Leaves(a, n, 1);
            Leaves inner = new Leaves(a, n, 1);
            java.util.concurrent.CountDownLatch innerStarted = new java.util.concurrent.CountDownLatch(1);
            java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            WaitGroup done = new WaitGroup();
            b.submit(() -> {
                try {
                    // queued behind this task on b's only worker: it runs while this task waits in a.join below
                    b.submit(() -> {
                        innerStarted.countDown(); // on b's only worker, so inside the outer join's wait
                        try {
                            a.join(Leaves::count, inner, range(0, n / 2), range(n / 2, n));
                        } catch (Throwable t) {
                            failure.compareAndSet(null, t);
                        }
                    }, done);
                    // the outer join's left half holds a's only worker until the inner task has been helped to run
                    a.join((Leaves t, long r) -> {
                        if (r == 0) {
                            try {
                                release.await(WAIT.toSeconds(), java.util.concurrent.TimeUnit.SECONDS);
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                            }
                        }
                        Leaves.count(t, r == 0 ? range(0, n / 2) : range(n / 2, n));
                    }, outer, 0, 1);
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                }
            }, done);
            // b's only worker runs the inner task only while its outer join waits (helping b): nested for sure
            assertTrue(innerStarted.await(WAIT.toSeconds(), java.util.concurrent.TimeUnit.SECONDS),
                    "b's worker helped its own pool while its outer join on a waited");
            // the inner join is queued on a behind the outer pair's left half: let the left half go on
            release.countDown();
            assertTrue(done.await(WAIT), "both of b's tasks ended");
            assertNull(failure.get(), () -> "a join failed: " + failure.get());
            outer.assertEachOnce();
            inner.assertEachOnce();
        }
    }

    /**
     * The harness's own check: the same measurement of a tree whose halves are new {@code Runnable}s (what a user of
     * the {@code Runnable} form writes) shows at least 16 bytes per join, so a pass above means no object per join.
     */
    @Test
    @Timeout(60)
    void theHarnessSeesANodeObjectPerJoin() throws Exception {
        var mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        Assumptions.assumeTrue(mx.isThreadAllocatedMemorySupported() && mx.isThreadAllocatedMemoryEnabled());
        try (ThreadPool pool = TestSupport.track(ThreadPool.create(PoolConfig.builder().maxThreads(2).daemon(true)
                .threadNamePrefix("join-args-harness-").build()))) {
            AtomicLong leaves = new AtomicLong();
            int n = 1 << 12;
            onWorker(pool, () -> node(pool, leaves, 0, n).run()); // warm
            long[] ids = workerIds(pool);
            long[] before = mx.getThreadAllocatedBytes(ids);
            int measured = 25;
            onWorker(pool, () -> {
                for (int t = 0; t < measured; t++) {
                    node(pool, leaves, 0, n).run();
                }
            });
            long[] after = mx.getThreadAllocatedBytes(ids);
            long allocated = 0;
            for (int k = 0; k < ids.length; k++) {
                allocated += after[k] - before[k];
            }
            long joins = (long) measured * (n - 1);
            assertEquals((long) (measured + 1) * n, leaves.get(), "every leaf ran once");
            assertTrue(allocated >= 16L * joins, "new Runnable halves: " + allocated + " bytes for " + joins
                    + " joins");
        }
    }

    private static Runnable node(ThreadPool pool, AtomicLong leaves, int lo, int hi) {
        return () -> {
            if (hi - lo == 1) {
                leaves.incrementAndGet();
                return;
            }
            int mid = (lo + hi) >>> 1;
            try {
                pool.join(node(pool, leaves, lo, mid), node(pool, leaves, mid, hi));
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        };
    }

    /** The ids of the pool's base workers (by name: the pool's prefix and an index below maxThreads). */
    private static long[] workerIds(ThreadPool pool) {
        String prefix = pool.config().threadNamePrefix();
        List<Long> ids = new ArrayList<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            String name = t.getName();
            if (name.startsWith(prefix)) {
                String rest = name.substring(prefix.length());
                if (!rest.isEmpty() && rest.chars().allMatch(Character::isDigit)
                        && Integer.parseInt(rest) < pool.config().maxThreads()) {
                    ids.add(t.threadId());
                }
            }
        }
        assertEquals(pool.config().maxThreads(), ids.size(), "found every worker: " + ids);
        return ids.stream().mapToLong(Long::longValue).toArray();
    }
}
