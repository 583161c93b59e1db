package dev.threadpool.internal.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.IdleStrategy;
import dev.threadpool.JoinFailedException;
import dev.threadpool.ObjLongFunction;
import dev.threadpool.ObjLongToDoubleFunction;
import dev.threadpool.ObjLongToLongFunction;
import dev.threadpool.TestSupport;
import dev.threadpool.TestSupport.PoolVariant;
import dev.threadpool.internal.memory.PoolMemory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * White-box, Joining's "Fork handles": where a fork's half goes (offered at the eager levels, kept below them while
 * nobody wants work, kept past the frames), and that every shape of fork left open (directly in a task, inside a
 * join's offered or inline half, inside a fork's half run at its join, with the in-place code throwing) runs its half
 * exactly once and gives the worker back as it found it: joinDepth, joinNest and forkTop 0, its deque empty, every
 * frame free with its FORK word 0. One worker, so no thief: each case is deterministic.
 */
class ForkSettleTest {

    static Stream<PoolVariant> oneWorker() {
        return TestSupport.oneWorkerVariants();
    }

    /** Runs {@code body} as a task on the pool's worker and waits for it (bounded: TestSupport.WAIT). */
    private static void onWorker(PoolCore core, Runnable body) throws Exception {
        long h = core.submitWaitable(body, 0);
        assertTrue(core.await(h, TestSupport.WAIT.toNanos()));
    }

    /** A worker's state between tasks: what every case must leave behind. */
    private static String state(PoolCore core) throws Exception {
        AtomicReference<String> out = new AtomicReference<>();
        onWorker(core, () -> {
            WorkerThread self = (WorkerThread) Thread.currentThread();
            JoinDeques joins = core.joiningForTest().joinsForTest();
            StringBuilder s = new StringBuilder("depth " + self.joinDepth + " nest " + self.joinNest + " forkTop "
                    + self.forkTop + " deque " + joins.size(self.index));
            ForkStack forks = self.forks;
            if (forks.lastFn != null || forks.lastCtx != null) {
                s.append(" last pair held");
            }
            for (int i = 0; i < forks.fns.length; i++) { // the gaps too
                if (forks.fns[i] != null || forks.ctxs[i] != null) {
                    s.append(" entry ").append(i - ForkStack.GAP).append(" holds a reference");
                }
            }
            for (int d = 0; d < joins.framesPerWorker(); d++) {
                int idx = joins.frame(self.index, d);
                if (!joins.frameFree(idx) || joins.forkHandle(idx) != 0) {
                    s.append(" frame ").append(d).append(" held");
                }
            }
            out.set(s.toString());
        });
        return out.get();
    }

    private static final String CLEAN = "depth 0 nest 0 forkTop 0 deque 0";

    private static final ObjLongToLongFunction<AtomicInteger> COUNT_LONG = (c, a) -> c.incrementAndGet();
    private static final ObjLongToDoubleFunction<AtomicInteger> COUNT_DOUBLE = (c, a) -> c.incrementAndGet();

