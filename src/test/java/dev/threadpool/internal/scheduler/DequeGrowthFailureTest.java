package dev.threadpool.internal.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.PoolConfig;
import dev.threadpool.PoolStats;
import dev.threadpool.QueueKind;
import dev.threadpool.SchedulerVariant;
import dev.threadpool.ShutdownMode;
import dev.threadpool.TestSupport;
import java.time.Duration;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntPredicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A Chase–Lev local queue whose growth fails (its allocation throws, as a failing malloc does) never drops an
 * entry that was already accepted: the entry goes to the inject ring instead, the failure is recorded in
 * {@code recentErrors()} and not thrown into the worker or the submitting task, every task runs, DRAIN
 * completes and the accounting is exact. Growth failures are injected with
 * {@code PoolMemory.failAllocationsForTest} on the deques' "array g" allocations, g >= 1 (the growths).
 * WORK_STEALING and LANE_EXTENSION (whose default lane uses the same local queues) with CHASE_LEV.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class DequeGrowthFailureTest {
    private static final int CHILDREN = 300;
    /** How long DRAIN may take here before we call it hung: the workload takes milliseconds. */
    private static final Duration DRAIN = Duration.ofSeconds(20);
    /** A growth of local deque w: "local deque w array g" with g >= 1 (array 0 is allocated with the pool). */
    private static final Pattern GROWTH = Pattern.compile("local deque (\\d+) array [1-9]\\d*");
    private static final AtomicInteger POOLS = new AtomicInteger();

    static Stream<SchedulerVariant> variants() {
        return Stream.of(SchedulerVariant.WORK_STEALING, SchedulerVariant.LANE_EXTENSION);
    }

    private static PoolConfig config(SchedulerVariant v, int workers) {
        PoolConfig.Builder b = PoolConfig.builder().schedulerVariant(v).queueKind(QueueKind.CHASE_LEV)
                .maxThreads(workers).localQueueCapacity(2).stealBatchSize(8).queueCapacity(1024).daemon(true)
                .threadNamePrefix("grow-" + POOLS.incrementAndGet() + "-");
        if (v == SchedulerVariant.LANE_EXTENSION) {
            // every worker in the default lane but the one blocking-lane worker, which helps it; no overflow
            b.maxThreads(workers + 1).blockingWorkers(1).maxOverflowWorkers(0)
                    .blockingPromotionTimeout(Duration.ofHours(1));
        }
        return b.build();
    }

    /** A pool whose deque-w growths fail for every w that {@code fails} accepts (decided at each growth). */
    private static PoolCore pool(PoolConfig config, IntPredicate fails, AtomicInteger injected) {
        return new PoolCore(config, (stage, index, memory) -> {
            if (stage == ConstructionHook.Stage.ARENA_CREATED) {
                memory.failAllocationsForTest(purpose -> {
                    Matcher m = GROWTH.matcher(purpose);
                    boolean fail = m.matches() && fails.test(Integer.parseInt(m.group(1)));
                    if (fail) {
                        injected.incrementAndGet();
                    }
                    return fail;
                });
            }
        });
    }

    /** The root task has submitted all its children (a shutdown before that would refuse them). */
    private static void awaitRoot(CountDownLatch rootDone, SchedulerVariant v) throws InterruptedException {
        assertTrue(rootDone.await(DRAIN.toMillis(), TimeUnit.MILLISECONDS), v + ": the root task ended");
    }

    /**
     * DRAIN completes, every task ran once, nothing was thrown into a task, the growth failures (if
     * {@code failuresExpected}) were recorded, and the closed pool's accounting is exact.
     */
    private static void assertDrainedAndExact(PoolCore core, AtomicInteger ran, int expected, AtomicInteger injected,
            boolean failuresExpected, ConcurrentLinkedQueue<Throwable> taskErrors, String where) throws Exception {
        boolean drained = core.shutdown(ShutdownMode.DRAIN, DRAIN.toNanos());
        assertTrue(drained, () -> where + ": DRAIN did not complete within " + DRAIN + " (an accepted entry was lost?)"
                + " ran " + ran.get() + " of " + expected + ", thrown into tasks: " + taskErrors + ", "
                + core.statsSnapshot());
        assertEquals(expected, ran.get(), () -> where + ": every task ran once; thrown into tasks: " + taskErrors);
        assertTrue(taskErrors.isEmpty(), () -> where + ": nothing was thrown into the tasks: " + taskErrors);
        if (failuresExpected) {
            assertTrue(injected.get() > 0, where + ": the test injected growth failures");
            assertTrue(core.recentErrors().stream().anyMatch(t -> t instanceof OutOfMemoryError
                    && t.getMessage().contains("injected")), () -> where + ": the growth failure is recorded: "
                    + core.recentErrors());
        }
        PoolStats open = core.statsSnapshot();
        assertEquals(open.submitted(), open.completed(), where + ": every accepted task completed: " + open);
        assertEquals(0, open.failed(), where + ": no task failed: " + open);
        core.close();
        PoolStats s = core.statsSnapshot();
        TestSupport.assertAccounting(s);
        assertEquals(0, s.liveBytes(), where + ": liveBytes after close: " + s);
        assertEquals(s.totalAllocBytes(), s.totalFreeBytes(), where + ": alloc == free after close: " + s);
        assertEquals(0, s.taskDescLive(), where + ": taskDescLive after close: " + s);
    }

    /**
     * One worker runs a task that submits CHILDREN children: they go to its LIFO slot and local deque, which
     * is full after two and cannot grow. Before the fix the push's OutOfMemoryError came out of submit inside
     * the task, and the entry it displaced from the LIFO slot was gone: DRAIN never completed.
     */
    @ParameterizedTest
    @MethodSource("variants")
    void anOwnerPushThatCannotGrowGoesToTheInjectRing(SchedulerVariant v) throws Exception {
        AtomicInteger injected = new AtomicInteger();
        PoolCore core = pool(config(v, 1), w -> true, injected);
        AtomicInteger ran = new AtomicInteger();
        ConcurrentLinkedQueue<Throwable> taskErrors = new ConcurrentLinkedQueue<>();
        Runnable child = ran::incrementAndGet;
        CountDownLatch rootDone = new CountDownLatch(1);
        core.submit(() -> {
            try {
                for (int i = 0; i < CHILDREN; i++) {
                    core.submit(child, 0, null, WaitMode.UNBOUNDED, 0L);
                }
            } catch (Throwable t) {
                taskErrors.add(t);
            }
            ran.incrementAndGet();
            rootDone.countDown();
        }, 0, null, WaitMode.UNBOUNDED, 0L);
        awaitRoot(rootDone, v);
        assertDrainedAndExact(core, ran, CHILDREN + 1, injected, true, taskErrors, v + " owner push");
    }

    /**
     * Two workers: the root task's worker (its deque grows normally) submits CHILDREN children and then waits
     * for them, so the other worker must steal them, up to stealBatchSize at a time into its own deque of 2,
     * whose growth fails. Before the fix the OutOfMemoryError escaped the thief's steal and killed the worker
     * with the stolen entries in hand: the root waited in vain and DRAIN never completed. Now a steal takes at
     * most what fits in the thief's deque, so it never grows it (no growth is even attempted).
     */
    @ParameterizedTest
    @MethodSource("variants")
    void aThiefWhoseDequeCannotGrowLosesNoStolenEntry(SchedulerVariant v) throws Exception {
        AtomicInteger injected = new AtomicInteger();
        AtomicInteger rootWorker = new AtomicInteger(-1);
        // only the thief's deque fails to grow; until the root has started, nobody's does (nobody grows then)
        PoolCore core = pool(config(v, 2), w -> rootWorker.get() >= 0 && w != rootWorker.get(), injected);
        AtomicInteger ran = new AtomicInteger();
        ConcurrentLinkedQueue<Throwable> taskErrors = new ConcurrentLinkedQueue<>();
        CountDownLatch childrenDone = new CountDownLatch(CHILDREN);
        CountDownLatch rootDone = new CountDownLatch(1);
        Runnable child = () -> {
            ran.incrementAndGet();
            childrenDone.countDown();
        };
        core.submit(() -> {
            try {
                rootWorker.set(core.currentWorkerIndex());
                for (int i = 0; i < CHILDREN; i++) {
                    core.submit(child, 0, null, WaitMode.UNBOUNDED, 0L);
                }
                // block this worker (no helping): only the other one can run the children, by stealing them
                if (!childrenDone.await(DRAIN.toMillis() / 2, TimeUnit.MILLISECONDS)) {
                    taskErrors.add(new AssertionError("children still pending: " + childrenDone.getCount()));
                }
            } catch (Throwable t) {
                taskErrors.add(t);
            }
            ran.incrementAndGet();
            rootDone.countDown();
        }, 0, null, WaitMode.UNBOUNDED, 0L);
        awaitRoot(rootDone, v);
        assertDrainedAndExact(core, ran, CHILDREN + 1, injected, false, taskErrors, v + " thief");
        assertEquals(0, injected.get(), v + ": a steal never grows the thief's deque");
        assertTrue(core.statsSnapshot().steals() > 0, v + ": the children were stolen: " + core.statsSnapshot());
    }
}
