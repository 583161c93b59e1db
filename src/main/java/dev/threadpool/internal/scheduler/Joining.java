package dev.threadpool.internal.scheduler;

import dev.threadpool.InvalidHandleException;
import dev.threadpool.JoinFailedException;
import dev.threadpool.ObjLongFunction;
import dev.threadpool.ObjLongToDoubleFunction;
import dev.threadpool.ObjLongToLongFunction;
import dev.threadpool.TaskCancelledException;
import dev.threadpool.TaskFailedException;
import dev.threadpool.WaitGroup;
import dev.threadpool.internal.memory.Mem;
import dev.threadpool.internal.queue.QueueEntry;
import dev.threadpool.internal.stats.PoolCounters;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.concurrent.locks.LockSupport;
import java.util.function.ObjLongConsumer;

/**
 * {@code ThreadPool.join(left, right)}: fork/join of two halves, the way ForkJoinPool's {@code invokeAll(a, b)}
 * and Rayon's {@code join} do it. The halves live in {@link JoinDeques}; this room is the protocol.
 *
 * <pre>
 *   on worker w:  accepting? (else PoolShutdownException, as submit)
 *                 n = w's join nesting; n >= EAGER_LEVELS and nobody wants work: run left, then right, inline;
 *                 nothing else ("Offer on demand")
 *                 d = w's join depth; idx = frame(w, d) (d past the frames, or the frame held by an abandoned
 *                 half: run left, then right, inline; nothing else)
 *                 offer right: halves[idx], push idx on w's join deque; deque was empty:
 *                 wake one parked stealer, if any
 *                 run left inline at depth d + 1
 *                 pop back: take() == idx ? free the frame, run right inline at depth d
 *                                         : stolen -> wait for it (helping, at depth d + 1), then its failure
 *                 both failed? TaskFailedException(first = left's, right's suppressed)
 *   elsewhere:    the pair as one detached task (ExternalCall) that joins on a worker; wait on its WaitGroup
 *   thieves:      idle workers (WorkerLoop.turn after scheduler.next found nothing), helpers (helpNext) and
 *                 waiting owners (joinBoth) steal from a join deque's top: markStolen, run, complete
 * </pre>
 *
 * <h2>Offer on demand</h2>
 * Offering is most of a join's cost (the half's reference stored into an old-generation array, with G1's
 * post-write barrier and its fence; the push; the take's full fence), and in a running tree nearly every offered
 * half is taken back by its owner. So a join with {@link #EAGER_LEVELS} or more joins open below it on its
 * worker's stack ({@code WorkerThread.joinNest}) offers only while some worker wants work ({@link #wanted}: a
 * searching worker, a parked stealer, or an owner waiting for its stolen half with nothing to help with,
 * {@link JoinDeques#waiters}); otherwise it runs left, then right, on this stack and writes nothing shared. The
 * top levels of a root and of every stolen half always offer: they hold the big pieces, and a coarse user join
 * must reach a worker that frees up later. A join that did not offer is the inline case that exists anyway, so
 * exactly-once needs nothing new; the loads are hints, and a miss costs parallelism until the owner's next join.
 * BUSY_SPIN offers every half (its idle workers are not counted as searching). Acar, Charguéraud and Rainey's
 * private deques (PPoPP 2013), with the demand read from words the pool keeps anyway.
 *
 * <h2>Cost of the path nobody steals from (an offered half)</h2>
 * One admission load, the frame from the worker's own depth field (no cache, no freelist: JoinDeques,
 * "Frames"), a plain load and a plain store of the half's reference, the push (plain and release stores), one
 * volatile load of the idle mask when the deque was empty before, the take (a full fence, the Chase–Lev
 * owner's price; a CAS only when the half is the last entry), and the reference cleared. No read-modify-write
 * on a line another thread writes, and no allocation; no descriptor, so no start CAS, no counters CAS, no
 * WaitGroup, and the pool's {@code queueCapacity} does not limit joins.
 *
 * <h2>Waiting for a stolen half: leapfrogging</h2>
 * The owner knows its thief from the word ({@code STOLEN(t)}) and steals only from t's join deque while it
 * waits (FJP's helpJoin, Wagner and Calder's leapfrogging). Its own deque is empty then: Chase–Lev thieves
 * take the oldest entry first, so the newest one, our half, is stolen only after every older one. So whatever
 * t pushed after it stole our half is a descendant of that half, and so is whatever the helper takes from t:
 * each level of helping on the owner's stack runs a strictly deeper node of the user's own recursion. The
 * stack is therefore bounded by a constant times the depth of the user's recursion; in addition every help
 * counts one level of {@code inlineDepth} and stops at {@link WorkerLoop#MAX_INLINE_DEPTH}, like every other
 * helping site. When t's deque is empty the owner spins, yields, then parks: bounded while the word still
 * says OFFERED, and with PARKED set (the thief's completion unparks it) once it names the thief.
 *
 * <h2>Fork handles</h2>
 * {@code ThreadPool.fork} ({@code Runnable} or {@code (fn, ctx, arg)}), {@code forkLong}, {@code forkDouble} and
 * {@code forkObject} are a join whose left half is the caller's own code: the fork does what a join does before its
 * left half, returns a {@code long} handle, and the join of that handle does what a join does after it.
 *
 * <pre>
 *   fork on w:  accepting? (else PoolShutdownException); pos = w.forkTop (ForkStack: the worker's open forks)
 *               h = handle(form, w, pos, seq); entry pos = h and (d = joinDepth, n = joinNest)
 *               n < EAGER_LEVELS or wanted, d < frames, frame(w, d) free (or reclaimable):
 *                  OFFERED: the half in frame (w, d) with FORK = h, push; joinDepth = d + 1
 *               else KEPT: the half in the entry (nothing shared written; no frame, joinDepth stays)
 *               forkTop = pos + 1; joinNest = n + 1
 *   join(h):    h is w's open entry pos, of the join's form, and joinNest == n + 1 (else a misuse exception, and
 *               nothing changes); forks above pos left open: settle them; forkTop = pos
 *               KEPT, or OFFERED and take() == frame: run the half here at depth d (its result straight back)
 *               else stolen: wait for it as joinBoth does (awaitStolen), then its result and failure from the frame
 *               joinDepth = d, joinNest = n; the half threw: JoinFailedException (a join failure passes as it is)
 *   thieves:    as a join's half; a non-null context marker makes them read FORK for the form, and a typed half's
 *               result goes into the frame before DONE (JoinDeques, "Halves of forks, and their results")
 * </pre>
 *
 * <p><b>Which join is right.</b> A fork is joined once, by the worker and in the code that forked it, newest first.
 * The handle names the entry, and the entry keeps the handle after its join, so a handle joined twice, a stale one
 * (its entry reused), another worker's, one from outside the pool, no fork handle at all, and the wrong form are
 * told apart and refused. {@code joinNest} decides the rest with one compare: the fork recorded n, and the code that
 * forked it runs at exactly n + 1 until it joins it. More: a fork made after it is still open in that code (out of
 * order), or the join is inside a join or a fork's half opened since (whose code might run on a thief); less: the
 * code that forked it has returned (a join's half that forked it ended). A refused join throws and changes nothing.
 *
 * <p><b>A fork never joined still runs exactly once.</b> Code the pool runs as a unit (a task, in WorkerLoop; a
 * stolen half, a fork's half run at its join, an abandoned half, an outside caller's pair or call) reads
 * {@code forkTop} before it and, if the code left forks open, {@link #settle}s them after it, newest first: a KEPT
 * half runs there, an OFFERED one is taken back and run or its thief waited for, as its join would have. Their
 * results are dropped and their failures added to the code's own (suppressed on its throwable, or its failure when
 * it had none). A join's inline halves are no such unit, so joinBoth's path keeps its loads and stores: a fork left
 * open in one stays on the worker's stack until the join of an older fork settles it (joinNest shows that its code
 * has returned: that join found exactly n + 1), or the enclosing unit's end does; if it was offered, the join's
 * pop-back takes it first (it is newer than the join's own half) and runs it as an abandoned half, adding its
 * failure to the join's. Settling lowers joinDepth and joinNest to each settled fork's levels, never raises them,
 * so the worker ends each unit with the levels it began with. A frame that an open fork's stolen half holds is not
 * reclaimed by a later join at its depth ({@link #reclaim}): its failure still reaches whoever settles it.
 *
 * <h2>Failures, interrupts, shutdown</h2>
 * Both halves always run to their end; a failure of either is rethrown after both ended, as
 * {@link JoinFailedException} (a public {@link TaskFailedException}) whose cause is left's throwable if left
 * threw, else right's (the other one is added as suppressed). A join failure that passes through an enclosing
 * join is rethrown unwrapped. Join halves are the caller's work, not tasks of the pool: they are not counted
 * as submitted, never reach the error handler or recentErrors, and are never swept by
 * {@code shutdown(CANCEL_PENDING)}: an offered half is run exactly once, by its owner or by a thief, whatever
 * the shutdown does, and the owner waits for it.
 * A worker's join does not respond to interrupts (both halves end first); the interrupt status is kept.
 */
