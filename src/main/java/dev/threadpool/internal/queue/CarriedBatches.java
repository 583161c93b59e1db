package dev.threadpool.internal.queue;

import dev.threadpool.internal.memory.CacheLine;
import dev.threadpool.internal.memory.Mem;
import dev.threadpool.internal.memory.PoolMemory;
import java.lang.foreign.MemorySegment;

/**
 * One small batch of carried tasks per worker, claimed from a carrying {@link BoundedRing} with one head CAS
 * ({@link BoundedRing#popManyCarried}) and taken one at a time by its owner, or stolen by any other thread.
 *
 * <h2>Why</h2>
 * Two workers that pop one MPMC ring at once bounce its head line, and the cell and reference lines of
 * neighbouring positions, on every pop: in a batched flood on two CPUs each task cost the workers 180 ns of CPU
 * with two of them against 40 with one (PERFORMANCE_TRACKING 55). A worker that finds at least
 * {@code 2 * MAX_BATCH} ready cells at the head claims {@link #MAX_BATCH} of them with one CAS (one otherwise),
 * copies the references out and frees the cells at once, so producers never wait on a claimed cell and the
 * other workers meet the shared lines once per batch.
 * The claimed tasks stay visible: an idle worker, an overflow worker beside a stalled one, or the shutdown
 * sweep takes them from the batch, so a long task delays none of them while another thread is free.
 *
 * <h2>Layout: one state word per worker, each on a line of its own</h2>
 * <pre>
 *   STATE(w)  long @ w * PAD    gen (48 bits) | end (8 bits) | next (8 bits)
 *   refs      Object[]          worker w's task i at refsFirst(w) + 2 * i, its group at that + 1, where
 *                               refsFirst(w) = REF_GAP + w * (2 * MAX_BATCH + REF_GAP)
 *   ctxs      Object[]          worker w's entry i's context marker at argsFirst(w) + i: null for a Runnable
 *                               task, the context (or QueueEntry.NULL_CTX) for a task in argument form, where
 *                               argsFirst(w) = REF_GAP + w * (MAX_BATCH + REF_GAP)
 *   args      long[]            worker w's entry i's argument at argsFirst(w) + i (argument form only)
 * </pre>
 * The {@link CacheLine#REF_GAP} empty elements before each worker's run and after the last keep every run off
 * the lines of the array's header (read by every access's bounds check) and of the other workers' runs: each
 * owner rewrites its run on every refill. In {@code args} the gap is twice a {@link CacheLine#PAD} (8-byte
 * elements), which keeps one index for both arrays. A task in argument form ({@code BoundedRing}, "Argument
 * cells") keeps its function in the task's slot of {@code refs}; its context and argument ride beside it and are
 * published, read and discarded exactly as the references are (below). The off-heap block is unchanged by them.
 *
 * <p>Entries {@code [next, end)} are takeable. Only the owner moves {@code end} and {@code gen} (a refill); any
 * thread moves {@code next} by one, with a CAS. The owner refills only a batch it has seen empty
 * ({@code next == end}), and every refill bumps {@code gen}, so a thief's CAS that read an older batch fails.
 *
 * <h2>Taking an entry (owner or thief)</h2>
 * Acquire load of STATE, plain reads of the entry's two references and its context marker (and, where the marker
 * is not null, its argument), then CAS {@code next -> next + 1}. The
 * winner of the CAS owns the entry and the references it read before: while STATE still held the value it read,
 * the owner could not have overwritten them (a refill needs {@code next == end} first, and changes {@code gen}).
 * A loser's reads are discarded. Nobody clears a taken entry's references but the owner, at its next refill,
 * once it has seen the batch empty with an acquire load: every taker's reads precede its CAS, which that load
 * observes, so the owner's overwrites come after them.
 *
 * <h2>Publishing a refill</h2>
 * The owner writes the references, context markers and arguments (plain, inside {@code popManyCarried}), then the
 * new STATE with a seq_cst
 * getAndSet: the release half publishes the references to any thief whose acquire load sees the new STATE; the
 * seq_cst half is the Dekker pair with a worker that announces itself idle and then re-checks
 * {@link #hasStealable} (ParkingLot): either the owner's later load of the idle mask sees the announcement, or
 * the re-check sees the batch. Missing both would not lose the entries (the owner takes them after its current
 * task: it never goes idle with its own batch non-empty), only the chance of a parked worker stealing them.
 *
 * <h2>Invariants</h2>
 * [0 &lt;= next &lt;= end &lt;= MAX_BATCH] [an entry is taken at most once: the CAS on next]
 * [every entry of a batch is taken: the owner takes its own before it refills, or idles]
 * [the owner's own first entry of a refill is never published: next starts at 1].
 */
