package dev.threadpool;

import static dev.threadpool.TestSupport.awaitQuiescent;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Dependent tasks on a small pool, on every variant: no accepted task may wait behind a parked worker that
 * could take it. Each round submits a parent, which forks a child and waits for it (bounded), and a blocker,
 * which waits (bounded) until the parent is done. Three workers always suffice: one runs the parent, one the
 * blocker, one the child. A lost wake shows as a parent whose child never ran within the bound while a third
 * worker slept: typically the child was forked while some worker was searching (its wake coalesced on that
 * searcher), and the searcher then took the blocker instead (WakeProtocolWhiteBoxTest drives that exact
 * interleaving), or, on LANE_EXTENSION, the blocking worker was woken for the parent and took the blocker from
 * its own lane first. A blocker that outwaits its parent shows the same defect one step earlier: the parent
 * itself never started. Rounds run back to back so workers are often searching when the next round's submits
 * land.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class WakeProtocolTest {
    private static final int ROUNDS = 3_000;
    /** A child that has not run after this long waits behind a sleeping worker (the box may be loaded). */
    private static final long BOUND_SECONDS = 5;

    static Stream<Arguments> variants() {
        PoolConfig.Builder base = PoolConfig.builder().maxThreads(3).queueCapacity(64).daemon(true);
        return Stream.of(
                Arguments.of("GLOBAL_QUEUE", base.schedulerVariant(SchedulerVariant.GLOBAL_QUEUE).build(),
                        SubmitOptions.DEFAULT),
                Arguments.of("WORK_STEALING/RING", base.schedulerVariant(SchedulerVariant.WORK_STEALING)
                        .queueKind(QueueKind.RING).build(), SubmitOptions.DEFAULT),
                Arguments.of("WORK_STEALING/CHASE_LEV", base.schedulerVariant(SchedulerVariant.WORK_STEALING)
                        .queueKind(QueueKind.CHASE_LEV).build(), SubmitOptions.DEFAULT),
                // No overflow workers: the watchdog must not be what rescues a stranded child.
                Arguments.of("LANE_EXTENSION, blocker on the default lane", base.queueKind(QueueKind.RING)
                        .schedulerVariant(SchedulerVariant.LANE_EXTENSION).blockingWorkers(1).maxOverflowWorkers(0)
                        .build(), SubmitOptions.DEFAULT),
                Arguments.of("LANE_EXTENSION, blocker on the blocking lane", base.queueKind(QueueKind.RING)
                        .schedulerVariant(SchedulerVariant.LANE_EXTENSION).blockingWorkers(1).maxOverflowWorkers(0)
                        .build(), SubmitOptions.BLOCKING));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    void parentsWaitingOnTheirChildrenNeverWaitBehindAParkedWorker(String name, PoolConfig config,
            SubmitOptions blockerLane) throws InterruptedException {
        try (ThreadPool pool = ThreadPool.create(config)) {
            AtomicInteger stranded = new AtomicInteger();
            AtomicInteger blockerTimeouts = new AtomicInteger();
            for (int round = 0; round < ROUNDS; round++) {
                CountDownLatch childRan = new CountDownLatch(1);
                CountDownLatch parentDone = new CountDownLatch(1);
                CountDownLatch roundDone = new CountDownLatch(2);
                pool.submit(() -> {
                    try {
                        pool.submit(childRan::countDown); // from a worker: its LIFO slot (WORK_STEALING)
                        if (!childRan.await(BOUND_SECONDS, TimeUnit.SECONDS)) {
                            stranded.incrementAndGet();
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    } finally {
                        parentDone.countDown();
                        roundDone.countDown();
                    }
                });
                pool.submit(() -> {
                    try {
                        if (!parentDone.await(2 * BOUND_SECONDS, TimeUnit.SECONDS)) {
                            blockerTimeouts.incrementAndGet();
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    } finally {
                        roundDone.countDown();
                    }
                }, blockerLane);
                assertTrue(roundDone.await(4 * BOUND_SECONDS, TimeUnit.SECONDS), "round " + round + " ended");
                if (stranded.get() != 0 || blockerTimeouts.get() != 0) {
                    fail(name + ", round " + round + ": " + (stranded.get() != 0
                            ? "the child did not run within " + BOUND_SECONDS + " s"
                            : "the parent did not end within " + 2 * BOUND_SECONDS + " s")
                            + " while a worker was free to take it: " + pool.statsSnapshot());
                }
            }
            awaitQuiescent(pool);
        }
    }
}
