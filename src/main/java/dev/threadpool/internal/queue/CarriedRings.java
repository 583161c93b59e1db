package dev.threadpool.internal.queue;

import dev.threadpool.internal.memory.CacheLine;
import dev.threadpool.internal.memory.PoolMemory;

/**
 * A pool's carried-task rings: {@link #stripes()} carrying {@link BoundedRing}s that share its carried capacity,
 * so that outside threads submitting at the same time claim cells in different rings.
 *
 * <h2>Why stripes</h2>
 * One MPMC ring takes every detached submit from outside the pool. With two threads submitting at once, both
 * CAS its tail and write neighbouring cells (four to a line) and references (eight to a line), so every push
 * moves lines between their cores: a burst of 20,000 short tasks from two producers ran at half the rate of the
 * same burst from one (3.2-3.9 against 7.2-8.4 M tasks/s on two workers, where ForkJoinPool, whose outside
 * threads each get a submission queue of their own, doubled: PERFORMANCE_TRACKING 66). A worker pops its own
 * home stripe first ({@code worker index & mask}), then the others; with as many stripes as workers (a power of
 * two, at most {@link #MAX_STRIPES}), each worker's home stripe is another's.
 *
 * <h2>Where a push goes</h2>
 * To the thread's home stripe, {@code (threadId + rotation) & mask}, and to the next ones in turn only while each
 * is full. A push that had to go {@code k} stripes on adds {@code k} to the rotation, so every thread's home
 * moves on together: producers whose ids differ in their low bits still never share a home, and a lone producer
 * that filled its stripe pushes into the next one directly from then on. Without the rotation, such a producer
 * retried its full home stripe (a failed claim, through the checked segment) before every push once the pool was
 * saturated, and a one-producer flood lost 15-20 % to one ring (PERFORMANCE_TRACKING 66). The rotation is a plain
 * int on a line of its own, written only by an overflowing push: a hint, whose lost or stale updates cost one
 * more overflow, never a task.
 *
 * <h2>What stays as one ring had it</h2>
 * <ul>
 *   <li><b>Admission.</b> A carried task is accepted by its claim in whichever stripe takes it; {@link #close}
 *       closes the stripes in index order, each with its own {@code getAndOr} on its tail ({@link
 *       BoundedRing#closeToPushes}), and returns the sum of their counts. A claim in stripe {@code j} either
 *       precedes stripe {@code j}'s close in that tail's total order, and is in its count, or fails on the bit;
 *       so the sum counts exactly the tasks accepted, as one ring's count did, whichever stripes a push tried
 *       (jcstress {@code AdmissionTest}'s striped cases, counting stress {@code carried-close}). A push that
 *       meets a closed stripe goes on to the next like a full one: accepted there before that stripe's close, it
 *       is in that close's count. Once {@link #close} has returned, every stripe refuses.</li>
 *   <li><b>Closed or full.</b> A push that failed everywhere asks {@link #closed}, which reads stripe 0, the first
 *       closed: if some stripe refused it for the close, stripe 0 was closed before (the close's program order,
 *       and the refusing load read the later bit), so the submitter throws instead of waiting; if only full
 *       stripes refused it, it waits for room, as on one ring.</li>
 *   <li><b>The bound.</b> The stripes hold {@link #capacity()} cells between them; a thread overflows into the
 *       other stripes before it waits, so one producer alone still uses the whole capacity.</li>
 *   <li><b>Order.</b> Each stripe is FIFO in claim order; the stripes together are not, as the carried and inject
 *       rings together never were. A thread's tasks leave in its order while its home stripe takes them.</li>
 * </ul>
 * With one stripe (a pool of one worker, or a small capacity: {@link #stripesFor}) every method is the one
 * ring's.
 */
public final class CarriedRings {
    /** At most this many stripes, whatever the worker count: a look at every stripe stays a few loads. */
    public static final int MAX_STRIPES = 8;
    /**
     * Each stripe holds at least this many cells: a worker claims carried batches only from a ring with
     * {@code 2 * CarriedBatches.MAX_BATCH} ready, and a stripe much smaller than that would never offer one.
     */
    public static final int MIN_STRIPE_CAPACITY = 64;

    /**
     * Where the rotation lives in {@link #rotation}: a {@link CacheLine#PAD} past the array's header and a PAD
     * before its end, so the line every push reads is written only by a push that overflowed, and nothing the
     * collector places beside the array shares it (native-notes/FFM.md, "The Java heap needs the same care").
     */
    private static final int ROTATION_AT = CacheLine.PAD / Integer.BYTES;

    private final BoundedRing[] rings;
    private final int mask;
    private final int capacity;
    /**
     * Element {@link #ROTATION_AT}: added to every thread's home stripe ("Where a push goes"). Plain, racy by
     * design: a hint. A lost or stale update costs one more overflowing push, never a task.
     */
    private final int[] rotation = new int[2 * ROTATION_AT + 1];

    /**
     * {@code stripes} carrying rings of {@code capacity / stripes} cells each, allocated from {@code memory}.
     *
     * @throws IllegalArgumentException if {@code capacity} is not a power of two a ring accepts, or
     *                                  {@code stripes} is not a power of two in [1, min(MAX_STRIPES, capacity / 2)]
     */
    public CarriedRings(PoolMemory memory, int capacity, int stripes) {
        BoundedRing.Layout.checkCapacity("capacity", capacity);
        if (stripes < 1 || Integer.bitCount(stripes) != 1 || stripes > MAX_STRIPES || stripes > capacity / 2) {
            throw new IllegalArgumentException("stripes must be a power of two in [1, "
                    + Math.min(MAX_STRIPES, Math.max(1, capacity / 2)) + "], got " + stripes);
        }
        this.rings = new BoundedRing[stripes];
        for (int i = 0; i < stripes; i++) {
            rings[i] = new BoundedRing(memory, stripes == 1 ? "carried-task ring" : "carried-task ring " + i,
                    capacity / stripes, true);
        }
        this.mask = stripes - 1;
        this.capacity = capacity;
    }