public final class CarriedBatches {
    /** The most entries one claim takes from the ring; the first is run by the claimer, the rest may be stolen. */
    public static final int MAX_BATCH = 8;

    private static final long NEXT_MASK = 0xFFL;
    private static final int END_SHIFT = 8;
    private static final int GEN_SHIFT = 16;

    /** Off-heap layout: one state word per worker, each on its own {@link CacheLine#PAD}-byte line. */
    public static final class Layout {
        public static final long STATE_OFFSET = 0;

        private Layout() {}

        public static long stateOffset(int w) {
            return (long) w * CacheLine.PAD + STATE_OFFSET;
        }

        public static long byteSize(int workers) {
            return (long) workers * CacheLine.PAD;
        }

        /** Index in {@code refs} of worker {@code w}'s first task reference. */
        public static int refsFirst(int w) {
            return CacheLine.REF_GAP + w * (2 * MAX_BATCH + CacheLine.REF_GAP);
        }

        /** Length of {@code refs} for {@code workers} workers: their runs, a gap before each and after the last. */
        public static int refsLength(int workers) {
            return refsFirst(workers);
        }

        /** Index in {@code ctxs} and {@code args} of worker {@code w}'s first entry. */
        public static int argsFirst(int w) {
            return CacheLine.REF_GAP + w * (MAX_BATCH + CacheLine.REF_GAP);
        }

        /** Length of {@code ctxs} and {@code args} for {@code workers} workers, gaps included. */
        public static int argsLength(int workers) {
            return argsFirst(workers);
        }
    }

    private final MemorySegment seg;
    private final int workers;
    /** Worker w's entries at [refsFirst(w), refsFirst(w) + 2 * MAX_BATCH). Plain accesses, ordered by STATE. */
    private final Object[] refs;
    /** Worker w's context markers at [argsFirst(w), argsFirst(w) + MAX_BATCH). Plain accesses, ordered by STATE. */
    private final Object[] ctxs;
    /** Worker w's arguments at [argsFirst(w), argsFirst(w) + MAX_BATCH). Plain accesses, ordered by STATE. */
    private final long[] args;

    public CarriedBatches(PoolMemory memory, int workers) {
        if (workers < 1) {
            throw new IllegalArgumentException("workers must be >= 1, got " + workers);
        }
        this.workers = workers;
        this.seg = memory.allocate("carried batches", Layout.byteSize(workers));
        this.refs = new Object[Layout.refsLength(workers)];
        this.ctxs = new Object[Layout.argsLength(workers)];
        this.args = new long[Layout.argsLength(workers)];
        // every STATE starts 0 (next == end == 0: empty); the allocation is zeroed. Published to the workers by
        // whatever publishes this object (a final field of the pool, written before the workers start).
    }

    public int workers() {
        return workers;
    }

    /**
     * Owner {@code w} only: the next carried task for worker {@code w}, into {@code taken[0]} (task) and
     * {@code taken[1]} (group). While its batch holds entries, the next of them ({@link #take}); once it is empty,
     * a claim of up to {@code max} (at most {@link #MAX_BATCH}) from {@code ring} with one CAS
     * ({@link BoundedRing#popManyCarried}), the first for the caller, the rest published for the owner's later
     * takes and for thieves. Returns how many were taken or claimed (0: the batch and the ring's head had nothing).
     * Takes no argument cells: for rings that hold none (see {@link #refill(int, BoundedRing, Object[], long[],
     * int)}).
     *
     * @throws IllegalArgumentException if {@code max} is not in [1, MAX_BATCH]
     */
    public int refill(int w, BoundedRing ring, Object[] taken, int max) {
        return refill(w, ring, null, taken, null, max);
    }

    /**
     * {@link #refill(int, BoundedRing, Object[], int)} from a pool's striped carried rings: the claim comes from
     * worker {@code w}'s home stripe, else from the others in turn ({@link CarriedRings#popManyFor}).
     */
    public int refill(int w, CarriedRings rings, Object[] taken, int max) {
        return refill(w, null, rings, taken, null, max);
    }

