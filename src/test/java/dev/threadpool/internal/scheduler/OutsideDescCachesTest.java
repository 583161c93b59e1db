package dev.threadpool.internal.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.PoolConfig;
import dev.threadpool.PoolStats;
import dev.threadpool.SchedulerVariant;
import dev.threadpool.ShutdownMode;
import dev.threadpool.TestSupport;
import dev.threadpool.TimestampMode;
import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.stats.PoolCounters;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link OutsideDescCaches} and the hazard rules of Slots for them (rule 5: an acquire that finds its stripe's cache
 * and the freelist empty drains the other stripes; purge and shutdown drain them): pop, refill, the try-lock's
 * fall-back, drains, exact accounting, and a pool whose stripes hold cached slots taking {@code queueCapacity}
 * waitable submits.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class OutsideDescCachesTest {
    private static final int STRIPES = PoolCounters.OUTSIDE_STRIPES;
    /** A capacity at which each outside stripe refills 64 on this JVM: 4 x 64 x stripes. */
    private static final int FULL_REFILL_CAPACITY = 4 * 64 * STRIPES;

    private final PoolMemory mem = PoolMemory.create();

    @AfterEach
    void close() {
        mem.close();
    }

    /** Acquires every slot left on the freelist and checks they are distinct; returns them. */
    private static Set<Integer> drainFreelist(DescriptorTable t) {
        Set<Integer> out = new HashSet<>();
        for (int i; (i = t.acquire()) != -1; ) {
            assertTrue(out.add(i), "slot " + i + " twice on the freelist");
        }
        return out;
    }

    /** The stripe of the calling thread, as Slots picks it. */
    private static int myStripe() {
        return PoolCounters.outsideStripeOfCurrentThread();
    }

    @Test
    void popRefillsWithOneBatchAndPopsInFreelistOrder() {
        DescriptorTable t = new DescriptorTable(mem, 200);
        OutsideDescCaches c = new OutsideDescCaches(mem, "outside", t, 4, 64);
        assertEquals(0, c.pop(2), "the first pop refills 64 and takes the freelist's top");
        assertEquals(63, c.count(2));
        assertEquals(0, c.count(0) + c.count(1) + c.count(3), "only the stripe popped refilled");
        assertEquals(64, t.acquire(), "the freelist resumes after the batch");
        for (int i = 1; i < 64; i++) {
            assertEquals(i, c.pop(2), "the cache pops in the order the freelist would have");
        }
        assertEquals(0, c.count(2));
        assertEquals(65, c.pop(2), "an empty cache refills again");
        assertEquals(200 - 66, t.countFree(), "cached slots are FREE, popped ones are not");
        assertEquals(DescriptorTable.RESERVED, DescriptorTable.state(t.ctlAcquire(65)));
        assertEquals(1, DescriptorTable.gen(t.ctlAcquire(65)), "gen + 1, as acquire()");
    }

    @Test
    void refillTakesWhatIsLeftAndReportsEmpty() {
        DescriptorTable t = new DescriptorTable(mem, 5);
        OutsideDescCaches c = new OutsideDescCaches(mem, "outside", t, 1, 16);
        assertEquals(0, c.pop(0));
        assertEquals(4, c.count(0));
        assertFalse(t.hasFree());
        for (int i = 1; i < 5; i++) assertEquals(i, c.pop(0));
        assertEquals(-1, c.pop(0), "cache and freelist empty");
        assertFalse(c.isLocked(0), "the lock is given back on every path");
        assertEquals(0, t.countFree());
    }

    @Test
    void aHeldLockMakesPopAndDrainFallBackWithoutWaiting() {
        DescriptorTable t = new DescriptorTable(mem, 64);
        OutsideDescCaches c = new OutsideDescCaches(mem, "outside", t, 2, 16);
        int first = c.pop(1);
        assertEquals(15, c.count(1));
        assertTrue(c.tryLockForTest(1), "another thread of the stripe takes the lock");
        assertFalse(c.tryLockForTest(1), "a second try fails: mutual exclusion");
        assertEquals(OutsideDescCaches.BUSY, c.pop(1), "held: the popper falls back, it never waits");
        assertEquals(OutsideDescCaches.BUSY, c.drain(1));
        assertEquals(0, c.drainAll(), "drainAll skips a held stripe");
        assertEquals(15, c.count(1), "nothing taken while held");
        assertEquals(0, c.pop(0) - 16, "another stripe is not affected: it refills from the freelist");
        c.unlockForTest(1);
        assertEquals(first + 1, c.pop(1), "unlocked: the cache serves again");
    }

    @Test
    void drainAndDrainAllKeepCountFreeExactAndEverySlotOnce() {
        DescriptorTable t = new DescriptorTable(mem, 100);
        OutsideDescCaches c = new OutsideDescCaches(mem, "outside", t, 4, 8);
        List<Integer> held = new ArrayList<>();
        for (int s = 0; s < 4; s++) {
            held.add(c.pop(s));
        }
        assertEquals(28, c.countAll());
        assertEquals(96, t.countFree());
        assertEquals(7, c.drain(0));
        assertEquals(0, c.count(0));
        assertEquals(0, c.drain(0), "an empty cache drains nothing");
        assertEquals(21, c.drainAll());
        assertEquals(0, c.countAll());
        assertEquals(96, t.countFree());
        Set<Integer> free = drainFreelist(t);
        assertEquals(96, free.size(), "every free slot back on the freelist exactly once");
        for (int h : held) {
            assertFalse(free.contains(h), "a held slot is never on the freelist");
        }
    }

    @Test
    void refusesBadSizesAndStripes() {
        DescriptorTable t = new DescriptorTable(mem, 8);
        assertEquals("refill must be in [1, 64]: refill=65", assertThrows(IllegalArgumentException.class,
                () -> new OutsideDescCaches(mem, "x", t, 4, 65)).getMessage());
        assertEquals("refill must be in [1, 64]: refill=0", assertThrows(IllegalArgumentException.class,
                () -> new OutsideDescCaches(mem, "x", t, 4, 0)).getMessage());
        assertEquals("stripes must be >= 1: stripes=0", assertThrows(IllegalArgumentException.class,
                () -> new OutsideDescCaches(mem, "x", t, 0, 8)).getMessage());
        OutsideDescCaches c = new OutsideDescCaches(mem, "x", t, 4, 8);
        assertEquals("i must be in [0, 4): i=4", assertThrows(IllegalArgumentException.class, () -> c.pop(4))
                .getMessage());
    }

    @Test
    void oneBlockCountedByteForByteStridesSizedByTheRefill() {
        DescriptorTable t = new DescriptorTable(mem, 8);
        new OutsideDescCaches(mem, "outside 64", t, 4, 64);
        assertEquals(4 * 384, mem.memoryMap().getLast().usableBytes(), "8 + 4 x 64 bytes, padded to 384");
        new OutsideDescCaches(mem, "outside 16", t, 4, 16);
        assertEquals(4 * 128, mem.memoryMap().getLast().usableBytes());
        assertEquals(384, OutsideDescCaches.Layout.stride(64));
        assertEquals(256, OutsideDescCaches.Layout.stride(32));
    }

    @Test
    void refillSizeKeepsAllStripesWithinAQuarterOfTheTable() {
        assertEquals(64, Slots.outsideRefill(16384, 64), "64 workers' default capacity: refills of 64 anywhere");
        assertEquals(16, Slots.outsideRefill(4096, 64));
        assertEquals(64, Slots.outsideRefill(4096, 16));
        assertEquals(64, Slots.outsideRefill(4096, 4));
        assertEquals(8, Slots.outsideRefill(128, 4));
        assertEquals(0, Slots.outsideRefill(127, 4), "below 8 no caches");
        assertEquals(0, Slots.outsideRefill(64, 4));
        for (int stripes = 4; stripes <= 64; stripes *= 2) {
            for (int cap = 2; cap <= 1 << 20; cap *= 2) {
                int r = Slots.outsideRefill(cap, stripes);
                assertTrue((long) r * stripes * 4 <= cap, "at most a quarter: cap " + cap + ", stripes " + stripes);
                // with the worker and submitter caches' quarters, at most three quarters of the table is cached
                long cached = (long) r * stripes + (long) Slots.workerCacheLimit(cap, 64) * 64
                        + (long) Math.max(0, Slots.submitterRefill(cap)) * SubmitterRegistry.MAX_SUBMITTERS;
                assertTrue(cached * 4 <= 3L * cap, "all caches at most 3/4: cap " + cap + ", stripes " + stripes);
            }
        }
    }

    // ---- Slots: hazard rule 5 ------------------------------------------------------------------------------

    private Slots slots(DescriptorTable t, int capacity) {
        return new Slots(mem, t, new SpaceWaiters(mem, "space waiters"), capacity, 2, false);
    }

    @Test
    void anAcquireThatFindsNothingDrainsTheOtherStripesFirst() {
        DescriptorTable t = new DescriptorTable(mem, FULL_REFILL_CAPACITY);
        Slots s = slots(t, FULL_REFILL_CAPACITY);
        OutsideDescCaches oc = s.outsideCachesForTest();
        assertNotNull(oc, "a capacity of 4 x 64 x stripes builds outside caches");
        assertEquals(64, oc.refill());
        int mine = myStripe();
        int strandedElsewhere = 0;
        for (int i = 0; i < STRIPES; i++) {
            if (i != mine) {
                assertTrue(oc.pop(i) >= 0); // as a thread of stripe i would: it holds one, 63 stay cached
                strandedElsewhere += oc.count(i);
            }
        }
        assertEquals(63 * (STRIPES - 1), strandedElsewhere);
        int got = 0;
        for (int idx; (idx = s.acquireFast(null, Slots.NO_SUBMITTER)) >= 0; ) {
            got++;
        }
        assertEquals(FULL_REFILL_CAPACITY - (STRIPES - 1), got,
                "every slot not held was handed out: the stripes nobody uses were drained, none stranded");
        assertEquals(0, oc.countAll());
        assertEquals(0, t.countFree());
    }

    @Test
    void aStripeLockedByItsOwnerIsSkippedAndReclaimedAtTheNextLook() {
        DescriptorTable t = new DescriptorTable(mem, FULL_REFILL_CAPACITY);
        Slots s = slots(t, FULL_REFILL_CAPACITY);
        OutsideDescCaches oc = s.outsideCachesForTest();
        int other = (myStripe() + 1) & (STRIPES - 1);
        assertTrue(oc.pop(other) >= 0);
        assertTrue(oc.tryLockForTest(other), "a thread of that stripe is inside its cache");
        int got = 0;
        while (s.acquireFast(null, Slots.NO_SUBMITTER) >= 0) {
            got++;
        }
        assertEquals(FULL_REFILL_CAPACITY - 1 - 63, got, "the 63 under the held lock are not taken");
        assertFalse(s.freeOrReclaimed(), "a space waiter's look cannot drain a held stripe either");
        oc.unlockForTest(other);
        assertTrue(s.freeOrReclaimed(), "the next look drains it");
        assertEquals(63, t.countFree());
        for (int i = 0; i < 63; i++) {
            assertTrue(s.acquireOrReclaim() >= 0);
        }
        assertEquals(-1, s.acquireOrReclaim());
    }

    @Test
    void smallTablesBuildNoOutsideCaches() {
        DescriptorTable t = new DescriptorTable(mem, 64);
        Slots s = slots(t, 64);
        assertNull(s.outsideCachesForTest(), "64 descriptors cannot spare 8 a stripe");
        assertEquals(0, s.acquireFast(null, Slots.NO_SUBMITTER), "the freelist directly");
        assertEquals(0, s.drainOutsideCaches());
    }

    // ---- the pool ------------------------------------------------------------------------------------------

    /** TimestampMode.FULL: outside detached submits take descriptors too (no carried path). */
    private static PoolCore pool(int capacity) {
        return new PoolCore(PoolConfig.builder().schedulerVariant(SchedulerVariant.WORK_STEALING).maxThreads(2)
                .queueCapacity(capacity).timestampMode(TimestampMode.FULL).daemon(true).build());
    }

    /** Waits until nothing is queued, running or live, and checks the snapshot's accounting. */
    private static PoolStats quiescent(PoolCore core) {
        PoolStats[] last = new PoolStats[1];
        TestSupport.eventually("quiescent pool", () -> {
            PoolStats st = core.statsSnapshot();
            last[0] = st;
            return st.queuedTasks() == 0 && st.activeTasks() == 0 && st.taskDescLive() == 0;
        }, () -> String.valueOf(last[0]));
        TestSupport.assertQuiescentAccounting(last[0]);
        return last[0];
    }

    /** Starts one thread per outside stripe other than {@code avoid}'s, each running {@code body}; joins them. */
    private static void onEveryOtherStripe(int avoid, Runnable body) throws InterruptedException {
        boolean[] covered = new boolean[STRIPES];
        covered[avoid] = true;
        List<Thread> started = new ArrayList<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        for (int tries = 0; tries < 100 * STRIPES && started.size() < STRIPES - 1; tries++) {
            Thread th = new Thread(() -> {
                try {
                    body.run();
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }, "outside-stripe-thread");
            int stripe = (int) th.threadId() & (STRIPES - 1);
            if (!covered[stripe]) {
                covered[stripe] = true;
                th.start();
                started.add(th);
            }
        }
        assertEquals(STRIPES - 1, started.size(), "one thread for each other stripe");
        for (Thread th : started) {
            th.join(TestSupport.WAIT.toMillis());
            assertFalse(th.isAlive(), "the stripe's thread finished");
        }
        assertNull(failure.get());
    }

    /**
     * Every stripe but one holds cached slots (up to 63), left by threads that are gone; a thread on the remaining
     * stripe then submits {@code queueCapacity} waitable tasks without awaiting any: every one is accepted (the
     * stripes nobody uses are drained when the freelist runs dry, nothing is stranded), the next finds the
     * pool full, and once every handle is awaited the accounting is exact.
     */
    @Test
    void aPoolWhoseStripesHoldCachedSlotsStillTakesQueueCapacityWaitables() throws Exception {
        final int cap = FULL_REFILL_CAPACITY;
        PoolCore core = pool(cap);
        try {
            OutsideDescCaches oc = core.outsideCachesForTest();
            assertNotNull(oc);
            int mine = myStripe();
            onEveryOtherStripe(mine, () -> {
                long h = core.submitWaitable(() -> { }, 0);
                try {
                    assertTrue(core.await(h, TestSupport.WAIT.toNanos()));
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
            });
            for (int i = 0; i < STRIPES; i++) {
                // the rest of its refill: up to 63 (a refill that lost its CAS to another stripe's walks half)
                assertTrue(i == mine || oc.count(i) > 0, "stripe " + i + " keeps the rest of its refill");
            }
            long[] handles = new long[cap];
            for (int i = 0; i < cap; i++) {
                handles[i] = core.submitWaitable(() -> { }, 0); // waits only if a slot were stranded
            }
            assertFalse(core.submit(() -> { }, 0, null, WaitMode.NO_WAIT, 0L), "every descriptor is taken");
            assertEquals(0, oc.countAll());
            for (long h : handles) {
                assertTrue(core.await(h, TestSupport.WAIT.toNanos()));
            }
            PoolStats st = quiescent(core);
            assertEquals(0, st.taskDescLive());
            assertEquals(cap + STRIPES - 1, st.submitted());
            assertEquals(cap, core.tableForTest().countFree());
        } finally {
            core.shutdown(ShutdownMode.DRAIN, Long.MAX_VALUE);
            core.close();
        }
        assertEquals(0, core.statsSnapshot().liveBytes());
    }

    /** purgeWorkerCaches drains the outside stripes too: afterwards every free descriptor is on the freelist. */
    @Test
    void purgeDrainsEveryOutsideCache() throws Exception {
        final int cap = FULL_REFILL_CAPACITY;
        PoolCore core = pool(cap);
        try {
            OutsideDescCaches oc = core.outsideCachesForTest();
            long h = core.submitWaitable(() -> { }, 0);
            assertTrue(core.await(h, TestSupport.WAIT.toNanos()));
            onEveryOtherStripe(myStripe(), () -> core.submit(() -> { }, 0, null, WaitMode.UNBOUNDED, 0L));
            for (int i = 0; i < STRIPES; i++) {
                assertTrue(oc.count(i) > 0, "stripe " + i + " holds the rest of a refill");
            }
            quiescent(core);
            core.purgeWorkerCaches();
            assertEquals(0, oc.countAll());
            assertEquals(cap, drainFreelist(core.tableForTest()).size(), "every descriptor on the freelist, once");
        } finally {
            core.shutdown(ShutdownMode.DRAIN, Long.MAX_VALUE);
            core.close();
        }
    }

    /**
     * Shutdown with slots cached in the outside stripes: the terminated pool has every free descriptor on the
     * freelist, nothing live, and the close frees every byte.
     */
    @Test
    void shutdownLeavesNothingCachedAndCloseFreesEveryByte() throws Exception {
        final int cap = FULL_REFILL_CAPACITY;
        PoolCore core = pool(cap);
        OutsideDescCaches oc = core.outsideCachesForTest();
        long h = core.submitWaitable(() -> { }, 0);
        assertTrue(core.await(h, TestSupport.WAIT.toNanos()));
        assertEquals(63, oc.countAll());
        assertTrue(core.shutdown(ShutdownMode.DRAIN, TestSupport.WAIT.toNanos()));
        assertEquals(0, oc.countAll(), "the shutdown drained the outside caches");
        assertEquals(cap, core.tableForTest().countFree());
        PoolStats st = core.statsSnapshot();
        assertEquals(0, st.taskDescLive());
        assertEquals(1, st.submitted());
        core.close();
        PoolStats fin = core.statsSnapshot();
        assertEquals(0, fin.liveBytes());
        assertEquals(fin.totalAllocBytes(), fin.totalFreeBytes());
    }
}
