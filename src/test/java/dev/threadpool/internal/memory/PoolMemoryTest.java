package dev.threadpool.internal.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

class PoolMemoryTest {

    @Test
    void everyBlockIsCountedByteForByteIncludingAlignmentSlack() {
        try (PoolMemory m = PoolMemory.create()) {
            MemorySegment a = m.allocate("a", 100);
            MemorySegment b = m.allocate("b", 4096);
            long counted = (100 + CacheLine.PAD - 1) + (4096 + CacheLine.PAD - 1);
            assertEquals(counted, m.totalAllocBytes());
            assertEquals(0, m.totalFreeBytes());
            assertEquals(counted, m.liveBytes());
            assertEquals(counted, m.peakLiveBytes());
            assertEquals(100, a.byteSize());
            assertEquals(0, a.address() % CacheLine.PAD, "cache-line aligned");
            assertEquals(0, b.address() % CacheLine.PAD, "cache-line aligned");
            long sum = m.memoryMap().stream().mapToLong(PoolMemory.BlockInfo::countedBytes).sum();
            assertEquals(m.totalAllocBytes(), sum, "the memory map adds up to the total");
            for (long i = 0; i < b.byteSize(); i++) {
                assertEquals(0, b.get(java.lang.foreign.ValueLayout.JAVA_BYTE, i), "zeroed");
            }
        }
    }

    @Test
    void releasableBlocksReallyGoBackAndLowerLiveBytes() {
        PoolMemory m = PoolMemory.create();
        MemorySegment fixed = m.allocate("fixed", 256);
        MemorySegment r = m.allocateReleasable("scratch", 1 << 20);
        long peak = m.liveBytes();
        m.release(r);
        assertEquals(peak - ((1 << 20) + CacheLine.PAD - 1), m.liveBytes());
        assertEquals(peak, m.peakLiveBytes(), "peak remembers");
        assertThrows(IllegalStateException.class, () -> r.get(java.lang.foreign.ValueLayout.JAVA_LONG, 0),
                "a released block is inaccessible, not a dangling pointer");
        assertThrows(IllegalArgumentException.class, () -> m.release(r), "released twice");
        assertThrows(IllegalArgumentException.class, () -> m.release(fixed), "not releasable");
        m.allocateReleasable("left for close", 64);
        m.close();
        assertEquals(0, m.liveBytes());
        assertEquals(m.totalAllocBytes(), m.totalFreeBytes());
        assertThrows(IllegalStateException.class, () -> fixed.get(java.lang.foreign.ValueLayout.JAVA_LONG, 0));
        assertThrows(IllegalStateException.class, () -> m.allocate("late", 8));
        m.close(); // idempotent
        assertEquals(m.totalAllocBytes(), m.totalFreeBytes());
    }

    @Test
    void badSizesAreRejected() {
        try (PoolMemory m = PoolMemory.create()) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> m.allocate("x", 0));
            assertTrue(e.getMessage().contains("bytes must be > 0"), e.getMessage());
        }
    }
}
