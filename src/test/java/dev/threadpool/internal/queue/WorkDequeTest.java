package dev.threadpool.internal.queue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.internal.memory.PoolMemory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Single-thread semantics, validation and accounting of {@link WorkDeque}; races are in jcstress. */
class WorkDequeTest {
    private static final long EMPTY = QueueEntry.EMPTY;

    @Test
    void oneThreadBothEnds() { // seed 002 Case 1
        try (PoolMemory mem = PoolMemory.create(); WorkDeque q = new WorkDeque(mem, "test", 2)) {
            for (long i = 1; i <= 5; i++) {
                q.push(i);
            }
            assertEquals(8, q.capacity());
            assertEquals(5, q.size());
            assertEquals(1, q.steal(), "thief gets the oldest");
            assertEquals(5, q.take(), "owner gets the newest");
            assertEquals(4, q.take());
            assertEquals(2, q.steal());
            assertEquals(3, q.take());
            assertEquals(EMPTY, q.take());
            assertEquals(EMPTY, q.steal());
            assertTrue(q.isEmpty());
        }
    }

    @Test
    void growsTwoFourEight() {
        try (PoolMemory mem = PoolMemory.create(); WorkDeque q = new WorkDeque(mem, "test", 2)) {
            long[] expected = {2, 2, 4, 4, 8, 8, 8, 8, 16};
            for (int i = 0; i < expected.length; i++) {
                q.push(100 + i);
                assertEquals(expected[i], q.capacity(), "capacity after " + (i + 1) + " pushes");
            }
        }
    }

    @Test
    void ownerIsLifoAcrossGrowth() {
        try (PoolMemory mem = PoolMemory.create(); WorkDeque q = new WorkDeque(mem, "test", 2)) {
            for (long i = 1; i <= 100; i++) {
                q.push(i);
            }
            for (long i = 100; i >= 1; i--) {
                assertEquals(i, q.take());
            }
            assertEquals(EMPTY, q.take());
        }
    }

    @Test
    void thievesAreFifoAcrossWrapAndGrowth() {
        try (PoolMemory mem = PoolMemory.create(); WorkDeque q = new WorkDeque(mem, "test", 4)) {
            long next = 1;
            long expect = 1;
            // top and bottom advance far past the capacity (wrap), then the deque grows mid-stream
            for (int round = 0; round < 50; round++) {
                q.push(next++);
                q.push(next++);
                q.push(next++);
                assertEquals(expect++, q.steal());
                assertEquals(expect++, q.steal());
            }
            assertTrue(q.capacity() > 4, "grew");
            for (long v; (v = q.steal()) != EMPTY; ) {
                assertEquals(expect++, v);
            }
            assertEquals(next, expect);
        }
    }

    @Test
    void takeOnEmptyStaysEmpty() { // seed 002 Case 4: signed indices
        try (PoolMemory mem = PoolMemory.create(); WorkDeque q = new WorkDeque(mem, "test", 4)) {
            assertEquals(EMPTY, q.take());
            assertEquals(EMPTY, q.take());
            assertEquals(EMPTY, q.steal());
            assertEquals(0, q.size());
            q.push(7);
            assertEquals(1, q.size());
            assertEquals(4, q.capacity(), "no spurious growth after takes on empty");
            assertEquals(7, q.take());
        }
    }

