package dev.threadpool.internal.scheduler;

import dev.threadpool.PoolConfig;
import dev.threadpool.internal.memory.CacheLine;

/**
 * A {@link CacheLine#PAD} of fields ahead of {@link ForkStackFields}: a worker writes its fork stack's fields on
 * every fork and join, and the collector puts the stack next to whatever it traced before it (native-notes/FFM.md,
 * "The Java heap needs the same care"). The int fills the hole the header leaves, as in {@link WorkerStatePad}.
 */
@SuppressWarnings("unused")
abstract class ForkStackPad {
    int p;
    long p00, p01, p02, p03, p04, p05, p06, p07, p08, p09, p10, p11, p12, p13, p14, p15;
}

/** {@link ForkStack}'s fields, between two pads; the arrays' entries lie {@link ForkStack#GAP} from both ends. */
abstract class ForkStackFields extends ForkStackPad {
    /** Each entry's handle, levels and argument, {@link ForkStack#ENTRY} longs an entry (class comment). */
    long[] entries = new long[ForkStack.INITIAL_ENTRIES_LENGTH];
    Object[] fns = new Object[ForkStack.INITIAL_LENGTH];
    Object[] ctxs = new Object[ForkStack.INITIAL_LENGTH];
    /** Entries the arrays hold. */
    int capacity = ForkStack.INITIAL_CAPACITY;
    /** The function of the newest open kept argument-form fork, or null (class comment). */
    Object lastFn;
    /** Its context marker, or null. */
    Object lastCtx;
    /** Forks this worker made: the sequence of the next handle. */
    long seq;
    /**
     * An {@code OBJECT} result on its way from {@link Joining#joinFork} or {@link Joining#invoke} to the caller, who
     * takes it with {@link #takeResult} (so no result stays reachable from the pool).
     */
    Object result;
}

/**
 * The open forks of one worker ({@code ThreadPool.fork} and its typed forms, protocol in {@link Joining}, "Fork
 * handles"), oldest first, and the packing of a fork handle. Owner-only: only the worker that owns it reads or
 * writes it, so every access is plain.
 *
 * <h2>A fork handle</h2>
 * <pre>
 *   bit  63       1: a fork handle (a task handle from submitWaitable is never negative)
 *   bits 62..61   form: 0 VOID (join), 1 LONG (joinLong), 2 DOUBLE (joinDouble), 3 OBJECT (joinObject)
 *   bits 60..54   the worker's index (7 bits: PoolConfig.MAX_THREADS worker slots fit)
 *   bits 53..38   the fork's position on the worker's fork stack (16 bits: at most 65,536 forks open at once)
 *   bits 37..0    the worker's fork count when it forked (38 bits, 2.7 x 10^11 forks before it repeats)
 * </pre>
 * The position names the entry; the entry keeps the whole handle (its HANDLE), also after its join, so a
 * handle joined twice (its position now above the top, its handle still there) and a stale one (the position
 * reused by a later fork: another handle there) are told apart from the open one. A handle of another worker
 * names that worker, one from outside the pool no worker at all.
 *
 * <h2>An entry</h2>
 * The entry at position {@code pos} is {@link #ENTRY} longs of {@link #entries} from element
 * {@code GAP + ENTRY * pos}, and element {@code GAP + pos} of two reference arrays ({@link #GAP}: see "Padding"):
 * <pre>
 *   HANDLE   the fork's handle (left in place after its join)
 *   LEVELS   the worker's joinNest << 32 | joinDepth when it forked: what its join restores, and what
 *            tells its join whether the code that forked it is still the code that joins it; bits 31..30
 *            say where a KEPT fork's half is ({@link #KEPT_OWN}, {@link #KEPT_SAME}, {@link #KEPT_CHANGED};
 *            0: OFFERED, in the join frame of depth joinDepth, JoinDeques)
 *   ARG      a KEPT fork's long
 *   fns[pos]       KEPT_OWN: its Runnable half; KEPT_CHANGED: the pair below it ({@link #lastFn} before it);
 *   ctxs[pos]      else null, and null again once joined
 * </pre>
 * The three longs of an entry share one array, so a fork writes them and its join reads them through one array
 * reference and one bounds check instead of three (PERFORMANCE_TRACKING 92); the fourth long is unused, so an
 * entry is 32 bytes, half a line's worth, and never straddles two.
 *
 * <h2>A kept half's function and context, stored only when they change</h2>
 * A recursion forks the same function with the same context at every level, and storing them per fork is two
 * reference stores into an old array, each with the collector's post-write barrier, and two clears at the join:
 * about 3 ns of a 19 ns split (PERFORMANCE_TRACKING 85). So the stack keeps the pair of its newest kept
 * argument-form fork in {@link #lastFn} / {@link #lastCtx}: a fork of the same pair stores nothing (KEPT_SAME); one
 * of another pair saves the old pair in its entry and makes its own the last (KEPT_CHANGED), and its join gives the
 * old pair back. Kept forks are joined (or settled) newest first, so the pair of the newest open one is always the
 * last pair, and once every kept fork is joined the last pair is null again: no reference outlives its join. A
 * {@code Runnable} half is its own object and is stored as it is (KEPT_OWN), leaving the last pair alone.
 *
 * <p>The arrays start at {@link #INITIAL_CAPACITY} entries and double when a fork finds them full, so a worker
 * allocates only when its forks nest deeper than ever before on it: warm, nothing.
 *
 * <h2>Padding</h2>
 * A worker writes its stack's fields and entries on every fork and join, and the collector puts the stack and its
 * arrays next to whatever it traced before them, another worker's hot objects included. So the fields lie between
 * two pads ({@link ForkStackPad} and the longs below), and each array keeps {@link #GAP} empty elements before its
 * first entry and after its last, as the worker thread's fields and the join halves' runs are kept apart
 * (native-notes/FFM.md, "The Java heap needs the same care").
 */
