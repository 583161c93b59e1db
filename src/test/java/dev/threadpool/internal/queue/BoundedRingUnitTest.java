package dev.threadpool.internal.queue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.internal.memory.PoolMemory;
import org.junit.jupiter.api.Test;

class BoundedRingUnitTest {

    @Test
    void fifoFullEmptyAndWrapAround() {
        try (PoolMemory m = PoolMemory.create()) {
            BoundedRing r = new BoundedRing(m, "t", 4);
            for (int lap = 0; lap < 10; lap++) {
                assertTrue(r.isEmpty());
                assertEquals(QueueEntry.EMPTY, r.tryPop());
                for (int i = 0; i < 4; i++) {
                    assertTrue(r.tryPush(lap * 10 + i));
                }
                assertFalse(r.tryPush(99), "full");
                assertEquals(4, r.size());
                for (int i = 0; i < 4; i++) {
                    assertEquals(lap * 10 + i, r.tryPop(), "FIFO");
                }
            }
        }
    }

    @Test
    void popManyAndPushManyClaimRunsAndKeepOrder() {
        try (PoolMemory m = PoolMemory.create()) {
            BoundedRing r = new BoundedRing(m, "t", 8);
            long[] src = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
            assertEquals(8, r.pushMany(src, 0, 10), "only 8 fit");
            assertEquals(0, r.pushMany(src, 8, 2), "full");
            long[] dst = new long[5];
            assertEquals(5, r.popMany(dst, 5));
            assertEquals(java.util.List.of(1L, 2L, 3L, 4L, 5L), java.util.Arrays.stream(dst).boxed().toList());
            assertEquals(3, r.popMany(dst, 5), "what is left");
            assertEquals(6, dst[0]);
            assertEquals(8, dst[2]);
            assertEquals(0, r.popMany(dst, 5), "empty");
            assertEquals(2, r.pushMany(src, 8, 2));
            assertEquals(9, r.tryPop());
            assertEquals(10, r.tryPop());
        }
    }

    @Test
    void capacityIsValidated() {
        try (PoolMemory m = PoolMemory.create()) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new BoundedRing(m, "t", 6));
            assertEquals("capacity must be a power of two in [2, 16777216]: capacity=6", e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> new BoundedRing(m, "t", 1));
            assertEquals(0, m.totalAllocBytes(), "a refused ring allocates nothing");
        }
    }

    @Test
    void entriesPackGenAndIndex() {
        long e = QueueEntry.pack(0xFFFF_FFFE, 12345);
        assertEquals(0xFFFF_FFFE, QueueEntry.gen(e));
        assertEquals(12345, QueueEntry.idx(e));
        for (int gen : new int[] {0, 1, -1, Integer.MAX_VALUE}) {
            assertTrue(QueueEntry.pack(gen, (1 << 24) - 1) != QueueEntry.EMPTY, "no entry equals EMPTY");
        }
    }
}