final class Joining {
    /** Looks at the word (and at the thief's deque) with a spin-wait hint before yielding. */
    private static final int SPINS = 128;
    /** Thread.yield rounds after the spins, before parking. */
    private static final int YIELDS = 32;
    /** Longest park of a waiting owner: it then looks for its thief's work again. */
    private static final long PARK_NANOS = 200_000L;
    /** Park while the thief has not yet named itself (no PARKED: bounded, see JoinDeques.tryMarkParked). */
    private static final long PARK_UNNAMED_NANOS = 20_000L;

    /**
     * Joins nested less deeply than this on one worker's stack always offer their half (class comment, "Offer on
     * demand"): the top of every root and of every stolen half, where the big pieces are.
     */
    static final int EAGER_LEVELS = 8;

    private final JoinDeques joins;
    /** {@link JoinDeques#framesPerWorker}: joins nested deeper on one worker run inline. */
    private final int framesPerWorker;
    private final Lifecycle lifecycle;
    private final ParkingLot parking;
    private final PoolCounters counters;
    /** Workers that steal join halves when idle: every base worker ({@link #stealers(int)}). */
    private final long stealers;
    /** The searching count of the topology (demand, with the idle mask and {@link JoinDeques#waiters}). */
    private final WakeCoalescer searching;
    /**
     * Whether joins below {@link #EAGER_LEVELS} offer on demand only. False under BUSY_SPIN, whose idle workers
     * spin without being counted as searching (Idle): there every join offers its half.
     */
    private final boolean onDemand;
    /** Which workers' join deques may hold a half (word JOINS of the pool's WorkSummary). */
    private final WorkSummary summary;
    /**
     * The demand words' raw addresses ({@link #wanted}): the topology's SEARCHING count, the idle mask and
     * {@link JoinDeques#waiters}; all three 0 where {@code Mem.RAW} is false, and then {@link #wanted} reads them
     * through their structures. Held here so that the demand check of a join or fork reads no object but this one
     * and the worker's own: read through the three structures' objects (their segment and base fields), a prebuilt
     * join tree on two workers ran at one worker's speed in 16 of 40 JMH forks, its time on the loads of those
     * objects' fields (PERFORMANCE_TRACKING 87). That mode went when nothing but the worker thread's own fields
     * were padded (WorkerThreadPad, entry 88: 17 of 32 forks slow without, 0 of 32 with): those fields, written on
     * every join, lay on the thread object's last line, which the collector shares with the next object. Holding
     * the addresses still saves the loads. Valid while a worker runs (native-notes/FFM.md, "Raw addresses").
     */
    private final long searchingAt;
    private final long idleMaskAt;
    private final long waitersAt;

    /** {@link #forkGeneral}, unbound: {@link #general}'s source. */
    private static final MethodHandle FORK_GENERAL;

