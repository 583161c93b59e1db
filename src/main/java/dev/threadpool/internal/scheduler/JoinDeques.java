package dev.threadpool.internal.scheduler;

import dev.threadpool.internal.memory.CacheLine;
import dev.threadpool.internal.memory.Mem;
import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.QueueEntry;
import dev.threadpool.internal.queue.WorkDeque;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.locks.LockSupport;

/**
 * The join halves of {@code ThreadPool.join}: per worker a Chase–Lev deque of offered halves and a stack of
 * join frames, each frame holding one half's reference, its failure and its completion word. The protocol
 * that uses them is in {@link Joining}; this class holds the lock-free parts, so that jcstress can drive them
 * without a pool.
 *
 * <pre>
 *   OWNER (worker w)  idx = frame(w, depth); frameFree(idx) or tryReclaim(idx)
 *                     offer(w, idx, half): halves[idx] = half (plain); deque w.push(idx)
 *                     offerArg(w, idx, fn, ctx, arg): halves[idx] = fn, ctxs[idx] = ctx, ARG(idx) = arg (plain)
 *                     offerFork(w, idx, fn, ctx, arg, handle): offerArg's, and FORK(idx) = handle (plain)
 *                     takeBack(w) == idx ? ours, run it inline, clear / clearArg / clearFork(idx) : stolen
 *                     word(idx) (acquire), tryMarkParked(idx, seen) (CAS), finishStolen / finishFork(idx) (plain),
 *                     result(idx), takeResultObject(idx) (plain, after reading DONE)
 *   THIEF (any)       steal(v) -> idx; markStolen(idx, thief) (release); half(idx), ctx(idx), arg(idx),
 *                     forkHandle(idx); setResult / setResultObject(idx, r) (plain); complete(idx, v, failure)
 * </pre>
 *
 * <h2>Halves in argument form</h2>
 * A half of {@code join(fn, ctx, left, right)} is no object: its function goes where a {@code Runnable} half's
 * reference goes ({@code halves}), its context into {@code ctxs} (same slot, {@link QueueEntry#NULL_CTX} for a
 * null context, so the slot is non-null exactly for a half in argument form) and its {@code long} into the
 * frame's ARG word off-heap. All three are written plain before the push and read by the thief after its steal,
 * under the rule of the half's reference; the owner drops the function and context when it frees the frame
 * ({@link #clearArg}, {@link #finishStolen}), so no context outlives its join. A {@code Runnable} half's path
 * neither writes {@code ctxs} nor its ARG word: its offer and its take-back are what they were.
 *
 * <h2>Halves of forks, and their results</h2>
 * An offered fork ({@code ThreadPool.fork} and its typed forms; Joining, "Fork handles") uses the frame of its
 * depth as a join's right half does, written by {@link #offerFork}: its half as in argument form (or as a
 * {@code Runnable}), and its handle in the frame's FORK word, off-heap. The FORK word is 0 for a join's half: only
 * a fork writes it, and every path that frees a fork's frame ({@link #clearFork}, {@link #finishFork},
 * {@link #tryReclaim}) sets it back to 0, so a join's half, which never writes it, finds it 0. It tells the thief
 * the half's form (a {@code long}, {@code double} or object result, or none), and the owner whether the frame still
 * holds that fork. A thief that ran a typed half leaves its result in the frame before its completion: a
 * {@code long} or a {@code double}'s bits in the RESULT word (off-heap, on lines of their own after the FORK words:
 * thieves write them), an object in {@code results} (on-heap, cleared by the owner when it takes it). Both are
 * written plain before the thief's {@code getAndSet(DONE)} and read by the owner after its acquire load reads DONE,
 * as the failure is (jcstress {@code JoinProtocolTest.ResultVsDone}). A half the owner takes back it runs itself,
 * and its result goes straight to the caller: only a stolen half's result passes through the frame.
 *
 * <h2>Frames: a join's frame is its depth on the owner's stack</h2>
 * Worker w's joins nest on w's stack: the join at depth d (d joins of w are open below it on that stack) owns
 * frame {@code frame(w, d) = w * framesPerWorker + d} from its offer until it returns, and every join that
 * starts meanwhile on w's stack runs inside its left half or its helping, one level deeper. So the frame needs
 * no allocation and no free list: the depth, a plain field of the worker, names it. (The first version took a
 * descriptor slot from the worker's cache per join: PERFORMANCE_TRACKING entries 25 and 30.) A join deeper
 * than {@code framesPerWorker} runs both halves inline, as a join with no free descriptor used to.
 *
 * <h2>Exactly once</h2>
 * The deque decides who runs a half: the owner's {@code take} and a thief's {@code steal} are the two sides of
 * Chase–Lev's last-entry race, and exactly one of them returns the entry ({@link WorkDeque}; jcstress
 * {@code JoinProtocolTest.PopBackVsSteal}). The owner's pop-back therefore needs no CAS of its own: an entry it
 * takes back was taken by nobody else, and it runs it inline.
 *
 * <h2>The completion word (one per frame)</h2>
 * <pre>
 *   OFFERED            0           whenever the frame is not in a stolen join (zeroed block; the owner resets it)
 *   STOLEN(t)          1 + t       release store by thief t after its steal: tells the owner whom to help
 *   | PARKED           1 << 8      CAS by the owner before it parks (only onto a STOLEN(t) word)
 *   DONE               1 << 9      getAndSet by the thief after the run; replaces everything above
 * </pre>
 * The thief's {@code getAndSet(DONE)} is a release: the half's effects and the failure (a plain store before
 * it) happen-before the owner's acquire load that reads DONE. It returns the old word: PARKED there means the
 * owner's CAS came first, so the owner is parked or about to park and must be unparked; without PARKED the
 * owner's later CAS (which expects a word without DONE) fails, and it does not park. No wake is lost and none
 * is needed otherwise (jcstress {@code JoinProtocolTest.CompletionVsPark}). After its getAndSet the thief
 * touches nothing of the frame: the owner may use it for the next join at once.
 *
 * <h2>A frame is free when its half reference is null</h2>
 * Only the owner writes {@code halves}: the half at the offer, null when it took the half back
 * ({@link #clear}) or read DONE ({@link #finishStolen}). A frame whose half is still set when a new join
 * reaches its depth was <em>abandoned</em>: an Error escaped the pool's own code between an offer and its
 * pop-back, or a fork's half was left open by code that returned without joining it (Joining, "Fork handles"),
 * and the half is still on the deque (the enclosing join's pop-back, or the fork's settle, will run it) or a
 * thief has it.
 * {@link #tryReclaim} frees it once the word says DONE; until then a join at that depth runs inline. So a
 * frame is never offered twice, and the deque never holds more entries than the worker has frames: it is
 * created with exactly that capacity and never grows.
 *
 * <h2>Demand: owners waiting for a stolen half</h2>
 * {@code WAITERS} counts the owners that wait for a stolen half and found nothing to help with (Joining, "Offer
 * on demand"): a busy worker reads it at each join that would not otherwise offer its half, and offers when it
 * is not zero, so the waiting owner gets something of its thief's to run. A hint, not a handshake: a half not
 * offered is run by its owner.
 *
 * <h2>Layout (off-heap words)</h2>
 * <pre>
 *   WAITERS  long @0                           owners waiting with nothing to help (getAndAdd +1 / -1 by
 *                                              the waiting owner; opaque load by every joining worker), alone
 *                                              on its line: written once per stolen half that outlasts its
 *                                              owner's left half, read per join
 *   WORD     long @FRAMES + idx * WORD_LENGTH  completion word of frame idx (see above), not padded: a frame
 *                                              is used by one owner and at most one thief at a time
 *   ARG      long @ARGS + idx * WORD_LENGTH    the long of frame idx's half in argument form (ARGS: the first
 *                                              line after the words); written by the owner only, at its offers,
 *                                              so apart from the words that thieves write
 *   FORK     long @FORKS + idx * WORD_LENGTH   the handle of the fork whose half frame idx holds, 0 for a join's
 *                                              (FORKS: the first line after the ARG words); owner-written, at a
 *                                              fork's offer and when it frees the frame; read by the thief
 *   RESULT   long @RESULTS + idx * WORD_LENGTH the result of a stolen typed fork's half: a long, or a double's
 *                                              raw bits (RESULTS: the first line after the FORK words); written
 *                                              by the thief before DONE, read by the owner after it
 * </pre>
 * Each region starts on a line of its own ({@link CacheLine#PAD}): the owner-written ARG and FORK words never share
 * a line with the words thieves write. For {@code F} frames the block is {@link Layout#wordsLength}{@code (F)} bytes:
 * 128 for WAITERS and, padded, {@code 8 F} for each of the four regions (the default 256 frames a worker slot: 8 KiB
 * a slot, of which the FORK and RESULT words are 4 KiB).
 *
 * <h2>Layout of the on-heap halves: a gap before each worker's frames</h2>
 * The owner writes its frame's reference twice per join, so a worker's frames are the hottest line it writes.
 * Frame idx of worker w is element {@link Layout#halfSlot} = {@code idx + (w + 1) * HALVES_GAP} of one array,
 * with {@link Layout#HALVES_GAP} references (at least {@link CacheLine#PAD} bytes) before each worker's frames
 * and after the last. Without the gap, worker 0's frames shared a cache line with the array's header, and every
 * access by every worker reads the header's length for its bounds check: each of worker 0's writes then cost
 * the others a miss, and theirs a miss to worker 0. Whether they did depended on where the collector had put
 * the array (its address mod 64), which made two-worker join trees run at one of two speeds per pool, the slow
 * one slower than a single worker (PERFORMANCE_TRACKING entry 63). The hot frames are not the deepest: a right
 * half runs at its join's own depth (Joining), so the frame of a node is the number of left turns on its path,
 * binomially spread around half the tree's depth (frames 7 to 13 for 88 % of the joins of a 2^20-leaf tree).
 */
