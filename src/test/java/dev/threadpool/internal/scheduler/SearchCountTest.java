package dev.threadpool.internal.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.PoolConfig;
import dev.threadpool.QueueKind;
import dev.threadpool.SchedulerVariant;
import dev.threadpool.WaitGroup;
import java.lang.reflect.Field;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The searching count ({@code WakeCoalescer}'s SEARCHING) is balanced: every search's +1 has its -1 (found work,
 * or the announcement before the park), so a pool that has gone idle counts nobody searching. A leaked +1
 * strands tasks: every later submit into the idle pool coalesces on a searcher that does not exist, and only
 * every {@code wakeCoalesceBatch}-th wakes a worker. Bursts from outside, children submitted by workers,
 * blocking-lane entries and waitables, each round waited for (bounded), and every 50 rounds the idle pool's
 * count read; on every variant.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SearchCountTest {
    private static final int WORKERS = 4;
    private static final int ROUNDS = 300;

    static Stream<PoolConfig> configs() {
        return Stream.of(
                PoolConfig.builder().maxThreads(WORKERS).schedulerVariant(SchedulerVariant.GLOBAL_QUEUE).build(),
                PoolConfig.builder().maxThreads(WORKERS).schedulerVariant(SchedulerVariant.WORK_STEALING).build(),
                PoolConfig.builder().maxThreads(WORKERS).schedulerVariant(SchedulerVariant.WORK_STEALING)
                        .queueKind(QueueKind.CHASE_LEV).build(),
                PoolConfig.builder().maxThreads(WORKERS).schedulerVariant(SchedulerVariant.LANE_EXTENSION)
                        .blockingWorkers(1).build());
    }

    @ParameterizedTest
    @MethodSource("configs")
    void anIdlePoolCountsNobodySearching(PoolConfig config) throws Exception {
        PoolCore core = new PoolCore(config);
        try {
            AtomicLong ran = new AtomicLong();
            boolean lanes = config.schedulerVariant() == SchedulerVariant.LANE_EXTENSION;
            for (int r = 0; r < ROUNDS; r++) {
                WaitGroup g = new WaitGroup();
                int burst = 1 + r % 8;
                for (int i = 0; i < burst; i++) {
                    int flags = lanes && (i & 3) == 3 ? DescriptorTable.FLAG_LANE_BLOCKING : 0;
                    core.submit(() -> {
                        ran.incrementAndGet();
                        core.submit(ran::incrementAndGet, 0, g, WaitMode.UNBOUNDED, Long.MAX_VALUE); // a child
                    }, flags, g, WaitMode.UNBOUNDED, Long.MAX_VALUE);
                }
                if (r % 16 == 0) {
                    long h = core.submitWaitable(ran::incrementAndGet, 0);
                    core.await(h, Long.MAX_VALUE);
                }
                assertTrue(g.await(Duration.ofSeconds(10)), "round " + r + " ran (a stall: a leaked searching count?)");
                if (r % 50 == 49) {
                    awaitIdleAndNobodySearching(core, "after round " + r);
                }
            }
            assertTrue(ran.get() >= 2L * ROUNDS, "tasks ran: " + ran.get());
        } finally {
            core.close();
        }
    }

    /** Bounded: every base worker announced (parked or about to) and the searching count back at 0. */
    private static void awaitIdleAndNobodySearching(PoolCore core, String when) throws Exception {
        Field f = PoolCore.class.getDeclaredField("parking");
        f.setAccessible(true);
        ParkingLot parking = (ParkingLot) f.get(core);
        WakeCoalescer wake = core.schedulerForTest().wakeCoalescer();
        long all = (1L << WORKERS) - 1;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while ((parking.idleMask() & all) != all || wake.searchers() != 0) {
            if (System.nanoTime() - deadline > 0) {
                assertEquals(0, wake.searchers(), when + ": workers counted as searching in an idle pool (idle mask "
                        + Long.toBinaryString(parking.idleMask()) + ")");
                assertEquals(all, parking.idleMask() & all, when + ": every worker idle");
            }
            LockSupport.parkNanos(1_000_000L);
        }
    }
}
