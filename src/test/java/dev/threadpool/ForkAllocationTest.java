package dev.threadpool;

import static dev.threadpool.TestSupport.WAIT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.TestSupport.PoolVariant;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Fork handles allocate nothing on a worker: around warm trees of {@code 2^12} leaves, each split a fork of the right
 * half and the left half in place, every base worker's allocated-bytes counter stays within
 * {@link ZeroAllocationTest#MARGIN} in all, for {@code fork(fn, ctx, arg)} / {@code join}, {@code forkLong} /
 * {@code joinLong}, {@code forkDouble} / {@code joinDouble} and {@code forkObject} / {@code joinObject} (whose
 * function returns one shared object: the pool adds nothing to what the function allocates), on every variant.
 * Both workers take part (halves offered, kept, taken back or stolen), so the thief's path and its result in the
 * frame are measured too. One object per split would be 16 bytes or more, over 1.6 MB for the 102,375 splits
 * measured. {@link JoinArgumentsTest#theHarnessSeesANodeObjectPerJoin} is the harness's own check.
 */
class ForkAllocationTest {

    enum Form { VOID, LONG, DOUBLE, OBJECT }

    static Stream<Arguments> cases() {
        return TestSupport.poolVariants().flatMap(v -> Stream.of(Form.values()).map(f -> Arguments.of(v, f)));
    }

    /** The tree's context: its pool and a count of leaves (one tree at a time). */
    static final class Tree {
        static final Object SHARED = new Object();
        final ThreadPool pool;
        final AtomicLong leaves = new AtomicLong();

        Tree(ThreadPool pool) {
            this.pool = pool;
        }

        static long range(int lo, int hi) {
            return (long) lo << 32 | (hi & 0xFFFF_FFFFL);
        }

        static void visit(Tree t, long range) {
            int lo = (int) (range >>> 32);
            int hi = (int) range;
            if (hi - lo == 1) {
                t.leaves.incrementAndGet();
                return;
            }
            int mid = (lo + hi) >>> 1;
            long h = t.pool.fork(Tree::visit, t, range(mid, hi));
            visit(t, range(lo, mid));
            t.pool.join(h);
        }

        static long count(Tree t, long range) {
            int lo = (int) (range >>> 32);
            int hi = (int) range;
            if (hi - lo == 1) {
                t.leaves.incrementAndGet();
                return 1;
            }
            int mid = (lo + hi) >>> 1;
            long h = t.pool.forkLong(Tree::count, t, range(mid, hi));
            long left = count(t, range(lo, mid));
            return left + t.pool.joinLong(h);
        }

        static double area(Tree t, long range) {
            int lo = (int) (range >>> 32);
            int hi = (int) range;
            if (hi - lo == 1) {
                t.leaves.incrementAndGet();
                return 0.5;
            }
            int mid = (lo + hi) >>> 1;
            long h = t.pool.forkDouble(Tree::area, t, range(mid, hi));
            double left = area(t, range(lo, mid));
            return left + t.pool.joinDouble(h);
        }

        static Object shared(Tree t, long range) {
            int lo = (int) (range >>> 32);
            int hi = (int) range;
            if (hi - lo == 1) {
                t.leaves.incrementAndGet();
                return SHARED;
            }
            int mid = (lo + hi) >>> 1;
            long h = t.pool.forkObject(Tree::shared, t, range(mid, hi));
            Object left = shared(t, range(lo, mid));
            Object right = t.pool.joinObject(h);
            if (left != SHARED || right != SHARED) {
                throw new AssertionError("a result came back changed");
            }
            return left;
        }

        /** One tree of {@code n} leaves in {@code form}; checks its result. */
        void run(Form form, int n) {
            long r = range(0, n);
            switch (form) {
                case VOID -> visit(this, r);
                case LONG -> {
                    if (count(this, r) != n) {
                        throw new AssertionError("count");
                    }
                }
                case DOUBLE -> {
                    if (area(this, r) != n * 0.5) {
                        throw new AssertionError("area");
                    }
                }
                case OBJECT -> shared(this, r);
            }
        }
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("cases")
    @Timeout(120)
    void aWorkersForksAllocateNothing(PoolVariant v, Form form) throws Exception {
        var mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        Assumptions.assumeTrue(mx.isThreadAllocatedMemorySupported() && mx.isThreadAllocatedMemoryEnabled());
        String prefix = "fork-alloc-" + v.variant() + "-" + v.queueKind() + "-" + form + "-";
        try (ThreadPool pool = TestSupport.track(ThreadPool.create(v.builder().maxThreads(2).daemon(true)
                .threadNamePrefix(prefix).build()))) {
            Tree tree = new Tree(pool);
            int leaves = 1 << 12;
            int warm = 50;
            int measured = 25;
            onWorker(pool, () -> {
                for (int t = 0; t < warm; t++) {
                    tree.run(form, leaves);
                }
            }); // warm: every path compiled, every lazily made object made
            long[] ids = workerIds(pool);
            long[] before = mx.getThreadAllocatedBytes(ids);
            onWorker(pool, () -> {
                for (int t = 0; t < measured; t++) {
                    tree.run(form, leaves);
                }
            });
            long[] after = mx.getThreadAllocatedBytes(ids);
            long allocated = 0;
            for (int k = 0; k < ids.length; k++) {
                allocated += after[k] - before[k];
            }
            assertEquals((long) (warm + measured) * leaves, tree.leaves.get(), "every leaf ran once");
            long forks = (long) measured * (leaves - 1);
            assertTrue(allocated < ZeroAllocationTest.MARGIN, v + " " + form + ": the workers allocated " + allocated
                    + " bytes for " + forks + " forks (" + (double) allocated / forks + " B/fork)");
        }
    }

    /**
     * An outside caller's {@code invokeLong}, {@code invokeDouble} and {@code invoke}, one after the other and
     * mixed with outside joins, share the thread's kept hand-over (Joining.outsideCalls): after a warm-up the calling
     * thread allocates under 64 bytes a call (the JDK's queue node when its wait blocks), against about 1.1 KB when
     * each call made its task object and {@code WaitGroup}. Each call's result is checked.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.threadpool.TestSupport#poolVariants")
    @Timeout(120)
    void anOutsideCallersInvokeReusesItsHandOver(PoolVariant v) throws Exception {
        var mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        Assumptions.assumeTrue(mx.isThreadAllocatedMemorySupported() && mx.isThreadAllocatedMemoryEnabled());
        try (ThreadPool pool = TestSupport.track(ThreadPool.create(v.builder().maxThreads(2).daemon(true).build()))) {
            Tree tree = new Tree(pool);
            int leaves = 16;
            int rounds = 1_000;
            for (int i = 0; i < rounds; i++) { // warm
                invokeEachForm(pool, tree, leaves);
            }
            long before = mx.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < rounds; i++) {
                invokeEachForm(pool, tree, leaves);
            }
            long allocated = mx.getCurrentThreadAllocatedBytes() - before;
            long calls = 4L * rounds;
            assertEquals(2L * calls * leaves, tree.leaves.get(), "every leaf of every call ran once");
            assertTrue(allocated < 64L * calls, v + ": the outside caller allocated " + allocated + " bytes for "
                    + calls + " calls (" + (double) allocated / calls + " B a call)");
        }
    }

    /** One outside invokeLong, invokeDouble, invoke and join of {@code leaves} leaves each, results checked. */
    private static void invokeEachForm(ThreadPool pool, Tree tree, int leaves) throws InterruptedException {
        long r = Tree.range(0, leaves);
        assertEquals(leaves, pool.invokeLong(Tree::count, tree, r));
        assertEquals(leaves * 0.5, pool.invokeDouble(Tree::area, tree, r));
        assertTrue(pool.invoke(Tree::shared, tree, r) == Tree.SHARED, "invoke's result");
        pool.join(Tree::visit, tree, Tree.range(0, leaves / 2), Tree.range(leaves / 2, leaves));
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
