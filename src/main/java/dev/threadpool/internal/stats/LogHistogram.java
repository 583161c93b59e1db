package dev.threadpool.internal.stats;

import dev.threadpool.LatencySummary;
import dev.threadpool.internal.memory.CacheLine;
import dev.threadpool.internal.memory.Mem;
import dev.threadpool.internal.memory.PoolMemory;
import java.lang.foreign.MemorySegment;

/**
 * A set of log-linear histograms of non-negative {@code long} values (nanoseconds), one per writer, off-heap in
 * the pool arena. Each writer records into its own block only (single writer: plain read, release store, no
 * read-modify-write), so recording is lock-free, wait-free and allocation-free; a reader merges the blocks with
 * acquire loads.
 *
 * <h2>Buckets</h2>
 * Values below {@code 2^SUB_BITS} (8) get one bucket each. A larger value {@code v} with highest set bit
 * {@code e} falls in one of {@code SUB_BUCKETS} equal sub-buckets of the octave {@code [2^e, 2^(e+1))}:
 * <pre>
 *   v &lt; 8:   index = v
 *   v &gt;= 8:  e = 63 - nlz(v);  sub = (v &gt;&gt;&gt; (e - 3)) &amp; 7;  index = (e - 2) * 8 + sub
 * </pre>
 * so every bucket's width is at most 1/8 of its lower bound: a reported percentile is at most 12.5% above
 * the true value, never below it (the bucket's highest value is reported, capped by the exact maximum).
 * Every positive {@code long} fits: {@code e <= 62} gives at most {@link #BUCKETS} = 488 buckets.
 *
 * <h2>Layout (one block per writer, PAD-aligned)</h2>
 * <pre>
 *   MAX @0 (exact largest value) | SUM @8 (sum of values, wraps after ~292 years of nanos)
 *   BUCKETS_OFFSET = PAD: BUCKETS longs, bucket k at BUCKETS_OFFSET + 8k
 *   block length = PAD + BUCKETS * 8, rounded up to PAD
 * </pre>
 * The count is the sum of the buckets, not a separate word, so a merged snapshot's count always agrees with
 * its percentiles even while writers record.
 */
public final class LogHistogram {
    public static final int SUB_BITS = 3;
    public static final int SUB_BUCKETS = 1 << SUB_BITS;
    /** Buckets per histogram: 8 exact ones, then 8 per octave for octaves 3..62. */
    public static final int BUCKETS = (63 - SUB_BITS + 1) * SUB_BUCKETS;

    public static final long MAX_OFFSET = 0;
    public static final long SUM_OFFSET = 8;
    public static final long BUCKETS_OFFSET = CacheLine.PAD;
    public static final long BLOCK_LENGTH =
            (BUCKETS_OFFSET + 8L * BUCKETS + CacheLine.PAD - 1) & -(long) CacheLine.PAD;

    private final MemorySegment seg;
    private final int writers;

    /** Allocates {@code writers} empty histograms (zeroed by the arena) as one counted block. */
    public LogHistogram(PoolMemory memory, String purpose, int writers) {
        if (writers <= 0) {
            throw new IllegalArgumentException("writers must be > 0: writers=" + writers);
        }
        this.writers = writers;
        this.seg = memory.allocate(purpose, BLOCK_LENGTH * writers);
    }

    public int writers() {
        return writers;
    }

    /** The bucket of {@code v}; negative values (a clock that went backwards) count as 0. */
    public static int bucketOf(long v) {
        if (v < SUB_BUCKETS) {
            return v < 0 ? 0 : (int) v;
        }
        int e = 63 - Long.numberOfLeadingZeros(v);
        int sub = (int) (v >>> (e - SUB_BITS)) & (SUB_BUCKETS - 1);
        return (e - SUB_BITS + 1) * SUB_BUCKETS + sub;
    }