    /**
     * The stripes for a pool of {@code workers} workers and a carried capacity of {@code capacity} cells: the
     * workers rounded up to a power of two, at most {@link #MAX_STRIPES}, and no more than leave each stripe
     * {@link #MIN_STRIPE_CAPACITY} cells (1 when even two would not).
     */
    public static int stripesFor(int workers, int capacity) {
        int k = Integer.highestOneBit(Math.max(1, workers) * 2 - 1); // workers rounded up to a power of two
        k = Math.min(k, MAX_STRIPES);
        while (k > 1 && capacity / k < MIN_STRIPE_CAPACITY) {
            k >>>= 1;
        }
        return k;
    }

    public int stripes() {
        return rings.length;
    }

    /** Stripe {@code i}'s ring (tests, stats). */
    public BoundedRing ring(int i) {
        return rings[i];
    }

    /** Cells in all stripes together: the pool's carried bound. */
    public int capacity() {
        return capacity;
    }

    /** The calling thread's home stripe: the low bits of its thread id plus the rotation. */
    public int homeOfCurrentThread() {
        // plain read of the rotation: a hint ("Where a push goes")
        return ((int) Thread.currentThread().threadId() + rotation[ROTATION_AT]) & mask;
    }

    /** Worker {@code w}'s home stripe, where its pops start. */
    public int homeOfWorker(int w) {
        return w & mask;
    }

    /**
     * Pushes a carried task from the calling thread: its home stripe, then the others in turn; false when every
     * stripe was full or closed ({@link #closed} then says whether the close has begun). The claim that succeeds
     * is the acceptance ("What stays": admission).
     */
    public boolean tryPush(Object task, Object group) {
        return tryPushFrom(homeOfCurrentThread(), task, group);
    }

    /** {@link #tryPush} starting at stripe {@code home} (what a thread of that home does; tests). */
    public boolean tryPushFrom(int home, Object task, Object group) {
        final BoundedRing[] rs = rings;
        for (int k = 0; k < rs.length; k++) {
            BoundedRing r = rs[(home + k) & mask];
            if (r.tryPushCarried(task, group)) { // seq_cst tail CAS: the acceptance, as one ring's
                if (k != 0) {
                    rotation[ROTATION_AT] += k; // plain: moves every thread's home on by as many ("Where a push goes")
                }
                return true;
            }
        }
        return false;
    }

    /**
     * Claims carried entries for worker {@code w}: from its home stripe, else from the others in turn, with
     * {@link BoundedRing#popManyCarried} ({@code max} from a deep stripe, else one). Returns the count, 0 when no
     * stripe's head held a published carried entry.
     */
    public int popManyFor(int w, Object[] dst, int dstOff, int max) {
        final BoundedRing[] rs = rings;
        final int home = homeOfWorker(w);
        for (int k = 0; k < rs.length; k++) {
            int n = rs[(home + k) & mask].popManyCarried(dst, dstOff, max);
            if (n != 0) {
                return n;
            }
        }
        return 0;
    }

    /** One carried entry from any stripe (the shutdown sweep), or EMPTY; see {@link BoundedRing#tryPop(Object[])}. */
    public long tryPop(Object[] taken) {
        for (BoundedRing r : rings) {
            long e = r.tryPop(taken);
            if (e != QueueEntry.EMPTY) {
                return e;
            }
        }
        return QueueEntry.EMPTY;
    }

    /** Whether some stripe's head cell holds a published entry (volatile loads, as one ring's). */
    public boolean hasReadyEntry() {
        for (BoundedRing r : rings) {
            if (r.hasReadyEntry()) {
                return true;
            }
        }
        return false;
    }

    /** Whether every stripe is empty, counting claimed but unpublished cells (volatile loads). */
    public boolean isEmpty() {
        for (BoundedRing r : rings) {
            if (!r.isEmpty()) {
                return false;
            }
        }
        return true;
    }

    /** Entries in every stripe (volatile loads of each head and tail; a snapshot, not atomic across stripes). */
    public long size() {
        long n = 0;
        for (BoundedRing r : rings) {
            n += r.size();
        }
        return n;
    }

    /**
     * Whether the stripes together hold at most half of {@link #capacity()}: where a submitter waiting for a cell
     * resumes, and when a worker's pop signals one (Submission, "Waiting for a carried cell"). With one stripe,
     * {@link BoundedRing#atMostHalfFull}.
     */
    public boolean atMostHalfFull() {
        return rings.length == 1 ? rings[0].atMostHalfFull() : size() <= capacity >>> 1;
    }

    /**
     * Shutdown's close of carried admission: closes every stripe, in index order, and returns the tasks ever
     * accepted into any of them, stable from now on. Idempotent.
     */
    public long close() {
        long n = 0;
        for (BoundedRing r : rings) {
            n += r.closeToPushes(); // getAndOr (seq_cst) per stripe: totally ordered with that stripe's claims
        }
        return n;
    }

    /** Whether {@link #close} has begun: stripe 0, closed first (volatile load). */
    public boolean closed() {
        return rings[0].closedToPushes();
    }

    /** Carried tasks accepted so far in every stripe (acquire loads of each tail; see BoundedRing.pushesClaimed). */
    public long accepted() {
        long n = 0;
        for (BoundedRing r : rings) {
            n += r.pushesClaimed();
        }
        return n;
    }
}