    /**
     * {@link #refill(int, BoundedRing, Object[], int)} that also claims argument cells ({@code BoundedRing},
     * "Argument cells"): where the entry handed to the caller is a task in argument form, its context marker goes
     * to {@code taken[2]} and its argument to {@code arg[0]} ({@code taken[2]} is left as it was for a
     * {@code Runnable} task).
     */
    public int refill(int w, BoundedRing ring, Object[] taken, long[] arg, int max) {
        return refill(w, ring, null, taken, requireSink(arg), max);
    }

    /** {@link #refill(int, BoundedRing, Object[], long[], int)} from a pool's striped carried rings. */
    public int refill(int w, CarriedRings rings, Object[] taken, long[] arg, int max) {
        return refill(w, null, rings, taken, requireSink(arg), max);
    }

    private static long[] requireSink(long[] arg) {
        if (arg == null) {
            throw new NullPointerException("arg must not be null");
        }
        return arg;
    }

    /** The refill from {@code ring}, or where it is null from {@code rings}; argument cells too where {@code arg}. */
    private int refill(int w, BoundedRing ring, CarriedRings rings, Object[] taken, long[] arg, int max) {
        if (max < 1 || max > MAX_BATCH) {
            throw new IllegalArgumentException("max must be in [1, " + MAX_BATCH + "], got " + max);
        }
        final long off = Layout.stateOffset(w);
        long s;
        for (;;) {
            // acquire: pairs with the takers' CASes of this batch (the last one made next == end), so their reads
            // of the references happen-before the overwrites below
            s = Mem.getLongAcquire(seg, off);
            if ((s & NEXT_MASK) >= end(s)) {
                break; // empty: ours to refill (nobody else writes an empty word)
            }
            if (take(w, taken, arg)) {
                return 1; // older than anything in the ring
            }
        }
        int oldEnd = end(s);
        final int first = Layout.refsFirst(w);
        final int af = Layout.argsFirst(w);
        int n;
        if (arg != null) { // every entry's context marker written (null for a Runnable task), arguments where any
            n = ring != null ? ring.popManyCarried(refs, first, ctxs, args, af, max)
                    : rings.popManyFor(w, refs, first, ctxs, args, af, max);
        } else {
            n = ring != null ? ring.popManyCarried(refs, first, max) : rings.popManyFor(w, refs, first, max);
            for (int i = 0; i < n; i++) {
                ctxs[af + i] = null; // Runnable tasks only: no marker of an earlier batch may be read as theirs
            }
        }
        for (int i = Math.max(n, 1); i < oldEnd; i++) { // the previous batch's references left past the new one
            refs[first + 2 * i] = null;
            refs[first + 2 * i + 1] = null;
            ctxs[af + i] = null;
        }
        if (n == 0) {
            if (oldEnd > 1) { // slot 0 was the owner's own entry, cleared at that refill
                Mem.setLongRelease(seg, off, state(gen(s) + 1, 0, 0)); // empty; nobody else writes an empty word
            }
            return 0;
        }
        taken[0] = refs[first];
        taken[1] = refs[first + 1];
        refs[first] = null; // the owner's own entry: never published (next starts at 1)
        refs[first + 1] = null;
        Object x = ctxs[af];
        if (x != null) { // a task in argument form (only where arg: the other form wrote null above)
            taken[2] = x;
            arg[0] = args[af];
            ctxs[af] = null;
        }
        if (n > 1) {
            // seq_cst: publishes the references, markers and arguments (release) and is the Dekker half against a
            // parking worker's announce-then-hasStealable (class comment). Nobody else can write an empty word: a
            // plain store would do for the value, the RMW is for the ordering.
            Mem.getAndSetLong(seg, off, state(gen(s) + 1, n, 1));
        } else if (oldEnd > 1) {
            Mem.setLongRelease(seg, off, state(gen(s) + 1, 0, 0)); // leave no stale [next, end) behind
        }
        return n;
    }

    /**
     * Takes the next entry of worker {@code w}'s batch into {@code taken[0]} (task) and {@code taken[1]} (group);
     * false when it has none. Any thread: the owner, a thief, the shutdown sweep. For batches that hold no task in
     * argument form (see {@link #take(int, Object[], long[])}).
     *
     * @throws IllegalStateException if the next entry is a task in argument form (nothing is taken)
     */
    public boolean take(int w, Object[] taken) {
        return take(w, taken, null);
    }

