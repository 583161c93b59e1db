package dev.threadpool.internal.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

/**
 * {@link Mem#getLongOpaqueAtMasked} (the fork's demand check, PERFORMANCE_TRACKING 92) reads exactly what
 * {@link Mem#getLongOpaqueAt} reads at every address {@link Mem#maskable} accepts, and {@code maskable} accepts
 * the pool's own addresses and refuses the ones the mask would change.
 */
class MemMaskedTest {

    @Test
    void aMaskedLoadReadsTheSameWordAsTheRawLoad() {
        assumeTrue(Mem.RAW, "raw addresses need native access");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment s = arena.allocate(8 * 64, CacheLine.PAD);
            for (int i = 0; i < 64; i++) {
                s.setAtIndex(ValueLayout.JAVA_LONG, i, 0x0101_0101_0101_0101L * i ^ -i);
            }
            for (int i = 0; i < 64; i++) {
                long a = s.address() + 8L * i;
                assertTrue(Mem.maskable(a), "an 8-aligned native address is maskable: 0x" + Long.toHexString(a));
                assertEquals(Mem.getLongOpaqueAt(a), Mem.getLongOpaqueAtMasked(a), "word " + i);
                assertEquals(s.getAtIndex(ValueLayout.JAVA_LONG, i), Mem.getLongOpaqueAtMasked(a), "word " + i);
            }
        }
    }

    @Test
    void maskableRefusesWhatTheMaskWouldChange() {
        long a = 0x7f12_3456_7800L;
        assertTrue(Mem.maskable(a));
        for (int low = 1; low < 8; low++) {
            assertFalse(Mem.maskable(a + low), "misaligned by " + low);
        }
        assertFalse(Mem.maskable(a | 1L << 56), "at or above 2^56");
        assertFalse(Mem.maskable(-8L), "negative");
        assertTrue(Mem.maskable(0L), "0: the structures' path, never loaded through the mask");
    }

    @Test
    void theJoinsDemandCheckUsesTheMaskedLoadsOnThePoolsAddresses() {
        assumeTrue(Mem.RAW, "raw addresses need native access");
        try (PoolMemory m = PoolMemory.create()) {
            MemorySegment block = m.allocate("words", 3 * CacheLine.PAD);
            for (int i = 0; i < 3; i++) {
                assertTrue(Mem.maskable(block.address() + (long) i * CacheLine.PAD), "a pool word's address");
            }
        }
    }
}
