package dev.threadpool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

class PoolConfigTest {

    private static void rejects(String fragment, UnaryOperator<PoolConfig.Builder> change) {
        RuntimeException e = assertThrows(RuntimeException.class, () -> change.apply(PoolConfig.builder()).build());
        assertTrue(e instanceof IllegalArgumentException || e instanceof NullPointerException, e.toString());
        assertTrue(e.getMessage().contains(fragment), () -> "expected '" + fragment + "' in: " + e.getMessage());
    }

    @Test
    void threadCountsOutside1To64AreRejectedWithTheRange() {
        rejects("maxThreads must be in [1, 64]: maxThreads=0", b -> b.maxThreads(0));
        rejects("maxThreads must be in [1, 64]: maxThreads=65", b -> b.maxThreads(65));
        assertEquals(64, PoolConfig.builder().maxThreads(64).maxOverflowWorkers(0).build().maxThreads());
    }

    @Test
    void capacitiesMustBePowersOfTwoInRange() {
        rejects("queueCapacity must be a power of two in [2, 16777216]: queueCapacity=3", b -> b.queueCapacity(3));
        rejects("queueCapacity must be a power of two in [2, 16777216]: queueCapacity=1", b -> b.queueCapacity(1));
        rejects("queueCapacity=33554432", b -> b.queueCapacity(1 << 25));
        rejects("queueCapacity=-4", b -> b.queueCapacity(-4));
        rejects("localQueueCapacity must be a power of two in [2, 65536]: localQueueCapacity=131072",
                b -> b.localQueueCapacity(1 << 17));
        rejects("localQueueCapacity=100", b -> b.localQueueCapacity(100));
    }

    @Test
    void otherFieldsAreValidated() {
        rejects("schedulerVariant must not be null", b -> b.schedulerVariant(null));
        rejects("idleStrategy must not be null", b -> b.idleStrategy(null));
        rejects("timestampMode must not be null", b -> b.timestampMode(null));
        rejects("queueKind must not be null", b -> b.queueKind(null));
        rejects("wakeCoalesceBatch must be in [1, 4096]", b -> b.wakeCoalesceBatch(0));
        rejects("injectBatchSize must be in [1, 1024]", b -> b.injectBatchSize(2000));
        rejects("stealBatchSize must be in [1, 1024]", b -> b.stealBatchSize(0));
        rejects("recentErrorCapacity must be in [0, 1024]", b -> b.recentErrorCapacity(-1));
        rejects("spinBeforePark must be in", b -> b.spinBeforePark(Duration.ofSeconds(2)));
        rejects("idleWindow must be in [PT0S, PT0.001S]", b -> b.idleWindow(Duration.ofMillis(2)));
        rejects("idleWindow must be in [PT0S, PT0.001S]", b -> b.idleWindow(Duration.ofNanos(-1)));
        rejects("idleWindow must not be null", b -> b.idleWindow(null));
        rejects("watchdogInterval must be in", b -> b.watchdogInterval(Duration.ZERO));
        rejects("blockingPromotionTimeout must not be null", b -> b.blockingPromotionTimeout(null));
        rejects("workerScratchCapBytes must be in [0, 1073741824]", b -> b.workerScratchCapBytes(-1));
        rejects("maxOverflowWorkers must be in [0, 56]", b -> b.maxThreads(8).maxOverflowWorkers(57));
        rejects("threadNamePrefix must not be null", b -> b.threadNamePrefix(null));
    }

    @Test
    void laneExtensionNeedsABlockingAndADefaultWorker() {
        rejects("LANE_EXTENSION needs maxThreads >= 2",
                b -> b.schedulerVariant(SchedulerVariant.LANE_EXTENSION).maxThreads(1));
        rejects("blockingWorkers must be in [1, 3]: blockingWorkers=4",
                b -> b.schedulerVariant(SchedulerVariant.LANE_EXTENSION).maxThreads(4).blockingWorkers(4));
    }

    @Test
    void defaultsAreValid() {
        PoolConfig c = PoolConfig.defaults();
        assertEquals(PoolConfig.defaultQueueCapacity(c.maxThreads()), c.queueCapacity());
        assertEquals(SchedulerVariant.GLOBAL_QUEUE, c.schedulerVariant());
        assertEquals(IdleStrategy.PARK, c.idleStrategy());
        assertEquals(TimestampMode.DISABLED, c.timestampMode());
        assertEquals(32, c.wakeCoalesceBatch());
    }

