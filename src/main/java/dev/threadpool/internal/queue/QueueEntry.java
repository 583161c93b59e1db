package dev.threadpool.internal.queue;

/**
 * What the queues carry: one long per entry, any value but the sentinels ({@link #EMPTY}, and
 * {@code WorkDeque.ABORT}), so every queue moves a single word.
 *
 * <p>The pool's entries are its task handles, packed per pool by
 * {@code DescriptorTable.handle(idx, gen)} as {@code gen << idxBits | idx} with {@code idxBits =
 * log2(queueCapacity)}: always in {@code [2, 2^63)}, so never a sentinel (both are negative). A worker
 * decodes them with {@code DescriptorTable.slotOf} / {@code genOf} and rejects an entry whose descriptor has
 * since been recycled (its generation moved on). Decode a pool entry only through its table: the static
 * {@link #pack}, {@link #gen} and {@link #idx} below are a fixed 32/32 layout for the queues' own tests and
 * benchmarks, which need distinct values and nothing else.
 *
 * <p>{@link #EMPTY} (all ones) is the "nothing" value of every queue and of the LIFO slot. {@link #CARRIED}
 * marks an entry whose task has no descriptor: its references travel in the ring cell itself
 * ({@code BoundedRing.tryPushCarried}); only a ring built to carry tasks holds one. A carried task in argument
 * form comes out of the carrying structures as {@link #CARRIED} too, its argument handed over beside it (its cell's
 * value holds the argument: {@code BoundedRing}, "Argument cells").
 */
public final class QueueEntry {
    /** Returned by pops when there is nothing to take; never a valid entry. */
    public static final long EMPTY = -1L;
    /**
     * The entry of a task carried by its ring cell ({@code BoundedRing.tryPushCarried}): no descriptor, no
     * handle; the pop hands its references over ({@code BoundedRing.tryPop(Object[])}). Negative, so never a
     * pool handle, and not a sentinel of any queue.
     */
    public static final long CARRIED = Long.MIN_VALUE;
    /**
     * The context marker of a carried task in argument form whose context is {@code null}
     * ({@code BoundedRing}, "Argument cells"): a non-null marker in the cell's context slot is what says "argument
     * form", so a null context travels as this object, and the consumer that runs or reports the task turns it
     * back into {@code null}. Never handed to user code.
     */
    public static final Object NULL_CTX = new Object() {
        @Override
        public String toString() {
            return "NULL_CTX";
        }
    };

    /** The context a carried task in argument form was submitted with: {@code marker}, or null for NULL_CTX. */
    public static Object ctxOf(Object marker) {
        return marker == NULL_CTX ? null : marker;
    }

    private QueueEntry() {}

    /** A test value {@code gen(32) | idx(32)}; not how the pool packs its entries (see the class comment). */
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
