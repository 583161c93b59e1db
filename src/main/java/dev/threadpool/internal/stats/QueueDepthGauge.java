package dev.threadpool.internal.stats;

import dev.threadpool.Lane;
import dev.threadpool.internal.memory.CacheLine;
import dev.threadpool.internal.memory.Mem;
import dev.threadpool.internal.memory.PoolMemory;
import java.lang.foreign.MemorySegment;

/**
 * Peak queue depth per lane: a monotonic max that producers feed after a push and snapshots feed with the
 * whole lane's depth.
 *
 * <p>Cost to a producer: one opaque load of a read-mostly word and a compare; only a depth above the current
 * peak pays a CAS (a max loop that gives up as soon as somebody else stored a larger value). Once the peak has
 * settled the word's line stays shared in every producer's cache.
 */
public final class QueueDepthGauge {
    private static final Lane[] LANES = Lane.values();

    /**
     * Off-heap layout: one line for all lanes (the peaks are read-mostly, so sharing a line costs nothing once
     * they have settled).
     * <pre>
     *   PEAK(lane)  long @PEAK_OFFSET + PEAK_STRIDE * lane.ordinal()   (DEFAULT @0, BLOCKING @8)
     *   pad to PAD
     * </pre>
     */
    public static final class Layout {
        public static final long PEAK_OFFSET = 0;
        public static final long PEAK_STRIDE = Long.BYTES;
        public static final long LENGTH = CacheLine.PAD;

        private Layout() {}

        static long peakOffset(Lane lane) {
            return PEAK_OFFSET + PEAK_STRIDE * lane.ordinal();
        }
    }

    private final MemorySegment seg;

    public QueueDepthGauge(PoolMemory memory) {
        if (Layout.PEAK_OFFSET + Layout.PEAK_STRIDE * LANES.length > Layout.LENGTH) {
            throw new AssertionError("one line holds every lane's peak");
        }
        this.seg = memory.allocate("queue depth peaks", Layout.LENGTH);
    }

    /** Raises lane {@code lane}'s peak to {@code depth} if it is higher; returns the peak afterwards. */
    public long observe(Lane lane, long depth) {
        long off = Layout.peakOffset(lane);
        // opaque: only a hint for the fast path; the CAS below validates it.
        long peak = Mem.getLongOpaque(seg, off);
        while (depth > peak) {
            // CAS (volatile): concurrent raisers agree on the max; the loser re-reads and stops if beaten.
            if (Mem.casLong(seg, off, peak, depth)) {
                return depth;
            }
            peak = Mem.getLongVolatile(seg, off);
        }
        return peak;
    }

    /** The peak of {@code lane} (acquire: pairs with the CAS that raised it). */
    public long peak(Lane lane) {
        return Mem.getLongAcquire(seg, Layout.peakOffset(lane));
    }
}