public final class JoinDeques implements AutoCloseable {

    /** Off-heap layout of the completion words. */
    public static final class Layout {
        public static final long WORD_LENGTH = Long.BYTES;
        public static final long WAITERS_OFFSET = 0;
        /** The frames' words start on the line after WAITERS. */
        public static final long FRAMES_OFFSET = CacheLine.PAD;

        private Layout() {}

        public static long word(int idx) {
            return FRAMES_OFFSET + WORD_LENGTH * idx;
        }

        /** Where the frames' ARG words start: the first padded line (CacheLine.PAD) after the last completion word. */
        public static long argsOffset(int frames) {
            return CacheLine.padUp(FRAMES_OFFSET + WORD_LENGTH * frames);
        }

        /** ARG word of frame {@code idx} in a block of {@code frames} frames. */
        public static long arg(int idx, int frames) {
            return argsOffset(frames) + WORD_LENGTH * idx;
        }

        /** Where the frames' FORK words start: the first padded line after the last ARG word. */
        public static long forksOffset(int frames) {
            return CacheLine.padUp(argsOffset(frames) + WORD_LENGTH * frames);
        }

        /** Where the frames' RESULT words start: the first padded line after the last FORK word. */
        public static long resultsOffset(int frames) {
            return CacheLine.padUp(forksOffset(frames) + WORD_LENGTH * frames);
        }

