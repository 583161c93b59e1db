package dev.threadpool.internal.queue;

/**
 * A queue entry names a task descriptor: {@code gen} (high 32 bits) and {@code idx} (low 32 bits) packed in
 * one long, so every queue moves a single word and a worker can reject an entry whose descriptor has since
 * been recycled (its generation moved on).
 *
 * <p>{@link #EMPTY} (all ones) is the "nothing" value of every queue and of the LIFO slot. No real entry can
 * equal it: descriptor indices are below {@code 2^24} (the largest {@code queueCapacity}), so the low word
 * of a real entry is never {@code 0xFFFF_FFFF}.
 */
public final class QueueEntry {
    /** Returned by pops when there is nothing to take; never a valid entry. */
    public static final long EMPTY = -1L;

    private QueueEntry() {}

    public static long pack(int gen, int idx) {
        return ((long) gen << 32) | (idx & 0xFFFF_FFFFL);
    }

    public static int gen(long entry) {
        return (int) (entry >>> 32);
    }

    public static int idx(long entry) {
        return (int) entry;
    }
}