    private static void join(PoolCore core, Runnable left, Runnable right) {
        try {
            core.join(left, right);
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("oneWorker")
    @Timeout(60)
    void everyShapeOfForkLeftOpenRunsOnceAndGivesTheWorkerBack(PoolVariant v) throws Exception {
        PoolCore core = new PoolCore(v.builder().maxThreads(1).queueCapacity(1024).build());
        try {
            AtomicInteger runs = new AtomicInteger();
            List<String> names = new ArrayList<>();
            List<Consumer<AtomicInteger>> shapes = new ArrayList<>();
            names.add("three forks in the task, offered (the eager levels)");
            shapes.add(r -> {
                for (int i = 0; i < 3; i++) {
                    core.fork(r::incrementAndGet);
                }
            });
            names.add("a fork below the eager levels, kept");
            shapes.add(r -> NestedJoins.nested(core, Joining.EAGER_LEVELS + 1, () -> core.fork(r::incrementAndGet)));
            names.add("in an offered join's left half");
            shapes.add(r -> join(core, () -> core.fork(r::incrementAndGet), () -> { }));
            names.add("in an offered join's right half, run inline");
            shapes.add(r -> join(core, () -> { }, () -> core.forkLong(COUNT_LONG, r, 0)));
            names.add("in an inline join's left half (below the eager levels)");
            shapes.add(r -> NestedJoins.nested(core, Joining.EAGER_LEVELS + 1,
                    () -> join(core, () -> core.fork(r::incrementAndGet), () -> { })));
            names.add("in a kept fork's half, run at its join");
            shapes.add(r -> NestedJoins.nested(core, Joining.EAGER_LEVELS + 1, () -> {
                long h = core.fork(() -> core.forkDouble(COUNT_DOUBLE, r, 0));
                core.joinFork(h);
            }));
            names.add("in an offered fork's half, taken back at its join");
            shapes.add(r -> {
                ObjLongFunction<AtomicInteger, Long> leave = (c, a) -> core.fork(c::incrementAndGet);
                long h = core.forkObject(leave, r, 0);
                core.joinObject(h);
            });
            names.add("the in-place code throws between fork and join");
            shapes.add(r -> {
                long h = core.fork(r::incrementAndGet);
                if (r.get() >= 0) {
                    throw new IllegalStateException("in place");
                }
                core.joinFork(h);
            });
            names.add("a join of an older fork settles the forks left open above it");
            shapes.add(r -> {
                long h = core.forkLong(COUNT_LONG, r, 0);
                join(core, () -> core.fork(r::incrementAndGet), () -> core.fork(r::incrementAndGet));
                core.joinLong(h);
            });
            int[] expected = {3, 1, 1, 1, 1, 1, 1, 1, 3};
            for (int k = 0; k < shapes.size(); k++) {
                runs.set(0);
                Consumer<AtomicInteger> shape = shapes.get(k);
                long h = core.submitWaitable(() -> shape.accept(runs), 0);
                try {
                    core.await(h, TestSupport.WAIT.toNanos());
                } catch (RuntimeException failedOnPurpose) {
                    // the throwing shape
                }
                assertEquals(expected[k], runs.get(), names.get(k) + ": each half once");
                assertEquals(CLEAN, state(core), names.get(k));
            }
        } finally {
            core.close();
        }
    }

    /** A fork left open in an offered join's left half that fails: its failure comes back from that join. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("oneWorker")
    @Timeout(60)
    void aFailingForkLeftOpenInAJoinHalfFailsThatJoin(PoolVariant v) throws Exception {
        PoolCore core = new PoolCore(v.builder().maxThreads(1).queueCapacity(1024).build());
        try {
            IllegalArgumentException boom = new IllegalArgumentException("left open, failed");
            AtomicReference<Throwable> seen = new AtomicReference<>();
            onWorker(core, () -> {
                try {
                    core.join(() -> core.fork(() -> {
                        throw boom;
                    }), () -> { });
                } catch (Throwable t) {
                    seen.set(t);
                }
            });
            assertTrue(seen.get() instanceof JoinFailedException, "got " + seen.get());
            assertSame(boom, seen.get().getCause());
            assertEquals(CLEAN, state(core));
        } finally {
            core.close();
        }
    }

    /** The eager levels offer; below them, with nobody wanting work, the fork keeps its half (the deque unchanged). */
    @ParameterizedTest(name = "{0}")
    @MethodSource("oneWorker")
    @Timeout(60)
    void forksOfferAtTheEagerLevelsAndKeepBelowWhenNobodyWantsWork(PoolVariant v) throws Exception {
        PoolCore core = new PoolCore(v.builder().maxThreads(1).queueCapacity(1024).build());
        try {
            long[] sizes = new long[4];
            onWorker(core, () -> {
                WorkerThread self = (WorkerThread) Thread.currentThread();
                JoinDeques joins = core.joiningForTest().joinsForTest();
                long f = core.fork(() -> { });
                sizes[0] = joins.size(self.index); // offered: 1
                core.joinFork(f);
                NestedJoins.nested(core, Joining.EAGER_LEVELS, () -> {
                    sizes[1] = joins.size(self.index); // the eager levels' halves: 8
                    long g = core.fork(() -> { });
                    sizes[2] = joins.size(self.index); // kept: still 8
                    assertEquals(Joining.EAGER_LEVELS + 1, self.joinNest, "a kept fork counts in joinNest");
                    core.joinFork(g);
                    sizes[3] = self.joinNest;
                });
            });
            assertEquals(1, sizes[0], "a fork at the top offers its half");
            assertEquals(Joining.EAGER_LEVELS, sizes[1]);
            assertEquals(Joining.EAGER_LEVELS, sizes[2], "below the eager levels, nobody wanting work: kept");
            assertEquals(Joining.EAGER_LEVELS, sizes[3], "its join gave joinNest back");
            assertEquals(CLEAN, state(core));
        } finally {
            core.close();
        }
    }

    /**
     * A fork nobody wants keeps its half for its join: the recursion's own order (the in-place half, then the forked
     * one), as ForkJoinPool's pop at the join gives. Memory-bound recursions depend on it: a scratch fork that ran
     * the half at once (right before left) made RecursiveShapesBench's reduce 1.4x slower (PERFORMANCE_TRACKING 83).
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("oneWorker")
    @Timeout(60)
    void aForkNobodyWantsRunsItsHalfAfterTheInPlaceCode(PoolVariant v) throws Exception {
        PoolCore core = new PoolCore(v.builder().maxThreads(1).queueCapacity(1024).build());
        try {
            List<String> order = new ArrayList<>();
            onWorker(core, () -> NestedJoins.nested(core, Joining.EAGER_LEVELS, () -> {
                ObjLongToLongFunction<List<String>> half = (log, a) -> {
                    log.add("forked half");
                    return a;
                };
                long f = core.forkLong(half, order, 7);
                order.add("in place");
                order.add("joined " + core.joinLong(f));
            }));
            assertEquals(List.of("in place", "forked half", "joined 7"), order);
            assertEquals(CLEAN, state(core));
        } finally {
            core.close();
        }
    }

    /**
     * Kept forks store a function and context only when they differ from the newest kept fork's (ForkStack, "A kept
     * half's function and context"): the same pair stores nothing, another pair saves the old one in its entry and
     * its join gives it back, a {@code Runnable} half is stored as it is and leaves the pair alone; each join runs
     * its own half with its own context and long, and once all are joined no reference is left.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("oneWorker")
    @Timeout(60)
    void keptForksStoreTheirFunctionAndContextOnlyWhenTheyChange(PoolVariant v) throws Exception {
        PoolCore core = new PoolCore(v.builder().maxThreads(1).queueCapacity(1024).build());
        try {
            List<String> seen = new ArrayList<>();
            onWorker(core, () -> NestedJoins.nested(core, Joining.EAGER_LEVELS, () -> {
                ForkStack s = ((WorkerThread) Thread.currentThread()).forks;
                ObjLongToLongFunction<List<String>> f = (log, a) -> {
                    log.add("f " + a);
                    return a;
                };
                ObjLongToLongFunction<List<String>> g = (log, a) -> {
                    log.add("g " + a);
                    return -a;
                };
                List<String> other = new ArrayList<>();
                long a = core.forkLong(f, seen, 1); // pos 0: a new pair
                assertSame(f, s.lastFn);
                long b = core.forkLong(f, seen, 2); // pos 1: the same pair, nothing stored
                assertEquals(null, s.fnAt(1), "the same pair: nothing stored");
                long c = core.forkLong(f, other, 3); // pos 2: the same function, another context: the old pair saved
                assertSame(f, s.fnAt(2));
                assertSame(seen, s.ctxAt(2));
                assertSame(other, s.lastCtx);
                long d = core.forkLong(g, other, 4); // pos 3: another function
                assertSame(g, s.lastFn);
                long e = core.fork(() -> seen.add("runnable")); // pos 4: its own object, the pair left alone
                assertSame(g, s.lastFn);
                core.joinFork(e);
                seen.add("d=" + core.joinLong(d));
                assertSame(f, s.lastFn, "the join of a changed pair gives the old one back");
                assertSame(other, s.lastCtx);
                seen.add("c=" + core.joinLong(c));
                assertSame(seen, s.lastCtx);
                seen.add("b=" + core.joinLong(b));
                seen.add("a=" + core.joinLong(a));
                seen.add("other " + other);
                seen.add("last " + s.lastFn + " " + s.lastCtx);
            }));
            assertEquals(List.of("runnable", "d=-4", "c=3", "f 2", "b=2", "f 1", "a=1", "other [g 4, f 3]",
                    "last null null"), seen);
            assertEquals(CLEAN, state(core));
        } finally {
            core.close();
        }
    }

    /**
     * BUSY_SPIN offers every half, so 260 nested joins take all 256 frames: a fork there keeps its half (no frame),
     * leaves joinDepth as it was, and its join runs it.
     */
    @Test
    @Timeout(60)
    void aForkPastTheFramesKeepsItsHalf() throws Exception {
        PoolCore core = new PoolCore(dev.threadpool.PoolConfig.builder().maxThreads(1).queueCapacity(1024)
                .idleStrategy(IdleStrategy.BUSY_SPIN).workerStackSize(8L << 20).build());
        try {
            long[] seen = new long[3];
            AtomicInteger ran = new AtomicInteger();
            onWorker(core, () -> {
                WorkerThread self = (WorkerThread) Thread.currentThread();
                JoinDeques joins = core.joiningForTest().joinsForTest();
                NestedJoins.nested(core, PoolCore.JOIN_FRAMES + 4, () -> {
                    seen[0] = self.joinDepth;
                    long f = core.fork(ran::incrementAndGet);
                    seen[1] = joins.size(self.index);
                    seen[2] = self.joinDepth;
                    core.joinFork(f);
                });
            });
            assertEquals(PoolCore.JOIN_FRAMES, seen[0], "every frame taken");
            assertEquals(PoolCore.JOIN_FRAMES, seen[1], "the fork offered nothing");
            assertEquals(PoolCore.JOIN_FRAMES, seen[2], "and took no frame");
            assertEquals(1, ran.get());
            assertEquals(CLEAN, state(core));
        } finally {
            core.close();
        }
    }

    /**
     * The frame words of a fork's half: offerFork publishes the half, its context, its long and its handle (the
     * form a thief reads); the thief's results wait in the frame; finishFork and clearFork give the frame back with
     * its FORK word 0; tryReclaim of an abandoned fork's frame does the same once its thief is done.
     */
    @Test
    void aForksFrameCarriesItsHandleAndResultsAndIsGivenBackClean() {
        PoolMemory memory = PoolMemory.createGcManaged();
        JoinDeques joins = new JoinDeques(memory, 2, 4);
        Object fn = new Object();
        Object ctx = new Object();
        long handle = ForkStack.handle(ForkStack.OBJECT, 1, 3, 99);
        int idx = joins.frame(1, 2);
        joins.offerFork(1, idx, fn, ctx, 7L, handle);
        assertEquals(idx, joins.steal(1));
        joins.markStolen(idx, 0);
        assertSame(fn, joins.half(idx));
        assertSame(ctx, joins.ctx(idx));
        assertEquals(7L, joins.arg(idx));
        assertEquals(handle, joins.forkHandle(idx));
        assertEquals(ForkStack.OBJECT, ForkStack.formOf(joins.forkHandle(idx)));
        Object result = new Object();
        joins.setResultObject(idx, result);
        joins.setResult(idx, -5L);
        joins.complete(idx, 1, null);
        assertTrue(JoinDeques.isDone(joins.word(idx)));
        assertSame(result, joins.takeResultObject(idx));
        assertNull(joins.takeResultObject(idx), "taken: the frame keeps no result");
        assertEquals(-5L, joins.result(idx));
        assertNull(joins.finishFork(idx));
        assertTrue(joins.frameFree(idx));
        assertEquals(0L, joins.forkHandle(idx));
        assertEquals(JoinDeques.OFFERED, joins.word(idx));
        // a Runnable half: no context, no long written
        joins.offerFork(1, idx, (Runnable) () -> { }, null, 0L, ForkStack.handle(ForkStack.VOID, 1, 0, 1));
        assertNull(joins.ctx(idx));
        assertEquals(idx, joins.takeBack(1));
        joins.clearFork(idx);
        assertTrue(joins.frameFree(idx));
        assertEquals(0L, joins.forkHandle(idx));
        // abandoned and stolen: reclaimed once DONE, FORK word and result dropped
        joins.offerFork(1, idx, fn, ctx, 1L, handle);
        assertEquals(idx, joins.steal(1));
        joins.markStolen(idx, 0);
        joins.setResultObject(idx, result);
        assertTrue(!joins.tryReclaim(idx), "its thief still runs it");
        joins.complete(idx, 1, new RuntimeException("nobody to report to"));
        assertTrue(joins.tryReclaim(idx));
        assertEquals(0L, joins.forkHandle(idx));
        assertNull(joins.takeResultObject(idx));
        assertEquals(JoinDeques.Layout.resultsOffset(8) + 8 * 8, JoinDeques.Layout.wordsLength(8));
        assertEquals(128 + 3 * 128 + 64, JoinDeques.Layout.wordsLength(8),
                "WAITERS, three regions of 8 frames padded to a line, the RESULT words");
        joins.close();
    }

    @Test
    void aHandlePacksItsFieldsAndIsNegative() {
        long h = ForkStack.handle(ForkStack.DOUBLE, 63, ForkStack.MAX_OPEN - 1, -1L);
        assertTrue(ForkStack.isFork(h));
        assertEquals(ForkStack.DOUBLE, ForkStack.formOf(h));
        assertEquals(63, ForkStack.workerOf(h));
        assertEquals(ForkStack.MAX_OPEN - 1, ForkStack.posOf(h));
        assertEquals(ForkStack.SEQ_MASK, h & ForkStack.SEQ_MASK);
        ForkStack s = new ForkStack();
        assertThrows(IllegalStateException.class, () -> s.grow(ForkStack.MAX_OPEN));
        s.grow(ForkStack.INITIAL_CAPACITY);
        assertEquals(2 * ForkStack.INITIAL_CAPACITY, s.capacity());
        assertEquals(7, ForkStack.depthOf(ForkStack.levels(7, 9)));
        assertEquals(9, ForkStack.nestOf(ForkStack.levels(7, 9)));
    }
}