    /** The default capacity grows with the workers (4096 up to 16, 16384 at 64); a set one is kept as given. */
    @Test
    void defaultQueueCapacityScalesWithTheWorkers() {
        assertEquals(4096, PoolConfig.defaultQueueCapacity(1));
        assertEquals(4096, PoolConfig.defaultQueueCapacity(2));
        assertEquals(4096, PoolConfig.defaultQueueCapacity(16));
        assertEquals(8192, PoolConfig.defaultQueueCapacity(17));
        assertEquals(8192, PoolConfig.defaultQueueCapacity(32));
        assertEquals(16384, PoolConfig.defaultQueueCapacity(33));
        assertEquals(16384, PoolConfig.defaultQueueCapacity(64));
        for (int w = 1; w <= PoolConfig.MAX_THREADS; w++) {
            int cap = PoolConfig.defaultQueueCapacity(w);
            assertEquals(1, Integer.bitCount(cap), "a power of two at " + w);
            assertTrue(cap >= 256 * w && cap >= 4096, "at least 256 a worker and 4096 at " + w);
            assertEquals(cap, PoolConfig.builder().maxThreads(w).build().queueCapacity(), "the builder's default");
        }
        assertEquals(16384, PoolConfig.builder().maxThreads(64).build().queueCapacity());
        assertEquals(4096, PoolConfig.builder().maxThreads(64).queueCapacity(4096).build().queueCapacity(),
                "an explicit capacity is kept");
        assertEquals(64, PoolConfig.builder().queueCapacity(64).maxThreads(64).build().queueCapacity(),
                "set before maxThreads: still kept");
        assertEquals("maxThreads must be in [1, 64]: maxThreads=65",
                assertThrows(IllegalArgumentException.class, () -> PoolConfig.defaultQueueCapacity(65)).getMessage());
        rejects("queueCapacity must be", b -> b.queueCapacity(Integer.MIN_VALUE));
    }

    @Test
    void everyVariantIsAvailable() throws Exception {
        for (SchedulerVariant v : SchedulerVariant.values()) {
            try (ThreadPool pool = ThreadPool.create(PoolConfig.builder().schedulerVariant(v).maxThreads(2)
                    .daemon(true).build())) {
                assertEquals(v, pool.config().schedulerVariant());
            }
        }
        assertThrows(NullPointerException.class, () -> ThreadPool.create(null));
    }

    @Test
    void overflowWorkersShareTheSixtyFourWorkerCap() {
        rejects("maxOverflowWorkers must be in [0, 2] (maxThreads + maxOverflowWorkers <= 64, maxThreads=62)",
                b -> b.schedulerVariant(SchedulerVariant.LANE_EXTENSION).maxThreads(62).maxOverflowWorkers(3));
        rejects("maxOverflowWorkers must be in [0, 4]", b -> b.maxThreads(60).maxOverflowWorkers(-1));
        // the default is capped so that every maxThreads has a valid default
        assertEquals(4, PoolConfig.builder().maxThreads(8).build().maxOverflowWorkers());
        assertEquals(1, PoolConfig.builder().maxThreads(63).build().maxOverflowWorkers());
        assertEquals(0, PoolConfig.builder().maxThreads(64).build().maxOverflowWorkers());
        assertEquals(2, PoolConfig.builder().schedulerVariant(SchedulerVariant.LANE_EXTENSION).maxThreads(62)
                .build().maxOverflowWorkers());
    }

    @Test
    void workerSlotsAddOverflowWorkersOnlyInLaneExtension() {
        PoolConfig.Builder b = PoolConfig.builder().maxThreads(8).maxOverflowWorkers(3);
        assertEquals(8, b.schedulerVariant(SchedulerVariant.GLOBAL_QUEUE).build().workerSlots());
        assertEquals(8, b.schedulerVariant(SchedulerVariant.WORK_STEALING).build().workerSlots());
        assertEquals(11, b.schedulerVariant(SchedulerVariant.LANE_EXTENSION).build().workerSlots());
        // the resolved default counts too, and the sum reaches the 64-worker cap exactly
        assertEquals(64, PoolConfig.builder().schedulerVariant(SchedulerVariant.LANE_EXTENSION).maxThreads(62)
                .build().workerSlots());
        assertEquals(6, PoolConfig.builder().schedulerVariant(SchedulerVariant.LANE_EXTENSION).maxThreads(2)
                .build().workerSlots());
        assertEquals(2, PoolConfig.builder().schedulerVariant(SchedulerVariant.LANE_EXTENSION).maxThreads(2)
                .maxOverflowWorkers(0).build().workerSlots());
    }

    @Test
    void laneFieldsAreValidated() {
        rejects("blockingWorkers must be in [1, 7]: blockingWorkers=0",
                b -> b.schedulerVariant(SchedulerVariant.LANE_EXTENSION).maxThreads(8).blockingWorkers(0));
        rejects("blockingPromotionTimeout must be in",
                b -> b.blockingPromotionTimeout(Duration.ZERO));
        rejects("watchdogInterval must be in", b -> b.watchdogInterval(Duration.ofHours(2)));
        rejects("watchdogInterval must not be null", b -> b.watchdogInterval(null));
    }
}
