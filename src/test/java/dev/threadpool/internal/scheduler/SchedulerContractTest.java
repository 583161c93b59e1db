package dev.threadpool.internal.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.threadpool.Lane;
import dev.threadpool.PoolConfig;
import dev.threadpool.QueueKind;
import dev.threadpool.SchedulerVariant;
import dev.threadpool.TestSupport;
import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.BoundedRing;
import dev.threadpool.internal.queue.QueueEntry;
import dev.threadpool.internal.stats.PoolCounters;
import dev.threadpool.internal.stats.QueueDepthGauge;
import dev.threadpool.internal.stats.RecentErrors;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The contract written in {@link Scheduler}'s javadoc, asserted on every topology {@link Scheduler#create}
 * builds (GLOBAL_QUEUE, WORK_STEALING with the RING and with the Chase–Lev local queue, LANE_EXTENSION), at the
 * smallest capacity (2: every ring and local queue fills after two entries, so the full and wrap paths run)
 * and at a large one. The test talks to the scheduler only through the {@link Scheduler} interface, as the
 * pool does: a topology that needs the test to know which one it is has a leaking seam.
 *
 * <p>The scheduler is driven the way the pool drives it, without a pool: worker {@code i} is an unstarted
 * {@link WorkerThread} object whose owner-only calls ({@code next}, {@code searching}, a worker's
 * {@code tryEnqueue}) are made by exactly one thread; parking is the real {@link ParkingLot}, whose idle mask
 * shows who was woken (an unpark of an unstarted thread does nothing). Entries are distinct positive longs:
 * a scheduler moves entries and never decodes them.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SchedulerContractTest {
    private static final int WORKERS = 3;
    /** LANE_EXTENSION: worker 0 is the blocking lane's; 1 and 2 are default workers. */
    private static final int BLOCKING_WORKERS = 1;

    enum Topology {
        GQ(SchedulerVariant.GLOBAL_QUEUE, QueueKind.RING),
        WS_RING(SchedulerVariant.WORK_STEALING, QueueKind.RING),
        WS_CHASE_LEV(SchedulerVariant.WORK_STEALING, QueueKind.CHASE_LEV),
        LANE(SchedulerVariant.LANE_EXTENSION, QueueKind.RING);

        final SchedulerVariant variant;
        final QueueKind kind;

        Topology(SchedulerVariant variant, QueueKind kind) {
            this.variant = variant;
            this.kind = kind;
        }
    }

    static Stream<Topology> topologiesOnly() {
        return Stream.of(Topology.values());
    }

    static Stream<Arguments> topologies() {
        List<Arguments> out = new ArrayList<>();
        for (Topology t : Topology.values()) {
            out.add(Arguments.of(t, 2));
            out.add(Arguments.of(t, 4096));
        }
        return out.stream();
    }

    /** One scheduler with its parts, as PoolCore wires them. */
    private static final class Rig {
        final PoolConfig config;
        final ParkingLot parking;
        final SubmitterRegistry submitters;
        final PoolCounters counters;
        final Scheduler s;
        final WorkerThread[] w;
        final int capacity;
        private long nextEntry = 100;

        Rig(Topology t, int capacity) {
            this.capacity = capacity;
            this.config = PoolConfig.builder().maxThreads(WORKERS).schedulerVariant(t.variant).queueKind(t.kind)
                    .queueCapacity(capacity).localQueueCapacity(Math.min(capacity, 256)).blockingWorkers(
                            t.variant == SchedulerVariant.LANE_EXTENSION ? BLOCKING_WORKERS : 0)
                    .maxOverflowWorkers(0).wakeCoalesceBatch(4096).build();
            PoolMemory mem = PoolMemory.createGcManaged();
            BoundedRing inject = new BoundedRing(mem, "inject", capacity); // as PoolCore
            this.parking = new ParkingLot(mem, config.workerSlots());
            this.submitters = new SubmitterRegistry(mem);
            this.counters = new PoolCounters(mem, config.workerSlots());
            this.s = Scheduler.create(mem, config, inject, parking, counters, submitters, new QueueDepthGauge(mem),
                    new RecentErrors(16));
            this.w = new WorkerThread[config.workerSlots()];
            for (int i = 0; i < w.length; i++) {
                w[i] = new WorkerThread(null, i, "contract-" + i, true, false, false);
                parking.register(i, w[i]);
            }
        }

        long entry() {
            return nextEntry++;
        }

        boolean lanes() {
            return config.schedulerVariant() == SchedulerVariant.LANE_EXTENSION;
        }

        /** Whether worker {@code i} may take an entry of {@code lane} (Scheduler: "a worker that may take it"). */
        boolean mayTake(int i, Lane lane) {
            return lane == Lane.DEFAULT || i < BLOCKING_WORKERS || config.cpuHelpsBlocking();
        }

        void parkAll() {
            for (int i = 0; i < w.length; i++) {
                parking.announce(i);
            }
        }

        /** Everything still queued, through the sweep's door (any thread). */
        List<Long> drainAll() {
            List<Long> out = new ArrayList<>();
            for (long e; (e = s.drainOne(new Object[2])) != QueueEntry.EMPTY; ) {
                out.add(e);
            }
            return out;
        }
    }

    private static List<Lane> lanesOf(Rig r) {
        return r.lanes() ? List.of(Lane.DEFAULT, Lane.BLOCKING) : List.of(Lane.DEFAULT);
    }

    // =====================================================================================================
    // Empty
    // =====================================================================================================

    @ParameterizedTest(name = "{0} capacity {1}")
    @MethodSource("topologies")
    void anEmptySchedulerHasNothingForAnyone(Topology t, int capacity) {
        Rig r = new Rig(t, capacity);
        for (int i = 0; i < r.w.length; i++) {
            assertFalse(r.s.hasWork(i), "hasWork(" + i + ") on an empty scheduler");
            assertFalse(r.s.pendingPush(i), "pendingPush(" + i + ") with nothing claimed");
            assertEquals(QueueEntry.EMPTY, r.s.next(r.w[i]), "next of worker " + i);
            assertEquals(0, r.s.localQueueLength(i));
        }
        assertEquals(QueueEntry.EMPTY, r.s.drainOne(new Object[2]));
        for (Lane lane : Lane.values()) {
            assertEquals(0, r.s.depth(lane), "depth(" + lane + ")");
        }
    }

    // =====================================================================================================
    // Carried tasks (every topology: a ring of their own, which WORK_STEALING's workers pop directly)
    // =====================================================================================================

    @ParameterizedTest(name = "{0} capacity {1}")
    @MethodSource("topologies")
    void carriedTasksComeBackOnceWithTheirReferences(Topology t, int capacity) {
        Rig r = new Rig(t, capacity);
        assertTrue(r.s.carriesTasks());
        assertEquals(t.variant == SchedulerVariant.WORK_STEALING, r.s.hasSubmitterQueues(),
                "only WORK_STEALING gives registered submitters queues of their own (they keep descriptors)");
        // One carried task alone: every worker may take it (default lane), so every park re-check sees it.
        Runnable lone = () -> { };
        assertTrue(r.s.tryEnqueueCarried(lone, null));
        for (int i = 0; i < r.w.length; i++) {
            assertTrue(r.s.hasWork(i), "hasWork(" + i + ") sees a carried task");
        }
        assertEquals(1, r.s.depth(Lane.DEFAULT));
        assertEquals(0, r.s.depth(Lane.BLOCKING), "carried tasks are of the default lane");
        WorkerThread last = r.w[r.w.length - 1];
        assertEquals(QueueEntry.CARRIED, r.s.next(last), "the first look of a worker with nothing else queued");
        assertSame(lone, last.taken[0]);
        last.taken[0] = null;
        for (int i = 0; i < r.w.length; i++) {
            assertFalse(r.s.hasWork(i), "hasWork(" + i + ") after the pop");
        }
        Runnable[] tasks = new Runnable[capacity];
        dev.threadpool.WaitGroup group = new dev.threadpool.WaitGroup();
        List<Long> entries = new ArrayList<>();
        for (int k = 0; k < capacity; k++) {
            tasks[k] = distinctTask(k);
            assertTrue(r.s.tryEnqueueCarried(tasks[k], k % 2 == 0 ? group : null));
            long e = r.entry();
            assertTrue(r.s.tryEnqueue(null, e, Lane.DEFAULT), "the descriptors' ring has a cell per descriptor");
            entries.add(e);
        }
        assertFalse(r.s.tryEnqueueCarried(() -> { }, null), "the carried ring is full: refused");
        assertEquals(2L * capacity, r.s.depth(Lane.DEFAULT), "both rings count in the depth");
        Object[] taken = new Object[2];
        List<Long> out = new ArrayList<>();
        java.util.Map<Object, Integer> index = new java.util.IdentityHashMap<>();
        for (int k = 0; k < capacity; k++) {
            index.put(tasks[k], k);
        }
        boolean[] seen = new boolean[capacity];
        int carriedSeen = 0;
        for (int k = 0; k < 2 * capacity; k++) {
            WorkerThread w = r.w[k % r.w.length];
            // half through a worker's next (into its own pair, alternating rings, claiming batches from a deep
            // carried ring and taking its peers'), half through the sweep's door
            boolean viaWorker = k % 2 == 0;
            long e = viaWorker ? r.s.next(w) : r.s.drainOne(taken);
            Object[] got = viaWorker ? w.taken : taken;
            assertNotEquals(QueueEntry.EMPTY, e, "pop " + k + " of " + 2 * capacity);
            if (e != QueueEntry.CARRIED) {
                out.add(e);
                continue;
            }
            carriedSeen++;
            Integer c = index.get(got[0]);
            assertNotNull(c, "a carried task of ours handed over");
            assertFalse(seen[c], "carried task " + c + " handed over once");
            seen[c] = true;
            assertSame(c % 2 == 0 ? group : null, got[1], "group of carried task " + c);
            got[0] = null;
            got[1] = null;
        }
        assertEquals(capacity, carriedSeen, "every carried task once");
        assertSameEntries(entries, out);
        assertEquals(QueueEntry.EMPTY, r.s.drainOne(taken));
        assertEquals(0, r.s.depth(Lane.DEFAULT));
        assertTrue(r.s.tryEnqueueCarried(tasks[0], null), "room again after the pops");
    }

    /**
     * CarriedBatches through the topology: from a deep carried ring a worker's next claims a batch (it runs the
     * first, the rest are counted in the depth and seen by every park re-check), the other workers take what is
     * left of it once the ring is empty, the owner takes its own first, and the sweep's door drains a batch; a
     * shallow ring is popped one at a time (nothing left in any batch).
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("topologiesOnly")
    void aDeepCarriedRingIsClaimedInBatchesThatEveryoneCanTake(Topology t) {
        int batch = dev.threadpool.internal.queue.CarriedBatches.MAX_BATCH;
        Rig r = new Rig(t, 64);
        int owner = r.w.length - 1; // a default-lane worker on every topology (LANE_EXTENSION reserves the first)
        WorkerThread o = r.w[owner];
        Runnable[] tasks = claimOneBatch(r, o);
        for (int k = batch; k < tasks.length; k++) { // another worker drains the ring: one at a time (shallow)
            takeCarried(r, r.w[owner - 1], tasks[k], "the ring, in order, after the claimed run");
        }
        for (int i = 0; i < r.w.length; i++) {
            assertTrue(r.s.hasWork(i), "hasWork(" + i + ") sees the claimed batch");
        }
        takeCarried(r, o, tasks[1], "the owner takes its own batch first");
        long steals = r.counters.get(owner - 1, PoolCounters.STEALS);
        takeCarried(r, r.w[owner - 1], tasks[2], "a worker with nothing else takes from a peer's batch");
        assertEquals(steals + 1, r.counters.get(owner - 1, PoolCounters.STEALS), "counted as the thief's steal");
        Object[] taken = new Object[2];
        assertEquals(QueueEntry.CARRIED, r.s.drainOne(taken), "the sweep drains a batch");
        assertSame(tasks[3], taken[0]);
        for (int k = 4; k < batch; k++) {
            takeCarried(r, o, tasks[k], "the rest of the owner's batch");
        }
        assertEquals(0, r.s.depth(Lane.DEFAULT));
        for (int i = 0; i < r.w.length; i++) {
            assertFalse(r.s.hasWork(i), "hasWork(" + i + ") with every batch empty");
            assertEquals(QueueEntry.EMPTY, r.s.next(r.w[i]));
        }
        assertEquals(QueueEntry.EMPTY, r.s.drainOne(taken));
        // Shallow: fewer than 2 * MAX_BATCH ready: one at a time, nothing left claimed.
        for (int k = 0; k < 2 * batch - 1; k++) {
            assertTrue(r.s.tryEnqueueCarried(tasks[k], null));
        }
        takeCarried(r, o, tasks[0], "a shallow ring: one pop");
        assertEquals(2L * batch - 2, r.s.depth(Lane.DEFAULT));
        takeCarried(r, r.w[owner - 1], tasks[1], "the ring's next, not a batch");
        while (r.s.drainOne(taken) != QueueEntry.EMPTY) {
            taken[0] = null;
        }
    }

    /**
     * LANE_EXTENSION's reserved blocking worker claims a batch as every worker does, and runs the rest of it before
     * a blocking entry that arrives meanwhile: no claimed default-lane task waits behind a blocking task, and the
     * blocking entry waits behind at most one batch. A default worker may still steal from that batch meanwhile.
     */
    @Test
    void aReservedWorkerRunsItsBatchBeforeItsOwnLane() {
        int batch = dev.threadpool.internal.queue.CarriedBatches.MAX_BATCH;
        Rig r = new Rig(Topology.LANE, 64);
        WorkerThread reserved = r.w[0]; // BLOCKING_WORKERS = 1
        WorkerThread other = r.w[1];
        Runnable[] tasks = claimOneBatch(r, reserved);
        long blockingEntry = r.entry();
        assertTrue(r.s.tryEnqueue(null, blockingEntry, Lane.BLOCKING));
        takeCarried(r, reserved, tasks[1], "its batch before its own lane");
        for (int k = batch; k < tasks.length; k++) { // the default worker drains the ring meanwhile
            takeCarried(r, other, tasks[k], "the ring, in order, after the claimed run");
        }
        takeCarried(r, other, tasks[2], "a default worker with nothing else steals from the reserved worker's batch");
        for (int k = 3; k < batch; k++) {
            takeCarried(r, reserved, tasks[k], "the rest of its batch, still before the blocking entry");
        }
        assertEquals(blockingEntry, r.s.next(reserved), "then the blocking entry");
        assertEquals(0, r.s.depth(Lane.DEFAULT));
        assertEquals(0, r.s.depth(Lane.BLOCKING));
        for (int i = 0; i < r.w.length; i++) {
            assertEquals(QueueEntry.EMPTY, r.s.next(r.w[i]));
        }
    }

    /**
     * Queues {@code 2 * MAX_BATCH} distinct carried tasks (a deep ring) and has {@code w} claim a batch of them: it
     * is handed the first, and the rest of its batch still counts as queued. Returns the tasks in queue order.
     */
    private static Runnable[] claimOneBatch(Rig r, WorkerThread w) {
        int batch = dev.threadpool.internal.queue.CarriedBatches.MAX_BATCH;
        Runnable[] tasks = new Runnable[2 * batch];
        for (int k = 0; k < tasks.length; k++) {
            tasks[k] = distinctTask(k);
            assertTrue(r.s.tryEnqueueCarried(tasks[k], null));
        }
        takeCarried(r, w, tasks[0], "the worker claims a batch and runs its first");
        assertEquals(2L * batch - 1, r.s.depth(Lane.DEFAULT), "the claimed rest still counts as queued");
        return tasks;
    }

    /** A task object of its own (a lambda that captures nothing is one shared instance, useless to assertSame). */
    private static Runnable distinctTask(int id) {
        return () -> {
            if (id < 0) {
                throw new AssertionError(id);
            }
        };
    }

    /** {@code r.s.next(w)} hands {@code w} the carried task {@code expected}. */
    private static void takeCarried(Rig r, WorkerThread w, Runnable expected, String what) {
        assertEquals(QueueEntry.CARRIED, r.s.next(w), what);
        assertSame(expected, w.taken[0], what);
        w.taken[0] = null;
        w.taken[1] = null;
    }

    // =====================================================================================================
    // Exactly once, from every origin, and depth counts every entry of its lane
    // =====================================================================================================

    /**
     * Entries from every origin (an external thread, a worker, a registered submitter, a batch) in every lane:
     * depth counts each in its lane while queued, hasWork says yes to exactly the workers that may take it, and
     * each comes back exactly once through next() of a worker that may take it or through drainOne().
     */
    @ParameterizedTest(name = "{0} capacity {1}")
    @MethodSource("topologies")
    void everyEntryComesBackExactlyOnceAndDepthCountsIt(Topology t, int capacity) {
        Rig r = new Rig(t, capacity);
        int slot = r.submitters.claim();
        for (Lane lane : lanesOf(r)) {
            List<Long> in = new ArrayList<>();
            // one of each origin; at capacity 2 the inject ring holds two, so push what fits
            long ext = r.entry();
            assertTrue(r.s.tryEnqueue(null, ext, lane), "external push into an empty scheduler");
            in.add(ext);
            long fromWorker = r.entry();
            if (r.s.tryEnqueue(r.w[2], fromWorker, lane)) {
                in.add(fromWorker);
            }
            long fromSubmitter = r.entry();
            if (lane == Lane.DEFAULT && r.s.tryEnqueueFromSubmitter(slot, fromSubmitter)) {
                in.add(fromSubmitter);
            }
            long[] batch = {r.entry(), r.entry(), r.entry()};
            int took = r.s.tryEnqueueMany(null, batch, 0, batch.length, lane);
            assertTrue(took >= 0 && took <= batch.length, "tryEnqueueMany returns how many it took: " + took);
            for (int k = 0; k < took; k++) {
                in.add(batch[k]);
            }
            r.s.signalWork(in.size(), lane);

            assertEquals(in.size(), r.s.depth(lane), "depth(" + lane + ") counts every queued entry " + in);
            for (Lane other : Lane.values()) {
                if (other != lane) {
                    assertEquals(0, r.s.depth(other), "depth(" + other + ") while only " + lane + " has entries");
                }
            }
            for (int i = 0; i < r.w.length; i++) {
                assertEquals(r.mayTake(i, lane), r.s.hasWork(i),
                        "hasWork(" + i + ") with " + lane + " entries queued (may take: " + r.mayTake(i, lane) + ")");
            }

            List<Long> out = new ArrayList<>();
            // each worker that may take the lane takes one, then the sweep drains the rest
            for (int i = 0; i < r.w.length; i++) {
                long e = r.s.next(r.w[i]);
                if (!r.mayTake(i, lane)) {
                    assertEquals(QueueEntry.EMPTY, e, "worker " + i + " took a " + lane + " entry it may not take");
                } else if (e != QueueEntry.EMPTY) {
                    out.add(e);
                }
            }
            out.addAll(r.drainAll());
            assertSameEntries(in, out);
            assertEquals(0, r.s.depth(lane), "depth after everything was taken");
            for (int i = 0; i < r.w.length; i++) {
                assertFalse(r.s.hasWork(i), "hasWork(" + i + ") after everything was taken");
            }
        }
    }

    /**
     * A full scheduler says no instead of dropping, at every origin; what it took still comes back once. The
     * one unbounded queue is the Chase–Lev deque, which grows from the arena (in a pool the descriptor table
     * bounds it: no more than queueCapacity entries exist): there the worker pushes a fixed number past its
     * first capacity and every one must come back.
     */
    @ParameterizedTest(name = "{0} capacity {1}")
    @MethodSource("topologies")
    void aFullSchedulerRefusesAndLosesNothing(Topology t, int capacity) {
        Rig r = new Rig(t, capacity);
        int slot = r.submitters.claim();
        List<Long> in = new ArrayList<>();
        int limit = 16 * capacity + 1024; // more than every queue together can hold
        for (int origin = 0; origin < 3; origin++) {
            int pushed = 0;
            for (;;) {
                long e = r.entry();
                boolean ok = switch (origin) {
                    case 0 -> r.s.tryEnqueue(null, e, Lane.DEFAULT);
                    case 1 -> r.s.tryEnqueue(r.w[1], e, Lane.DEFAULT);
                    default -> r.s.tryEnqueueFromSubmitter(slot, e);
                };
                if (!ok) {
                    assertTrue(origin != 1 || t.kind != QueueKind.CHASE_LEV,
                            "the Chase-Lev deque grows instead of refusing: refused after " + pushed);
                    break;
                }
                in.add(e);
                pushed++;
                if (origin == 1 && t.kind == QueueKind.CHASE_LEV && pushed == 2 * capacity + 64) {
                    break; // grown at least once
                }
                if (pushed > limit) {
                    fail("origin " + origin + " accepted " + pushed + " entries: nothing bounds it");
                }
            }
        }
        assertTrue(in.size() >= capacity, "the inject ring alone holds " + capacity + ": took " + in.size());
        assertEquals(in.size(), r.s.depth(Lane.DEFAULT), "depth counts every queued entry");
        assertSameEntries(in, r.drainAll());
    }

    /** A closing submitter's queue is moved where workers find it: nothing is lost. */
    @ParameterizedTest(name = "{0} capacity {1}")
    @MethodSource("topologies")
    void closeSubmitterLosesNothing(Topology t, int capacity) {
        Rig r = new Rig(t, capacity);
        int slot = r.submitters.claim();
        List<Long> in = new ArrayList<>();
        for (int k = 0; k < 2; k++) {
            long e = r.entry();
            if (r.s.tryEnqueueFromSubmitter(slot, e)) {
                in.add(e);
            }
        }
        r.s.closeSubmitter(slot);
        r.submitters.release(slot);
        assertEquals(in.size(), r.s.depth(Lane.DEFAULT), "the moved entries are still counted");
        List<Long> out = new ArrayList<>();
        for (long e; (e = r.s.next(r.w[1])) != QueueEntry.EMPTY; ) {
            out.add(e);
        }
        assertSameEntries(in, out);
    }

    // =====================================================================================================
    // Wakes
    // =====================================================================================================

    /**
     * [signalWork never leaves an entry with every worker that may take it parked]: with every worker parked,
     * an external submit in each lane (and a submitter's) wakes a worker that may take it, and that worker's
     * next() finds it.
     */
    @ParameterizedTest(name = "{0} capacity {1}")
    @MethodSource("topologies")
    void signalWorkWakesAWorkerThatMayTakeTheEntry(Topology t, int capacity) {
        Rig r = new Rig(t, capacity);
        int slot = r.submitters.claim();
        for (Lane lane : lanesOf(r)) {
            for (boolean viaSubmitter : new boolean[] {false, true}) {
                if (viaSubmitter && lane != Lane.DEFAULT) {
                    continue;
                }
                r.parkAll();
                long e = r.entry();
                boolean ok = viaSubmitter && r.s.tryEnqueueFromSubmitter(slot, e);
                if (!ok) {
                    assertTrue(r.s.tryEnqueue(null, e, lane));
                }
                r.s.signalWork(1, lane);
                int woken = -1;
                long mask = r.parking.idleMask();
                for (int i = 0; i < r.w.length; i++) {
                    if ((mask & (1L << i)) == 0) {
                        assertTrue(r.mayTake(i, lane), "woke worker " + i + ", which may not take a " + lane + " entry");
                        woken = i;
                    }
                }
                assertNotEquals(-1, woken, lane + (viaSubmitter ? " submitter" : " external")
                        + " entry left with every worker parked: idle mask " + Long.toBinaryString(mask));
                assertEquals(e, r.s.next(r.w[woken]), "the woken worker " + woken + " finds the entry");
                unparkAll(r);
            }
        }
    }

    /**
     * The pass-on rule: worker 0 searches, so a submit coalesces on it (no wake); it then takes one of two
     * entries. A published entry is left and worker 1 is parked: the take wakes worker 1.
     */
    @ParameterizedTest(name = "{0} capacity {1}")
    @MethodSource("topologies")
    void aSearcherThatTakesOneOfTwoPassesTheWakeOn(Topology t, int capacity) {
        Rig r = new Rig(t, capacity);
        r.s.searching(0, true);
        r.parking.announce(1);
        r.parking.announce(2);
        long a = r.entry();
        long b = r.entry();
        assertTrue(r.s.tryEnqueue(null, a, Lane.DEFAULT));
        assertTrue(r.s.tryEnqueue(null, b, Lane.DEFAULT));
        r.s.signalWork(2, Lane.DEFAULT);
        long before = r.parking.idleMask();
        r.s.searching(0, false); // its spin saw the work
        long first = r.s.next(r.w[0]);
        assertTrue(first == a || first == b, "the searcher takes one of the two: " + first);
        long after = r.parking.idleMask();
        assertNotEquals(0b110, after & 0b110, "one entry left, workers 1 and 2 still parked (mask before the take "
                + Long.toBinaryString(before) + ", after " + Long.toBinaryString(after) + ")");
        int woken = (after & 0b010) == 0 ? 1 : 2;
        assertEquals(first == a ? b : a, r.s.next(r.w[woken]), "the woken worker finds what is left");
    }

    private static void unparkAll(Rig r) {
        for (int i = 0; i < r.w.length; i++) {
            r.parking.retract(i);
        }
    }

    // =====================================================================================================
    // Concurrent: exactly once with producers, submitters and stealing workers
    // =====================================================================================================

    /**
     * Two external producers and a registered submitter push distinct entries while three worker threads take
     * them (and re-push some as workers, as a fork would); a refused push is retried, and a worker whose own
     * push is refused consumes the entry itself. Every entry is consumed exactly once: lost 0, duplicated 0.
     */
    @ParameterizedTest(name = "{0} capacity {1}")
    @MethodSource("topologies")
    void concurrentProducersAndWorkersMoveEveryEntryExactlyOnce(Topology t, int capacity) throws Exception {
        Rig r = new Rig(t, capacity);
        final int perProducer = 20_000;
        final int producers = 3; // two external, one registered submitter
        final int items = perProducer * producers;
        final int forks = items; // worker pushes get fresh values above `items`
        AtomicIntegerArray seen = new AtomicIntegerArray(items + forks);
        AtomicIntegerArray forkUsed = new AtomicIntegerArray(1);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        int slot = r.submitters.claim();
        List<Thread> threads = new ArrayList<>();
        for (int p = 0; p < producers; p++) {
            final int base = p * perProducer;
            final boolean submitter = p == 2;
            threads.add(new Thread(() -> {
                for (int k = 0; k < perProducer && failure.get() == null; k++) {
                    long e = base + k;
                    while (!(submitter && r.s.tryEnqueueFromSubmitter(slot, e))
                            && !r.s.tryEnqueue(null, e, Lane.DEFAULT)) {
                        Thread.onSpinWait();
                        if (failure.get() != null) {
                            return;
                        }
                    }
                    r.s.signalWork(1, Lane.DEFAULT);
                }
                if (submitter) {
                    r.s.closeSubmitter(slot);
                }
            }, "producer-" + p));
        }
        for (int i = 0; i < WORKERS; i++) {
            final WorkerThread self = r.w[i];
            threads.add(new Thread(() -> {
                ThreadLocalRandom rnd = ThreadLocalRandom.current();
                while (!stop.get()) {
                    long e = r.s.next(self);
                    if (e == QueueEntry.EMPTY) {
                        Thread.onSpinWait();
                        continue;
                    }
                    consume(seen, e, failure);
                    if (e < items && rnd.nextInt(4) == 0) { // fork: a fresh entry pushed by this worker
                        long f = items + forkUsed.getAndIncrement(0);
                        if (r.s.tryEnqueue(self, f, Lane.DEFAULT)) {
                            r.s.signalWork(1, Lane.DEFAULT);
                        } else {
                            consume(seen, f, failure); // no room: the worker runs it itself, as the pool does
                        }
                    }
                }
            }, "worker-" + i));
        }
        threads.forEach(Thread::start);
        long deadline = System.nanoTime() + TestSupport.WAIT.toNanos();
        try {
            for (Thread p : threads.subList(0, producers)) {
                p.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
                if (p.isAlive()) {
                    fail("producer " + p.getName() + " still blocked after " + TestSupport.WAIT + ": depth "
                            + r.s.depth(Lane.DEFAULT));
                }
            }
            // The producers are done; the workers keep taking until everything pushed so far came out. A fork
            // pushed after this check is left for the sweep below, which is a legitimate way out too.
            while (failure.get() == null && consumedCount(seen, items) < items) {
                if (System.nanoTime() > deadline) {
                    fail("not consumed within " + TestSupport.WAIT + ": " + consumedCount(seen, items)
                            + " of " + items + ", depth " + r.s.depth(Lane.DEFAULT));
                }
                Thread.onSpinWait();
            }
        } finally {
            stop.set(true);
            for (Thread th : threads) {
                th.join(TestSupport.WAIT.toMillis());
                assertFalse(th.isAlive(), th.getName() + " did not stop");
            }
        }
        for (long e : r.drainAll()) { // [exactly one next() or drainOne()]
            consume(seen, e, failure);
        }
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
        int total = forkUsed.get(0) + items;
        for (int k = 0; k < total; k++) {
            assertEquals(1, seen.get(k), "entry " + k + " consumed " + seen.get(k) + " times");
        }
        assertEquals(0, r.s.depth(Lane.DEFAULT), "depth once everything came out");
        for (int i = 0; i < r.w.length; i++) {
            assertFalse(r.s.hasWork(i), "hasWork(" + i + ") once everything came out");
        }
    }

    private static int consumedCount(AtomicIntegerArray seen, int upTo) {
        int n = 0;
        for (int k = 0; k < upTo; k++) {
            n += seen.get(k) > 0 ? 1 : 0;
        }
        return n;
    }

    private static void consume(AtomicIntegerArray seen, long e, AtomicReference<Throwable> failure) {
        if (e < 0 || e >= seen.length()) {
            failure.compareAndSet(null, new AssertionError("an entry nobody pushed: " + e));
            return;
        }
        if (seen.incrementAndGet((int) e) != 1) {
            failure.compareAndSet(null, new AssertionError("entry " + e + " came out twice"));
        }
    }

    private static void assertSameEntries(List<Long> in, List<Long> out) {
        List<Long> a = new ArrayList<>(in);
        List<Long> b = new ArrayList<>(out);
        a.sort(null);
        b.sort(null);
        assertEquals(a, b, "every entry pushed comes back exactly once");
    }
}