@SuppressWarnings("unused")
final class ForkStack extends ForkStackFields {
    long q00, q01, q02, q03, q04, q05, q06, q07, q08, q09, q10, q11, q12, q13, q14, q15;

    /** A fork joined with {@code join}: a {@code Runnable} or {@code ObjLongConsumer} half. */
    static final int VOID = 0;
    /** {@code forkLong} / {@code joinLong}: an {@code ObjLongToLongFunction} half. */
    static final int LONG = 1;
    /** {@code forkDouble} / {@code joinDouble}: an {@code ObjLongToDoubleFunction} half. */
    static final int DOUBLE = 2;
    /** {@code forkObject} / {@code joinObject}: an {@code ObjLongFunction} half. */
    static final int OBJECT = 3;

    static final int FORM_SHIFT = 61;
    static final int WORKER_SHIFT = 54;
    static final int WORKER_BITS = 7;
    static final int POS_SHIFT = 38;
    static final int POS_BITS = 16;
    static final long SEQ_MASK = (1L << POS_SHIFT) - 1;

    /** Forks one worker may have open at once: the positions a handle can name. */
    static final int MAX_OPEN = 1 << POS_BITS;
    /** Entries of a new stack. */
    static final int INITIAL_CAPACITY = 16;

    static {
        if (PoolConfig.MAX_THREADS > 1 << WORKER_BITS) {
            throw new AssertionError("a fork handle's worker field must hold every worker slot");
        }
    }

    /** {@link #levels}: kept, and the half is its own object in {@link #fns} (a {@code Runnable}). */
    static final long KEPT_OWN = 2L << 30;
    /** {@link #levels}: kept, with the stack's last function and context: nothing stored. */
    static final long KEPT_SAME = 1L << 30;
    /** {@link #levels}: kept, with a new function and context (now the last pair); the old pair in the entry. */
    static final long KEPT_CHANGED = 3L << 30;
    /** {@link #levels}: the kind bits (0: offered). */
    private static final long KEPT = 3L << 30;
    /** {@link #levels}: the joinDepth bits (a depth is at most the frames per worker, far below 2^30). */
    private static final long DEPTH_MASK = (1L << 30) - 1;