        /**
         * Bytes of the words block for {@code frames} frames: WAITERS, the completion words, the ARG, FORK and
         * RESULT words.
         */
        public static long wordsLength(int frames) {
            return resultsOffset(frames) + WORD_LENGTH * frames;
        }

        /** References left empty before each worker's halves and after the last worker's: {@link CacheLine#REF_GAP}. */
        public static final int HALVES_GAP = CacheLine.REF_GAP;

        /** Element of the halves array that holds frame {@code idx}, whose worker is {@code idx >>> framesShift}. */
        public static int halfSlot(int idx, int framesShift) {
            return idx + ((idx >>> framesShift) + 1) * HALVES_GAP;
        }

        /** Length of the halves array for {@code workers} workers of {@code 1 << framesShift} frames each. */
        public static int halvesLength(int workers, int framesShift) {
            return (workers << framesShift) + (workers + 1) * HALVES_GAP;
        }
    }

    /** The half is offered and nobody has stolen it (yet). */
    public static final long OFFERED = 0L;
    /** Or-ed in by the owner before it parks. */
    public static final long PARKED = 1L << 8;
    /** The thief ran the half; its failure (if any) is in {@link #finishStolen}. */
    public static final long DONE = 1L << 9;
    private static final long THIEF_MASK = PARKED - 1;
    /** Most frames per worker: joins nested deeper on one worker than this run inline. */
    public static final int MAX_FRAMES = 1 << 12;

