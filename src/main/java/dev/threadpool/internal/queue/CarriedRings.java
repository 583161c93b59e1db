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
 * home stripe first ({@code worker index & mask}), then the others. Up to {@link #PER_WORKER_UP_TO} workers
 * there are as many stripes as workers (a power of two), so each worker's home stripe is another's; past that,
 * one per {@link #WORKERS_PER_STRIPE} workers ({@link #stripesFor}: 16 at 64 workers), so that a home stripe's
 * head is shared by a handful of workers while the park re-check, which reads every stripe, stays a few dozen
 * lines (issue 48: a stripe per worker made it 131 lines at 64 workers).
 *
 * <h2>Where a push goes</h2>
 * To the thread's home stripe, {@code (threadId + offset) & mask}, and to the next ones in turn only while each
 * is full (or closed). The offset is a plain int, a hint, on a line of its own in {@link #homes}; a push that
 * went {@code k} stripes past its home adds {@code k} to it, so the next push goes straight where this one went.
 * Without that, a lone producer retried its full home stripe (a failed claim, through the checked segment)
 * before every push once the pool was saturated, and a one-producer flood lost 15-20 % to one ring
 * (PERFORMANCE_TRACKING 66). Lost or stale updates of an offset cost one more overflow or a push in another
 * stripe, never a task.
 * <ul>
 *   <li><b>One or two stripes: one offset, the rotation.</b> Every thread adds the same offset, so an overflow
 *       moves every thread's home on together, and producers whose ids differ in their low bit never share a
 *       home. A thread stays in its home stripe until it is full.</li>
 *   <li><b>{@link #SPREAD_MIN_STRIPES} stripes or more: an offset per home, and the spread.</b> With many
 *       stripes and one producer, a thread that stayed home until its stripe was full put a flood into one
 *       stripe: every other worker scanned up to {@code stripes - 1} empty stripes per pop and then claimed at
 *       that one head. So a push whose claim ends a run of {@link #SPREAD} positions of its stripe (its
 *       position {@code p} with {@code p % SPREAD == SPREAD - 1}: the stripe's tail is the counter) also moves
 *       its thread's home on by one: a producer alone puts {@code SPREAD} tasks in each stripe in turn, and
 *       within {@code stripes * SPREAD} pushes every worker's home stripe has a run to claim. No write per push
 *       beyond the claim: the offset is written once per run (and on an overflow), on its own line. The offset
 *       belongs to the threads of one home ({@code threadId & mask}, the threads that shared a home stripe
 *       anyway), so a producer's spread moves only the producers of its home: the others keep theirs.
 *       Producers of different homes walk the stripes side by side and may meet in one; since every run ends
 *       at a fixed position of its stripe, the one whose claim ends it moves on and the other stays, so two that
 *       meet part at that stripe's next run end. The cost: a producer that enters a stripe another producer
 *       left takes its tail line (and the reference line at the run's edge) from that producer's core, about
 *       one line a run of {@code SPREAD}, where producers on disjoint home stripes took none (SCALING.md's
 *       budget for an outside detached submit is 1/8 of a shared write a task). With two stripes the workers'
 *       look at the other stripe is one more stripe, and two producers would trade stripes every run, so two
 *       stripes keep the rotation.</li>
 * </ul>
 * {@link #tryPushFrom} starts at a stripe it is given and moves no offset (tests, models).
 *
 * <h2>What stays as one ring had it</h2>
 * <ul>
 *   <li><b>Admission.</b> A carried task is accepted by its claim in whichever stripe takes it; {@link #close}
 *       closes the stripes in index order, each with its own {@code getAndOr} on its tail ({@link
 *       BoundedRing#closeToPushes}), and returns the sum of their counts. A claim in stripe {@code j} either
 *       precedes stripe {@code j}'s close in that tail's total order, and is in its count, or fails on the bit;
 *       so the sum counts exactly the tasks accepted, as one ring's count did, whichever stripes a push tried
 *       and wherever its home was (jcstress {@code AdmissionTest}'s striped cases, counting stress
 *       {@code carried-close}). A push that meets a closed stripe goes on to the next like a full one: accepted
 *       there before that stripe's close, it is in that close's count. Once {@link #close} has returned, every
 *       stripe refuses.</li>
 *   <li><b>Closed or full.</b> A push that failed everywhere asks {@link #closed}, which reads stripe 0, the first
 *       closed: if some stripe refused it for the close, stripe 0 was closed before (the close's program order,
 *       and the refusing load read the later bit), so the submitter throws instead of waiting; if only full
 *       stripes refused it, it waits for room, as on one ring.</li>
 *   <li><b>The bound.</b> The stripes hold {@link #capacity()} cells between them; a thread overflows into the
 *       other stripes before it waits, so one producer alone still uses the whole capacity.</li>
 *   <li><b>Order.</b> Each stripe is FIFO in claim order; the stripes together are not, as the carried and inject
 *       rings together never were. A thread's tasks leave in its order while one stripe takes them: until its
 *       home stripe is full with one or two stripes, for a run of {@link #SPREAD} with more.</li>
 * </ul>
 *
 * <h2>What grows with the stripes</h2>
 * A push reads one offset and claims in one stripe whatever the stripe count (more only when stripes are full).
 * What reads every stripe: a worker's pop that finds its home stripe empty goes on through the others
 * ({@link #popManyFor}), the idle look {@link #hasReadyEntry()} (a bounded one: {@link #hasReadyEntry(int, int)}),
 * and the cold or waiting paths ({@link #size}, {@link #isEmpty}, {@link #atMostHalfFull}, {@link #close},
 * {@link #accepted}). Memory: each stripe is a ring block of its own (a head line, a tail line, its cells and a
 * trailing pad: {@link BoundedRing.Layout#byteSize}), and with the spread {@link #homes} holds a
 * {@link CacheLine#PAD} per stripe on the heap (8 KiB at 64 stripes).
 *
 * <p>With one stripe (a pool of one worker, or a small capacity: {@link #stripesFor}) every method is the one
 * ring's, and no push writes an offset.
 */
public final class CarriedRings {
    /**
     * At most this many stripes: PoolConfig.MAX_THREADS, the most workers a pool has, so every worker can have a
     * home stripe of its own (the {@code workers_nonempty} bitmap of the schedulers is one long for the same
     * bound).
     */
    public static final int MAX_STRIPES = 64;
    /**
     * Each stripe holds at least this many cells: a worker claims carried batches only from a ring with
     * {@code 2 * CarriedBatches.MAX_BATCH} ready, and a stripe much smaller than that would never offer one.
     */
    public static final int MIN_STRIPE_CAPACITY = 64;
    /**
     * Pushes a producer puts in a stripe before it moves on, where it spreads ("Where a push goes"): a worker's
     * carried batch ({@link CarriedBatches#MAX_BATCH}). A power of two: a run ends at a position {@code p} with
     * {@code (p & (SPREAD - 1)) == SPREAD - 1}.
     */
    public static final int SPREAD = CarriedBatches.MAX_BATCH;
    /** From this many stripes on, each home has an offset of its own and a producer spreads its pushes. */
    public static final int SPREAD_MIN_STRIPES = 4;
    /** Up to this many workers, {@link #stripesFor} gives each worker a stripe (rounded up to a power of two). */
    public static final int PER_WORKER_UP_TO = 8;
    /** Past {@link #PER_WORKER_UP_TO} workers, {@link #stripesFor} gives a stripe per this many workers. */
    public static final int WORKERS_PER_STRIPE = 4;

    /**
     * Ints in a {@link CacheLine#PAD}: the stride of {@link #homes}. Offset {@code i} lives at element
     * {@code (i + 1) * HOME_STRIDE}: a PAD past the array's header and each other, and a PAD before the array's
     * end, so the line every push of a home reads is written only by a push of that home that moved on, and
     * nothing the collector places beside the array shares it (native-notes/FFM.md, "The Java heap needs the same
     * care").
     */
    private static final int HOME_STRIDE = CacheLine.PAD / Integer.BYTES;

    private final BoundedRing[] rings;
    private final int mask;
    private final int capacity;
    /** {@code mask} where each home has an offset of its own (the spread), 0 where all share one (the rotation). */
    private final int homeMask;
    /** Whether a push that ends a run of {@link #SPREAD} in its stripe moves its home on ("Where a push goes"). */
    private final boolean spreads;
    /**
     * The offsets added to the thread ids' homes, offset {@code i} at {@code (i + 1) * HOME_STRIDE}: one (the
     * rotation) with one or two stripes, one per home with more ("Where a push goes"). Plain, racy by design:
     * hints. A lost or stale update costs one more overflowing push, or a push in another stripe, never a task.
     */
    private final int[] homes;

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
        this.spreads = stripes >= SPREAD_MIN_STRIPES;
        this.homeMask = spreads ? mask : 0;
        this.homes = new int[(homeMask + 2) * HOME_STRIDE + 1];
    }

    /**
     * The stripes for a pool of {@code workers} workers and a carried capacity of {@code capacity} cells: the
     * workers rounded up to a power of two up to {@link #PER_WORKER_UP_TO}, past that a quarter of them
     * ({@link #WORKERS_PER_STRIPE}) but never fewer than {@link #PER_WORKER_UP_TO}, at most {@link #MAX_STRIPES},
     * and no more than leave each stripe {@link #MIN_STRIPE_CAPACITY} cells (1 when even two would not). So 1, 2,
     * 4, 8 stripes for 1, 2, 3-4, 5-32 workers, 16 for 33-64.
     */
    public static int stripesFor(int workers, int capacity) {
        int k = Integer.highestOneBit(Math.max(1, workers) * 2 - 1); // workers rounded up to a power of two
        if (k > PER_WORKER_UP_TO) {
            k = Math.max(PER_WORKER_UP_TO, k / WORKERS_PER_STRIPE);
        }
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

    /** Whether a push that ends a run of {@link #SPREAD} in its stripe moves its thread's home on. */
    public boolean spreads() {
        return spreads;
    }

    /** The calling thread's home stripe: its thread id plus its home's offset ("Where a push goes"). */
    public int homeOfCurrentThread() {
        int id = (int) Thread.currentThread().threadId();
        return (id + homes[offsetAt(id)]) & mask; // plain read of the offset: a hint ("Where a push goes")
    }

    /** The element of {@link #homes} that holds the offset of thread id {@code id}'s home. */
    private int offsetAt(int id) {
        return ((id & homeMask) + 1) * HOME_STRIDE;
    }

    /** Worker {@code w}'s home stripe, where its pops start. */
    public int homeOfWorker(int w) {
        return w & mask;
    }

    /**
     * Pushes a carried task from the calling thread: its home stripe, then the others in turn; false when every
     * stripe was full or closed ({@link #closed} then says whether the close has begun). The claim that succeeds
     * is the acceptance ("What stays": admission). A push that overflowed, or that ended a run where the stripes
     * spread, moves the thread's home on ("Where a push goes").
     */
    public boolean tryPush(Object task, Object group) {
        return pushFromHome(task, group, false, null, 0L);
    }

    /**
     * {@link #tryPush} of a task in argument form ({@link BoundedRing#pushCarriedArg}: {@code fn}, {@code group},
     * {@code ctx} and {@code arg} in the cell that takes it), from the calling thread's home stripe on, moving its
     * home as {@link #tryPush} does.
     */
    public boolean tryPushArg(Object fn, Object group, Object ctx, long arg) {
        return pushFromHome(fn, group, true, ctx, arg);
    }

    /** {@link #tryPushArg} starting at stripe {@code home}, moving no home's offset (tests and models). */
    public boolean tryPushArgFrom(int home, Object fn, Object group, Object ctx, long arg) {
        return push(home, fn, group, true, ctx, arg) >= 0;
    }

    /**
     * {@link #tryPush} starting at stripe {@code home}, moving no home's offset (what a thread of that home does
     * for its claim; tests and models).
     */
    public boolean tryPushFrom(int home, Object task, Object group) {
        return push(home, task, group, false, null, 0L) >= 0;
    }

    /**
     * The push of either form from the calling thread's home stripe on, moving its home ({@link #tryPush}); each
     * caller passes {@code argForm} as a constant, so the form costs no test once inlined.
     */
    private boolean pushFromHome(Object task, Object group, boolean argForm, Object ctx, long arg) {
        final int id = (int) Thread.currentThread().threadId();
        final int at = offsetAt(id);
        final int[] hs = homes;
        final int offset = hs[at]; // plain: a hint ("Where a push goes")
        final int moves = push((id + offset) & mask, task, group, argForm, ctx, arg);
        if (moves > 0) {
            hs[at] = offset + moves; // plain: moves the home on to where the next push should go; a hint
        }
        return moves >= 0;
    }

    /**
     * Pushes into stripe {@code home}, then the next ones in turn: -1 when every stripe refused, else how far
     * the pushing thread's home moves on: the stripes it went past, plus one where its claim ended a run of
     * {@link #SPREAD} and the stripes spread. A {@code Runnable}'s push ({@link BoundedRing#pushCarried}), or for
     * {@code argForm} a task in argument form's ({@link BoundedRing#pushCarriedArg}).
     */
    private int push(int home, Object task, Object group, boolean argForm, Object ctx, long arg) {
        final BoundedRing[] rs = rings;
        for (int k = 0; k < rs.length; k++) {
            BoundedRing r = rs[(home + k) & mask];
            // seq_cst tail CAS inside either push: the acceptance
            long pos = argForm ? r.pushCarriedArg(task, group, ctx, arg) : r.pushCarried(task, group);
            if (pos >= 0) {
                return spreads && (pos & (SPREAD - 1)) == SPREAD - 1 ? k + 1 : k;
            }
        }
        return -1;
    }

    /**
     * Claims carried entries for worker {@code w}: from its home stripe, else from the others in turn, with
     * {@link BoundedRing#popManyCarried} ({@code max} from a deep stripe, else one). Returns the count, 0 when no
     * stripe's head held a published carried entry. Takes no argument cells (for rings that hold none).
     */
    public int popManyFor(int w, Object[] dst, int dstOff, int max) {
        return popManyFor(w, dst, dstOff, null, null, 0, max);
    }

    /**
     * {@link #popManyFor(int, Object[], int, int)} that also claims argument cells, their context markers and
     * arguments into {@code ctxDst} and {@code argDst} from {@code argOff}
     * ({@link BoundedRing#popManyCarried(Object[], int, Object[], long[], int, int)}).
     */
    public int popManyFor(int w, Object[] dst, int dstOff, Object[] ctxDst, long[] argDst, int argOff, int max) {
        final BoundedRing[] rs = rings;
        final int home = homeOfWorker(w);
        for (int k = 0; k < rs.length; k++) {
            int n = rs[(home + k) & mask].popManyCarried(dst, dstOff, ctxDst, argDst, argOff, max);
            if (n != 0) {
                return n;
            }
        }
        return 0;
    }

    /**
     * One carried entry from any stripe (the shutdown sweep), or EMPTY; see {@link BoundedRing#tryPop(Object[])}:
     * for rings that hold no argument cells.
     */
    public long tryPop(Object[] taken) {
        return tryPop(taken, null);
    }

    /** One carried entry from any stripe, argument cells included; see {@link BoundedRing#tryPop(Object[], long[])}. */
    public long tryPop(Object[] taken, long[] arg) {
        for (BoundedRing r : rings) {
            long e = r.tryPop(taken, arg);
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

    /**
     * {@link #hasReadyEntry()} over at most {@code count} stripes, from stripe {@code from & mask} on in turn
     * (wrapping): an idle look that reads a bounded number of lines whatever the stripe count. Volatile loads, as
     * one ring's; a false answer says nothing of the stripes not looked at.
     *
     * @throws IllegalArgumentException if {@code count} is negative
     */
    public boolean hasReadyEntry(int from, int count) {
        if (count < 0) {
            throw new IllegalArgumentException("count must be >= 0, got " + count);
        }
        final BoundedRing[] rs = rings;
        final int n = Math.min(count, rs.length);
        for (int k = 0; k < n; k++) {
            if (rs[(from + k) & mask].hasReadyEntry()) {
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
