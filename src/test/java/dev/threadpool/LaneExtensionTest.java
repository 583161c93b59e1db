package dev.threadpool;

import static dev.threadpool.TestSupport.WAIT;
import static dev.threadpool.TestSupport.assertAccounting;
import static dev.threadpool.TestSupport.assertClosedClean;
import static dev.threadpool.TestSupport.awaitQuiescent;
import static dev.threadpool.TestSupport.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * LANE_EXTENSION specifics: the blocking lane and its reserved workers, cross-lane help in both directions,
 * the watchdog's overflow workers (spawn, the queued default work behind a stalled task completing, retire,
 * respawn into the same slot), shutdown in both modes with overflow workers alive, and counting across both
 * lanes through every submit path. Which worker ran a task is read with {@link ThreadPool#currentWorkerIndex()}
 * (blocking lane [0, blockingWorkers), default lane [blockingWorkers, maxThreads), overflow [maxThreads, ..)).
 * Every wait is bounded; nothing asserts a duration; "stuck" workers are held by latches.
 */
class LaneExtensionTest {
    private static final AtomicInteger POOLS = new AtomicInteger();

    /** A LANE_EXTENSION builder with a pool-unique thread name prefix (for the thread-leak checks). */
    static PoolConfig.Builder config(int threads, int blocking) {
        return PoolConfig.builder().schedulerVariant(SchedulerVariant.LANE_EXTENSION).maxThreads(threads)
                .blockingWorkers(blocking).queueCapacity(256).daemon(true)
                .threadNamePrefix("lanes-" + POOLS.incrementAndGet() + "-");
    }

    static void hold(CountDownLatch latch) {
        try {
            if (!latch.await(WAIT.toSeconds(), TimeUnit.SECONDS)) {
                throw new IllegalStateException("test latch not released within " + WAIT);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Holds the pool's blocking worker (worker 0) in a blocking task until {@code release}, and returns once it is
     * held: it cannot help the default lane, so default-lane tasks run on the watched workers only.
     */
    static void holdBlockingWorker(ThreadPool pool, CountDownLatch release) throws InterruptedException {
        CountDownLatch held = new CountDownLatch(1);
        pool.submit(() -> { held.countDown(); hold(release); }, SubmitOptions.BLOCKING);
        await(held, "the blocking worker is held (so it cannot help the default lane)");
    }

    static void await(CountDownLatch latch, String what) throws InterruptedException {
        assertTrue(latch.await(WAIT.toSeconds(), TimeUnit.SECONDS), what);
    }

    /** Live threads whose name starts with the pool's prefix (workers, overflow workers, the watchdog). */
    static List<String> liveThreads(ThreadPool pool) {
        String prefix = pool.config().threadNamePrefix();
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.isAlive() && t.getName().startsWith(prefix))
                .map(Thread::getName).sorted().toList();
    }

    /** Closed, every byte back, every accepted task ended, no thread of the pool left (watchdog included). */
    static void assertNothingLeft(ThreadPool pool) {
        assertClosedClean(pool);
        PoolStats s = pool.statsSnapshot();
        assertEquals(0, s.overflowLive(), "no overflow worker live after close: " + s);
        assertEquals(s.overflowSpawned(), s.overflowRetired(), "every spawned overflow worker exited: " + s);
        assertEquals(List.of(), liveThreads(pool), "threads left after close");
    }

    // ---- the blocking lane and its workers ---------------------------------------------------------------

    @Test
    void defaultLaneKeepsMovingWhileEveryBlockingWorkerIsStuck() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        ThreadPool pool = ThreadPool.create(config(3, 2).maxOverflowWorkers(0).build());
        try {
            CountDownLatch stuck = new CountDownLatch(2);
            Set<Integer> stuckOn = ConcurrentHashMap.newKeySet();
            for (int k = 0; k < 2; k++) {
                pool.submit(() -> { stuckOn.add(pool.currentWorkerIndex()); stuck.countDown(); hold(release); },
                        SubmitOptions.BLOCKING);
            }
            await(stuck, "both blocking workers took a blocking task");
            assertEquals(Set.of(0, 1), stuckOn, "blocking tasks run on the blocking workers");

            AtomicInteger extraRanOn = new AtomicInteger(-1);
            pool.submit(() -> extraRanOn.set(pool.currentWorkerIndex()), SubmitOptions.BLOCKING);

            // A stream of default-lane tasks through every path; only worker 2 is free to run them.
            final int n = 3000;
            AtomicIntegerArray runs = new AtomicIntegerArray(n);
            AtomicInteger wrongWorker = new AtomicInteger();
            WaitGroup wg = new WaitGroup();
            Runnable[] batch = new Runnable[100];
            for (int i = 0; i < n; i++) {
                final int id = i;
                Runnable task = () -> {
                    runs.incrementAndGet(id);
                    if (pool.currentWorkerIndex() != 2) {
                        wrongWorker.incrementAndGet();
                    }
                };
                switch (i % 3) {
                    case 0 -> pool.submit(task, wg);
                    case 1 -> {
                        wg.add(1);
                        batch[(i / 3) % 100] = () -> { task.run(); wg.done(); };
                        if ((i / 3) % 100 == 99) {
                            assertEquals(100, pool.submitBatch(batch, 0, 100));
                        }
                    }
                    default -> pool.await(pool.submitWaitable(task));
                }
            }
            int tail = ((n - 1) / 3 + 1) % 100; // batch entries not yet submitted
            assertEquals(tail, pool.submitBatch(batch, 0, tail));
            assertTrue(wg.await(WAIT), "every default-lane task completed while both blocking workers were stuck");
            for (int i = 0; i < n; i++) {
                assertEquals(1, runs.get(i), "task " + i);
            }
            assertEquals(0, wrongWorker.get(), "default-lane tasks ran only on the free default worker");
            // Every default task has ended, and the blocking one is still queued: the default worker did not
            // take it (cpuHelpsBlocking is off) and both blocking workers are still held.
            assertEquals(-1, extraRanOn.get(), "the queued blocking task waits for a blocking worker");
            assertEquals(1, pool.statsSnapshot().queuedTasks());
            release.countDown();
            eventually("the queued blocking task ran", () -> extraRanOn.get() >= 0);
            assertTrue(extraRanOn.get() < 2, "on a blocking worker: " + extraRanOn.get());
            awaitQuiescent(pool);
        } finally {
            release.countDown();
            pool.close();
        }
        assertNothingLeft(pool);
    }

    @Test
    void defaultWorkersHelpTheBlockingLaneWhenCpuHelpsBlocking() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        ThreadPool pool = ThreadPool.create(config(3, 1).cpuHelpsBlocking(true).maxOverflowWorkers(0).build());
        try {
            // One held blocking task per worker (default workers help, so all three take one); then let the
            // default workers go and keep the blocking worker held.
            CountDownLatch[] perWorker = {release, new CountDownLatch(1), new CountDownLatch(1)};
            CountDownLatch stuck = new CountDownLatch(3);
            for (int k = 0; k < 3; k++) {
                pool.submit(() -> { stuck.countDown(); hold(perWorker[pool.currentWorkerIndex()]); },
                        SubmitOptions.BLOCKING);
            }
            await(stuck, "every worker took a blocking task");
            perWorker[1].countDown();
            perWorker[2].countDown();
            CountDownLatch ran = new CountDownLatch(10);
            Set<Integer> where = ConcurrentHashMap.newKeySet();
            for (int k = 0; k < 10; k++) {
                pool.submit(() -> { where.add(pool.currentWorkerIndex()); ran.countDown(); }, SubmitOptions.BLOCKING);
            }
            await(ran, "blocking tasks ran although the only blocking worker is held");
            assertFalse(where.contains(0), "worker 0 is held: " + where);
            assertTrue(where.stream().allMatch(w -> w == 1 || w == 2), "default workers helped: " + where);
        } finally {
            release.countDown();
            pool.close();
        }
        assertNothingLeft(pool);
    }

    @Test
    void blockingWorkersHelpTheDefaultLane() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        ThreadPool pool = ThreadPool.create(config(2, 1).maxOverflowWorkers(0).build());
        try {
            CountDownLatch running = new CountDownLatch(2);
            Set<Integer> where = ConcurrentHashMap.newKeySet();
            for (int k = 0; k < 2; k++) {
                pool.submit(() -> { where.add(pool.currentWorkerIndex()); running.countDown(); hold(release); });
            }
            // Two held default-lane tasks and one default worker: both run only if the blocking worker helps.
            await(running, "both default-lane tasks started");
            assertEquals(Set.of(0, 1), where);
        } finally {
            release.countDown();
            pool.close();
        }
        assertNothingLeft(pool);
    }

    /**
     * Join halves are default-lane work, so a blocking worker whose lane is empty steals them (issue 49's
     * cross-lane rule). The join's owner is the default worker (the blocking worker is held in a blocking task
     * when the joining task is submitted); its left half frees the blocking worker and then waits, bounded, for
     * the right half, which only the blocking worker can run. Before, it never stole halves and this timed out.
     */
    @Test
    void anIdleBlockingWorkerStealsJoinHalves() throws Exception {
        CountDownLatch releaseBlocking = new CountDownLatch(1);
        ThreadPool pool = ThreadPool.create(config(2, 1).maxOverflowWorkers(0).build());
        try {
            holdBlockingWorker(pool, releaseBlocking);
            CountDownLatch rightRan = new CountDownLatch(1);
            AtomicInteger owner = new AtomicInteger(-1);
            AtomicInteger thief = new AtomicInteger(-1);
            AtomicBoolean rightInTime = new AtomicBoolean();
            WaitGroup done = new WaitGroup();
            pool.submit(() -> {
                owner.set(pool.currentWorkerIndex());
                try {
                    pool.join(() -> {
                        releaseBlocking.countDown(); // worker 0's lane is empty from here on
                        try {
                            rightInTime.set(rightRan.await(WAIT.toSeconds(), TimeUnit.SECONDS));
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }, () -> {
                        thief.set(pool.currentWorkerIndex());
                        rightRan.countDown();
                    });
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            }, done);
            assertTrue(done.await(WAIT.multipliedBy(2)), "the joining task ended");
            assertEquals(1, owner.get(), "the join ran on the default worker (worker 0 was held)");
            assertTrue(rightInTime.get(), "the right half ran while the left half waited: it was stolen");
            assertEquals(0, thief.get(), "the blocking worker stole the right half");
            assertTrue(pool.statsSnapshot().steals() >= 1, "the stolen half counts a steal");
        } finally {
            releaseBlocking.countDown();
            pool.close();
        }
        assertNothingLeft(pool);
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void blockingTasksSubmittedFromWorkersGoToTheBlockingLane(boolean fromBlockingWorker) throws Exception {
        // room for every task at once: a worker submitting into a full pool would run the child inline
        ThreadPool pool = ThreadPool.create(config(4, 1).maxOverflowWorkers(0).queueCapacity(1024).build());
        final int parents = 200;
        AtomicIntegerArray runs = new AtomicIntegerArray(parents * 3);
        AtomicInteger offLane = new AtomicInteger();
        WaitGroup wg = new WaitGroup();
        try {
            for (int p = 0; p < parents; p++) {
                final int base = p * 3;
                Runnable parent = () -> {
                    // A worker's default-lane child would go to its LIFO slot; a blocking one must not.
                    Runnable[] children = new Runnable[3];
                    for (int c = 0; c < 3; c++) {
                        final int id = base + c;
                        children[c] = () -> {
                            runs.incrementAndGet(id);
                            if (pool.currentWorkerIndex() != 0) {
                                offLane.incrementAndGet();
                            }
                        };
                    }
                    pool.submit(children[0], wg, SubmitOptions.BLOCKING);
                    wg.add(1);
                    Runnable r = children[1];
                    pool.submit(() -> { r.run(); wg.done(); }, SubmitOptions.BLOCKING);
                    wg.add(1);
                    Runnable b = children[2];
                    pool.submitBatch(new Runnable[] {() -> { b.run(); wg.done(); }}, 0, 1, SubmitOptions.BLOCKING);
                };
                pool.submit(parent, wg, fromBlockingWorker ? SubmitOptions.BLOCKING : SubmitOptions.DEFAULT);
            }
            assertTrue(wg.await(WAIT));
            for (int i = 0; i < runs.length(); i++) {
                assertEquals(1, runs.get(i), "child " + i);
            }
            assertEquals(0, offLane.get(), "every blocking child ran on the blocking worker");
            awaitQuiescent(pool);
        } finally {
            pool.close();
        }
        assertNothingLeft(pool);
    }

    // ---- the watchdog and overflow workers -------------------------------------------------------------

    /** Runs for {@code nanos} of wall time, parked (a task of known length, not a synchronisation). */
    static void runFor(long nanos) {
        long end = System.nanoTime() + nanos;
        for (long left = nanos; left > 0; left = end - System.nanoTime()) {
            java.util.concurrent.locks.LockSupport.parkNanos(left);
        }
    }

    /**
     * The watchdog times a run word from the tick that first saw it (the worker reads no clock): a task shorter
     * than the timeout is never called stalled, however often it is seen, and a longer one is counted once.
     */
    @Test
    void theWatchdogNeverCallsAShortTaskStalledAndCountsALongOneOnce() throws Exception {
        // 300 ms: a 100 ms task stays short even on a loaded box; four in a row are past it together
        long timeout = TimeUnit.MILLISECONDS.toNanos(300);
        ThreadPool pool = ThreadPool.create(config(2, 1).maxOverflowWorkers(1)
                .watchdogInterval(Duration.ofMillis(1)).blockingPromotionTimeout(Duration.ofNanos(timeout)).build());
        CountDownLatch release = new CountDownLatch(1);
        try {
            // Hold the blocking worker (it would help the default lane, and it is not watched), so every task
            // below runs on the one watched default worker.
            holdBlockingWorker(pool, release);
            WaitGroup wg = new WaitGroup();
            for (int i = 0; i < 4; i++) { // one after another on the one default worker, each seen ~100 times
                pool.submit(() -> runFor(timeout / 3), wg);
            }
            assertTrue(wg.await(WAIT), "the short tasks completed");
            assertEquals(0, pool.statsSnapshot().stallsSeen(), "no short task was called stalled");
            assertEquals(0, pool.statsSnapshot().overflowSpawned(), "nor given an overflow worker");

            WaitGroup longOne = new WaitGroup();
            pool.submit(() -> runFor(timeout * 2), longOne);
            assertTrue(longOne.await(WAIT), "the long task completed");
            assertEquals(1, pool.statsSnapshot().stallsSeen(), "the long task was counted once");
        } finally {
            release.countDown();
            pool.close();
        }
        assertClosedClean(pool);
    }

    /**
     * A new overflow thread in a slot whose previous thread had a stall counted: its own stall is counted too.
     * Each thread numbers its run words from a start of its own; were both to count from 1, the new thread's
     * first task would carry the word already counted for the slot, and its stall would go unseen.
     */
    @Test
    void aStallOnASecondOverflowThreadInTheSameSlotIsCounted() throws Exception {
        ThreadPool pool = ThreadPool.create(config(2, 1).maxOverflowWorkers(1)
                .watchdogInterval(Duration.ofMillis(2)).blockingPromotionTimeout(Duration.ofMillis(20)).build());
        CountDownLatch releaseAll = new CountDownLatch(1);
        CountDownLatch releaseA = new CountDownLatch(1);
        try {
            holdBlockingWorker(pool, releaseAll);
            CountDownLatch defaultHeld = new CountDownLatch(1);
            pool.submit(() -> { defaultHeld.countDown(); hold(releaseAll); });
            await(defaultHeld, "the default worker is held");
            eventually("the default worker's stall spawns overflow thread A",
                    () -> pool.statsSnapshot().overflowSpawned() == 1);
            assertEquals(1, pool.statsSnapshot().stallsSeen());

            AtomicInteger ranOn = new AtomicInteger(-1);
            pool.submit(() -> { ranOn.set(pool.currentWorkerIndex()); hold(releaseA); }); // A's first task
            eventually("A's task stalls and is counted", () -> pool.statsSnapshot().stallsSeen() == 2);
            assertEquals(2, ranOn.get(), "A's task ran on the overflow slot");
            releaseA.countDown();
            eventually("A retires once idle", () -> pool.statsSnapshot().overflowRetired() == 1);

            AtomicInteger ranOnB = new AtomicInteger(-1);
            pool.submit(() -> { ranOnB.set(pool.currentWorkerIndex()); hold(releaseAll); }); // queued: B's first task
            eventually("the queued task behind the stall spawns thread B in the same slot",
                    () -> pool.statsSnapshot().overflowSpawned() == 2);
            eventually("B's task runs", () -> ranOnB.get() == 2);
            eventually("B's stall is counted", () -> pool.statsSnapshot().stallsSeen() == 3,
                    () -> "" + pool.statsSnapshot());
        } finally {
            releaseA.countDown();
            releaseAll.countDown();
            pool.close();
        }
        assertClosedClean(pool);
    }

    @Test
    void aStalledDefaultTaskGetsAnOverflowWorkerThatRetiresWhenIdle() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch releaseStall = new CountDownLatch(1);
        ThreadPool pool = ThreadPool.create(config(2, 1).maxOverflowWorkers(1)
                .watchdogInterval(Duration.ofMillis(5)).blockingPromotionTimeout(Duration.ofMillis(20)).build());
        String overflowName = pool.config().threadNamePrefix() + "overflow-2";
        try {
            assertEquals(3, pool.workerSlots());
            assertTrue(liveThreads(pool).contains(pool.config().threadNamePrefix() + "watchdog"), "" + liveThreads(pool));
            holdBlockingWorker(pool, release);
            CountDownLatch held = new CountDownLatch(1);
            AtomicInteger stallOn = new AtomicInteger(-1);
            pool.submit(() -> { stallOn.set(pool.currentWorkerIndex()); held.countDown(); hold(releaseStall); });
            await(held, "the default worker is held");
            assertEquals(1, stallOn.get(), "the stalled task is on the default worker");
            // The blocking task holds a descriptor (its lane is never carried); the stalled one is carried by its
            // ring cell and holds none: the watchdog sees it through the worker's run word all the same.
            assertEquals(1, pool.statsSnapshot().taskDescLive(), "only the blocking-lane task holds a descriptor");

            // Queued behind the stalled task: they complete only on an overflow worker (index 2).
            Set<Integer> where = ConcurrentHashMap.newKeySet();
            WaitGroup wg = new WaitGroup();
            for (int k = 0; k < 200; k++) {
                pool.submit(() -> where.add(pool.currentWorkerIndex()), wg);
            }
            assertTrue(wg.await(WAIT), "queued default-lane work completed behind the stalled task");
            assertEquals(Set.of(2), where, "it ran on the overflow worker");
            PoolStats s = pool.statsSnapshot();
            assertTrue(s.stallsSeen() >= 1, "stall counted: " + s);
            assertTrue(s.overflowSpawned() >= 1, "overflow spawned: " + s);

            // Idle, it retires although the stall goes on (nothing is queued, so no respawn).
            eventually("the overflow worker retired", () -> {
                PoolStats t = pool.statsSnapshot();
                return t.overflowLive() == 0 && t.overflowRetired() == t.overflowSpawned();
            }, () -> "" + pool.statsSnapshot());
            eventually("its thread ended", () -> !liveThreads(pool).contains(overflowName), () -> "" + liveThreads(pool));
            long spawnedBefore = pool.statsSnapshot().overflowSpawned();
            assertEquals(1, stallOn.get());

            // Work queued while the same task is still stalled: the watchdog spawns again, into the freed slot.
            Set<Integer> again = ConcurrentHashMap.newKeySet();
            WaitGroup wg2 = new WaitGroup();
            for (int k = 0; k < 50; k++) {
                pool.submit(() -> again.add(pool.currentWorkerIndex()), wg2);
            }
            assertTrue(wg2.await(WAIT), "queued work completed on a respawned overflow worker");
            assertEquals(Set.of(2), again, "the retired worker's slot was reused");
            assertTrue(pool.statsSnapshot().overflowSpawned() > spawnedBefore);

            releaseStall.countDown();
            release.countDown();
            awaitQuiescent(pool);
            eventually("every overflow worker retired", () -> pool.statsSnapshot().overflowLive() == 0);
            PoolStats end = pool.statsSnapshot();
            assertAccounting(end);
            assertEquals(end.overflowSpawned(), end.overflowRetired(), "" + end);
        } finally {
            releaseStall.countDown();
            release.countDown();
            pool.close();
        }
        assertNothingLeft(pool);
    }

    @ParameterizedTest
    @EnumSource(ShutdownMode.class)
    void shutdownJoinsTheWatchdogAndLiveOverflowWorkers(ShutdownMode mode) throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        ThreadPool pool = ThreadPool.create(config(2, 1).maxOverflowWorkers(1)
                .watchdogInterval(Duration.ofMillis(5)).blockingPromotionTimeout(Duration.ofMillis(10)).build());
        AtomicInteger queuedRan = new AtomicInteger();
        try {
            holdBlockingWorker(pool, release);
            CountDownLatch held = new CountDownLatch(2);
            pool.submit(() -> { held.countDown(); hold(release); });
            // Runs on the overflow worker the stall above brings: all three workers are then held.
            pool.submit(() -> { held.countDown(); hold(release); });
            await(held, "the default and the overflow worker are held too");
            PoolStats s = pool.statsSnapshot();
            assertEquals(1, s.overflowLive(), "" + s);
            for (int k = 0; k < 10; k++) {
                pool.submit(queuedRan::incrementAndGet);
            }
            AtomicLong result = new AtomicLong(-1);
            Thread stopper = new Thread(() -> {
                try {
                    result.set(pool.shutdown(mode, WAIT) ? 1 : 0);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            stopper.start();
            if (mode == ShutdownMode.CANCEL_PENDING) {
                eventually("the queued tasks were cancelled", () -> pool.statsSnapshot().cancelled() == 10);
            } else {
                eventually("shutdown began", pool::isShutdown);
            }
            assertFalse(pool.isTerminated(), "held tasks keep the pool from terminating");
            release.countDown();
            stopper.join(WAIT.toMillis());
            assertFalse(stopper.isAlive());
            assertEquals(1, result.get(), "shutdown completed");
            assertTrue(pool.isTerminated());
            // Terminated: the watchdog and every overflow worker were joined, not just told to stop.
            List<String> left = liveThreads(pool);
            assertEquals(List.of(), left, "no pool thread outlives shutdown");
            assertEquals(mode == ShutdownMode.DRAIN ? 10 : 0, queuedRan.get());
        } finally {
            release.countDown();
            pool.close();
        }
        assertNothingLeft(pool);
    }

    /**
     * {@code ExecutorService.shutdownNow} interrupts the tasks running on overflow workers too, not only the
     * base workers' (before the fix the overflow worker's task waited out its bound uninterrupted).
     */
    @Test
    void shutdownNowInterruptsATaskOnAnOverflowWorker() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        ThreadPool pool = ThreadPool.create(config(2, 1).maxOverflowWorkers(1)
                .watchdogInterval(Duration.ofMillis(5)).blockingPromotionTimeout(Duration.ofMillis(10)).build());
        try {
            holdBlockingWorker(pool, release);
            CountDownLatch defaultHeld = new CountDownLatch(1);
            pool.submit(() -> { defaultHeld.countDown(); hold(release); });
            await(defaultHeld, "the default worker is held: a stall");
            CountDownLatch onOverflow = new CountDownLatch(1);
            AtomicInteger where = new AtomicInteger(-1);
            AtomicBoolean interrupted = new AtomicBoolean();
            CountDownLatch ended = new CountDownLatch(1);
            pool.submit(() -> {
                where.set(pool.currentWorkerIndex());
                onOverflow.countDown();
                try {
                    release.await(WAIT.toSeconds(), TimeUnit.SECONDS); // returns early only if interrupted
                } catch (InterruptedException e) {
                    interrupted.set(true);
                } finally {
                    ended.countDown();
                }
            });
            await(onOverflow, "the third task runs on the overflow worker the stall brings");
            assertEquals(2, where.get(), "it runs on overflow worker index maxThreads = 2");
            pool.asExecutorService().shutdownNow();
            await(ended, "the overflow worker's task ended");
            assertTrue(interrupted.get(), "shutdownNow interrupted the task on the overflow worker");
        } finally {
            release.countDown();
            pool.close();
        }
        assertNothingLeft(pool);
    }

    // ---- counting across both lanes --------------------------------------------------------------------

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void everyTaskRunsExactlyOnceAcrossBothLanesAndEverySubmitPath(boolean cpuHelpsBlocking) throws Exception {
        final int n = 24_000;
        final int chunk = 16;
        AtomicIntegerArray runs = new AtomicIntegerArray(n);
        AtomicInteger blockingOffLane = new AtomicInteger();
        ThreadPool pool = ThreadPool.create(config(4, 2).cpuHelpsBlocking(cpuHelpsBlocking).queueCapacity(64)
                .localQueueCapacity(16).maxOverflowWorkers(2).blockingPromotionTimeout(Duration.ofMillis(1))
                .watchdogInterval(Duration.ofMillis(1)).build());
        WaitGroup wg = new WaitGroup();
        AtomicInteger next = new AtomicInteger();
        try {
            Thread[] submitters = new Thread[3];
            for (int s = 0; s < submitters.length; s++) {
                submitters[s] = new Thread(() -> {
                    try {
                        for (int first; (first = next.getAndAdd(chunk)) < n; ) {
                            submitChunk(pool, wg, runs, blockingOffLane, first, Math.min(n, first + chunk));
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }, "lanes-submitter-" + s);
                submitters[s].start();
            }
            for (Thread t : submitters) {
                t.join(WAIT.toMillis());
                assertFalse(t.isAlive(), "submitter finished");
            }
            assertTrue(wg.await(WAIT), "pending=" + wg.pending());
            for (int i = 0; i < n; i++) {
                if (runs.get(i) != 1) {
                    fail("task " + i + " ran " + runs.get(i) + " times; errors " + pool.recentErrors());
                }
            }
            if (!cpuHelpsBlocking) {
                assertEquals(0, blockingOffLane.get(), "blocking tasks ran only on blocking workers");
            }
            PoolStats s = awaitQuiescent(pool);
            assertAccounting(s);
        } finally {
            pool.close();
        }
        assertNothingLeft(pool);
        PoolStats s = pool.statsSnapshot();
        assertTrue(s.completed() >= n, "" + s);
    }

    /**
     * Submits ids [from, to) one way, chosen by the chunk: even chunks to the blocking lane, odd ones to the
     * default lane; by submit, group, batch, waitable + await, trySubmit, or from inside a task on a worker.
     */
    private static void submitChunk(ThreadPool pool, WaitGroup wg, AtomicIntegerArray runs,
            AtomicInteger blockingOffLane, int from, int to) throws InterruptedException {
        int c = from / 16;
        SubmitOptions lane = c % 2 == 0 ? SubmitOptions.BLOCKING : SubmitOptions.DEFAULT;
        boolean blocking = lane == SubmitOptions.BLOCKING;
        int blockingWorkers = pool.config().blockingWorkers();
        int mode = (c / 2) % 6;
        // A worker that submits into a full pool runs the task inline (caller-runs), on whatever lane it is:
        // the lane is only checked for tasks submitted from outside the pool (modes 0-3), which never run
        // inline; blockingTasksSubmittedFromWorkersGoToTheBlockingLane checks worker submits with room.
        boolean checkLane = blocking && mode < 4;
        Runnable[] tasks = new Runnable[to - from];
        for (int i = from; i < to; i++) {
            final int id = i;
            tasks[i - from] = () -> {
                runs.incrementAndGet(id);
                if (checkLane && pool.currentWorkerIndex() >= blockingWorkers) {
                    blockingOffLane.incrementAndGet();
                }
            };
        }
        switch (mode) {
            case 0 -> {
                for (Runnable t : tasks) {
                    pool.submit(t, wg, lane);
                }
            }
            case 1 -> {
                wg.add(tasks.length);
                Runnable[] counted = new Runnable[tasks.length];
                for (int k = 0; k < tasks.length; k++) {
                    Runnable t = tasks[k];
                    counted[k] = () -> { t.run(); wg.done(); };
                }
                assertEquals(tasks.length, pool.submitBatch(counted, 0, counted.length, lane));
            }
            case 2 -> {
                long[] handles = new long[tasks.length];
                for (int k = 0; k < tasks.length; k++) {
                    handles[k] = pool.submitWaitable(tasks[k], lane);
                }
                for (long h : handles) {
                    pool.await(h);
                }
            }
            case 3 -> {
                for (Runnable t : tasks) {
                    wg.add(1);
                    Runnable counted = () -> { t.run(); wg.done(); };
                    while (!pool.trySubmit(counted, Duration.ZERO, lane)) {
                        Thread.onSpinWait();
                    }
                }
            }
            case 4 -> {
                // from a worker of the other lane: a default task spawning blocking ones, and vice versa
                wg.add(1);
                pool.submit(() -> {
                    for (Runnable t : tasks) {
                        pool.submit(t, wg, lane);
                    }
                    wg.done();
                }, blocking ? SubmitOptions.DEFAULT : SubmitOptions.BLOCKING);
            }
            default -> {
                // from a worker, waitable, awaited there (the worker helps while it waits)
                wg.add(1);
                pool.submit(() -> {
                    try {
                        for (Runnable t : tasks) { // one un-awaited handle at a time
                            long h;
                            try {
                                h = pool.submitWaitable(t, lane);
                            } catch (PoolBusyException busy) {
                                // The designed refusal: every descriptor is held by running tasks or by
                                // finished children that outer frames (nested helping) have not awaited yet;
                                // waiting could deadlock. A detached submit never waits (it runs inline).
                                pool.submit(t, wg, lane);
                                continue;
                            }
                            pool.await(h);
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    } finally {
                        wg.done();
                    }
                });
            }
        }
    }
}