    private final WorkDeque[] deques;
    private final MemorySegment words;
    /** words' address when {@link Mem#RAW}, else 0: for {@link #waitersOnWorker}. */
    private final long wordsBase;
    private final int framesPerWorker;
    /** log2 of {@link #framesPerWorker}: a frame's worker is {@code idx >>> framesShift}. */
    private final int framesShift;
    /**
     * The half of each frame at {@link Layout#halfSlot} ("Layout of the on-heap halves"); written by the owner
     * only (see "A frame is free"), read by its thief.
     */
    private final Object[] halves;
    /**
     * The context marker of each frame whose half is in argument form ("Halves in argument form"), at the same
     * {@link Layout#halfSlot} as its function; null for a {@code Runnable} half and a free frame. Owner writes only.
     */
    private final Object[] ctxs;
    /** {@link Layout#argsOffset} of this block. */
    private final long argsOffset;
    /** {@link Layout#forksOffset} of this block. */
    private final long forksOffset;
    /** {@link Layout#resultsOffset} of this block. */
    private final long resultsOffset;
    private final Throwable[] failures;
    /**
     * The object result of a stolen {@code forkObject} half, per frame: written by its thief before DONE, taken
     * (read and cleared) by the owner after it ("Halves of forks, and their results").
     */
    private final Object[] results;
    /** Owner thread of each deque, written by the owner before its push (plain; published by the push). */
    private final Thread[] owners;

    /**
     * {@code workers} deques and stacks of {@code framesPerWorker} frames each (a power of two in
     * [{@link WorkDeque.Layout#MIN_CAPACITY}, {@link #MAX_FRAMES}]: the deques' fixed capacity), all from
     * {@code memory}.
     */
    public JoinDeques(PoolMemory memory, int workers, int framesPerWorker) {
        if (workers < 1) {
            throw new IllegalArgumentException("workers must be >= 1: workers=" + workers);
        }
        if (framesPerWorker < WorkDeque.Layout.MIN_CAPACITY || framesPerWorker > MAX_FRAMES
                || Integer.bitCount(framesPerWorker) != 1) {
            throw new IllegalArgumentException("framesPerWorker must be a power of two in ["
                    + WorkDeque.Layout.MIN_CAPACITY + ", " + MAX_FRAMES + "]: framesPerWorker=" + framesPerWorker);
        }
        this.framesPerWorker = framesPerWorker;
        this.framesShift = Integer.numberOfTrailingZeros(framesPerWorker);
        int frames = workers * framesPerWorker;
        this.words = memory.allocate("join frame words", Layout.wordsLength(frames));
        this.wordsBase = Mem.RAW ? words.address() : 0L;
        this.argsOffset = Layout.argsOffset(frames);
        this.forksOffset = Layout.forksOffset(frames);
        this.resultsOffset = Layout.resultsOffset(frames);
        this.halves = new Object[Layout.halvesLength(workers, framesShift)];
        this.ctxs = new Object[Layout.halvesLength(workers, framesShift)];
        this.failures = new Throwable[frames];
        this.results = new Object[frames];
        this.owners = new Thread[workers];
        this.deques = new WorkDeque[workers];
        for (int w = 0; w < workers; w++) {
            deques[w] = new WorkDeque(memory, "join deque " + w, framesPerWorker);
        }
    }

