package dev.threadpool.internal.stats;

import dev.threadpool.Lane;
import dev.threadpool.internal.memory.CacheLine;
import dev.threadpool.internal.memory.Mem;
import dev.threadpool.internal.memory.PoolMemory;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Peak queue depth per lane: a monotonic max that producers feed by sampling after a push, and snapshots feed
 * with the whole lane's depth.
 *
 * <h2>Sampled, not per submit</h2>
 * Reading a ring's depth means reading its head, a line every consumer's pop writes: one cache miss per
 * submit if every submit looked. So a producer looks only when {@link #sample} says so: about one call in
 * {@link #SAMPLE_PERIOD} (a push of {@code n} entries with probability {@code min(1, n / SAMPLE_PERIOD)}),
 * decided by the calling thread's {@link ThreadLocalRandom} (a field of the thread itself: no shared word is
 * read or written to decide). The peak is therefore a sampled peak: a backlog that lasts more than a few
 * hundred submits is seen with near certainty, a spike of a few entries may not be; every snapshot feeds
 * the exact depth of the moment, so {@code peak >= depth} holds in every snapshot.
 *
 * <p>Cost to a sampling producer: the depth's loads, one opaque load of a read-mostly word and a compare; only
 * a depth above the current peak pays a CAS (a max loop that gives up as soon as somebody else stored a larger
 * value). Once the peak has settled the word's line stays shared in every producer's cache.
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

    /** A producer samples the depth about once per this many submitted entries (a power of two). */
    public static final int SAMPLE_PERIOD = 64;

    private final MemorySegment seg;

    public QueueDepthGauge(PoolMemory memory) {
        if (Layout.PEAK_OFFSET + Layout.PEAK_STRIDE * LANES.length > Layout.LENGTH) {
            throw new AssertionError("one line holds every lane's peak");
        }
        this.seg = memory.allocate("queue depth peaks", Layout.LENGTH);
    }

    /**
     * Whether a producer that just pushed {@code n} entries should feed the depth now: always for
     * {@code n >= SAMPLE_PERIOD}, else with probability {@code n / SAMPLE_PERIOD}. Reads and writes only the
     * calling thread's random seed.
     */
    public static boolean sample(int n) {
        return n >= SAMPLE_PERIOD || (ThreadLocalRandom.current().nextInt() & (SAMPLE_PERIOD - 1)) < n;
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
