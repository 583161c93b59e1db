package dev.threadpool.internal.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.QueueKind;
import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.BoundedRing;
import dev.threadpool.internal.queue.QueueEntry;
import dev.threadpool.internal.queue.RingQueue;
import dev.threadpool.internal.stats.RecentErrors;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The {@link LocalQueues} contract, run against both implementations ({@link RingLocalQueues} for RING,
 * {@link ChaseLevLocalQueues} for CHASE_LEV): owner order (RING pops FIFO, Chase–Lev takes LIFO), free and
 * full, pushOrOverflow, pushInRunOrder, stealHalf from peers and stealHalfFrom a submitter queue into the
 * thief's own queue, the {@code workers_nonempty} bits (set by the owner's push or steal, cleared only by the
 * owner's pop that finds its queue empty, never by a thief), stealOne, Chase–Lev growth and a growth that
 * fails, close, and one owner with two thieves taking every entry exactly once.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class LocalQueuesTest {
    private final PoolMemory mem = PoolMemory.create();
    private final RecentErrors errors = new RecentErrors(16);
    private final List<LocalQueues> created = new ArrayList<>();

    @AfterEach
    void close() {
        for (LocalQueues q : created) {
            q.close();
        }
        mem.close();
        assertEquals(0, mem.liveBytes(), "every block freed");
    }

    private LocalQueues queues(QueueKind kind, int workers, int capacity) {
        LocalQueues q = LocalQueues.create(mem, new WorkSummary(mem, workers), kind, workers, capacity, errors);
        created.add(q);
        return q;
    }

    private static boolean lifoOwner(QueueKind kind) {
        return kind == QueueKind.CHASE_LEV;
    }

    /** {@code values} in the order w's owner pops them: as pushed for RING, reversed for Chase–Lev. */
    private static List<Long> ownerOrder(QueueKind kind, long... values) {
        List<Long> out = new ArrayList<>();
        for (long v : values) {
            out.add(v);
        }
        if (lifoOwner(kind)) {
            Collections.reverse(out);
        }
        return out;
    }

    /** Pops w's queue until EMPTY (the caller acts as w's owner). */
    private static List<Long> drain(LocalQueues q, int w) {
        List<Long> out = new ArrayList<>();
        for (long e; (e = q.pop(w)) != QueueEntry.EMPTY; ) {
            out.add(e);
        }
        return out;
    }

    private static List<Long> drain(BoundedRing ring) {
        List<Long> out = new ArrayList<>();
        for (long e; (e = ring.tryPop()) != QueueEntry.EMPTY; ) {
            out.add(e);
        }
        return out;
    }

    private static void pushAll(LocalQueues q, int w, long from, long to) {
        for (long v = from; v <= to; v++) {
            assertTrue(q.push(w, v), "push " + v);
        }
    }

    /** Makes worker w's Chase–Lev growths fail (the first growth's array is "local deque w array 1"). */
    private void failGrowthOf(int w) {
        String prefix = "local deque " + w + " array ";
        mem.failAllocationsForTest(p -> p.startsWith(prefix) && !p.equals(prefix + "0"));
    }

    // =====================================================================================================
    // Construction
    // =====================================================================================================

    @Test
    void createPicksTheImplementationOfTheKind() {
        assertInstanceOf(RingLocalQueues.class, queues(QueueKind.RING, 2, 4));
        assertInstanceOf(ChaseLevLocalQueues.class, queues(QueueKind.CHASE_LEV, 2, 4));
    }

    @ParameterizedTest
    @EnumSource(QueueKind.class)
    void theBitmapIsOneLineOfItsOwn(QueueKind kind) {
        queues(kind, 2, 4);
        PoolMemory.BlockInfo bitmap = mem.memoryMap().stream().filter(b -> b.purpose().equals("workers_nonempty"))
                .findFirst().orElseThrow();
        assertEquals(WorkSummary.Layout.LENGTH, bitmap.usableBytes());
        assertFalse(bitmap.releasable());
    }

    // =====================================================================================================
    // Owner
    // =====================================================================================================

    @ParameterizedTest
    @EnumSource(QueueKind.class)
    void ownerPopOrderIsFifoForRingAndLifoForChaseLev(QueueKind kind) {
        LocalQueues q = queues(kind, 2, 8);
        pushAll(q, 1, 1, 4);
        assertEquals(4, q.size(1));
        assertEquals(0, q.size(0), "worker 0's queue is another queue");
        assertEquals(ownerOrder(kind, 1, 2, 3, 4), drain(q, 1));
        assertEquals(QueueEntry.EMPTY, q.pop(1));
        assertEquals(0, q.size(1));
    }

    @ParameterizedTest
    @EnumSource(QueueKind.class)
    void thePushSetsTheBitAndOnlyThePopThatFindsTheQueueEmptyClearsIt(QueueKind kind) {
        LocalQueues q = queues(kind, 4, 8);
        assertEquals(0, q.nonEmptyMask());
        assertFalse(q.anyNonEmptyHint());
        assertEquals(QueueEntry.EMPTY, q.pop(2), "an empty pop with a clear bit");
        assertEquals(0, q.nonEmptyMask());
        assertTrue(q.push(2, 7));
        assertEquals(0b0100, q.nonEmptyMask());
        assertTrue(q.anyNonEmptyHint());
        assertTrue(q.push(2, 8));
        assertEquals(0b0100, q.nonEmptyMask(), "a second push: the bit is already set");
        q.pop(2);
        q.pop(2);
        assertEquals(0b0100, q.nonEmptyMask(), "taking the last entry does not clear it: the pop found an entry");
        assertEquals(QueueEntry.EMPTY, q.pop(2));
        assertEquals(0, q.nonEmptyMask(), "the pop that found the queue empty cleared it");
        assertFalse(q.anyNonEmptyHint());
    }

    @Test
    void aRingQueueIsFullAtItsCapacity() {
        LocalQueues q = queues(QueueKind.RING, 1, 4);
        assertEquals(4, q.free(0));
        pushAll(q, 0, 1, 3);
        assertEquals(1, q.free(0));
        assertTrue(q.push(0, 4));
        assertEquals(0, q.free(0));
        assertFalse(q.push(0, 5), "full: the entry is still the caller's");
        assertEquals(4, q.size(0));
        assertEquals(List.of(1L, 2L, 3L, 4L), drain(q, 0), "the refused push changed nothing");
        assertTrue(errors.snapshot().isEmpty(), "a full ring is no error");
    }

    @Test
    void aChaseLevDequeGrowsInsteadOfBeingFull() {
        LocalQueues q = queues(QueueKind.CHASE_LEV, 1, 2);
        assertEquals(2, q.free(0));
        for (long v = 1; v <= 1000; v++) {
            assertTrue(q.push(0, v), "push " + v + " grows the deque when full");
        }
        assertEquals(1000, q.size(0));
        assertEquals(1024 - 1000, q.free(0), "doubled from 2 to 1024");
        assertTrue(mem.memoryMap().stream().anyMatch(b -> b.purpose().equals("local deque 0 array 9")),
                "nine growths: 2 << 9 = 1024");
        List<Long> out = drain(q, 0);
        assertEquals(1000, out.size());
        assertEquals(1000L, out.getFirst(), "LIFO across growths");
        assertEquals(1L, out.getLast());
        assertTrue(errors.snapshot().isEmpty());
    }

    @Test
    void aChaseLevPushThatCannotGrowReturnsFalseRecordsTheFailureAndKeepsTheDeque() {
        LocalQueues q = queues(QueueKind.CHASE_LEV, 1, 2);
        failGrowthOf(0);
        pushAll(q, 0, 1, 2);
        assertEquals(0, q.free(0));
        assertFalse(q.push(0, 3), "full and it could not grow: the entry is still the caller's");
        assertEquals(1, errors.snapshot().size(), "the growth failure is recorded");
        assertInstanceOf(OutOfMemoryError.class, errors.snapshot().getFirst());
        assertEquals(2, q.size(0));
        mem.failAllocationsForTest(null);
        assertTrue(q.push(0, 3), "a later push tries to grow again");
        assertEquals(List.of(3L, 2L, 1L), drain(q, 0), "nothing lost, nothing doubled");
    }

    @Test
    void ringPushOrOverflowMovesTheOldestHalfToInject() {
        LocalQueues q = queues(QueueKind.RING, 1, 8);
        BoundedRing inject = new BoundedRing(mem, "inject", 16);
        pushAll(q, 0, 1, 8);
        assertFalse(q.push(0, 9));
        assertTrue(q.pushOrOverflow(0, 9, inject, new long[8]));
        assertEquals(List.of(1L, 2L, 3L, 4L), drain(inject), "the oldest half, in order");
        assertEquals(List.of(5L, 6L, 7L, 8L, 9L), drain(q, 0));
    }

    @Test
    void chaseLevPushOrOverflowSendsTheEntryAloneToInject() {
        LocalQueues q = queues(QueueKind.CHASE_LEV, 1, 2);
        BoundedRing inject = new BoundedRing(mem, "inject", 16);
        failGrowthOf(0);
        pushAll(q, 0, 1, 2);
        assertFalse(q.push(0, 3));
        assertTrue(q.pushOrOverflow(0, 3, inject, new long[1]));
        assertEquals(List.of(3L), drain(inject), "only the refused entry");
        assertEquals(List.of(2L, 1L), drain(q, 0), "the deque untouched");
    }

    @ParameterizedTest
    @EnumSource(QueueKind.class)
    void pushOrOverflowIsFalseWhenNeitherTheQueueNorInjectHasRoom(QueueKind kind) {
        LocalQueues q = queues(kind, 1, 2);
        BoundedRing inject = new BoundedRing(mem, "inject", 2);
        assertTrue(inject.tryPush(100));
        assertTrue(inject.tryPush(101));
        failGrowthOf(0);
        pushAll(q, 0, 1, 2);
        assertFalse(q.push(0, 3));
        assertFalse(q.pushOrOverflow(0, 3, inject, new long[2]), "no room anywhere: still the caller's");
        assertEquals(List.of(100L, 101L), drain(inject), "inject unchanged");
        List<Long> local = drain(q, 0); // RING: the half it tried to move is back, behind the rest
        Collections.sort(local);
        assertEquals(List.of(1L, 2L), local, "nothing lost");
    }

    @ParameterizedTest
    @EnumSource(QueueKind.class)
    void pushInRunOrderLetsTheOwnerRunTheBatchInArrayOrder(QueueKind kind) {
        LocalQueues q = queues(kind, 2, 8);
        BoundedRing inject = new BoundedRing(mem, "inject", 16);
        long[] batch = {99, 1, 2, 3, 4};
        q.pushInRunOrder(1, batch, 1, batch.length, inject);
        assertEquals(0b10, q.nonEmptyMask());
        assertEquals(List.of(1L, 2L, 3L, 4L), drain(q, 1), "whichever way the owner pops");
        assertEquals(0, inject.size(), "everything fitted");
    }

    @ParameterizedTest
    @EnumSource(QueueKind.class)
    void pushInRunOrderSpillsWhatDoesNotFitToInject(QueueKind kind) {
        LocalQueues q = queues(kind, 1, 2);
        BoundedRing inject = new BoundedRing(mem, "inject", 16);
        failGrowthOf(0);
        pushAll(q, 0, 7, 8);
        q.pushInRunOrder(0, new long[] {1, 2, 3}, 0, 3, inject);
        List<Long> spilled = drain(inject);
        Collections.sort(spilled);
        assertEquals(List.of(1L, 2L, 3L), spilled, "none dropped");
        assertEquals(ownerOrder(kind, 7, 8), drain(q, 0));
    }

    // =====================================================================================================
    // Thief
    // =====================================================================================================

    @ParameterizedTest
    @EnumSource(QueueKind.class)
    void stealHalfMovesHalfOfAPeerIntoTheThiefsQueue(QueueKind kind) {
        LocalQueues q = queues(kind, 3, 8);
        pushAll(q, 0, 1, 8);
        long[] failures = LocalQueues.newFailureCount();
        assertEquals(1L, q.stealHalf(1, 0, 8, failures), "the oldest entry, to run");
        assertEquals(0, failures[LocalQueues.FAILURES_AT]);
        assertEquals(4, q.size(0), "the victim keeps the newer half");
        assertEquals(3, q.size(1), "the other stolen entries are the thief's now");
        assertEquals(0b011, q.nonEmptyMask(), "the thief set its own bit; the victim's stays");
        assertEquals(ownerOrder(kind, 2, 3, 4), drain(q, 1));
        assertEquals(ownerOrder(kind, 5, 6, 7, 8), drain(q, 0));
    }

    @ParameterizedTest
    @EnumSource(QueueKind.class)
    void stealHalfTakesAtMostMaxAndWhatFitsInTheThiefsQueue(QueueKind kind) {
        LocalQueues q = queues(kind, 2, 8);
        pushAll(q, 0, 1, 8);
        long[] failures = LocalQueues.newFailureCount();
        assertEquals(1L, q.stealHalf(1, 0, 1, failures), "max 1: only the one it runs");
        assertEquals(7, q.size(0));
        assertEquals(0, q.size(1));
        assertEquals(0b01, q.nonEmptyMask(), "nothing landed in the thief's queue: its bit stays clear");

        failGrowthOf(1); // a Chase-Lev thief never grows its deque: a growth attempt here would fail, recorded
        pushAll(q, 1, 101, 107);
        assertEquals(1, q.free(1));
        assertEquals(2L, q.stealHalf(1, 0, 8, failures));
        assertEquals(5, q.size(0), "free + 1 = 2 taken, not half of 7 (4)");
        assertEquals(8, q.size(1), "the thief's queue is full, not grown");
        assertTrue(errors.snapshot().isEmpty(), "no growth was attempted");
    }

    @ParameterizedTest
    @EnumSource(QueueKind.class)
    void stealHalfVisitsOnlyPeersWhoseBitIsSetAndNeverClearsOne(QueueKind kind) {
        LocalQueues q = queues(kind, 4, 8);
        long[] failures = LocalQueues.newFailureCount();
        assertEquals(QueueEntry.EMPTY, q.stealHalf(0, 1, 8, failures));
        assertEquals(0, failures[LocalQueues.FAILURES_AT], "no bit set: no victim tried");

        assertTrue(q.push(2, 5));
        assertEquals(5L, q.pop(2)); // worker 2's bit stays set until its pop finds the queue empty
        assertTrue(q.push(0, 6)); // the thief's own bit: never a victim
        assertEquals(0b0101, q.nonEmptyMask());
        assertEquals(QueueEntry.EMPTY, q.stealHalf(0, 1, 8, failures));
        assertEquals(1, failures[LocalQueues.FAILURES_AT], "only worker 2 was tried, and it was empty");
        assertEquals(0b0101, q.nonEmptyMask(), "a thief never clears a bit, not even a stale one");
        assertEquals(6L, q.pop(0), "the thief's own entry is still there");
    }

    /** From {@code start}, in rising index order, wrapping past the last bit (Layout.SLOT_MASK). */
    @ParameterizedTest
    @EnumSource(QueueKind.class)
    void stealHalfStartsAtTheRotatingStartAndWraps(QueueKind kind) {
        LocalQueues q = queues(kind, 4, 8);
        assertTrue(q.push(1, 10));
        assertTrue(q.push(3, 30));
        long[] failures = LocalQueues.newFailureCount();
        assertEquals(30L, q.stealHalf(0, 2, 8, failures), "from start 2: worker 3 before worker 1");
        assertEquals(10L, q.stealHalf(0, 2, 8, failures), "worker 3 (stale bit, empty) fails, then wraps to 1");
        assertEquals(1, failures[LocalQueues.FAILURES_AT]);
        assertEquals(QueueEntry.EMPTY, q.stealHalf(0, 2, 8, failures));
    }

    @ParameterizedTest
    @EnumSource(QueueKind.class)
    void stealHalfFromASubmitterQueue(QueueKind kind) {
        LocalQueues q = queues(kind, 2, 8);
        RingQueue submitter = new RingQueue(mem, "submitter queue 0", 8);
        assertEquals(QueueEntry.EMPTY, q.stealHalfFrom(submitter, 1, 8), "empty submitter queue");
        assertEquals(0, q.nonEmptyMask(), "nothing taken: the thief's bit stays clear");
        for (long v = 1; v <= 8; v++) {
            assertTrue(submitter.tryPush(v));
        }
        assertEquals(1L, q.stealHalfFrom(submitter, 1, 8), "the oldest, to run");
        assertEquals(4, submitter.size(), "the submitter keeps the newer half");
        assertEquals(3, q.size(1));
        assertEquals(0b10, q.nonEmptyMask(), "the thief set its bit for what landed in its queue");
        assertEquals(ownerOrder(kind, 2, 3, 4), drain(q, 1));
        assertEquals(5L, q.stealHalfFrom(submitter, 1, 1), "max 1: only the one it runs");
        assertEquals(0, q.size(1));
        assertEquals(3, submitter.size());
    }

    // =====================================================================================================
    // Any thread
    // =====================================================================================================

    @ParameterizedTest
    @EnumSource(QueueKind.class)
    void stealOneTakesTheOldestFromAnotherThread(QueueKind kind) throws Exception {
        LocalQueues q = queues(kind, 2, 8);
        pushAll(q, 1, 1, 3);
        List<Long> got = Collections.synchronizedList(new ArrayList<>());
        Thread sweeper = new Thread(() -> {
            for (long e; (e = q.stealOne(1)) != QueueEntry.EMPTY; ) {
                got.add(e);
            }
        }, "sweeper");
        sweeper.start();
        sweeper.join(TimeUnit.SECONDS.toMillis(10));
        assertFalse(sweeper.isAlive());
        assertEquals(List.of(1L, 2L, 3L), got, "oldest first, whichever kind");
        assertEquals(0, q.size(1));
        assertEquals(0b10, q.nonEmptyMask(), "only the owner's pop clears its bit");
        assertEquals(QueueEntry.EMPTY, q.pop(1));
        assertEquals(0, q.nonEmptyMask());
    }

    @ParameterizedTest
    @EnumSource(QueueKind.class)
    void closeReleasesEveryDequeBlockAndNoRingBlock(QueueKind kind) {
        int workers = 3;
        int capacity = 4;
        // closed here, not in close(); the bitmap is the WorkSummary's block
        LocalQueues q = LocalQueues.create(mem, new WorkSummary(mem, workers), kind, workers, capacity, errors);
        pushAll(q, 0, 1, kind == QueueKind.RING ? capacity : 20); // Chase-Lev: grows worker 0's deque
        q.close();
        long bitmap = PoolMemory.countedSize(WorkSummary.Layout.LENGTH);
        long rings = kind == QueueKind.RING ? workers * PoolMemory.countedSize(RingQueue.Layout.byteSize(capacity)) : 0;
        assertEquals(bitmap + rings, mem.liveBytes(), "what stays until the memory closes");
    }

    /**
     * One owner (worker 0) pushes N entries, popping one after every fourth push and whenever its queue is full,
     * and leaves what is left at the end to the thieves; two thieves (workers 1 and 2), running before the owner
     * starts, steal half of any peer with a set bit, sweep worker 0 with stealOne now and then, and pop their own
     * queues. Every entry comes out exactly once: lost 0, duplicated 0.
     */
    @ParameterizedTest
    @EnumSource(QueueKind.class)
    void oneOwnerTwoThievesEveryEntryOutExactlyOnce(QueueKind kind) throws Exception {
        final int n = 200_000;
        final LocalQueues q = queues(kind, 3, 64);
        final AtomicIntegerArray seen = new AtomicIntegerArray(n);
        final AtomicInteger taken = new AtomicInteger();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final AtomicInteger byThieves = new AtomicInteger();
        final CountDownLatch thievesRunning = new CountDownLatch(2);
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        class Taker {
            void take(long e) {
                if (e != QueueEntry.EMPTY) {
                    seen.incrementAndGet((int) e);
                    taken.incrementAndGet();
                }
            }

            boolean goOn() {
                return taken.get() < n && System.nanoTime() - deadline < 0 && failure.get() == null;
            }
        }
        Taker t = new Taker();
        Thread owner = new Thread(() -> {
            try {
                if (!thievesRunning.await(30, TimeUnit.SECONDS)) {
                    throw new AssertionError("the thieves did not start within 30 s");
                }
                for (int i = 0; i < n; i++) {
                    while (!q.push(0, i)) { // a full RING: run one of ours to make room
                        t.take(q.pop(0));
                    }
                    if ((i & 3) == 0) {
                        t.take(q.pop(0));
                    }
                }
                while (t.goOn()) { // the rest is the thieves': at least n - 1, not popped ((n - 1) & 3 != 0)
                    Thread.onSpinWait();
                }
            } catch (Throwable e) {
                failure.compareAndSet(null, e);
            }
        }, "owner");
        Thread[] thieves = new Thread[2];
        for (int k = 0; k < thieves.length; k++) {
            final int w = k + 1;
            thieves[k] = new Thread(() -> {
                try {
                    long[] failures = LocalQueues.newFailureCount();
                    int round = 0;
                    thievesRunning.countDown();
                    while (t.goOn()) {
                        long e = q.stealHalf(w, round % 3, 8, failures);
                        if (e == QueueEntry.EMPTY && (++round & 15) == 0) {
                            e = q.stealOne(0); // the sweep, racing the owner and the other thief
                        }
                        int mine = e != QueueEntry.EMPTY ? 1 : 0;
                        t.take(e);
                        for (long o; (o = q.pop(w)) != QueueEntry.EMPTY; ) {
                            t.take(o);
                            mine++;
                        }
                        byThieves.addAndGet(mine);
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }, "thief " + w);
        }
        owner.start();
        for (Thread th : thieves) {
            th.start();
        }
        owner.join(TimeUnit.SECONDS.toMillis(90));
        for (Thread th : thieves) {
            th.join(TimeUnit.SECONDS.toMillis(90));
        }
        assertFalse(owner.isAlive() || thieves[0].isAlive() || thieves[1].isAlive(), "every thread ended");
        assertNull(failure.get(), () -> "thrown: " + failure.get());
        int lost = 0;
        int duplicated = 0;
        for (int i = 0; i < n; i++) {
            int c = seen.get(i);
            if (c == 0) {
                lost++;
            } else if (c > 1) {
                duplicated++;
            }
        }
        assertEquals(0, lost, "lost entries (taken " + taken.get() + " of " + n + ")");
        assertEquals(0, duplicated, "duplicated entries");
        assertEquals(n, taken.get());
        assertTrue(byThieves.get() > 0, "the thieves took part: " + byThieves.get() + " of " + n);
        for (int w = 0; w < 3; w++) {
            assertEquals(0, q.size(w), "queue " + w + " empty");
        }
    }
}