    private int slot(int idx) {
        return Layout.halfSlot(idx, framesShift);
    }

    /** Worker deques. */
    public int workers() {
        return deques.length;
    }

    /** Frames of each worker: the deepest join nesting on one worker that offers its half. */
    public int framesPerWorker() {
        return framesPerWorker;
    }

    /** The frame of worker {@code w}'s join at nesting depth {@code depth} (in [0, framesPerWorker)). */
    public int frame(int w, int depth) {
        return w * framesPerWorker + depth;
    }

    /** A thief's word for the owner: stolen by worker {@code thief}. */
    public static long stolen(int thief) {
        return 1L + thief;
    }

    /** The thief named by word {@code w}, or -1 while nobody has said it stole the half. */
    public static int thiefOf(long w) {
        return (int) (w & THIEF_MASK) - 1;
    }

    public static boolean isDone(long w) {
        return (w & DONE) != 0;
    }

    // =====================================================================================================
    // OWNER (worker w only)
    // =====================================================================================================

    /**
     * Offers {@code half} in free frame {@code idx} of worker w to thieves: the reference first (plain; the word
     * is OFFERED whenever the frame is not in a stolen join), then the push, whose release fence publishes them
     * to the thief that steals {@code idx}.
     * Returns the entries the deque held before (0: it was empty; see {@link WorkDeque#push}).
     */
    public long offer(int w, int idx, Runnable half) {
        Thread me = Thread.currentThread();
        if (owners[w] != me) {
            owners[w] = me; // plain: published by the push below; read by a thief after its steal
        }
        halves[slot(idx)] = half; // plain: published by the push's release fence, read after the thief's steal
        // The word is OFFERED already: zeroed with the block, and reset by this owner when it last read DONE
        // (finishStolen); the frame is only ever this thread's (program order).
        return deques[w].push(idx); // WorkDeque: slot write, release fence, bottom store; never grows (class doc)
    }

    /**
     * {@link #offer} of a half in argument form ("Halves in argument form"): {@code fn}, the context marker
     * {@code ctx} (never null: {@link QueueEntry#NULL_CTX} for a null context) and {@code arg} into free frame
     * {@code idx}, then the push.
     */
    public long offerArg(int w, int idx, Object fn, Object ctx, long arg) {
        Thread me = Thread.currentThread();
        if (owners[w] != me) {
            owners[w] = me; // plain: published by the push below; read by a thief after its steal
        }
        int s = slot(idx);
        // plain, all three: published by the push's release fence, read after the thief's steal (as in offer)
        halves[s] = fn;
        ctxs[s] = ctx;
        Mem.setLongPlain(words, argsOffset + Layout.WORD_LENGTH * idx, arg);
        return deques[w].push(idx); // WorkDeque: slot write, release fence, bottom store; never grows (class doc)
    }

