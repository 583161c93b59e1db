package dev.threadpool.internal.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.IdleStrategy;
import dev.threadpool.SchedulerVariant;
import dev.threadpool.TestSupport;
import dev.threadpool.TestSupport.PoolVariant;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * White-box, Joining's "Offer on demand": a join nested {@link Joining#EAGER_LEVELS} deep or more offers its half
 * only while some worker wants work (one searching or parked, or an owner waiting for its stolen half with
 * nothing to help with); the joins above always offer. Two workers; each case checks what the rule promises a
 * user: an offered half can run on the other worker (here: left waits, bounded, until right started elsewhere),
 * and a join that nobody wanted offered nothing.
 */
class JoinOnDemandTest {

    /**
     * "Nobody wants work" needs the other worker held busy. LANE_EXTENSION's watchdog spawns an overflow worker
     * when a default-lane task runs that long, and that worker's search is demand too (it does not steal halves,
     * but it counts as searching), so the case does not hold there.
     */
    static Stream<PoolVariant> variantsWithoutOverflow() {
        return TestSupport.poolVariantsExcept(SchedulerVariant.LANE_EXTENSION);
    }

    /** Waits, bounded, for {@code latch}; false when WAIT passed. */
    private static boolean await(CountDownLatch latch) {
        try {
            return latch.await(TestSupport.WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("variantsWithoutOverflow")
    @Timeout(60)
    void withTheOtherWorkerBusyOnlyTheEagerLevelsOffer(PoolVariant v) throws Exception {
        PoolCore core = new PoolCore(v.builder().maxThreads(2).build());
        CountDownLatch busy = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        try {
            long blocker = core.submitWaitable(() -> {
                busy.countDown();
                await(release);
            }, 0);
            assertTrue(await(busy));
            AtomicInteger offered = new AtomicInteger(-1);
            AtomicInteger offeredOneLevelUp = new AtomicInteger(-1);
            Joining j = core.joiningForTest();
            long h = core.submitWaitable(() -> {
                WorkerThread self = (WorkerThread) Thread.currentThread();
                // the other worker runs the blocker (neither searching nor parked), this one runs us: no demand
                TestSupport.eventually("no worker wants work", () -> !j.wantedForTest());
                NestedJoins.nested(core, Joining.EAGER_LEVELS,
                        () -> offeredOneLevelUp.set((int) j.joinsForTest().size(self.index)));
                NestedJoins.nested(core, Joining.EAGER_LEVELS + 2,
                        () -> offered.set((int) j.joinsForTest().size(self.index)));
            }, 0);
            assertTrue(core.await(h, TestSupport.WAIT.toNanos()));
            assertEquals(Joining.EAGER_LEVELS, offeredOneLevelUp.get(), "the eager levels offer their halves");
            assertEquals(Joining.EAGER_LEVELS, offered.get(),
                    "the joins below the eager levels offered nothing while nobody wanted work");
            release.countDown();
            assertTrue(core.await(blocker, TestSupport.WAIT.toNanos()));
        } finally {
            release.countDown();
            core.close();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.threadpool.TestSupport#poolVariants")
    @Timeout(60)
    void aDeepJoinOffersWhenTheOtherWorkerIsIdle(PoolVariant v) throws Exception {
        PoolCore core = new PoolCore(v.builder().maxThreads(2).build());
        try {
            Joining j = core.joiningForTest();
            AtomicReference<Thread> rightRanOn = new AtomicReference<>();
            CountDownLatch rightStarted = new CountDownLatch(1);
            AtomicInteger leftSawRight = new AtomicInteger(-1);
            long h = core.submitWaitable(() -> {
                NestedJoins.nested(core, Joining.EAGER_LEVELS, () -> {
                    // the eager levels' first offer woke the other worker (claiming its idle bit); once it has run
                    // or missed their halves it searches, then parks: it wants work until it is woken again. Wait
                    // for the park itself, the state this case is about, not merely for wanted(): a woken worker
                    // that has not yet searched again is neither parked nor searching, and a wanted() seen true
                    // just before it ran would let the deep join below run inline.
                    TestSupport.eventually("the other worker parked", j::stealerParkedForTest);
                    assertTrue(j.wantedForTest(), "a parked stealer wants work");
                    try {
                        core.join(() -> leftSawRight.set(await(rightStarted) ? 1 : 0), () -> {
                            rightRanOn.set(Thread.currentThread());
                            rightStarted.countDown();
                        });
                    } catch (InterruptedException e) {
                        throw new AssertionError(e);
                    }
                });
            }, 0);
            assertTrue(core.await(h, TestSupport.WAIT.toNanos()));
            assertEquals(1, leftSawRight.get(), "the deep join's right half ran while its left waited: it was offered");
            assertNotSame(null, rightRanOn.get(), "right ran");
        } finally {
            core.close();
        }
    }

    /**
     * A worker that is searching (spinning, not parked: SPIN_THEN_PARK with the longest spin) is demand on its own:
     * the deep join offers with no idle bit set and no owner waiting. Its own case because each demand word is read
     * by an address Joining keeps (PERFORMANCE_TRACKING 87): one taken from the wrong structure fails here.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.threadpool.TestSupport#poolVariants")
    @Timeout(60)
    void aDeepJoinOffersWhileTheOtherWorkerSearches(PoolVariant v) throws Exception {
        PoolCore core = new PoolCore(v.builder().maxThreads(2).idleStrategy(IdleStrategy.SPIN_THEN_PARK)
                .spinBeforePark(java.time.Duration.ofSeconds(1)).build());
        try {
            Joining j = core.joiningForTest();
            CountDownLatch rightStarted = new CountDownLatch(1);
            AtomicInteger leftSawRight = new AtomicInteger(-1);
            AtomicInteger parkedAtJoin = new AtomicInteger(-1);
            long h = core.submitWaitable(() -> {
                WorkerThread self = (WorkerThread) Thread.currentThread();
                NestedJoins.nested(core, Joining.EAGER_LEVELS, () -> {
                    // the eager levels' offers woke the other worker if it had parked. Once it has taken their
                    // halves (our deque empty: nothing left it could run instead of searching) it spins for up to
                    // 1 s, searching, its idle bit clear
                    TestSupport.eventually("the other worker took the eager halves and searches, not parked",
                            () -> j.joinsForTest().size(self.index) == 0 && j.searchingForTest()
                                    && !j.stealerParkedForTest());
                    parkedAtJoin.set(j.stealerParkedForTest() ? 1 : 0);
                    try {
                        core.join(() -> leftSawRight.set(await(rightStarted) ? 1 : 0), rightStarted::countDown);
                    } catch (InterruptedException e) {
                        throw new AssertionError(e);
                    }
                });
            }, 0);
            assertTrue(core.await(h, TestSupport.WAIT.toNanos()));
            assertEquals(0, parkedAtJoin.get(), "no stealer parked when the deep join began: searching was the demand");
            assertEquals(1, leftSawRight.get(), "the deep join's right half ran while its left waited: it was offered");
        } finally {
            core.close();
        }
    }

    /**
     * An owner whose half was stolen and who finds nothing of its thief's to help with is demand: the thief's
     * next deep join offers, and the owner runs that half (leapfrogging), though both workers are busy.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.threadpool.TestSupport#poolVariants")
    @Timeout(60)
    void aWaitingOwnerMakesItsThiefOffer(PoolVariant v) throws Exception {
        PoolCore core = new PoolCore(v.builder().maxThreads(2).build());
        try {
            Joining j = core.joiningForTest();
            AtomicReference<Thread> owner = new AtomicReference<>();
            AtomicReference<Thread> innerRightRanOn = new AtomicReference<>();
            CountDownLatch stolen = new CountDownLatch(1);
            CountDownLatch innerRightStarted = new CountDownLatch(1);
            AtomicInteger leftSawRight = new AtomicInteger(-1);
            long h = core.submitWaitable(() -> {
                owner.set(Thread.currentThread());
                try {
                    core.join(() -> assertTrue(await(stolen), "the other worker stole the right half"), () -> {
                        stolen.countDown();
                        // on the thief, at its loop's top: wait until the owner waits with nothing to help with
                        TestSupport.eventually("the owner waits for this half", () -> j.joinsForTest().waiters() > 0);
                        NestedJoins.nested(core, Joining.EAGER_LEVELS, () -> {
                            try {
                                core.join(() -> leftSawRight.set(await(innerRightStarted) ? 1 : 0), () -> {
                                    innerRightRanOn.set(Thread.currentThread());
                                    innerRightStarted.countDown();
                                });
                            } catch (InterruptedException e) {
                                throw new AssertionError(e);
                            }
                        });
                    });
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
            }, 0);
            assertTrue(core.await(h, TestSupport.WAIT.toNanos()));
            assertEquals(1, leftSawRight.get(), "the thief's deep join offered its half to the waiting owner");
            assertEquals(owner.get(), innerRightRanOn.get(), "the waiting owner ran it (leapfrogging)");
            assertEquals(0, j.joinsForTest().waiters(), "the owner's wait ended: no demand left behind");
        } finally {
            core.close();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.threadpool.TestSupport#poolVariants")
    @Timeout(60)
    void underBusySpinEveryJoinOffers(PoolVariant v) throws Exception {
        PoolCore core = new PoolCore(v.builder().maxThreads(2).idleStrategy(IdleStrategy.BUSY_SPIN).build());
        CountDownLatch busy = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        try {
            long blocker = core.submitWaitable(() -> {
                busy.countDown();
                await(release);
            }, 0);
            assertTrue(await(busy));
            Joining j = core.joiningForTest();
            AtomicInteger offered = new AtomicInteger(-1);
            long h = core.submitWaitable(() -> {
                WorkerThread self = (WorkerThread) Thread.currentThread();
                NestedJoins.nested(core, Joining.EAGER_LEVELS + 2,
                        () -> offered.set((int) j.joinsForTest().size(self.index)));
            }, 0);
            assertTrue(core.await(h, TestSupport.WAIT.toNanos()));
            release.countDown();
            assertTrue(core.await(blocker, TestSupport.WAIT.toNanos()));
            assertEquals(Joining.EAGER_LEVELS + 2, offered.get(),
                    "BUSY_SPIN's spinning workers are not counted as searching: every join offers");
        } finally {
            release.countDown();
            core.close();
        }
    }
}
