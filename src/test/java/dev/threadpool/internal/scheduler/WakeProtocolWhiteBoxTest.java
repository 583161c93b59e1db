package dev.threadpool.internal.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.threadpool.IdleStrategy;
import dev.threadpool.Lane;
import dev.threadpool.PoolConfig;
import dev.threadpool.PoolStats;
import dev.threadpool.QueueKind;
import dev.threadpool.SchedulerVariant;
import dev.threadpool.internal.memory.Mem;
import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.BoundedRing;
import dev.threadpool.internal.queue.QueueEntry;
import dev.threadpool.internal.stats.PoolCounters;
import dev.threadpool.internal.stats.QueueDepthGauge;
import dev.threadpool.internal.stats.RecentErrors;
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
 *   <li>The pass-on rule: a worker that stops searching and takes an entry other than the one a coalesced
 *       submit counted on it must wake a parked worker for what is left. Driven step by step on the real
 *       schedulers from one thread, with unstarted worker threads (their unpark is a no-op): the idle mask
 *       tells who was woken.</li>
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

    private static final long E1 = QueueEntry.pack(1, 1);
    private static final long C = QueueEntry.pack(1, 2);

    /** Worker thread objects for a scheduler driven from the test thread; never started. */
    private static WorkerThread[] workers(ParkingLot parking, int n) {
        WorkerThread[] w = new WorkerThread[n];
        for (int i = 0; i < n; i++) {
            w[i] = new WorkerThread(null, i, "white-box-" + i, true, false, false);
            parking.register(i, w[i]);
        }
        return w;
    }

    // =====================================================================================================
    // The pass-on rule
    // =====================================================================================================

    /**
     * WORK_STEALING, three workers: 0 is searching, 1 is parked, 2 is busy. Worker 2 forks C into its LIFO slot;
     * the submit sees worker 0 searching and coalesces. Worker 0's spin saw work, it stops searching and takes
     * the inject entry E1 (the inject refill comes before stealing): C is still queued and worker 1 still
     * asleep. Worker 0 may now block in E1 for as long as it likes, so it must wake worker 1 for C.
     */
    @ParameterizedTest
    @EnumSource(QueueKind.class)
    void workStealingSearcherThatTakesAnotherEntryWakesAParkedWorker(QueueKind kind) {
        PoolConfig cfg = PoolConfig.builder().maxThreads(3).schedulerVariant(SchedulerVariant.WORK_STEALING)
                .queueKind(kind).queueCapacity(64).wakeCoalesceBatch(4096).build();
        PoolMemory mem = PoolMemory.createGcManaged();
        BoundedRing inject = new BoundedRing(mem, "inject", cfg.queueCapacity());
        ParkingLot parking = new ParkingLot(mem, 3);
        WorkStealingScheduler s = new WorkStealingScheduler(mem, cfg, inject, parking, new PoolCounters(mem, 3),
                new SubmitterRegistry(mem), new QueueDepthGauge(mem), new RecentErrors(16), true);
        WorkerThread[] w = workers(parking, 3);

        assertTrue(inject.tryPush(E1)); // queued already; worker 0 will take it
        s.searching(0, true); // worker 0 found its own queues empty: it searches
        parking.announce(1); // worker 1 is parked

        assertTrue(s.tryEnqueue(w[2], C, Lane.DEFAULT), "worker 2 forks C into its LIFO slot");
        s.signalWork(1, Lane.DEFAULT);
        assertEquals(0b010, parking.idleMask(), "precondition: the fork's wake was coalesced on the searcher");

        s.searching(0, false); // its spin saw work
        assertEquals(E1, s.next(w[0]), "the searcher takes the inject entry, not C");
        assertEquals(0, parking.idleMask() & 0b010,
                "C waits in worker 2's LIFO slot while worker 1 sleeps: the searcher did not pass the wake on");
        assertEquals(C, s.next(w[1]), "the woken worker finds C");
    }

    /** As above, but the searcher's spin did not see the work: it announced, re-checked, and found it. */
    @Test
    void workStealingSearcherThatFindsWorkOnItsParkRecheckWakesAParkedWorker() {
        PoolConfig cfg = PoolConfig.builder().maxThreads(3).schedulerVariant(SchedulerVariant.WORK_STEALING)
                .queueCapacity(64).wakeCoalesceBatch(4096).build();
        PoolMemory mem = PoolMemory.createGcManaged();
        BoundedRing inject = new BoundedRing(mem, "inject", cfg.queueCapacity());
        ParkingLot parking = new ParkingLot(mem, 3);
        WorkStealingScheduler s = new WorkStealingScheduler(mem, cfg, inject, parking, new PoolCounters(mem, 3),
                new SubmitterRegistry(mem), new QueueDepthGauge(mem), new RecentErrors(16), true);
        WorkerThread[] w = workers(parking, 3);

        assertTrue(inject.tryPush(E1));
        s.searching(0, true);
        parking.announce(1);
        parking.announce(0); // Idle.idle: announce, then stop searching, then re-check
        assertTrue(s.tryEnqueue(w[2], C, Lane.DEFAULT));
        s.signalWork(1, Lane.DEFAULT); // sees worker 0 still searching: coalesced
        assertEquals(0b011, parking.idleMask(), "precondition: coalesced");
        s.searching(0, false);
        assertTrue(s.hasWork(0), "the re-check sees work");
        assertTrue(parking.retract(0));
        assertEquals(E1, s.next(w[0]));
        assertEquals(0, parking.idleMask() & 0b010, "the searcher did not pass the wake on");
    }

    /**
     * LANE_EXTENSION, three workers: 0 is the blocking lane's worker (searching), 1 a parked default worker,
     * 2 a busy default worker that forks default-lane C into its LIFO slot; the fork coalesces on worker 0's
     * search. Worker 0 then takes a BLOCKING entry from its own ring first and may block in it for seconds.
     */
    @Test
    void blockingSearcherThatTakesABlockingEntryWakesAParkedDefaultWorker() {
        PoolConfig cfg = PoolConfig.builder().maxThreads(3).schedulerVariant(SchedulerVariant.LANE_EXTENSION)
                .blockingWorkers(1).maxOverflowWorkers(0).queueCapacity(64).wakeCoalesceBatch(4096).build();
        PoolMemory mem = PoolMemory.createGcManaged();
        BoundedRing inject = new BoundedRing(mem, "inject", cfg.queueCapacity());
        ParkingLot parking = new ParkingLot(mem, 3);
        LaneScheduler s = new LaneScheduler(mem, cfg, inject, parking, new PoolCounters(mem, 3),
                new SubmitterRegistry(mem), new QueueDepthGauge(mem), new RecentErrors(16));
        WorkerThread[] w = workers(parking, 3);
        long blockingEntry = QueueEntry.pack(1, 1);

        assertTrue(s.tryEnqueue(null, blockingEntry, Lane.BLOCKING)); // queued in the blocking ring
        s.searching(0, true);
        parking.announce(1);
        assertTrue(s.tryEnqueue(w[2], C, Lane.DEFAULT));
        s.signalWork(1, Lane.DEFAULT);
        assertEquals(0b010, parking.idleMask(), "precondition: the default-lane wake was coalesced on worker 0");

        s.searching(0, false);
        assertEquals(blockingEntry, s.next(w[0]), "the blocking worker takes its own lane first");
        assertEquals(0, parking.idleMask() & 0b010,
                "C waits while the default worker sleeps: the blocking searcher absorbed its wake");
        assertEquals(C, s.next(w[1]));
    }

    /** The pass-on costs no wake when nothing is left: the searcher took the only entry. */
    @Test
    void searcherThatTakesTheOnlyEntryWakesNobody() {
        PoolConfig cfg = PoolConfig.builder().maxThreads(3).schedulerVariant(SchedulerVariant.WORK_STEALING)
                .queueCapacity(64).wakeCoalesceBatch(4096).build();
        PoolMemory mem = PoolMemory.createGcManaged();
        BoundedRing inject = new BoundedRing(mem, "inject", cfg.queueCapacity());
        ParkingLot parking = new ParkingLot(mem, 3);
        WorkStealingScheduler s = new WorkStealingScheduler(mem, cfg, inject, parking, new PoolCounters(mem, 3),
                new SubmitterRegistry(mem), new QueueDepthGauge(mem), new RecentErrors(16), true);
        WorkerThread[] w = workers(parking, 3);

        s.searching(0, true);
        parking.announce(1);
        assertTrue(s.tryEnqueue(w[2], C, Lane.DEFAULT));
        s.signalWork(1, Lane.DEFAULT);
        s.searching(0, false);
        assertEquals(C, s.next(w[0]), "the searcher steals C from worker 2's LIFO slot");
        assertEquals(0b010, parking.idleMask(), "nothing is left: worker 1 sleeps on");
    }

    // =====================================================================================================
    // Claimed but unpublished ring cells
    // =====================================================================================================

    /** A pool's inject ring, and a cell in it claimed (tail CAS) by "a producer" that has not published it. */
    private static final class ClaimedCell {
        final MemorySegment seg;
        final long pos;
        final long cell;

        ClaimedCell(PoolCore core) throws ReflectiveOperationException {
            Object topology = core.schedulerForTest();
            if (topology instanceof LaneScheduler) {
                Field defaults = LaneScheduler.class.getDeclaredField("defaults");
                defaults.setAccessible(true);
                topology = defaults.get(topology);
            }
            Field ringField = topology.getClass().getDeclaredField("inject");
            ringField.setAccessible(true);
            BoundedRing ring = (BoundedRing) ringField.get(topology);
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
            // waitable: it takes a descriptor, so its entry goes to the inject ring, behind the claimed cell (a
            // detached outside submit on GLOBAL_QUEUE would go to the carried ring instead)
            core.submitWaitable(ran::countDown, 0);
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