    /**
     * {@link #offerArg} of a fork's half ("Halves of forks, and their results"): {@code fn}, the context marker
     * {@code ctx} (null for a {@code Runnable} half, whose {@code arg} is then not written) and {@code arg}, and the
     * fork's {@code handle} in the FORK word (which says the half's form to its thief), then the push.
     */
    public long offerFork(int w, int idx, Object fn, Object ctx, long arg, long handle) {
        Thread me = Thread.currentThread();
        if (owners[w] != me) {
            owners[w] = me; // plain: published by the push below; read by a thief after its steal
        }
        int s = slot(idx);
        // plain, all four: published by the push's release fence, read after the thief's steal (as in offer)
        halves[s] = fn;
        if (ctx != null) {
            ctxs[s] = ctx;
            Mem.setLongPlain(words, argsOffset + Layout.WORD_LENGTH * idx, arg);
        }
        Mem.setLongPlain(words, forksOffset + Layout.WORD_LENGTH * idx, handle);
        return deques[w].push(idx); // WorkDeque: slot write, release fence, bottom store; never grows (class doc)
    }

    /**
     * Takes the newest entry of w's deque, which is {@code idx} unless a thief stole it: true, and the half is
     * the owner's to run; false, stolen (the thief runs it and completes the word). Owner only.
     *
     * @throws IllegalStateException if the deque held another entry (a join returned without its pop-back)
     */
    public boolean popBack(int w, int idx) {
        int e = takeBack(w);
        if (e == idx) {
            return true;
        }
        if (e >= 0) {
            throw new IllegalStateException("join deque " + w + " held entry " + e + " above join half " + idx);
        }
        return false;
    }

    /**
     * The owner's take: the newest entry of w's deque (its frame), or -1 when a thief took the last one or the
     * deque is empty. Owner only.
     */
    public int takeBack(int w) {
        long e = deques[w].take(); // full fence, and on the last entry the CAS on top against thieves
        return e == QueueEntry.EMPTY ? -1 : (int) e;
    }

    /**
     * The half of a frame its owner took back or a thief stole (plain: see {@link #offer}): a {@code Runnable}, or
     * the function of a half in argument form (when {@link #ctx} is not null).
     */
    public Object half(int idx) {
        return halves[slot(idx)];
    }

    /**
     * The context marker of a half in argument form, or null for a {@code Runnable} half; read as {@link #half}.
     * {@link QueueEntry#ctxOf} turns the marker into the context.
     */
    public Object ctx(int idx) {
        return ctxs[slot(idx)];
    }

    /** The long of a half in argument form; plain, read as {@link #half}. */
    public long arg(int idx) {
        return Mem.getLongPlain(words, argsOffset + Layout.WORD_LENGTH * idx);
    }

    /**
     * The handle of the fork whose half frame {@code idx} holds, or 0 for a join's half (and a free frame). Plain:
     * the owner reads its own writes; a thief reads it after its steal, published by the push as the half is.
     */
    public long forkHandle(int idx) {
        return Mem.getLongPlain(words, forksOffset + Layout.WORD_LENGTH * idx);
    }

    /**
     * A thief's result of a typed fork's half ({@code long}, or a {@code double}'s raw bits): plain, published by
     * the {@link #complete} that follows (its getAndSet), read by the owner after its acquire load reads DONE.
     */
    public void setResult(int idx, long result) {
        Mem.setLongPlain(words, resultsOffset + Layout.WORD_LENGTH * idx, result);
    }

    /** The result a thief left with {@link #setResult}: plain, after the owner's acquire load read DONE. */
    public long result(int idx) {
        return Mem.getLongPlain(words, resultsOffset + Layout.WORD_LENGTH * idx);
    }

    /** A thief's object result of a {@code forkObject} half: plain, published by {@link #complete} as setResult's. */
    public void setResultObject(int idx, Object result) {
        results[idx] = result;
    }

    /**
     * The object result a thief left, cleared (the pool keeps no result): plain, after the owner's acquire load read
     * DONE. Owner only.
     */
    public Object takeResultObject(int idx) {
        Object r = results[idx];
        if (r != null) {
            results[idx] = null;
        }
        return r;
    }

    /** Whether frame {@code idx} is free for an offer (its half is null). Owner only; plain. */
    public boolean frameFree(int idx) {
        return halves[slot(idx)] == null;
    }

