package dev.threadpool.internal.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.PoolConfig;
import dev.threadpool.PoolStats;
import dev.threadpool.TestSupport;
import dev.threadpool.internal.stats.PoolCounters;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * White-box: fakes a counter disagreement (a task counted started that no worker runs) and checks that
 * {@code accountingSkewDetected} needs two consecutive snapshots without progress, and clears on progress.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class AccountingSkewTest {

    @Test
    void activeTaskThatNeverFinishesIsReportedOnTheSecondSnapshot() throws Exception {
        PoolCore core = new PoolCore(PoolConfig.builder().maxThreads(2).daemon(true).build());
        try {
            TestSupport.eventually("both workers parked", () -> core.statsSnapshot().parkedWorkers() == 2);
            PoolStats healthy = core.statsSnapshot();
            assertFalse(healthy.accountingSkewDetected(), "a healthy idle pool: " + healthy);

            // Worker 0 is parked and runs nothing, so this owner-only word has no other writer right now.
            core.countersForTest().increment(0, PoolCounters.STARTED);
            PoolStats first = core.statsSnapshot();
            assertEquals(1, first.activeTasks(), "the fake task looks active: " + first);
            assertFalse(first.accountingSkewDetected(), "one snapshot is not enough (it may be mid-update)");
            PoolStats second = core.statsSnapshot();
            assertTrue(second.accountingSkewDetected(), "active with every worker idle, twice, no progress: " + second);
            assertTrue(core.statsSnapshot().accountingSkewDetected(), "and it stays while nothing moves");

            // Progress (a finish) resets the comparison even though an invariant is still broken
            // (now started > submitted: queuedTasks < 0).
            core.countersForTest().increment(0, PoolCounters.COMPLETED);
            PoolStats progressed = core.statsSnapshot();
            assertTrue(progressed.queuedTasks() < 0, "still inconsistent: " + progressed);
            assertFalse(progressed.accountingSkewDetected(), "counters moved since the last snapshot");
            assertTrue(core.statsSnapshot().accountingSkewDetected(), "no progress again: reported");
        } finally {
            core.close();
        }
        PoolStats closed = core.statsSnapshot();
        assertEquals(0, closed.liveBytes(), "the arena is gone: " + closed);
        assertEquals(closed.totalAllocBytes(), closed.totalFreeBytes());
    }
}
