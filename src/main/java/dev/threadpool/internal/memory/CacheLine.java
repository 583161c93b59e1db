package dev.threadpool.internal.memory;

/**
 * The padding unit for contended off-heap words, and for per-worker runs of on-heap reference arrays.
 *
 * <p>x86 lines are 64 bytes, but Intel's L2 "spatial" (adjacent-line) prefetcher fetches lines in
 * 128-byte aligned pairs, so two hot words 64 bytes apart still ping-pong as if they shared a line.
 * Apple M-series cores and some Neoverse parts have 128-byte lines outright. The JDK pads
 * {@code @Contended} fields by 128 bytes for the same reason. We therefore give every word that is
 * written by one party and read or written by another (ring head, ring tail, freelist head, admission
 * word, idle mask, per-worker counter blocks) its own 128-byte line; see {@code native-notes/FFM.md}.
 *
 * <p>Records that are touched by at most two threads at different moments (task descriptors) are
 * packed at {@link #DESCRIPTOR_STRIDE} = 64 bytes: halving the footprint of the descriptor table is worth
 * more than the occasional adjacent-line transfer.
 */
public final class CacheLine {
    /** Bytes between two independently contended words, and the alignment of every pool block. */
    public static final int PAD = 128;

    /**
     * Elements of an on-heap reference array that fill at least one {@link #PAD}: 4-byte compressed references
     * (8-byte ones make it two PADs). An array that holds several workers' runs of elements leaves this many
     * empty before each worker's run and after the last, so that no worker writes a line that holds the array's
     * header (its length, which every access reads for the bounds check), a neighbouring object the collector
     * placed there, or another worker's run. Without it, worker 0's join frames shared the header's line, and
     * whether two-worker join trees ran at full speed or below one worker's depended on where the collector had
     * put the array (PERFORMANCE_TRACKING entry 63).
     */
    public static final int REF_GAP = PAD / 4;

    /** The hardware line size assumed for records that are not isolated (see class comment). */
    public static final int LINE = 64;

    private CacheLine() {}

    /** Rounds {@code bytes} up to a whole number of {@link #PAD} units. */
    public static long padUp(long bytes) {
        return (bytes + PAD - 1) & -(long) PAD;
    }
}