    @Test
    void lastEntryTakenOnceByOwner() {
        try (PoolMemory mem = PoolMemory.create(); WorkDeque q = new WorkDeque(mem, "test", 2)) {
            q.push(1);
            q.push(2);
            assertEquals(1, q.steal());
            assertEquals(2, q.take(), "the last entry goes through the CAS path");
            assertEquals(EMPTY, q.steal());
            assertEquals(EMPTY, q.take());
            q.push(3);
            assertEquals(3, q.steal());
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {-4, 0, 1, 3, 6, 1 << 27, Integer.MIN_VALUE})
    void rejectsBadCapacity(int capacity) {
        try (PoolMemory mem = PoolMemory.create()) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> new WorkDeque(mem, "test", capacity));
            assertEquals("initialCapacity must be a power of two in [2, 67108864]: initialCapacity=" + capacity,
                    e.getMessage());
            assertEquals(0, mem.liveBytes(), "nothing allocated for a rejected capacity");
        }
    }

    @Test
    void rejectsSentinelValues() {
        try (PoolMemory mem = PoolMemory.create(); WorkDeque q = new WorkDeque(mem, "test", 2)) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> q.push(EMPTY));
            assertEquals("value must not be EMPTY (-1) or ABORT (-2): value=-1", e.getMessage());
            e = assertThrows(IllegalArgumentException.class, () -> q.push(WorkDeque.ABORT));
            assertEquals("value must not be EMPTY (-1) or ABORT (-2): value=-2", e.getMessage());
            q.push(-3);
            q.push(Long.MIN_VALUE);
            q.push(QueueEntry.pack(0x7FFF_FFFF, (1 << 24) - 1));
            assertEquals(3, q.size());
        }
    }

    @Test
    void noRealEntryEqualsASentinel() {
        for (int idx : new int[] {0, 1, (1 << 24) - 1}) {
            for (int gen : new int[] {0, 1, -1, Integer.MAX_VALUE, Integer.MIN_VALUE}) {
                long e = QueueEntry.pack(gen, idx);
                assertTrue(e != EMPTY && e != WorkDeque.ABORT, "gen=" + gen + " idx=" + idx);
            }
        }
    }

    @Test
    void closeAfterGrowthReturnsEveryByte() {
        try (PoolMemory mem = PoolMemory.create()) {
            mem.allocate("something else", 1000); // the deque must restore this level, not 0
            long before = mem.liveBytes();
            int blocksBefore = mem.memoryMap().size();
            WorkDeque q = new WorkDeque(mem, "test", 2);
            for (long i = 1; i <= 1000; i++) {
                q.push(i); // 2 -> 4 -> ... -> 1024: ten arrays, nine of them retired
            }
            assertEquals(1024, q.capacity());
            assertEquals(blocksBefore + 1 + 10, mem.memoryMap().size(), "control + 10 arrays, none freed yet");
            assertTrue(mem.liveBytes() > before + 8 * 1024);
            q.close();
            assertEquals(before, mem.liveBytes());
            assertEquals(blocksBefore, mem.memoryMap().size());
            q.close(); // idempotent
            assertEquals(before, mem.liveBytes());
        }
    }

    @Test
    void accountingIsExactAfterClose() {
        PoolMemory mem = PoolMemory.create();
        WorkDeque q = new WorkDeque(mem, "test", 2);
        for (long i = 1; i <= 300; i++) {
            q.push(i);
            if (i % 3 == 0) {
                q.steal();
            }
        }
        while (q.take() != EMPTY) {
            // drain
        }
        q.close();
        assertEquals(0, mem.liveBytes());
        assertEquals(mem.totalAllocBytes(), mem.totalFreeBytes());
        assertTrue(mem.peakLiveBytes() > 0);
        mem.close();
        assertEquals(mem.totalAllocBytes(), mem.totalFreeBytes());
    }

    @Test
    void closeAfterPoolMemoryClosedIsANoOp() {
        PoolMemory mem = PoolMemory.create();
        WorkDeque q = new WorkDeque(mem, "test", 2);
        q.push(1);
        q.push(2);
        q.push(3);
        mem.close();
        q.close();
        assertEquals(0, mem.liveBytes());
        assertEquals(mem.totalAllocBytes(), mem.totalFreeBytes());
    }

    /** A short counting run with real threads: every item comes out exactly once. Bounded joins. */
    @Test
    void ownerAndTwoThievesLoseAndDuplicateNothing() throws Exception {
        final int n = 200_000;
        AtomicIntegerArray seen = new AtomicIntegerArray(n + 1);
        AtomicLong consumed = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        try (PoolMemory mem = PoolMemory.create(); WorkDeque q = new WorkDeque(mem, "test", 2)) {
            Thread[] thieves = new Thread[2];
            for (int i = 0; i < thieves.length; i++) {
                thieves[i] = new Thread(() -> {
                    while (consumed.get() < n && failure.get() == null && System.nanoTime() < deadline) {
                        long v = q.steal();
                        if (v != EMPTY && v != WorkDeque.ABORT) {
                            seen.incrementAndGet((int) v);
                            consumed.incrementAndGet();
                        }
                    }
                }, "thief-" + i);
                thieves[i].setUncaughtExceptionHandler((t, e) -> failure.set(e));
                thieves[i].start();
            }
            for (int v = 1; v <= n; v++) {
                q.push(v);
                if (v % 3 == 0) {
                    long x = q.take();
                    if (x != EMPTY) {
                        seen.incrementAndGet((int) x);
                        consumed.incrementAndGet();
                    }
                }
            }
            for (long x; (x = q.take()) != EMPTY; ) {
                seen.incrementAndGet((int) x);
                consumed.incrementAndGet();
            }
            for (Thread t : thieves) {
                t.join(Math.max(0, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())) + 5_000);
                assertFalse(t.isAlive(), t.getName() + " still running past the deadline");
            }
            if (failure.get() != null) {
                throw new AssertionError("thief failed", failure.get());
            }
        }
        for (int v = 1; v <= n; v++) {
            assertEquals(1, seen.get(v), "item " + v);
        }
    }
}