    /**
     * {@link #take(int, Object[])} of any entry: for a task in argument form, also its context marker into
     * {@code taken[2]} and its argument into {@code arg[0]}. With {@code arg} null, an entry in argument form is
     * refused before the CAS ({@link IllegalStateException}, nothing taken).
     */
    public boolean take(int w, Object[] taken, long[] arg) {
        final long off = Layout.stateOffset(w);
        final int first = Layout.refsFirst(w);
        final int af = Layout.argsFirst(w);
        for (;;) {
            // acquire: pairs with the owner's publishing getAndSet, making the batch's references visible
            long s = Mem.getLongAcquire(seg, off);
            int next = (int) (s & NEXT_MASK);
            if (next >= end(s)) {
                return false;
            }
            Object task = refs[first + 2 * next]; // plain; kept only if the CAS below wins (class comment)
            Object group = refs[first + 2 * next + 1];
            Object x = ctxs[af + next]; // plain, as the references: the marker of a task in argument form, or null
            long a = 0;
            if (x != null) {
                if (arg == null) {
                    throw new IllegalStateException("a task in argument form: take it with take(int, Object[], long[])");
                }
                a = args[af + next]; // plain, as the references
            }
            if (Mem.casLong(seg, off, s, s + 1)) { // next + 1; seq_cst
                taken[0] = task;
                taken[1] = group;
                if (x != null) {
                    taken[2] = x;
                    arg[0] = a;
                }
                return true;
            }
        }
    }

    /**
     * Worker {@code w} takes one entry of another worker's batch, trying its peers in turn from {@code w + 1};
     * true when it took one (into {@code taken}, as {@link #take}). An acquire load of each peer's state line until
     * one holds an entry, then a CAS on that line.
     */
    public boolean steal(int w, Object[] taken) {
        return steal(w, taken, -1L, null);
    }

    /**
     * {@link #steal(int, Object[])} from the peers whose bit is set in {@code candidates} only (a pool's summary of
     * which batches may hold entries), in the same order, from {@code w + 1}.
     */
    public boolean steal(int w, Object[] taken, long candidates) {
        return steal(w, taken, candidates, null);
    }

    /**
     * {@link #steal(int, Object[], long)} of any entry, a task in argument form included (its marker and argument
     * into {@code taken[2]} and {@code arg[0]}, as {@link #take(int, Object[], long[])}).
     */
    public boolean steal(int w, Object[] taken, long candidates, long[] arg) {
        for (int k = 1; k < workers; k++) {
            int v = w + k < workers ? w + k : w + k - workers;
            if ((candidates & (1L << v)) != 0 && take(v, taken, arg)) {
                return true;
            }
        }
        return false;
    }

    /** One entry of any worker's batch, from worker 0 on (the shutdown sweep); false when every batch is empty. */
    public boolean takeAny(Object[] taken) {
        return takeAny(taken, null);
    }

    /** {@link #takeAny(Object[])} of any entry, a task in argument form included (as {@link #take(int, Object[], long[])}). */
    public boolean takeAny(Object[] taken, long[] arg) {
        for (int v = 0; v < workers; v++) {
            if (take(v, taken, arg)) {
                return true;
            }
        }
        return false;
    }

    /** Whether worker {@code w}'s batch has an entry left (a volatile load: the parking re-check's half). */
    public boolean hasStealable(int w) {
        long s = Mem.getLongVolatile(seg, Layout.stateOffset(w));
        return (s & NEXT_MASK) < end(s);
    }

    /** Whether any worker's batch has an entry left (volatile loads; a hint unless ordered by the caller). */
    public boolean anyStealable() {
        for (int w = 0; w < workers; w++) {
            if (hasStealable(w)) {
                return true;
            }
        }
        return false;
    }

    /** Entries left in every batch (volatile loads; a snapshot for gauges and tests). */
    public int size() {
        int n = 0;
        for (int w = 0; w < workers; w++) {
            long s = Mem.getLongVolatile(seg, Layout.stateOffset(w));
            n += Math.max(0, end(s) - (int) (s & NEXT_MASK));
        }
        return n;
    }

    private static int end(long s) {
        return (int) ((s >>> END_SHIFT) & NEXT_MASK);
    }

    private static long gen(long s) {
        return s >>> GEN_SHIFT;
    }

    private static long state(long gen, int end, int next) {
        return gen << GEN_SHIFT | (long) end << END_SHIFT | next;
    }
}