    /**
     * Entries kept empty before the first entry and after the last of each array: {@link CacheLine#REF_GAP}
     * elements, at least a {@link CacheLine#PAD} of bytes, so an entry never shares a line with the array's header
     * or with the object the collector puts next. An entry at position {@code pos} is element {@code GAP + pos}.
     */
    static final int GAP = CacheLine.REF_GAP;
    /** Elements of a new stack's reference arrays: {@link #INITIAL_CAPACITY} entries and a gap at each end. */
    static final int INITIAL_LENGTH = INITIAL_CAPACITY + 2 * GAP;
    /** Longs of an entry in {@link #entries}: HANDLE, LEVELS, ARG and one unused. */
    static final int ENTRY = 4;
    private static final int ENTRY_SHIFT = 2;
    static final int HANDLE = 0;
    static final int LEVELS = 1;
    static final int ARG = 2;
    /** Elements of a new stack's {@link #entries}: its entries and a gap at each end. */
    static final int INITIAL_ENTRIES_LENGTH = INITIAL_CAPACITY * ENTRY + 2 * GAP;

    /** The element of {@link #entries} where the entry at {@code pos} begins. */
    static int at(int pos) {
        return GAP + (pos << ENTRY_SHIFT);
    }

    /** The handle of the fork at {@code pos}. */
    long handleAt(int pos) {
        return entries[at(pos) + HANDLE];
    }

    void setHandle(int pos, long h) {
        entries[at(pos) + HANDLE] = h;
    }

    /** The levels of the fork at {@code pos} (class comment, "An entry"). */
    long levelsAt(int pos) {
        return entries[at(pos) + LEVELS];
    }

    void setLevels(int pos, long lv) {
        entries[at(pos) + LEVELS] = lv;
    }

    /** A kept fork's argument. */
    long argAt(int pos) {
        return entries[at(pos) + ARG];
    }

    /** The function or the saved pair's function in the entry at {@code pos} (white-box tests). */
    Object fnAt(int pos) {
        return fns[GAP + pos];
    }

    /** The saved pair's context in the entry at {@code pos} (white-box tests). */
    Object ctxAt(int pos) {
        return ctxs[GAP + pos];
    }

    /** {@link #result}, cleared. */
    Object takeResult() {
        Object r = result;
        result = null;
        return r;
    }

    int capacity() {
        return capacity;
    }

    /**
     * Makes room for position {@code pos} (the stack is full up to it): doubles the arrays.
     *
     * @throws IllegalStateException at {@link #MAX_OPEN} forks open on one worker
     */
    void grow(int pos) {
        if (pos >= MAX_OPEN) {
            throw new IllegalStateException("fork: " + MAX_OPEN + " forks are open on this worker already (forks"
                    + " nested that deep need a stack of about " + (MAX_OPEN / 512) + " MiB; join some first)");
        }
        int cap = Math.min(MAX_OPEN, Math.max(capacity() * 2, pos + 1));
        entries = java.util.Arrays.copyOf(entries, cap * ENTRY + 2 * GAP); // the old end gap: zeros, new entries
        fns = java.util.Arrays.copyOf(fns, cap + 2 * GAP);
        ctxs = java.util.Arrays.copyOf(ctxs, cap + 2 * GAP);
        capacity = cap;
    }

    // ---- handles -----------------------------------------------------------------------------------------------

    /** The handle of the fork of {@code form} by worker {@code w} at position {@code pos}, its {@code seq}-th. */
    static long handle(int form, int w, int pos, long seq) {
        return Long.MIN_VALUE | (long) form << FORM_SHIFT | (long) w << WORKER_SHIFT | (long) pos << POS_SHIFT
                | (seq & SEQ_MASK);
    }

    static boolean isFork(long h) {
        return h < 0;
    }

    static int formOf(long h) {
        return (int) (h >>> FORM_SHIFT) & 3;
    }

    static int workerOf(long h) {
        return (int) (h >>> WORKER_SHIFT) & ((1 << WORKER_BITS) - 1);
    }

    static int posOf(long h) {
        return (int) (h >>> POS_SHIFT) & (MAX_OPEN - 1);
    }