    /** The smallest value of bucket {@code k}. */
    public static long lowestOf(int k) {
        if (k < SUB_BUCKETS) {
            return k;
        }
        int e = k / SUB_BUCKETS + SUB_BITS - 1;
        long sub = k % SUB_BUCKETS;
        return (SUB_BUCKETS + sub) << (e - SUB_BITS);
    }

    /** The largest value of bucket {@code k}. */
    public static long highestOf(int k) {
        return k == BUCKETS - 1 ? Long.MAX_VALUE : lowestOf(k + 1) - 1;
    }

    /**
     * Records {@code v} in writer {@code w}'s histogram. Only from writer {@code w}'s thread: plain reads of its
     * own words and release stores, which pair with {@link #merge}'s acquire loads.
     */
    public void record(int w, long v) {
        final MemorySegment s = seg;
        final long base = BLOCK_LENGTH * w;
        if (v < 0) {
            v = 0;
        }
        long b = base + BUCKETS_OFFSET + 8L * bucketOf(v);
        Mem.setLongRelease(s, b, Mem.getLongPlain(s, b) + 1); // owner-only: release pairs with merge's acquire
        Mem.setLongRelease(s, base + SUM_OFFSET, Mem.getLongPlain(s, base + SUM_OFFSET) + v);
        if (v > Mem.getLongPlain(s, base + MAX_OFFSET)) {
            Mem.setLongRelease(s, base + MAX_OFFSET, v);
        }
    }

    /** A merged copy of the histograms of writers {@code [from, to)}. */
    public Snapshot merge(int from, int to) {
        long[] buckets = new long[BUCKETS];
        long max = 0, sum = 0;
        for (int w = from; w < to; w++) {
            long base = BLOCK_LENGTH * w;
            // acquire: pairs with record's release stores; each word is monotonic, so a racing read is merely
            // slightly older, never torn.
            max = Math.max(max, Mem.getLongAcquire(seg, base + MAX_OFFSET));
            sum += Mem.getLongAcquire(seg, base + SUM_OFFSET);
            for (int k = 0; k < BUCKETS; k++) {
                buckets[k] += Mem.getLongAcquire(seg, base + BUCKETS_OFFSET + 8L * k);
            }
        }
        return new Snapshot(buckets, max, sum);
    }

    /** All writers merged. */
    public Snapshot merge() {
        return merge(0, writers);
    }

    /** An immutable, on-heap merged histogram (made at snapshot time; never on the hot path). */
    public static final class Snapshot {
        private final long[] buckets;
        private final long count;
        private final long max;
        private final long sum;

        Snapshot(long[] buckets, long max, long sum) {
            this.buckets = buckets;
            long c = 0;
            int top = -1;
            for (int k = 0; k < buckets.length; k++) {
                c += buckets[k];
                if (buckets[k] != 0) {
                    top = k;
                }
            }
            this.count = c;
            // The max word may lag the buckets by a record in flight: never report less than the top bucket.
            this.max = top < 0 ? 0 : Math.max(max, lowestOf(top));
            this.sum = sum;
        }

        public long count() { return count; }
        public long max() { return max; }
        public long sum() { return sum; }

        /**
         * The value at quantile {@code q} in [0, 1]: the highest value of the bucket holding the sample of rank
         * {@code ceil(q * count)} (at least 1), capped by the maximum. 0 when empty.
         */
        public long valueAt(double q) {
            if (!(q >= 0 && q <= 1)) {
                throw new IllegalArgumentException("q must be in [0, 1]: q=" + q);
            }
            if (count == 0) {
                return 0;
            }
            long rank = Math.max(1, (long) Math.ceil(q * count));
            long seen = 0;
            for (int k = 0; k < buckets.length; k++) {
                seen += buckets[k];
                if (seen >= rank) {
                    return Math.min(highestOf(k), max);
                }
            }
            return max;
        }

        public LatencySummary summary() {
            return new LatencySummary(count, valueAt(0.50), valueAt(0.90), valueAt(0.99), valueAt(0.999), max,
                    count == 0 ? 0 : sum / count);
        }
    }
}
