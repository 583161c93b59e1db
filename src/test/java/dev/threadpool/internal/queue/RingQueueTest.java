package dev.threadpool.internal.queue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.internal.memory.PoolMemory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Single-thread semantics of {@link RingQueue}, plus one bounded multi-thread smoke run. */
class RingQueueTest {
    private final PoolMemory mem = PoolMemory.create();

    @AfterEach
    void close() {
        mem.close();
    }

    private RingQueue queue(int capacity) {
        return new RingQueue(mem, "test ring queue", capacity);
    }

    /** Drains with pop (the test thread owns q). */
    private static List<Long> drain(RingQueue q) {
        List<Long> out = new ArrayList<>();
        for (long v; (v = q.pop()) != QueueEntry.EMPTY; ) {
            out.add(v);
        }
        return out;
    }

    @ParameterizedTest
    @ValueSource(ints = {-4, 0, 1, 3, 6, 65537, 1 << 17})
    void rejectsBadCapacityNamingParameterAndRange(int capacity) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> queue(capacity));
        assertEquals("capacity must be a power of two in [2, 65536]: capacity=" + capacity, e.getMessage());
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 4, 65536})
    void acceptsPowersOfTwoInRange(int capacity) {
        RingQueue q = queue(capacity);
        assertEquals(capacity, q.capacity());
        assertTrue(q.isEmpty());
        assertEquals(RingQueue.Layout.byteSize(capacity), mem.memoryMap().getLast().usableBytes());
    }

    @Test
    void fullAndEmpty() {
        RingQueue q = queue(4);
        assertEquals(QueueEntry.EMPTY, q.pop());
        assertEquals(QueueEntry.EMPTY, q.steal());
        for (int i = 1; i <= 4; i++) {
            assertTrue(q.tryPush(i));
            assertEquals(i, q.size());
        }
        assertFalse(q.tryPush(5), "full at capacity");
        assertEquals(4, q.size());
        assertEquals(List.of(1L, 2L, 3L, 4L), drain(q), "owner pop is FIFO from the head");
        assertEquals(QueueEntry.EMPTY, q.pop());
        assertTrue(q.isEmpty());
    }

    @Test
    void popAndStealShareTheHeadInFifoOrder() {
        RingQueue q = queue(8);
        for (int i = 1; i <= 6; i++) q.tryPush(i);
        assertEquals(1, q.pop());
        assertEquals(2, q.steal());
        assertEquals(3, q.pop());
        assertEquals(4, q.steal());
        assertEquals(List.of(5L, 6L), drain(q));
    }

    @Test
    void wrapsManyLapsAtCapacityTwo() {
        RingQueue q = queue(2);
        long next = 1;
        long expect = 1;
        for (int lap = 0; lap < 10_000; lap++) {
            assertTrue(q.tryPush(next++));
            assertTrue(q.tryPush(next++));
            assertFalse(q.tryPush(-5));
            assertEquals(expect++, (lap & 1) == 0 ? q.pop() : q.steal());
            assertTrue(q.tryPush(next++));
            assertEquals(2, q.size());
            assertEquals(expect++, q.steal());
            assertEquals(expect++, q.pop());
            assertTrue(q.isEmpty());
        }
    }

    @Test
    void zeroIsAValidEntry() {
        RingQueue q = queue(2);
        assertTrue(q.tryPush(QueueEntry.pack(0, 0)));
        assertEquals(0L, q.steal());
        assertEquals(QueueEntry.EMPTY, q.steal());
    }

    /** n = min((len + 1) / 2, max, free(dst) + 1) for every len, max and dst fill level at capacity 8. */
    @Test
    void stealHalfTakesRoundedUpHalfCappedByMaxAndDstSpace() {
        int cap = 8;
        for (int len = 0; len <= cap; len++) {
            for (int max = 1; max <= cap + 1; max++) {
                for (int dstFill = 0; dstFill <= cap; dstFill++) {
                    try (PoolMemory m = PoolMemory.create()) {
                        RingQueue src = new RingQueue(m, "src", cap);
                        RingQueue dst = new RingQueue(m, "dst", cap);
                        for (int i = 0; i < 3; i++) { // start off position 0 on both, so cells wrap
                            src.tryPush(-2);
                            src.pop();
                            dst.tryPush(-2);
                            dst.pop();
                        }
                        for (int i = 0; i < len; i++) src.tryPush(100 + i);
                        for (int i = 0; i < dstFill; i++) dst.tryPush(900 + i);
                        int want = len == 0 ? 0 : Math.min(Math.min((len + 1) / 2, max), cap - dstFill + 1);
                        String where = "len=" + len + " max=" + max + " dstFill=" + dstFill;

                        long first = src.stealHalf(dst, max);
                        if (want == 0) {
                            assertEquals(QueueEntry.EMPTY, first, where);
                        } else {
                            assertEquals(100, first, where + ": the oldest entry is returned");
                        }
                        assertEquals(len - want, src.size(), where);
                        assertEquals(dstFill + Math.max(0, want - 1), dst.size(), where);
                        List<Long> expectDst = new ArrayList<>();
                        for (int i = 0; i < dstFill; i++) expectDst.add(900L + i);
                        for (int i = 1; i < want; i++) expectDst.add(100L + i);
                        assertEquals(expectDst, drain(dst), where + ": dst keeps its order, stolen appended");
                        List<Long> expectSrc = new ArrayList<>();
                        for (int i = want; i < len; i++) expectSrc.add(100L + i);
                        assertEquals(expectSrc, drain(src), where + ": victim keeps the newer part");
                    }
                }
            }
        }
    }

    @Test
    void stealHalfBetweenDifferentCapacities() {
        RingQueue src = queue(64);
        RingQueue dst = queue(4);
        for (int i = 1; i <= 64; i++) src.tryPush(i);
        assertEquals(1, src.stealHalf(dst, 32)); // capped by dst: 4 free + 1
        assertEquals(List.of(2L, 3L, 4L, 5L), drain(dst));
        assertEquals(59, src.size());
    }

    @Test
    void stealHalfValidation() {
        RingQueue a = queue(4);
        RingQueue b = queue(4);
        IllegalArgumentException self = assertThrows(IllegalArgumentException.class, () -> a.stealHalf(a, 4));
        assertEquals("dst must be the thief's own queue, not the victim", self.getMessage());
        IllegalArgumentException max = assertThrows(IllegalArgumentException.class, () -> a.stealHalf(b, 0));
        assertEquals("max must be >= 1: max=0", max.getMessage());
    }

    @Test
    void pushOrOverflowMovesOldestHalfToOverflow() {
        RingQueue q = queue(8);
        BoundedRing inject = new BoundedRing(mem, "inject", 16);
        long[] scratch = new long[32];
        for (int i = 1; i <= 8; i++) assertTrue(q.pushOrOverflow(i, inject, scratch));
        assertEquals(0, inject.size(), "nothing moves while there is room");
        assertTrue(q.pushOrOverflow(9, inject, scratch));
        assertEquals(4, inject.size());
        for (long i = 1; i <= 4; i++) assertEquals(i, inject.tryPop(), "the oldest half, in order");
        assertEquals(List.of(5L, 6L, 7L, 8L, 9L), drain(q));
    }

    @Test
    void pushOrOverflowBatchIsCappedByScratch() {
        RingQueue q = queue(8);
        BoundedRing inject = new BoundedRing(mem, "inject", 16);
        for (int i = 1; i <= 8; i++) q.tryPush(i);
        assertTrue(q.pushOrOverflow(9, inject, new long[2]));
        assertEquals(2, inject.size());
        assertEquals(7, q.size());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> q.pushOrOverflow(10, inject, new long[0]));
        assertEquals("scratch.length must be >= 1: scratch.length=0", e.getMessage());
    }

    @Test
    void pushOrOverflowWithFullOverflowLosesNothing() {
        RingQueue q = queue(4);
        BoundedRing inject = new BoundedRing(mem, "inject", 2);
        long[] scratch = new long[8];
        inject.tryPush(100);
        for (int i = 1; i <= 4; i++) q.tryPush(i);
        // inject has room for one of the two moved entries; the other goes back behind the newer ones.
        assertTrue(q.pushOrOverflow(5, inject, scratch));
        assertEquals(100, inject.tryPop());
        assertEquals(1, inject.tryPop());
        assertEquals(List.of(3L, 4L, 2L, 5L), drain(q));

        inject.tryPush(200);
        inject.tryPush(201);
        for (int i = 1; i <= 4; i++) q.tryPush(i);
        assertFalse(q.pushOrOverflow(5, inject, scratch), "both full: refused");
        assertEquals(4, q.size());
        List<Long> left = drain(q);
        left.sort(null);
        assertEquals(List.of(1L, 2L, 3L, 4L), left, "nothing lost, nothing duplicated");
    }

    /** One owner, two thieves using steal and stealHalf; every item exactly once; all waits bounded. */
    @Test
    void ownerAndThievesSmoke() throws Exception {
        final int items = 200_000;
        RingQueue owner = queue(64);
        RingQueue[] own = {queue(16), queue(16)};
        AtomicIntegerArray seen = new AtomicIntegerArray(items + 1);
        AtomicLong taken = new AtomicLong();
        AtomicBoolean failed = new AtomicBoolean();
        long deadline = System.nanoTime() + 60_000_000_000L;
        Thread[] thieves = new Thread[2];
        for (int k = 0; k < 2; k++) {
            final RingQueue dst = own[k];
            thieves[k] = new Thread(() -> {
                long round = 0;
                while (taken.get() < items && System.nanoTime() < deadline) {
                    long v = (round++ & 1) == 0 ? owner.steal() : owner.stealHalf(dst, 4);
                    if (v != QueueEntry.EMPTY) {
                        if (seen.getAndIncrement((int) v) != 0) failed.set(true);
                        taken.incrementAndGet();
                    }
                    for (long w; (w = dst.pop()) != QueueEntry.EMPTY; ) {
                        if (seen.getAndIncrement((int) w) != 0) failed.set(true);
                        taken.incrementAndGet();
                    }
                }
            });
            thieves[k].start();
        }
        for (int i = 1; i <= items; i++) {
            while (!owner.tryPush(i)) {
                long v = owner.pop();
                if (v != QueueEntry.EMPTY) {
                    if (seen.getAndIncrement((int) v) != 0) failed.set(true);
                    taken.incrementAndGet();
                }
            }
        }
        for (long v; (v = owner.pop()) != QueueEntry.EMPTY; ) {
            if (seen.getAndIncrement((int) v) != 0) failed.set(true);
            taken.incrementAndGet();
        }
        for (Thread t : thieves) {
            t.join(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
            assertFalse(t.isAlive(), "thief did not finish in time");
        }
        assertFalse(failed.get(), "an item was taken twice");
        assertEquals(items, taken.get());
        for (int i = 1; i <= items; i++) assertEquals(1, seen.get(i), "item " + i);
    }
}
