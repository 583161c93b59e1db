package dev.threadpool.internal.queue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.threadpool.internal.memory.CacheLine;
import dev.threadpool.internal.memory.PoolMemory;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Semantics of {@link LifoSlot}: sentinel, displacement, independence of slots, validation. */
class LifoSlotTest {
    private final PoolMemory mem = PoolMemory.create();

    @AfterEach
    void close() {
        mem.close();
    }

    @Test
    void startsEmptyEvenThoughMemoryIsZeroed() {
        LifoSlot s = new LifoSlot(mem, "lifo", 4);
        for (int w = 0; w < 4; w++) {
            assertEquals(QueueEntry.EMPTY, s.peek(w));
            assertEquals(QueueEntry.EMPTY, s.take(w));
        }
        assertEquals(CacheLine.PAD * 4L, mem.memoryMap().getLast().usableBytes(), "one PAD line per slot");
    }

    @Test
    void putReturnsTheDisplacedEntry() {
        LifoSlot s = new LifoSlot(mem, "lifo", 1);
        long a = QueueEntry.pack(0, 0); // {gen 0, idx 0} is a real entry, distinct from EMPTY
        long b = QueueEntry.pack(7, 3);
        assertEquals(QueueEntry.EMPTY, s.put(0, a));
        assertEquals(a, s.peek(0));
        assertEquals(a, s.put(0, b), "the displaced entry goes to the local queue");
        assertEquals(b, s.take(0));
        assertEquals(QueueEntry.EMPTY, s.take(0));
        assertEquals(QueueEntry.EMPTY, s.put(0, a));
    }

    @Test
    void slotsAreIndependent() {
        LifoSlot s = new LifoSlot(mem, "lifo", 64);
        for (int w = 0; w < 64; w++) s.put(w, QueueEntry.pack(w, w));
        for (int w = 63; w >= 0; w--) assertEquals(QueueEntry.pack(w, w), s.take(w));
        assertThrows(IndexOutOfBoundsException.class, () -> s.take(64));
    }

    @Test
    void putOfEmptyIsRejected() {
        LifoSlot s = new LifoSlot(mem, "lifo", 1);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> s.put(0, QueueEntry.EMPTY));
        assertEquals("entry must not be QueueEntry.EMPTY: that would be a take", e.getMessage());
    }

    @ParameterizedTest
    @ValueSource(ints = {-1, 0, 65})
    void rejectsBadSlotCount(int slots) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new LifoSlot(mem, "l", slots));
        assertEquals("slots must be in [1, 64]: slots=" + slots, e.getMessage());
    }

    /** Owner puts 1..N, a thief takes concurrently: every entry comes out exactly once. Bounded. */
    @Test
    void putVersusThiefTakeSmoke() throws Exception {
        final int n = 200_000;
        LifoSlot s = new LifoSlot(mem, "lifo", 1);
        AtomicIntegerArray seen = new AtomicIntegerArray(n + 1);
        AtomicLong taken = new AtomicLong();
        long deadline = System.nanoTime() + 60_000_000_000L;
        Thread thief = new Thread(() -> {
            while (taken.get() < n && System.nanoTime() < deadline) {
                long v = s.take(0);
                if (v != QueueEntry.EMPTY) {
                    seen.incrementAndGet((int) v);
                    taken.incrementAndGet();
                }
            }
        });
        thief.start();
        for (int i = 1; i <= n; i++) {
            long prev = s.put(0, i);
            if (prev != QueueEntry.EMPTY) {
                seen.incrementAndGet((int) prev);
                taken.incrementAndGet();
            }
        }
        long last = s.take(0);
        if (last != QueueEntry.EMPTY) {
            seen.incrementAndGet((int) last);
            taken.incrementAndGet();
        }
        thief.join(60_000);
        assertFalse(thief.isAlive(), "thief did not finish in time");
        for (int i = 1; i <= n; i++) assertEquals(1, seen.get(i), "entry " + i);
    }
}
