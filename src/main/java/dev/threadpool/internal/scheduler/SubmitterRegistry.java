package dev.threadpool.internal.scheduler;

import dev.threadpool.internal.memory.CacheLine;
import dev.threadpool.internal.memory.Mem;
import dev.threadpool.internal.memory.PoolMemory;
import java.lang.foreign.MemorySegment;

/**
 * The 64 submitter slots, claimed and released through one bitmap ({@code SUBMITTER_MASK}, its own line).
 * A claim is a CAS that sets the lowest clear bit; a release clears it. 64 is the cap because the mask is one
 * long, as the design's {@code submitter_free_mask}.
 */
final class SubmitterRegistry {

    /**
     * Off-heap layout.
     * <pre>
     *   SUBMITTER_MASK  long @0   bit k set: submitter slot k is registered
     *   pad to PAD (own line: written by register / release, read by WORK_STEALING workers on every steal
     *   round and park re-check)
     * </pre>
     */
    static final class Layout {
        static final long MASK_OFFSET = 0;
        static final long LENGTH = CacheLine.PAD;
        /** Submitter slots: one bit each of the {@code long} mask. */
        static final int SLOTS = Long.SIZE;

        private Layout() {}
    }

    static final int MAX_SUBMITTERS = Layout.SLOTS;
    /** The mask with every slot taken. */
    private static final long ALL_TAKEN = -1L;

    private final MemorySegment seg;

    SubmitterRegistry(PoolMemory memory) {
        this.seg = memory.allocate("submitter mask", Layout.LENGTH);
    }

    /** Claims a slot; -1 when all 64 are taken. */
    int claim() {
        for (;;) {
            long m = Mem.getLongVolatile(seg, Layout.MASK_OFFSET);
            if (m == ALL_TAKEN) {
                return -1;
            }
            int k = Long.numberOfTrailingZeros(~m);
            // CAS: two registrations never get the same slot.
            if (Mem.casLong(seg, Layout.MASK_OFFSET, m, m | (1L << k))) {
                return k;
            }
        }
    }

    /** The registered slots, one bit each (volatile load: seq_cst, so usable in the park re-check). */
    long mask() {
        return Mem.getLongVolatile(seg, Layout.MASK_OFFSET);
    }

    void release(int k) {
        Mem.getAndAndLong(seg, Layout.MASK_OFFSET, ~(1L << k));
    }
}
