package dev.threadpool.internal.scheduler;

import dev.threadpool.internal.memory.CacheLine;
import dev.threadpool.internal.memory.Mem;
import dev.threadpool.internal.memory.PoolMemory;
import java.lang.foreign.MemorySegment;
import java.util.function.IntPredicate;

/**
 * Where work may be: one line of per-worker bitmaps (the {@code workers_nonempty} block), so that a worker looking
 * for work reads one line, not a line of every worker (issue 48: an idle look read about 4W lines, 275 at 64
 * workers, and each of them pulled a busy worker's own line out of its cache).
 *
 * <h2>The words</h2>
 * <pre>
 *   NONEMPTY  long @0    bit w: worker w's local queue may be non-empty. Set by w after a push that finds the
 *                        bit clear; cleared by w when its pop finds the queue empty (LocalQueues).
 *   HELD      long @8    bit w: worker w's LIFO slot or carried batch may hold an entry another worker could
 *                        take. Set by w after a put into its slot, or a refill that left entries in its batch,
 *                        that finds the bit clear; cleared by w only when it runs dry ({@link Scheduler#ranDry}).
 *   JOINS     long @16   bit w: worker w's join deque may hold an offered half. Set by w at an offer into its
 *                        empty deque that finds the bit clear; cleared by w when it runs dry (JoinAwareScheduler).
 *   pad to PAD
 * </pre>
 * Only worker {@code w} writes bit {@code w} of any word (an owner's {@code getAndOr}/{@code getAndAnd} changes no
 * other bit), so an owner may test its own bit with an opaque load and skip the write when it already has the
 * value it wants. Everybody else only reads.
 *
 * <h2>Why HELD and JOINS are cleared late</h2>
 * A worker that runs a chain of its own submits fills its LIFO slot and empties it once per task, and a join
 * offers and takes back its half once per join. A bit that followed those would cost two writes per task on a
 * line every worker reads, which is the cost this class exists to avoid (issue 48: a worker's own submit writes
 * no line all workers share). So these bits stay set from the first entry until the owner runs dry, the start of
 * its idle path, when all of its own sources are empty. The price is a stale bit while the owner runs the last
 * entry it took: a look that sees it probes that worker's lines and finds nothing. A look bounds how many it
 * probes ({@link #LOOK_PROBES}); the park re-check probes every set bit, once per park.
 *
 * <h2>Why the park re-check can rely on the bits (the Dekker pair of ParkingLot, one step longer)</h2>
 * An owner publishes an entry (a seq_cst exchange or CAS, or a release store followed by a full fence), then
 * makes sure its bit is set (a seq_cst {@code getAndOr} when it was clear), then loads the idle mask and the
 * searching count (WakeCoalescer). A parking worker announces (seq_cst {@code getAndOr} on the idle mask), then
 * loads these words (seq_cst), then probes each set bit's sources (seq_cst loads). If its load found the bit
 * clear, the owner's {@code getAndOr} follows that load in the total order, so the owner's idle-mask load follows
 * the announcement and sees it. If the bit was set, its probe and the owner's publish are the plain Dekker pair
 * of ParkingLot. A bit is cleared only by its owner, when the sources it covers are empty and only the owner can
 * fill them again. So every published entry is either seen by the re-check or answered by its owner's wake, as
 * when the re-check read every worker's lines itself; jcstress {@code WorkStealingParkTest} (its {@code Summary}
 * states) checks the pair.
 */
public final class WorkSummary {

    /** Off-heap layout (see the class comment): three words on one line of their own. */
    static final class Layout {
        static final long NONEMPTY_OFFSET = 0;
        static final long HELD_OFFSET = NONEMPTY_OFFSET + Long.BYTES;
        static final long JOINS_OFFSET = HELD_OFFSET + Long.BYTES;
        static final long LENGTH = CacheLine.PAD;
        /** Worker bits: one each of a {@code long} (hence {@code PoolConfig.MAX_THREADS} = 64). */
        static final int SLOTS = Long.SIZE;
        /** A bit index modulo {@link #SLOTS}: brings a rotated index back into a word. */
        static final int SLOT_MASK = SLOTS - 1;

        private Layout() {}
    }

    /** Worker {@code w}'s local queue may be non-empty. */
    public static final long NONEMPTY = Layout.NONEMPTY_OFFSET;
    /** Worker {@code w}'s LIFO slot or carried batch may hold an entry. */
    public static final long HELD = Layout.HELD_OFFSET;
    /** Worker {@code w}'s join deque may hold an offered half. */
    public static final long JOINS = Layout.JOINS_OFFSET;