    /** The public method that forks {@code form}, for messages. */
    static String forkName(int form) {
        return switch (form) {
            case LONG -> "forkLong";
            case DOUBLE -> "forkDouble";
            case OBJECT -> "forkObject";
            default -> "fork";
        };
    }

    /** The public method that joins {@code form}, for messages. */
    static String joinName(int form) {
        return switch (form) {
            case LONG -> "joinLong";
            case DOUBLE -> "joinDouble";
            case OBJECT -> "joinObject";
            default -> "join";
        };
    }

    /** A handle for messages: its hex digits and its fields. */
    static String describe(long h) {
        return "0x" + Long.toHexString(h) + " (" + forkName(formOf(h)) + ", worker " + workerOf(h) + ", position "
                + posOf(h) + ")";
    }

    // ---- levels --------------------------------------------------------------------------------------------

    static long levels(int depth, int nest) {
        return (long) nest << 32 | (depth & 0xFFFF_FFFFL);
    }

    static int depthOf(long levels) {
        return (int) (levels & DEPTH_MASK);
    }

    // ---- kept halves -----------------------------------------------------------------------------------------

    /**
     * Keeps the half of the fork at {@code pos} (class comment): {@code fn} with its context marker {@code ctx}
     * (null for a {@code Runnable} half) and {@code arg}. Returns the kind bits for the entry's levels.
     */
    long keep(int pos, Object fn, Object ctx, long arg) {
        entries[at(pos) + ARG] = arg;
        if (ctx == null) {
            fns[GAP + pos] = fn;
            return KEPT_OWN;
        }
        if (fn == lastFn && ctx == lastCtx) {
            return KEPT_SAME; // a recursion's every level: no reference stored
        }
        fns[GAP + pos] = lastFn;
        ctxs[GAP + pos] = lastCtx;
        lastFn = fn;
        lastCtx = ctx;
        return KEPT_CHANGED;
    }

    /**
     * {@link #keep} of a fork whose function and context are the last pair (the caller compared them), with the
     * handle made and the whole entry written here, in as few instructions as a recursion's every fork allows:
     * returns the handle of the fork of {@code form} by worker {@code w} at {@code pos} with levels {@code lv}.
     */
    long keepSame(int form, int w, int pos, long lv, long arg) {
        final long h = handle(form, w, pos, ++seq);
        final int i = at(pos);
        entries[i + HANDLE] = h;
        entries[i + LEVELS] = lv | KEPT_SAME;
        entries[i + ARG] = arg;
        return h;
    }

    /** Whether levels {@code lv} are a kept fork's with the last pair ({@link #KEPT_SAME}). */
    static boolean isKeptSame(long lv) {
        return (lv & KEPT) == KEPT_SAME;
    }

    static boolean isKept(long levels) {
        return (levels & KEPT) != 0;
    }

    /** The context marker of the kept fork with levels {@code lv}, the newest open one (null for a Runnable half). */
    Object keptCtx(long lv) {
        return (lv & KEPT) == KEPT_OWN ? null : lastCtx;
    }

    /**
     * Takes the half of the kept fork at {@code pos} (the newest open one, with levels {@code lv}; its context read
     * before, with {@link #keptCtx}): no reference of it stays in the stack, and a changed pair gives the one below it
     * back. No call inside, so an Error (a stack overflow strikes at calls) leaves the entry as it was or taken whole;
     * callers take it before they pop the entry, never after.
     */
    Object takeKept(int pos, long lv) {
        long kind = lv & KEPT;
        Object half;
        if (kind == KEPT_OWN) {
            half = fns[GAP + pos];
            fns[GAP + pos] = null;
        } else {
            half = lastFn;
            if (kind == KEPT_CHANGED) {
                lastFn = fns[GAP + pos];
                lastCtx = ctxs[GAP + pos];
                fns[GAP + pos] = null;
                ctxs[GAP + pos] = null;
            }
        }
        return half;
    }

    static int nestOf(long levels) {
        return (int) (levels >>> 32);
    }
}
