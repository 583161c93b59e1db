package dev.threadpool.internal.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.threadpool.IdleStrategy;
import dev.threadpool.PoolConfig;
import dev.threadpool.PoolStats;
import dev.threadpool.SchedulerVariant;
import dev.threadpool.internal.memory.Mem;
import dev.threadpool.internal.queue.BoundedRing;
import dev.threadpool.internal.queue.QueueEntry;
import java.lang.foreign.MemorySegment;
import java.lang.reflect.Field;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * White-box tests of the wake and idle protocol (issue 13), each driving one interleaving on purpose.
 *
 * <ul>
 *   <li>A ring cell claimed but not yet published (a producer preempted between its tail CAS and its sequence
 *       publish) must let an idle worker park instead of spinning. Driven on a real pool: the test claims a
 *       cell of the inject ring itself (reflection into the pool's ring) and never publishes it until it has
 *       seen every worker park.</li>
 * </ul>
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class WakeProtocolWhiteBoxTest {
    /** How long a worker may take to park after it runs dry; far above a 64-spin idle phase. */
    private static final Duration PARK_BOUND = Duration.ofSeconds(5);

    // =====================================================================================================
    // Claimed but unpublished ring cells
    // =====================================================================================================

    /** A pool's inject ring, and a cell in it claimed (tail CAS) by "a producer" that has not published it. */
    private static final class ClaimedCell {
        final MemorySegment seg;
        final long pos;
        final long cell;

        ClaimedCell(PoolCore core) throws ReflectiveOperationException {
            Field ringField = PoolCore.class.getDeclaredField("inject");
            ringField.setAccessible(true);
            BoundedRing ring = (BoundedRing) ringField.get(core);
            Field segField = BoundedRing.class.getDeclaredField("seg");
            segField.setAccessible(true);
            seg = (MemorySegment) segField.get(ring);
            pos = Mem.getLongVolatile(seg, BoundedRing.Layout.TAIL_OFFSET);
            assertEquals(pos, Mem.getLongVolatile(seg, BoundedRing.Layout.HEAD_OFFSET), "the ring is empty");
            cell = BoundedRing.Layout.CELLS_OFFSET + (pos & (ring.capacity() - 1)) * BoundedRing.Layout.CELL_LENGTH;
            // The producer's claim, exactly as BoundedRing.tryPush makes it; its publish comes later.
            assertTrue(Mem.casLong(seg, BoundedRing.Layout.TAIL_OFFSET, pos, pos + 1), "claimed");
        }

        /** The producer's publish, with an entry no descriptor matches (the worker drops it as stale). */
        void publishStale() {
            Mem.setLongPlain(seg, cell + BoundedRing.Layout.CELL_VALUE_OFFSET, QueueEntry.pack(0x7fff_fff0, 0));
            Mem.setLongRelease(seg, cell + BoundedRing.Layout.CELL_SEQ_OFFSET, pos + 1);
        }
    }

    private static void within(Duration bound, String what, BooleanSupplier cond, java.util.function.Supplier<String> detail) {
        long deadline = System.nanoTime() + bound.toNanos();
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                fail("not within " + bound + ": " + what + " " + detail.get());
            }
            LockSupport.parkNanos(1_000_000L);
        }
    }

    /**
     * Every worker parked; then a cell of the inject ring is claimed and left unpublished, and a task is submitted
     * behind it (its wake rouses a worker). The roused worker cannot pop (the head cell is not published), so it
     * must park again within a bounded time instead of spinning on "the ring is not empty". Then the cell is
     * published (without any signal) and the task behind it must still run: the worker's park was bounded.
     */
    @ParameterizedTest
    @EnumSource(SchedulerVariant.class)
    void idleWorkerParksWhileTheOnlyClaimedCellIsUnpublished(SchedulerVariant variant) throws Exception {
        claimedCellScenario(PoolConfig.builder().maxThreads(2).schedulerVariant(variant).daemon(true)
                .maxOverflowWorkers(0).queueCapacity(64).build(), true);
    }

    @Test
    void spinThenParkWorkerParksWhileTheOnlyClaimedCellIsUnpublished() throws Exception {
        claimedCellScenario(PoolConfig.builder().maxThreads(2).daemon(true).idleStrategy(IdleStrategy.SPIN_THEN_PARK)
                .spinBeforePark(Duration.ofMillis(1)).queueCapacity(64).build(), true);
    }

    /** BUSY_SPIN spins by design (it never parks); the task behind the claimed cell still runs once published. */
    @Test
    void busySpinWorkerRunsTheTaskOnceTheClaimedCellIsPublished() throws Exception {
        claimedCellScenario(PoolConfig.builder().maxThreads(2).daemon(true).idleStrategy(IdleStrategy.BUSY_SPIN)
                .queueCapacity(64).build(), false);
    }

    private static void claimedCellScenario(PoolConfig cfg, boolean parks) throws Exception {
        PoolCore core = new PoolCore(cfg);
        ClaimedCell claimed = null;
        boolean published = false;
        try {
            int n = cfg.maxThreads();
            if (parks) {
                within(PARK_BOUND, "every worker parked", () -> core.statsSnapshot().parkedWorkers() == n,
                        () -> core.statsSnapshot().toString());
            }
            long parksBefore = core.statsSnapshot().parks();
            claimed = new ClaimedCell(core);
            CountDownLatch ran = new CountDownLatch(1);
            assertTrue(core.submit(ran::countDown, 0, null, false, 0L), "accepted");
            if (parks) {
                // The submit's wake rouses a worker; it finds only the claimed cell at the ring's head.
                within(PARK_BOUND, "the roused worker parks again",
                        () -> {
                            PoolStats st = core.statsSnapshot();
                            return st.parks() > parksBefore && st.parkedWorkers() == n;
                        },
                        () -> "(it spins on the claimed cell) " + core.statsSnapshot());
            }
            assertEquals(1, ran.getCount(), "the task sits behind the unpublished cell");
            claimed.publishStale();
            published = true;
            assertTrue(ran.await(PARK_BOUND.toSeconds(), TimeUnit.SECONDS),
                    "the task behind the published cell runs (a bounded park, no signal needed)");
        } finally {
            if (claimed != null && !published) {
                claimed.publishStale(); // let close() drain the task even when an assertion failed
            }
            core.close();
        }
        PoolStats closed = core.statsSnapshot();
        assertEquals(closed.totalAllocBytes(), closed.totalFreeBytes(), "arena freed: " + closed);
        assertFalse(closed.accountingSkewDetected());
    }
}