    /**
     * The most workers one bounded look probes beyond the summary line ({@link #pick}): a look reads a fixed
     * number of lines whatever the worker count. Two: a look that meets one stale bit still probes a second worker.
     */
    static final int LOOK_PROBES = 2;

    /** Ints in a {@link CacheLine#PAD}: the stride of {@link #lookStart}. */
    private static final int LOOK_STRIDE = CacheLine.PAD / Integer.BYTES;

    private final MemorySegment seg;
    /** The block's address for the owners' tests of their own bits ({@link Mem#RAW}), else 0. */
    private final long base;
    /**
     * Where worker i's next bounded probe starts ({@link #probe}): element {@code (i + 1) * LOOK_STRIDE}, a line
     * apart and a line past the array's header; plain, written by worker i only.
     */
    private final int[] lookStart;

    public WorkSummary(PoolMemory memory, int workers) {
        if (workers < 1 || workers > Layout.SLOTS) {
            throw new IllegalArgumentException("workers must be in [1, " + Layout.SLOTS + "]: workers=" + workers);
        }
        this.seg = memory.allocate("workers_nonempty", Layout.LENGTH);
        this.base = Mem.RAW ? seg.address() : 0L;
        this.lookStart = new int[(workers + 2) * LOOK_STRIDE];
    }

    // ---- owner (worker w) ----------------------------------------------------------------------------------

    /**
     * Sets w's bit in {@code word} unless it is set already; worker w only, after the entry it covers is published
     * (class comment, "Why the park re-check can rely on the bits").
     */
    public void mark(long word, int w) {
        long bit = 1L << w;
        // opaque: our own bit, which only we write; by raw address (owners are workers, which the arena outlives)
        if ((Mem.getLongOpaqueAt(seg, base, word) & bit) == 0) {
            // getAndOr (seq_cst): after the entry's publish and before the caller's idle-mask load; pairs with a
            // parking worker's announce-then-load (class comment)
            Mem.getAndOrLong(seg, word, bit);
        }
    }

    /**
     * Clears w's bit in {@code word} if it is set; true when it was. Worker w only, when the sources the word
     * covers are empty.
     */
    public boolean clear(long word, int w) {
        long bit = 1L << w;
        // opaque: our own bit, as in mark
        if ((Mem.getLongOpaqueAt(seg, base, word) & bit) == 0) {
            return false;
        }
        // getAndAnd (seq_cst): only our bit changes; ordered after our last take from the sources it covers
        Mem.getAndAndLong(seg, word, ~bit);
        return true;
    }

    /** Whether w's bit is set in {@code word}; worker w only (opaque: its own bit). */
    public boolean isMarked(long word, int w) {
        return (Mem.getLongOpaqueAt(seg, base, word) & (1L << w)) != 0;
    }

    // ---- any thread ------------------------------------------------------------------------------------------

    /**
     * The bitmap {@code word}: a volatile (seq_cst) load, ordered after a parking worker's announcement (class
     * comment); any thread, while the pool's memory is open.
     */
    public long mask(long word) {
        return Mem.getLongVolatile(seg, word);
    }

    /**
     * A bounded look's probe (Scheduler.lookForWork): tests {@code ready} on at most {@link #LOOK_PROBES} set bits
     * of {@code m}, from where worker {@code i}'s last probe stopped; true at the first that is ready, where the
     * next probe starts again. Only from worker {@code i}'s thread (its start is a plain int of its own line).
     */
    boolean probe(int i, long m, IntPredicate ready) {
        final int at = (i + 1) * LOOK_STRIDE;
        int start = lookStart[at];
        for (int k = 0; k < LOOK_PROBES && m != 0; k++) {
            int v = pick(m, start);
            m &= ~(1L << v);
            start = v + 1;
            if (ready.test(v)) {
                lookStart[at] = v; // plain, owner-only: the same worker first next time
                return true;
            }
        }
        lookStart[at] = start; // plain, owner-only: the next look goes on from here
        return false;
    }

    /**
     * The first set bit of {@code m} at or after {@code start}, wrapping (a rotated scan, so that lookers starting
     * at different places spread over the set bits); -1 when {@code m} is 0.
     */
    static int pick(long m, int start) {
        if (m == 0) {
            return -1;
        }
        int s = start & Layout.SLOT_MASK;
        return (Long.numberOfTrailingZeros(Long.rotateRight(m, s)) + s) & Layout.SLOT_MASK;
    }
}
