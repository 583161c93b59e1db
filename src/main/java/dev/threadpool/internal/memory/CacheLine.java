package dev.threadpool.internal.memory;

/**
 * The padding unit for contended off-heap words.
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

    /** The hardware line size assumed for records that are not isolated (see class comment). */
    public static final int LINE = 64;

    private CacheLine() {}

    /** Rounds {@code bytes} up to a whole number of {@link #PAD} units. */
    public static long padUp(long bytes) {
        return (bytes + PAD - 1) & -(long) PAD;
    }
}