    static {
        try {
            FORK_GENERAL = MethodHandles.lookup().findVirtual(Joining.class, "forkGeneral", MethodType.methodType(
                    long.class, WorkerThread.class, int.class, Object.class, Object.class, long.class, int.class,
                    int.class));
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * {@link #forkGeneral} bound to this object, the only way {@link #fork} calls it (class comment, "Fork
     * handles"; PERFORMANCE_TRACKING 94). C2 inlines {@code fork} into the user's recursion, and then, in the JVMs
     * whose profile happened to call the general path often enough (the eager levels, a thief's search), inlined
     * {@code forkGeneral} too, with its offer and a second demand check: the recursion's compile then ran out of
     * its node budget ({@code NodeCountInliningCutoff}) before it reached the join and the inner recursion, and a
     * split ran about 1.2x slower in that JVM for good. A method handle read from a final instance field is no
     * constant to C2, so it cannot inline through it: the general path stays a call in every JVM, whatever the
     * profile. It costs a few nanoseconds on that path only (an offered or a kept-first fork), never on the
     * recursion's.
     */
    private final MethodHandle general;

    Joining(JoinDeques joins, Lifecycle lifecycle, ParkingLot parking, PoolCounters counters, long stealers,
            WakeCoalescer searching, boolean onDemand) {
        this.joins = joins;
        this.framesPerWorker = joins.framesPerWorker();
        this.lifecycle = lifecycle;
        this.parking = parking;
        this.counters = counters;
        this.stealers = stealers;
        this.searching = searching;
        this.onDemand = onDemand;
        this.summary = parking.work();
        long sa = searching.searchingAddress();
        long ia = parking.idleMaskAddress();
        long wa = joins.waitersAddress();
        boolean raw = sa != 0 && Mem.maskable(sa) && Mem.maskable(ia) && Mem.maskable(wa); // else the structures
        this.searchingAt = raw ? sa : 0L;
        this.idleMaskAt = raw ? ia : 0L;
        this.waitersAt = raw ? wa : 0L;
        this.general = FORK_GENERAL.bindTo(this);
    }

    /** Whether worker {@code w} steals join halves (idle, or helping). */
    boolean stealer(int w) {
        return stealer(stealers, w);
    }

    static boolean stealer(long stealers, int w) {
        return w < Long.SIZE && (stealers & (1L << w)) != 0;
    }

    /**
     * The workers that steal join halves in a pool of {@code maxThreads} base workers: all of them.
     * LANE_EXTENSION's reserved blocking workers {@code [0, blockingWorkers)} included: join halves are
     * default-lane work, and a blocking worker helps the default lane whenever its own lane is empty (the
     * design's cross-lane rule; {@code WorkerLoop.turn} looks at its lane first, then the default lane, then
     * the join deques, so a blocking entry that arrives waits at most for the half it is running). Overflow
     * workers never steal at the top of their loop (they may still own joins).
     */
    static long stealers(int maxThreads) {
        return maxThreads >= Long.SIZE ? -1L : (1L << maxThreads) - 1;
    }

    // =====================================================================================================
    // The owner
    // =====================================================================================================

    /** {@code join} from worker {@code self} of this pool: refused once shutdown began, as a submit is. */
    void join(WorkerThread self, Runnable left, Runnable right) {
        lifecycle.checkAccepting();
        joinBoth(self, left, right, null, null, 0L, 0L);
    }

    /** {@code join(fn, ctx, left, right)} from worker {@code self}: refused once shutdown began, as a submit is. */
    void join(WorkerThread self, ObjLongConsumer<Object> fn, Object ctx, long left, long right) {
        lifecycle.checkAccepting();
        joinBoth(self, null, null, fn, ctx, left, right);
    }

    /** {@code join} without the admission check: the pair is part of work the pool already accepted. */
    void joinAccepted(WorkerThread self, Runnable left, Runnable right) {
        joinBoth(self, left, right, null, null, 0L, 0L);
    }

    /**
     * Both forms of {@code join}: {@code left.run()} and {@code right.run()}, or, when {@code fn} is not null (the
     * argument form, "Halves in argument form" in JoinDeques), {@code fn.accept(ctx, l)} and {@code fn.accept(ctx,
     * r)}, whose offered half is no object. One method for both, so that the two cannot drift apart; the form costs
     * a null test of {@code fn} at the three places where they differ (run left, offer, run right).
     *
     * <p><b>One method, on purpose: never inlined into the caller.</b> The user's recursion calls this method
     * and this method calls the user's halves, so C2 inlines the user's node into it and it into the user's
     * node, down to {@code MaxRecursiveInlineLevel}, and which shape it reaches depends on which method C2
     * compiled first (a callee already compiled to more than {@code InlineSmallCode} bytes is not inlined). The
     * same tree ran at 22, 27 or 34 ns a join on one worker depending on the JVM (PERFORMANCE_TRACKING 75),
     * while ForkJoinPool, whose tasks run behind a call C2 does not inline twice, ran at 19 in every JVM. A
     * method larger than {@code FreqInlineSize} (325 bytes of bytecode on x86-64 and AArch64) is never inlined,
     * so the join is a call from the user's code, one shape in every JVM: 21-23 ns a join, where the inlined
     * shapes ran 22 at best and 34 at worst (with its half offered; a join that offers nothing costs 12 ns,
     * PERFORMANCE_TRACKING 76). The owner's wait for a stolen half was kept in here for that size; it is now
     * {@link #awaitStolen}, shared with the join of a fork handle, and this method is still about 450 bytes
     * without it. {@code JoinShapeTest} fails if this method shrinks below {@code FreqInlineSize}.
     */
    private void joinBoth(WorkerThread self, Runnable left, Runnable right, ObjLongConsumer<Object> fn, Object ctx,
            long l, long r) {
        final int n = self.joinNest; // owner-only plain field: joins open on this stack, offered or not
        if (n >= EAGER_LEVELS && onDemand && !wanted()) {
            runBothHere(self, n, left, right, fn, ctx, l, r); // nobody wants work: offer nothing ("Offer on demand")
            return;
        }
        final int d = self.joinDepth; // owner-only plain field: the frame of this join (JoinDeques, "Frames")
        if (d >= framesPerWorker) {
            runBothHere(self, n, left, right, fn, ctx, l, r); // nested deeper than the frames: right after left
            return;
        }
        final int w = self.index;
        final int idx = joins.frame(w, d);
        if (!joins.frameFree(idx) && !reclaim(self, idx)) {
            runBothHere(self, n, left, right, fn, ctx, l, r); // an abandoned half holds the frame: never offer twice
            return;
        }
        // never grows: at most framesPerWorker entries (JoinDeques)
        long before = fn == null ? joins.offer(w, idx, right)
                : joins.offerArg(w, idx, fn, ctx != null ? ctx : QueueEntry.NULL_CTX, r);
        if (before == 0) {
            // JOINS (getAndOr only while our bit is clear: the first offer since we last ran dry), so that idle
            // looks read the summary line instead of every deque; then the wake
            summary.mark(WorkSummary.JOINS, w);
            wakeStealer(); // FJP's rule: signal only a push into an empty deque; a longer one has been seen
        }
        Throwable first = null;
        Throwable second = null;
        self.joinDepth = d + 1; // joins inside left, and helping while we wait, use the frames above ours
        self.joinNest = n + 1;
        try {
            try {
                if (fn == null) {
                    left.run();
                } else {
                    fn.accept(ctx, l);
                }
            } catch (Throwable t) {
                first = t;
            }
            int back;
            while ((back = joins.takeBack(w)) != idx && back >= 0) {
                first = addFailure(first, runAbandoned(self, back)); // left left it: see runAbandoned
            }
            if (back == idx) {
                if (fn == null) {
                    joins.clear(idx);
                } else {
                    joins.clearArg(idx);
                }
                self.joinDepth = d; // our frame is free again: right's joins reuse it (a right spine stays flat)
                try {
                    if (fn == null) {
                        right.run();
                    } else {
                        fn.accept(ctx, r);
                    }
                } catch (Throwable t) {
                    second = t;
                }
            } else {
                awaitStolen(self, idx); // leapfrogging, then parked: see awaitStolen. Never throws.
                second = joins.finishStolen(idx); // plain: after the acquire load of DONE; frame free again
            }
        } finally {
            self.joinDepth = d; // also when the pool's own code threw (an Error): see runAbandoned
            self.joinNest = n;
        }
        if (first != null || second != null) {
            throw failure(first, second);
        }
    }

    /**
     * The owner's wait for its half in frame {@code idx}, stolen: until the thief's completion says DONE, running
     * the thief's own halves meanwhile (leapfrogging, class comment), then spinning, yielding and parking. Keeps the
     * interrupt status; never throws. {@link #joinBoth} and a fork's join ({@link #joinFork}, {@link #settle}) both
     * wait here: a stolen half is their slow path, so the call costs nothing on the path nobody steals from, and
     * joinBoth without the loop is still far above {@code FreqInlineSize} (JoinShapeTest).
     */
    private void awaitStolen(WorkerThread self, int idx) {
        boolean waiting = false; // counted in WAITERS: our thief offers its next half ("Offer on demand")
        boolean interrupted = false;
        int spins = 0;
        try {
            for (;;) {
                long word = joins.word(idx); // acquire: DONE makes the thief's run, result and failure visible
                if (JoinDeques.isDone(word)) {
                    break;
                }
                int thief = JoinDeques.thiefOf(word);
                if (thief >= 0 && WorkerLoop.mayHelp(self)) {
                    int mine = joins.steal(thief);
                    if (mine >= 0) {
                        runStolenNested(self, thief, mine);
                        spins = 0;
                        continue;
                    }
                    if (!waiting && onDemand) {
                        waiting = true;
                        joins.waiting(1); // getAndAdd: the thief's next join reads it and offers
                    }
                }
                if (++spins < SPINS) {
                    Thread.onSpinWait();
                } else if (spins < SPINS + YIELDS) {
                    Thread.yield();
                } else {
                    if (Thread.interrupted()) {
                        interrupted = true; // park would return at once: keep it for later, do not spin
                    }
                    if (thief < 0) {
                        LockSupport.parkNanos(this, PARK_UNNAMED_NANOS);
                    } else if ((word & JoinDeques.PARKED) != 0 || joins.tryMarkParked(idx, word)) {
                        LockSupport.parkNanos(this, PARK_NANOS); // complete() unparks; bounded: help again
                    }
                }
            }
        } finally {
            if (waiting) {
                joins.waiting(-1); // getAndAdd; in the finally, so an Error cannot leave the pool offering forever
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * A half above ours in our own deque, taken by our pop-back: a fork that the code in our left half (or in a
     * fork's half, or in a task) made and never joined, or an inner join left by an Error thrown between its offer
     * and its pop-back (a StackOverflowError in the pool's own code, say). Nobody else will run it unless a thief
     * steals it, and we just took it, so we run it here, exactly once, and free its frame (Joining, "Fork
     * handles"). Returns its failure, which the caller adds to its own; a fork's result is dropped. Never throws.
     */
    private Throwable runAbandoned(WorkerThread self, int idx) {
        Object half = joins.half(idx);
        Object ctx = joins.ctx(idx);
        long arg = joins.arg(idx);
        long fork = joins.forkHandle(idx);
        joins.clearFork(idx); // both references and the FORK word, whichever kind of half
        int top = self.forkTop;
        Throwable failure = null;
        try {
            call(fork == 0 ? ForkStack.VOID : ForkStack.formOf(fork), half, ctx, arg);
        } catch (Throwable t) {
            failure = t;
        }
        if (self.forkTop != top) {
            failure = settle(self, top, failure); // forks it left open in turn
        }
        return failure;
    }

    /**
     * Runs an offered half as its frame holds it: {@code half} a {@code Runnable} when the context marker
     * {@code ctx} is null, else the function of a half in argument form (JoinDeques, "Halves in argument form").
     */
    @SuppressWarnings("unchecked")
    private static void runHalf(Object half, Object ctx, long arg) {
        if (ctx == null) {
            ((Runnable) half).run();
        } else {
            ((ObjLongConsumer<Object>) half).accept(QueueEntry.ctxOf(ctx), arg);
        }
    }

    /**
     * Calls a fork's half of {@code form} (ForkStack): a {@code VOID} one as {@link #runHalf}, a typed one with its
     * context ({@code ctx} the marker, never null then) and {@code arg}. Returns a {@code long} result, a
     * {@code double}'s raw bits, or 0; an {@code OBJECT} half's result comes from {@link #callObject}.
     */
    @SuppressWarnings("unchecked")
    private static long call(int form, Object half, Object ctx, long arg) {
        switch (form) {
            case ForkStack.LONG -> {
                return ((ObjLongToLongFunction<Object>) half).applyAsLong(QueueEntry.ctxOf(ctx), arg);
            }
            case ForkStack.DOUBLE -> {
                return Double.doubleToRawLongBits(
                        ((ObjLongToDoubleFunction<Object>) half).applyAsDouble(QueueEntry.ctxOf(ctx), arg));
            }
            case ForkStack.OBJECT -> {
                callObject(half, ctx, arg); // dropped: only settle and runAbandoned call an OBJECT half here
                return 0L;
            }
            default -> {
                runHalf(half, ctx, arg);
                return 0L;
            }
        }
    }

    /** Calls a {@code forkObject}'s half ({@code ctx} its context marker) and returns its result. */
    @SuppressWarnings("unchecked")
    private static Object callObject(Object half, Object ctx, long arg) {
        return ((ObjLongFunction<Object, Object>) half).apply(QueueEntry.ctxOf(ctx), arg);
    }

    /**
     * Both halves on this stack, left first, nothing offered; {@code n}: the caller's {@code joinNest}. The
     * argument form when {@code fn} is not null, as in {@link #joinBoth}.
     */
    private static void runBothHere(WorkerThread self, int n, Runnable left, Runnable right,
            ObjLongConsumer<Object> fn, Object ctx, long l, long r) {
        Throwable first = null;
        Throwable second = null;
        self.joinNest = n + 1; // restored below: both runs catch everything
        try {
            if (fn == null) {
                left.run();
            } else {
                fn.accept(ctx, l);
            }
        } catch (Throwable t) {
            first = t;
        }
        try {
            if (fn == null) {
                right.run();
            } else {
                fn.accept(ctx, r);
            }
        } catch (Throwable t) {
            second = t;
        }
        self.joinNest = n;
        if (first != null || second != null) {
            throw failure(first, second);
        }
    }

    // =====================================================================================================
    // Forks (class comment, "Fork handles")
    // =====================================================================================================

    /**
     * {@code fork} from worker {@code self} of this pool: the half {@code fn} of {@code form} (ForkStack), its
     * context marker {@code ctx} (null for a {@code Runnable} half, else never null: {@link QueueEntry#NULL_CTX})
     * and {@code arg}, offered in the frame of this worker's depth or kept in the fork's entry; returns its handle.
     * Refused once shutdown began, as a submit is. Allocates nothing, unless the worker's forks nest deeper than
     * ever before ({@link ForkStack#grow}).
     *
     * <p>A recursion's fork takes the first branch, in the fewest instructions: this method is small enough for C2
     * to inline it into the user's code (it never calls the user back, so that is safe, unlike a join), and the
     * demand check's three loads are three ANDs and moves ({@link Mem#getLongOpaqueAtMasked}). Every other fork
     * calls {@link #forkGeneral} (PERFORMANCE_TRACKING 92), through {@link #general}, so never inlined (94).
     */
    long fork(WorkerThread self, int form, Object fn, Object ctx, long arg) {
        lifecycle.checkAccepting();
        final ForkStack s = self.forks;
        final int pos = self.forkTop; // owner-only plain fields, all of them
        final int n = self.joinNest;
        // below the eager levels, nobody wanting work, room on the stack, and the function and context of the newest
        // kept fork: forkGeneral's KEPT_SAME outcome, with its tests in another order, wanted(), the dearest, last.
        // (lastFn is not null when fn is it, and lastCtx then a context marker: a Runnable half, ctx null, never
        // matches)
        if (n >= EAGER_LEVELS && onDemand && fn == s.lastFn && ctx == s.lastCtx && pos < s.capacity() && !wanted()) {
            final long h = s.keepSame(form, self.index, pos, ForkStack.levels(self.joinDepth, n), arg);
            self.joinNest = n + 1; // no frame taken, so joinDepth stays (as in forkGeneral)
            self.forkTop = pos + 1;
            return h;
        }
        return callGeneral(self, form, fn, ctx, arg, pos, n);
    }

    /** {@link #forkGeneral} through {@link #general}: never inlined into fork's caller. */
    private long callGeneral(WorkerThread self, int form, Object fn, Object ctx, long arg, int pos, int n) {
        try {
            return (long) general.invokeExact(self, form, fn, ctx, arg, pos, n);
        } catch (RuntimeException | Error e) {
            throw e; // forkGeneral's own: a fork past the stack's limit (ForkStack.grow), or the JVM's
        } catch (Throwable t) {
            throw new AssertionError("forkGeneral declares no checked exception", t);
        }
    }

    /**
     * {@link #fork} but for its first branch: offered, or kept; {@code pos} and {@code n} as fork read them. Called
     * through {@link #general} only.
     */
    private long forkGeneral(WorkerThread self, int form, Object fn, Object ctx, long arg, int pos, int n) {
        final ForkStack s = self.forks;
        if (pos >= s.capacity()) {
            s.grow(pos);
        }
        final int d = self.joinDepth;
        final int w = self.index;
        final long h = ForkStack.handle(form, w, pos, ++s.seq);
        s.setHandle(pos, h);
        // offered as joinBoth offers: the top levels always, below them while some worker wants work, never past the
        // frames or into a frame an abandoned half or an open fork's stolen half still holds
        if (d < framesPerWorker && (n < EAGER_LEVELS || !onDemand || wanted())) {
            final int idx = joins.frame(w, d);
            if (joins.frameFree(idx) || reclaim(self, idx)) {
                s.setLevels(pos, ForkStack.levels(d, n));
                // the push before forkTop moves: an Error in between leaves an abandoned half (runAbandoned), never an
                // OFFERED entry whose half is not on the deque
                long before = joins.offerFork(w, idx, fn, ctx, arg, h);
                self.forkTop = pos + 1;
                self.joinDepth = d + 1; // the caller's joins and forks use the frames above ours
                self.joinNest = n + 1;
                if (before == 0) {
                    summary.mark(WorkSummary.JOINS, w); // as in joinBoth
                    wakeStealer();
                }
                return h;
            }
        }
        // KEPT: nobody wants work, or no frame; the half waits in the entry for its join, nothing shared written, and
        // no reference stored when it is the same function and context as the newest kept fork's (ForkStack). No
        // frame taken, so joinDepth stays (a join inside uses the frame an offering one would have, as runBothHere)
        s.setLevels(pos, ForkStack.levels(d, n) | s.keep(pos, fn, ctx, arg));
        self.joinNest = n + 1;
        self.forkTop = pos + 1;
        return h;
    }

    /**
     * {@code join(h)}, {@code joinLong(h)}, {@code joinDouble(h)} or {@code joinObject(h)} ({@code form}) from worker
     * {@code self}: checks that {@code h} is this worker's newest open fork of that form, joined by the code that
     * forked it (else a misuse exception naming the rule, and nothing changes); settles the forks left open above
     * it; then runs its half here (kept, or taken back) or waits for its thief. Returns the {@code long} result, a
     * {@code double}'s raw bits or 0; an {@code OBJECT} result goes to {@code self.forks.result}.
     *
     * <p>Like {@link #joinBoth}, larger than {@code FreqInlineSize}, so C2 never inlines it into the user's
     * recursion, which it calls back (JoinShapeTest checks both).
     *
     * @throws JoinFailedException if the half threw, or a fork settled here did (the half's throwable first)
     */
    long joinFork(WorkerThread self, long h, int form) {
        final ForkStack s = self.forks;
        final int newest = self.forkTop - 1; // owner-only plain fields, all of them
        if (newest >= 0 && s.handleAt(newest) == h && ForkStack.formOf(h) == form) {
            final long lv = s.levelsAt(newest);
            if (ForkStack.isKeptSame(lv) && self.joinNest == ForkStack.nestOf(lv) + 1) {
                // a recursion's join, in the fewest instructions (PERFORMANCE_TRACKING 92): h is the newest open
                // entry's (so this worker's, open, not stale, with nothing open above it), of this form, kept with
                // the last pair, and joined by the code that forked it: every check below holds, and the half is
                // the last pair's with the entry's long (ForkStack.takeKept of KEPT_SAME takes nothing else, and
                // leaves the pair to the forks below)
                return runHere(self, s, newest, ForkStack.depthOf(lv), ForkStack.nestOf(lv), form, s.lastFn,
                        s.lastCtx, s.argAt(newest), null);
            }
        }
        final int pos = openPosition(self, s, h, form);
        final long lv = s.levelsAt(pos);
        final int d = ForkStack.depthOf(lv);
        final int n = ForkStack.nestOf(lv);
        if (self.joinNest != n + 1) { // owner-only plain field: the fork's scope is the code that joins it
            throw misplaced(self, s, h, pos, n);
        }
        Throwable leaked = null; // failures of forks settled here
        if (self.forkTop != pos + 1) {
            leaked = settle(self, pos + 1, null); // forks made after it whose code has returned (joinNest says so)
        }
        final int w = self.index;
        Throwable failure = null;
        long bits = 0L;
        Object half = null;
        Object ctx = null;
        long arg = 0L;
        final boolean kept = ForkStack.isKept(lv);
        if (kept) { // taken before the try, whose finally pops the entry: an Error here leaves the entry open and whole
            ctx = s.keptCtx(lv);
            arg = s.argAt(pos);
            half = s.takeKept(pos, lv); // no reference kept past the join
        }
        try {
            boolean here = true; // run the half on this stack (kept or taken back); false: it was stolen
            if (!kept) { // OFFERED in the frame of depth d
                final int idx = joins.frame(w, d);
                if (joins.forkHandle(idx) != h) {
                    throw new IllegalStateException("fork handle " + ForkStack.describe(h) + ": its frame no longer"
                            + " holds its half");
                }
                int back;
                while ((back = joins.takeBack(w)) != idx && back >= 0) {
                    leaked = addFailure(leaked, runAbandoned(self, back)); // never: forks above it were settled
                }
                if (back == idx) {
                    half = joins.half(idx); // plain: our own writes
                    ctx = joins.ctx(idx);
                    arg = ctx != null ? joins.arg(idx) : 0L;
                    joins.clearFork(idx);
                } else {
                    here = false;
                    self.joinDepth = d + 1; // helping while we wait uses the frames above ours
                    self.joinNest = n + 1;
                    awaitStolen(self, idx); // leapfrogging, then parked, as joinBoth. Never throws.
                    // plain, both: after the acquire load of DONE, which the thief's getAndSet made after writing them
                    if (form == ForkStack.OBJECT) {
                        s.result = joins.takeResultObject(idx);
                    } else {
                        bits = joins.result(idx);
                    }
                    failure = joins.finishFork(idx); // frame free again, FORK word 0
                }
            }
            if (here) {
                return runHere(self, s, pos, d, n, form, half, ctx, arg, leaked); // the finally below then repeats it
            }
        } finally {
            restoreLevels(self, pos, d, n); // popped, also when the pool's own code threw (an Error)
        }
        return result(s, bits, failure, leaked);
    }

    /**
     * The end of a fork's join that runs its half on this stack (the fork at {@code pos}, forked at joinDepth
     * {@code d} and joinNest {@code n}, of {@code form}): pops the entry, runs the half with its result straight
     * back, settles the forks the half left open, restores the levels, and throws the half's failure with
     * {@code leaked} (failures of forks settled before it) added. {@link #joinFork}'s kept and taken-back halves and
     * a recursion's join all end here; small, so C2 inlines it into joinFork, and the user's half is still called
     * from behind joinFork, never from the user's own code (JoinShapeTest).
     */
    private long runHere(WorkerThread self, ForkStack s, int pos, int d, int n, int form, Object half, Object ctx,
            long arg, Throwable leaked) {
        Throwable failure = null;
        long bits = 0L;
        self.forkTop = pos; // popped: the half's own forks go above
        self.joinDepth = d; // the frame is free (or was never taken): the half's joins reuse it
        self.joinNest = n + 1;
        try {
            try {
                if (form == ForkStack.OBJECT) {
                    s.result = callObject(half, ctx, arg);
                } else {
                    bits = call(form, half, ctx, arg);
                }
            } catch (Throwable t) {
                failure = t;
            }
            if (self.forkTop != pos) {
                failure = settle(self, pos, failure); // forks the half left open
            }
        } finally {
            restoreLevels(self, pos, d, n);
        }
        return result(s, bits, failure, leaked);
    }

    /**
     * The levels a fork's join leaves: its entry at {@code pos} popped, joinDepth and joinNest as when it was forked;
     * in a {@code finally}, so also when the pool's own code threw (an Error): the entry is gone either way.
     */
    private static void restoreLevels(WorkerThread self, int pos, int d, int n) {
        self.forkTop = pos;
        self.joinDepth = d;
        self.joinNest = n;
    }

    /** A fork's join's outcome: {@code bits}, or the half's failure with {@code leaked} added, thrown. */
    private static long result(ForkStack s, long bits, Throwable failure, Throwable leaked) {
        if (failure != null || leaked != null) {
            s.result = null; // no OBJECT result left reachable from the pool
            throw failure(failure, leaked);
        }
        return bits;
    }

    /** {@link #joinFork} of an {@code OBJECT} fork: its result, which the pool then no longer references. */
    Object joinObject(WorkerThread self, long h) {
        joinFork(self, h, ForkStack.OBJECT);
        return self.forks.takeResult();
    }

    /** {@link #invoke} of an {@code OBJECT} function on worker {@code self}: its result, no longer referenced. */
    Object invokeObject(WorkerThread self, Object fn, Object ctx, long arg) {
        invoke(self, ForkStack.OBJECT, fn, ctx, arg);
        return self.forks.takeResult();
    }

    /**
     * Settles the forks that code which began with {@code self.forkTop == top} left open (class comment, "Fork
     * handles"), newest first: each one's half runs exactly once (here, or by the thief this waits for), its result
     * is dropped, and its failure added to {@code failure}, which this returns. joinDepth and joinNest come back to
     * at most each fork's own levels, so to where that code began. Never throws.
     */
    Throwable settle(WorkerThread self, int top, Throwable failure) {
        final ForkStack s = self.forks;
        while (self.forkTop > top) {
            final int pos = self.forkTop - 1;
            final long lv = s.levelsAt(pos);
            final boolean kept = ForkStack.isKept(lv);
            Object half = null;
            Object ctx = null;
            long arg = 0L;
            if (kept) { // taken before the entry is popped: an Error here leaves it open and whole (ForkStack.takeKept)
                ctx = s.keptCtx(lv);
                arg = s.argAt(pos);
                half = s.takeKept(pos, lv);
            }
            self.forkTop = pos; // popped before its half runs: the half's own forks go above
            final int d = ForkStack.depthOf(lv);
            final int n = ForkStack.nestOf(lv);
            // a fork left open may have raised them (a KEPT one leaves joinDepth as it was; an enclosing join
            // restored what it had): never raise them, so no frame below the code's own is touched
            if (self.joinDepth > d) {
                self.joinDepth = d;
            }
            if (self.joinNest > n) {
                self.joinNest = n;
            }
            Throwable f;
            try {
                f = kept ? runSettled(self, ForkStack.formOf(s.handleAt(pos)), half, ctx, arg, null)
                        : settleOffered(self, s, pos, d);
            } catch (Throwable t) {
                f = t; // the pool's own code (an Error): the entry is popped, its half counted as failed
            }
            failure = addFailure(failure, f);
        }
        return failure;
    }

    /**
     * An offered fork of {@link #settle}, entry {@code pos} (popped already) forked at depth {@code d}: taken back and
     * run here, or its thief waited for, as its join would have; its failure.
     */
    private Throwable settleOffered(WorkerThread self, ForkStack s, int pos, int d) {
        final long h = s.handleAt(pos);
        Throwable failure = null;
        final int w = self.index;
        final int idx = joins.frame(w, d);
        if (joins.forkHandle(idx) != h) {
            return null; // a join's pop-back ran it already (runAbandoned), and reported its failure
        }
        int back;
        while ((back = joins.takeBack(w)) != idx && back >= 0) {
            failure = addFailure(failure, runAbandoned(self, back));
        }
        if (back != idx) { // stolen: wait for its thief, as its join would have
            final int depth = self.joinDepth;
            self.joinDepth = d + 1; // helping while we wait uses the frames above its frame
            awaitStolen(self, idx);
            self.joinDepth = depth;
            joins.takeResultObject(idx); // dropped (plain, after DONE)
            return addFailure(failure, joins.finishFork(idx));
        }
        final Object half = joins.half(idx);
        final Object ctx = joins.ctx(idx);
        final long arg = ctx != null ? joins.arg(idx) : 0L;
        joins.clearFork(idx);
        return runSettled(self, ForkStack.formOf(h), half, ctx, arg, failure);
    }

    /**
     * Runs the half of a fork {@link #settle} popped (of {@code form}), its result dropped, and settles the forks it
     * left open in turn; returns {@code failure} with the half's and theirs added. Never throws.
     */
    private Throwable runSettled(WorkerThread self, int form, Object half, Object ctx, long arg, Throwable failure) {
        final int top = self.forkTop;
        try {
            call(form, half, ctx, arg); // result dropped: nobody joined it
        } catch (Throwable t) {
            failure = addFailure(t, failure);
        }
        if (self.forkTop != top) {
            failure = settle(self, top, failure);
        }
        return failure;
    }

    /**
     * Frees frame {@code idx} of worker {@code self}, held by an abandoned half, for an offer: true when its thief
     * is done ({@link JoinDeques#tryReclaim}). A frame that still holds a fork this worker has not settled is not
     * reclaimed, so its failure reaches whoever settles it: a join or fork at its depth meanwhile runs inline or keeps
     * its half. Owner only; the slow path of {@link #joinBoth} and {@link #fork}.
     */
    private boolean reclaim(WorkerThread self, int idx) {
        long h = joins.forkHandle(idx);
        if (h != 0) {
            int pos = ForkStack.posOf(h);
            if (pos < self.forkTop && self.forks.handleAt(pos) == h) {
                return false; // an open fork's half, stolen: its settle frees the frame
            }
        }
        return joins.tryReclaim(idx);
    }

    /** {@code failure} with {@code more} added: {@code more} when there was none, else suppressed on it. */
    private static Throwable addFailure(Throwable failure, Throwable more) {
        if (failure == null) {
            return more;
        }
        if (more != null && more != failure) {
            failure.addSuppressed(unwrap(more));
        }
        return failure;
    }

    /**
     * The position of {@code h} on this worker's fork stack, when it is this worker's open fork of {@code form};
     * else the misuse exception: not a fork handle, another thread's, joined already, stale, or the wrong form.
     */
    private static int openPosition(WorkerThread self, ForkStack s, long h, int form) {
        if (!ForkStack.isFork(h)) {
            throw new InvalidHandleException("not a fork handle: " + h + " (a fork handle is negative; a task handle"
                    + " from submitWaitable is awaited with await)");
        }
        int w = ForkStack.workerOf(h);
        if (w != self.index) {
            throw new IllegalStateException("fork handle " + ForkStack.describe(h) + " was not forked on this worker"
                    + " (worker " + self.index + "): a fork is joined by the worker, and in the code, that forked it");
        }
        int pos = ForkStack.posOf(h);
        if (pos >= s.capacity() || s.handleAt(pos) != h) {
            throw new InvalidHandleException("stale fork handle " + ForkStack.describe(h) + ": no fork of this worker"
                    + " has it (joined long ago and its position reused by a later fork, or never issued here)");
        }
        if (pos >= self.forkTop) {
            throw new InvalidHandleException("fork handle " + ForkStack.describe(h) + " was joined already (by a"
                    + " join, or by the pool when the task or half that forked it ended): a fork is joined once");
        }
        if (ForkStack.formOf(h) != form) {
            throw new InvalidHandleException("fork handle " + ForkStack.describe(h) + " comes from "
                    + ForkStack.forkName(ForkStack.formOf(h)) + ": join it with "
                    + ForkStack.joinName(ForkStack.formOf(h)) + ", not " + ForkStack.joinName(form));
        }
        return pos;
    }

    /**
     * The exception for a join of open fork {@code h} (entry {@code pos}, forked at joinNest {@code n}) from code
     * other than the code that forked it: a newer fork still open in that code (out of order), a join or fork's half
     * opened since and still running (inside it), or the forking code ended (after it).
     */
    private static IllegalStateException misplaced(WorkerThread self, ForkStack s, long h, int pos, int n) {
        String handle = ForkStack.describe(h);
        if (self.joinNest <= n) {
            return new IllegalStateException("fork handle " + handle + " is joined after the code that forked it"
                    + " returned (a join's half, say): a fork is joined in the code that forked it; the pool joins it"
                    + " when that code's task or stolen half ends");
        }
        for (int i = self.forkTop - 1; i > pos; i--) {
            if (ForkStack.nestOf(s.levelsAt(i)) < self.joinNest) {
                return new IllegalStateException("fork handle " + handle + " is joined out of order: fork "
                        + ForkStack.describe(s.handleAt(i)) + ", made after it, is not joined yet (join forks newest"
                        + " first)");
            }
        }
        return new IllegalStateException("fork handle " + handle + " is joined inside a join or a fork's half that"
                + " began after it: a fork is joined in the code that forked it, outside what it opened since");
    }

    /** The exception for {@code method}'s join of {@code h} from a thread that is not one of this pool's workers. */
    static RuntimeException joinFromOutside(long h, String method) {
        if (!ForkStack.isFork(h)) {
            return new InvalidHandleException("not a fork handle: " + h + " (a fork handle is negative; a task handle"
                    + " from submitWaitable is awaited with await)");
        }
        return new IllegalStateException(method + " of fork handle " + ForkStack.describe(h) + " from a thread that"
                + " is not one of this pool's workers: a fork is joined by the worker, and in the code, that forked"
                + " it");
    }

    /** The exception for a fork from a thread that is not one of this pool's workers. */
    static IllegalStateException forkFromOutside(String method) {
        return new IllegalStateException(method + " from a thread that is not one of this pool's workers: a fork's"
                + " half waits in the forking worker's join frame, so fork and join run on a worker. From outside,"
                + " start the computation with invokeLong, invokeDouble, invoke, join(...) or submitWaitable");
    }

    /**
     * Whether some worker wants work now (class comment, "Offer on demand"): one searching, a stealer parked,
     * or an owner waiting for its stolen half with nothing to help with. Three loads of lines that are written
     * only when a worker starts or ends a search, a park or such a wait; hints, not a handshake. By the addresses
     * this object holds ({@link #searchingAt}), else through the structures.
     */
    private boolean wanted() {
        if (searchingAt != 0) { // Mem.RAW: all three are addresses, maskable (the constructor checked)
            // opaque, all three: hints, pairing with nothing (a miss costs parallelism only): one searching; a
            // parked stealer, woken by the offer; an owner waiting for its stolen half (as JoinDeques.waiters)
            return Mem.getLongOpaqueAtMasked(searchingAt) != 0
                    || (Mem.getLongOpaqueAtMasked(idleMaskAt) & stealers) != 0
                    || Mem.getLongOpaqueAtMasked(waitersAt) != 0;
        }
        return searching.searchersOnWorker() != 0 // opaque: pairs with nothing (a miss costs parallelism only)
                || (parking.idleMaskHintOnWorker() & stealers) != 0 // opaque: a parked stealer, woken by the offer
                || joins.waitersOnWorker() != 0; // opaque
    }

    /** The join's exception: a join failure passing through is rethrown as it is; else a new one. */
    private static RuntimeException failure(Throwable first, Throwable second) {
        Throwable cause = addFailure(first, second);
        if (cause instanceof JoinFailedException passing) {
            return passing;
        }
        return new JoinFailedException(cause);
    }

    private static Throwable unwrap(Throwable t) {
        return t instanceof JoinFailedException j && j.getCause() != null ? j.getCause() : t;
    }

    /** Wakes one parked worker that steals join halves, if any (a volatile load when nobody is parked). */
    private void wakeStealer() {
        // volatile load of the idle mask: a heuristic, not a handshake. A worker that announced after this
        // load and missed the half in its re-check costs parallelism, never the half: its owner runs it.
        if ((parking.idleMask() & stealers) != 0) {
            parking.wakeOneOf(stealers);
        }
    }

    // =====================================================================================================
    // Thieves
    // =====================================================================================================

    /**
     * An idle worker's steal (WorkerLoop.turn, after {@code scheduler.next} found nothing): runs one offered
     * half of another worker, at the top of its stack. False when no join deque held one.
     */
    boolean stealAndRun(WorkerThread self) {
        final int w = self.index;
        if (!stealer(w)) {
            return false;
        }
        final int n = joins.workers();
        // volatile load of JOINS: only the deques that may hold a half (a clear bit: an empty deque, WorkSummary)
        final long m = summary.mask(WorkSummary.JOINS);
        for (int k = 1; k <= n; k++) {
            int v = w + k < n ? w + k : w + k - n; // the others first, our own last
            if ((m & (1L << v)) != 0 && joins.nonEmpty(v)) { // volatile loads: skip an empty deque without a CAS
                int idx = joins.steal(v);
                if (idx >= 0) {
                    runStolen(self, v, idx);
                    return true;
                }
            }
        }
        return false;
    }

    /** {@link #stealAndRun} one level deeper ({@code inlineDepth}): for helping sites, which checked the bound. */
    boolean stealAndRunNested(WorkerThread self) {
        self.inlineDepth++; // owner-only plain field, restored in the finally as in WorkerLoop.runNested
        try {
            return stealAndRun(self);
        } finally {
            self.inlineDepth--;
        }
    }

    private void runStolenNested(WorkerThread self, int victim, int idx) {
        self.inlineDepth++;
        try {
            runStolen(self, victim, idx);
        } finally {
            self.inlineDepth--;
        }
    }

    /**
     * Runs half {@code idx} stolen from {@code victim}'s deque and completes its word: a fork's typed half leaves its
     * result in the frame first (JoinDeques, "Halves of forks, and their results"), and forks the half left open
     * are settled before (Joining, "Fork handles"). Never throws.
     */
    private void runStolen(WorkerThread self, int victim, int idx) {
        joins.markStolen(idx, self.index);
        // plain, all four: published by the owner's push, observed by our steal. A Runnable half (ctx null) is
        // a join's or a fork's VOID one: its form needs no load.
        Object half = joins.half(idx);
        Object ctx = joins.ctx(idx);
        long arg = 0L;
        int form = ForkStack.VOID;
        if (ctx != null) {
            arg = joins.arg(idx);
            long fork = joins.forkHandle(idx); // 0 for a join's half
            form = fork == 0 ? ForkStack.VOID : ForkStack.formOf(fork);
        }
        final int top = self.forkTop; // owner-only plain field: forks the half leaves open are settled below
        Throwable failure = null;
        try {
            if (form == ForkStack.VOID) {
                runHalf(half, ctx, arg);
            } else if (form == ForkStack.OBJECT) {
                joins.setResultObject(idx, callObject(half, ctx, arg)); // plain: published by complete's getAndSet
            } else {
                joins.setResult(idx, call(form, half, ctx, arg)); // plain: published by complete's getAndSet
            }
        } catch (Throwable t) {
            failure = t;
        }
        if (self.forkTop != top) {
            failure = settle(self, top, failure);
        }
        joins.complete(idx, victim, failure); // the last touch of the frame; the owner may reuse it at once
        counters.increment(self.index, PoolCounters.STEALS);
    }

    // =====================================================================================================
    // From outside the pool
    // =====================================================================================================

    /**
     * {@code join} from a thread that is not one of this pool's workers: the pair goes to the pool as one
     * detached task (admission and a descriptor as for {@code submit}, waiting while the pool is full) that
     * joins on the worker that runs it; the caller waits for it. Interrupted, the caller leaves with
     * {@link InterruptedException} and the pair runs on. Swept by {@code shutdown(CANCEL_PENDING)} before it
     * started: {@link TaskCancelledException}, and neither half ran.
     */
    void joinFromOutside(Submission submission, Runnable left, Runnable right) throws InterruptedException {
        joinFromOutside(submission, left, right, null, null, 0L, 0L);
    }

    /**
     * {@code join(fn, ctx, left, right)} from a thread that is not one of this pool's workers, as
     * {@link #joinFromOutside(Submission, Runnable, Runnable)}.
     */
    void joinFromOutside(Submission submission, ObjLongConsumer<Object> fn, Object ctx, long left, long right)
            throws InterruptedException {
        joinFromOutside(submission, null, null, fn, ctx, left, right);
    }

    /**
     * The outside hand-over of either form. The caller's pair object and its WaitGroup are reused by its next
     * outside join or invoke on this pool ({@link #outsideCalls}), so a thread that joins from outside again and again
     * allocates nothing for the hand-over after its first (a WaitGroup is reusable once back at zero, and the
     * pool's last touch of the pair is that group's done); a blocking await still queues the JDK's node for the
     * caller, as every blocking wait of the pool does. A pair the pool may still hold (the caller was
     * interrupted, or a refusal left its group above zero) is dropped, and the next join makes a new one; a join
     * made while the thread's pair is armed (the thread is a worker of another pool, whose task it runs while it
     * waits here, and that task joins on this pool) gets a pair of its own.
     */
    private void joinFromOutside(Submission submission, Runnable left, Runnable right, ObjLongConsumer<Object> fn,
            Object ctx, long l, long r) throws InterruptedException {
        ExternalCall pair = outsideCall();
        pair.armPair(this, left, right, fn, ctx, l, r);
        handOver(submission, pair);
        // plain: the worker wrote them before the group's done, which our await observed
        boolean ran = pair.ran;
        Throwable f = pair.failure;
        pair.disarm(); // the pool has done with it: nothing of this join is kept
        if (!ran) {
            throw new TaskCancelledException("join: the pair was cancelled by shutdown(CANCEL_PENDING) before"
                    + " it started; neither half ran");
        }
        if (f != null) {
            throw f instanceof JoinFailedException j ? j : new JoinFailedException(f);
        }
    }

    /**
     * The calling thread's hand-over for an outside join or invoke on this pool: the one it keeps
     * ({@link #outsideCalls}), or a new one, not kept, when that one is armed: this thread is inside an outside call
     * of this pool already, helping another pool it is a worker of while it waits (WaitGroup.await), and that pool's
     * task calls in here again.
     */
    private ExternalCall outsideCall() {
        ExternalCall call = outsideCalls.get();
        if (call == null) {
            call = new ExternalCall();
            outsideCalls.set(call);
        } else if (call.joining != null) {
            call = new ExternalCall();
        }
        return call;
    }

    /**
     * Submits the armed {@code call} as one detached task and waits for its end; on return it ran or was swept
     * ({@code ran}, {@code failure} and its outcome to read, still armed). A refused submit disarms it (its group back
     * at zero: unused) and rethrows; a call the pool still holds (an interrupted wait, a submit that failed after
     * acceptance) is no longer kept for the thread's next call.
     */
    private void handOver(Submission submission, ExternalCall call) throws InterruptedException {
        boolean kept = outsideCalls.get() == call;
        try {
            submission.submit(null, Slots.NO_SUBMITTER, call, 0, call.ended, WaitMode.UNBOUNDED, Long.MAX_VALUE);
        } catch (RuntimeException | Error e) {
            if (call.ended.pending() == 0) {
                call.disarm(); // refused, its group back at zero: unused, kept for the next call
            } else if (kept) {
                outsideCalls.remove();
            }
            throw e;
        }
        try {
            call.ended.await(); // not a worker of this pool: blocks (or helps a pool it is a worker of)
        } catch (InterruptedException e) {
            if (kept) {
                outsideCalls.remove(); // the call runs on: the pool still holds it
            }
            throw e;
        }
    }

    /**
     * Each outside caller's {@link ExternalCall}, reused from one of its joins or invokes on this pool to the next.
     * Between calls it holds no reference to the pool, the halves, the function or their context
     * ({@link ExternalCall#disarm}), so the thread's map keeps nothing of a closed pool alive but the idle call
     * itself, which goes with the map's stale entry.
     */
    private final ThreadLocal<ExternalCall> outsideCalls = new ThreadLocal<>();

    /**
     * What an outside caller hands over: a join's pair (two {@code Runnable}s, or a function, its context and two
     * longs) or an invoke's typed call (its form, function, context marker and long). Armed by its caller before
     * each hand-over and disarmed after ({@code joining} non-null exactly while armed); all fields plain and touched
     * by its caller's thread only, but for the run: the submission publishes them to the worker, the group's done
     * publishes the outcome back.
     */
    private static final class ExternalCall implements Runnable {
        /** {@link #form} of a join's pair; an invoke's is its ForkStack form. */
        static final int PAIR = -1;
        Joining joining;
        int form;
        Runnable left;
        Runnable right;
        /** A pair's ObjLongConsumer (or null), an invoke's function. */
        Object fn;
        Object ctx;
        /** A pair's two longs; an invoke's argument in {@code l}. */
        long l;
        long r;
        final WaitGroup ended = new WaitGroup();
        /** Plain, all four; published by the WaitGroup's done after the run, observed by the caller's await. */
        Throwable failure;
        boolean ran;
        long bits;
        Object result;

        void armPair(Joining joining, Runnable left, Runnable right, ObjLongConsumer<Object> fn, Object ctx, long l,
                long r) {
            arm(joining, PAIR, fn, ctx, l);
            this.left = left;
            this.right = right;
            this.r = r;
        }

        void arm(Joining joining, int form, Object fn, Object ctx, long l) {
            this.joining = joining;
            this.form = form;
            this.fn = fn;
            this.ctx = ctx;
            this.l = l;
            this.failure = null;
            this.ran = false;
            this.bits = 0L;
        }

        void disarm() {
            joining = null;
            left = null;
            right = null;
            fn = null;
            ctx = null;
            failure = null;
            result = null;
        }

        @Override
        @SuppressWarnings("unchecked")
        public void run() {
            ran = true;
            WorkerThread self = (WorkerThread) Thread.currentThread();
            int top = self.forkTop;
            try {
                // accepted already: a shutdown that began since does not refuse it
                if (form == PAIR) {
                    joining.joinBoth(self, left, right, (ObjLongConsumer<Object>) fn, ctx, l, r);
                } else if (form == ForkStack.OBJECT) {
                    result = callObject(fn, ctx, l);
                } else {
                    bits = call(form, fn, ctx, l);
                }
            } catch (Throwable t) {
                failure = t; // kept for the caller, not the pool's error reporting
            }
            if (self.forkTop != top) {
                failure = joining.settle(self, top, failure); // forks it left open: the caller's failure too
            }
        }
    }

    // ---- invoke: a typed computation started from anywhere ------------------------------------------------

    /**
     * {@code invokeLong}, {@code invokeDouble} or {@code invoke} ({@code form}) on worker {@code self}: calls the
     * function here (its context marker {@code ctx}) and returns its result as {@link #joinFork} does; forks it
     * leaves open are settled first. Refused once shutdown began, as a join is.
     *
     * @throws TaskFailedException if it threw (the cause), or as it is when it threw one
     */
    long invoke(WorkerThread self, int form, Object fn, Object ctx, long arg) {
        lifecycle.checkAccepting();
        final ForkStack s = self.forks;
        final int top = self.forkTop;
        Throwable failure = null;
        long bits = 0L;
        Object result = null;
        try {
            if (form == ForkStack.OBJECT) {
                result = callObject(fn, ctx, arg);
            } else {
                bits = call(form, fn, ctx, arg);
            }
        } catch (Throwable t) {
            failure = t;
        }
        if (self.forkTop != top) {
            failure = settle(self, top, failure);
        }
        if (failure != null) {
            throw invokeFailure(failure);
        }
        s.result = result; // the caller takes it (invokeObject)
        return bits;
    }

    /**
     * {@code invokeLong} or {@code invokeDouble} ({@code form}) from a thread that is not one of this pool's
     * workers: the call goes to the pool as one detached task (admission and a descriptor as for {@code submit},
     * waiting while the pool is full) in the thread's kept hand-over ({@link #outsideCall}), and the caller waits for
     * it. Interrupted, the caller leaves with {@link InterruptedException} and the call runs on. Swept by
     * {@code shutdown(CANCEL_PENDING)} before it started: {@link TaskCancelledException}. Returns the result's bits.
     * Allocates nothing once the thread has called in before, but the JDK's queue node when its wait blocks.
     */
    long invokeFromOutside(Submission submission, int form, Object fn, Object ctx, long arg)
            throws InterruptedException {
        ExternalCall call = invokeOutside(submission, form, fn, ctx, arg);
        long bits = call.bits;
        call.disarm();
        return bits;
    }

    /** {@code invoke} (an object result) from a thread that is not one of this pool's workers: as above. */
    Object invokeObjectFromOutside(Submission submission, Object fn, Object ctx, long arg)
            throws InterruptedException {
        ExternalCall call = invokeOutside(submission, ForkStack.OBJECT, fn, ctx, arg);
        Object result = call.result;
        call.disarm(); // the pool keeps no result
        return result;
    }

    /** The hand-over of both: the call ran and did not throw (else the exception, the call disarmed); still armed. */
    private ExternalCall invokeOutside(Submission submission, int form, Object fn, Object ctx, long arg)
            throws InterruptedException {
        ExternalCall call = outsideCall();
        call.arm(this, form, fn, ctx, arg);
        handOver(submission, call);
        // plain: the worker wrote them before the group's done, which our await observed
        if (!call.ran) {
            call.disarm();
            throw new TaskCancelledException("invoke: the call was cancelled by shutdown(CANCEL_PENDING) before it"
                    + " started");
        }
        if (call.failure != null) {
            Throwable f = call.failure;
            call.disarm();
            throw invokeFailure(f);
        }
        return call;
    }

    /** What {@code invoke*} throws for a function that threw {@code t}: a TaskFailedException passes as it is. */
    private static TaskFailedException invokeFailure(Throwable t) {
        return t instanceof TaskFailedException f ? f : new TaskFailedException("invoke: the function threw: " + t, t);
    }

    /** The context marker of a function's context: {@link QueueEntry#NULL_CTX} for null. */
    static Object marker(Object ctx) {
        return ctx != null ? ctx : QueueEntry.NULL_CTX;
    }

    // ---- white-box hooks for tests in this package ----------------------------------------------------------

    JoinDeques joinsForTest() {
        return joins;
    }

    boolean wantedForTest() {
        return wanted();
    }

    /** Whether some worker is searching now (the topology's SEARCHING count, through its structure). */
    boolean searchingForTest() {
        return searching.searchers() != 0;
    }

    /** Whether a stealer is parked now (its idle bit set): a volatile load of the idle mask. */
    boolean stealerParkedForTest() {
        return (parking.idleMask() & stealers) != 0;
    }
}