    /** Frees the frame of a {@code Runnable} half its owner took back (the reference is dropped). Owner only. */
    public void clear(int idx) {
        halves[slot(idx)] = null;
    }

    /** Frees the frame of a half in argument form its owner took back (function and context dropped). Owner only. */
    public void clearArg(int idx) {
        int s = slot(idx);
        halves[s] = null;
        ctxs[s] = null;
    }

    /**
     * Frees the frame of a fork's half its owner took back: function, context and the FORK word (0 again, so the
     * frame's next half, perhaps a join's, is no fork's). Owner only; plain.
     */
    public void clearFork(int idx) {
        int s = slot(idx);
        halves[s] = null;
        ctxs[s] = null;
        Mem.setLongPlain(words, forksOffset + Layout.WORD_LENGTH * idx, 0L);
    }

    /**
     * {@link #finishStolen} of a fork's frame: returns the half's failure and frees the frame, its FORK word 0 again
     * and any object result dropped. Plain, after the owner's acquire load read DONE; take the result first.
     */
    public Throwable finishFork(int idx) {
        results[idx] = null; // the caller took it already (or drops it: a fork nobody joined)
        Mem.setLongPlain(words, forksOffset + Layout.WORD_LENGTH * idx, 0L);
        return finishStolen(idx);
    }

    /**
     * Frees an abandoned frame (its half still set, see the class comment) once its thief is done: true when
     * the word read DONE (acquire) and the frame is free again ({@link #finishStolen}: failure dropped, word
     * OFFERED, half null); false while the half is still on the deque or its thief still runs it. Owner only.
     */
    public boolean tryReclaim(int idx) {
        if (!isDone(word(idx))) { // acquire: pairs with complete's getAndSet, as in the owner's wait
            return false;
        }
        if (forkHandle(idx) != 0) {
            finishFork(idx); // an abandoned fork's: its result and failure have nobody to go to either
        } else {
            finishStolen(idx); // the abandoned half's failure has no join to go to
        }
        return true;
    }

    /** The completion word, acquire: reading DONE makes the thief's run and failure visible. */
    public long word(int idx) {
        return Mem.getLongAcquire(words, Layout.word(idx)); // pairs with complete's getAndSet / markStolen's release
    }

    /**
     * Marks the owner as parked, if the word is still {@code seen}, a STOLEN(t) word (never OFFERED, never
     * DONE): true, and the thief's {@link #complete} will unpark it. False: the word changed (DONE): look again.
     * From OFFERED the owner must not park: the thief's {@link #markStolen} is a plain store that would erase
     * PARKED (it spins or parks bounded instead, see Joining).
     */
    public boolean tryMarkParked(int idx, long seen) {
        if (thiefOf(seen) < 0 || isDone(seen)) {
            throw new IllegalArgumentException("seen must be a STOLEN(t) word: seen=" + seen);
        }
        // CAS (volatile): exactly one of this and complete's getAndSet comes first in the word's order
        return Mem.casLong(words, Layout.word(idx), seen, seen | PARKED);
    }

    /**
     * The owner saw its stolen half DONE: returns the half's failure (or null) and frees the frame for its next
     * use (failure and half cleared, word back to OFFERED). Plain: after the acquire load of DONE, the frame is
     * the owner's alone, and only the owner uses it next.
     */
    public Throwable finishStolen(int idx) {
        Throwable f = failures[idx];
        if (f != null) {
            failures[idx] = null;
        }
        int s = slot(idx);
        halves[s] = null;
        if (ctxs[s] != null) { // a half in argument form: drop its context too (a Runnable half never wrote it)
            ctxs[s] = null;
        }
        Mem.setLongPlain(words, Layout.word(idx), OFFERED);
        return f;
    }

    // =====================================================================================================
    // THIEF (any thread)
    // =====================================================================================================

    /**
     * Steals the oldest half of worker {@code v}'s deque: its frame, or -1 when the deque looked empty. Retries
     * an ABORT (another thief or the owner won that entry) while the deque is not empty.
     */
    public int steal(int v) {
        WorkDeque d = deques[v];
        for (;;) {
            long e = d.steal(); // acquire top, full fence, acquire bottom, CAS on top
            if (e == QueueEntry.EMPTY) {
                return -1;
            }
            if (e != WorkDeque.ABORT) {
                return (int) e;
            }
        }
    }

    /** Tells the owner of a stolen half who runs it (release: ordered after the steal's CAS). */
    public void markStolen(int idx, int thief) {
        // release store: read by the owner's acquire load (word). Nothing else writes the word between the
        // owner's OFFERED and this store: the owner's PARKED CAS expects STOLEN(t), which only this store makes.
        Mem.setLongRelease(words, Layout.word(idx), stolen(thief));
    }

    /**
     * The thief ran stolen half {@code idx} of victim {@code v}'s deque: records {@code failure} (null: none)
     * and sets DONE, unparking the owner if it had parked (returns true then). The last access to the frame by
     * the thief (the owner drops the half's reference when it reads DONE).
     */
    public boolean complete(int idx, int v, Throwable failure) {
        if (failure != null) {
            failures[idx] = failure; // plain: published by the getAndSet below
        }
        Thread owner = owners[v]; // plain: written before the push we stole from; the owner is inside its join
        // getAndSet (volatile, a release): publishes the run's effects and the failure to the owner's acquire
        // load that reads DONE; its old value says whether the owner's PARKED CAS came first.
        long old = Mem.getAndSetLong(words, Layout.word(idx), DONE);
        if ((old & PARKED) != 0) {
            LockSupport.unpark(owner);
            return true;
        }
        return false;
    }

    // =====================================================================================================
    // ANY THREAD
    // =====================================================================================================

    /** An owner begins ({@code +1}) or ends ({@code -1}) a wait with nothing to help with (class comment, "Demand"). */
    public void waiting(int delta) {
        Mem.getAndAddLong(words, Layout.WAITERS_OFFSET, delta); // atomic: several owners count at once
    }

    /** Owners waiting with nothing to help with now: opaque, a hint (class comment, "Demand"). */
    public long waiters() {
        return Mem.getLongOpaque(words, Layout.WAITERS_OFFSET);
    }

    /**
     * {@link #waiters()} by raw address, for the demand check of a worker's join or fork (as
     * {@code WakeCoalescer.searchersOnWorker}): the block is freed after every worker has been joined. Only on the
     * pool's workers.
     */
    public long waitersOnWorker() {
        return Mem.getLongOpaqueAt(words, wordsBase, Layout.WAITERS_OFFSET); // opaque: a hint, as waiters()
    }

    /**
     * WAITERS' raw address, or 0 where {@link Mem#RAW} is false: for a reader that keeps it in a field of its own
     * and loads it as {@link #waitersOnWorker} does (Joining's demand check). Valid while a worker runs.
     */
    public long waitersAddress() {
        return wordsBase == 0 ? 0 : wordsBase + Layout.WAITERS_OFFSET;
    }

    /** Whether worker {@code v}'s deque holds an entry (volatile loads of top and bottom). */
    public boolean nonEmpty(int v) {
        return deques[v].size() > 0;
    }

    /** Whether any deque holds an entry (volatile loads of each one's top and bottom). */
    public boolean anyNonEmpty() {
        for (WorkDeque d : deques) {
            if (d.size() > 0) {
                return true;
            }
        }
        return false;
    }

    /** Entries in worker {@code v}'s deque now (volatile loads; exact only when quiescent). */
    public long size(int v) {
        return deques[v].size();
    }

    /** Frees every deque (once nobody uses them; a no-op after the arena closed). */
    @Override
    public void close() {
        for (WorkDeque d : deques) {
            d.close();
        }
    }
}
