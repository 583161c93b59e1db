package dev.threadpool.internal.scheduler;

import dev.threadpool.TaskFailedException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntConsumer;

/**
 * {@code ThreadPool.parallelFor}: runs {@code body} for every index of {@code [from, to)}, in leaves of at most
 * {@code grain} indices (a leaf runs {@code body} in a loop), never one task per index. Two ways, by caller:
 *
 * <h2>On a worker: recursive halving on join</h2>
 * <pre>
 *   range(lo, hi):  hi - lo <= grain:  run body over the leaf [lo, hi)
 *                   else:              mid = (lo + hi) / 2; join(range(lo, mid), range(mid, hi))
 * </pre>
 * As a ForkJoin {@code RecursiveAction} with {@code invokeAll(left, right)}: the right half is offered on the
 * worker's join deque and the left one runs at once; idle workers steal the oldest, i.e. biggest, halves; a
 * half nobody stole is popped back and run inline. Joins take no descriptor (a join's frame is its nesting
 * depth on the worker), so a full pool never deadlocks it or throws for it (the recursion depth is at most 31,
 * well inside a worker's join frames).
 *
 * <h2>From outside the pool: the caller takes part ({@link Claims})</h2>
 * The calling thread offers the range to up to {@code maxThreads} helper tasks (one attempt each, never
 * waiting: a full or shutting-down pool gets fewer) and then claims and runs chunks itself (the caller of
 * {@code ForkJoinPool.invoke} on a pool other than the common pool does not: JDK 25's external join helps only
 * in the common pool, elsewhere it parks); every participant claims its next chunk from one shared cursor. So
 * the work starts at once, on the caller's CPU, without waiting for a parked worker's wake, and the caller,
 * which stays busy until the cursor runs out, waits only for chunks already running elsewhere. Chunks are
 * guided: {@code rest / (2 x participants)} indices in whole leaves, at least one, big first and down to one
 * leaf at the end, so there are about {@code 2 x participants x ln(leaves)} claims, not one per leaf (200,000
 * indices at grain 1024, 196 leaves, three participants: 29 claims; a binary split to the same grain makes 511
 * tasks). A helper that starts after the range ran out finds nothing to claim and returns; one swept by
 * {@code shutdown(CANCEL_PENDING)} (or refused, or never taken) never ran, so it never claimed: the caller has
 * run its share. Every index therefore runs (or is skipped after a failure) whatever the pool does, and no
 * outside call is ever cancelled.
 *
 * <h2>Failures</h2>
 * The first {@link Throwable} thrown by {@code body} is kept; every leaf that starts after it skips
 * {@code body}; once all indices have run or been skipped it is rethrown wrapped in
 * {@link TaskFailedException}. Join halves and claimed chunks are never cancelled.
 *
 * <p>Allocation: on a worker two small range objects per split (about {@code 2 n / grain}); from outside
 * three objects per call (this, the {@link Claims} and the failure cell), nothing per chunk.
 */
public final class ParallelFor {
    private final PoolCore core;
    private final IntConsumer body;
    private final int grain;
    private final AtomicReference<Throwable> failure = new AtomicReference<>();

    private ParallelFor(PoolCore core, int grain, IntConsumer body) {
        this.core = core;
        this.grain = grain;
        this.body = body;
    }

    /**
     * Runs {@code body} over {@code [from, to)} on {@code core}; arguments already validated by the caller
     * ({@code from <= to}, {@code grain >= 1}, {@code body} non-null).
     *
     * @throws InterruptedException (outside caller) interrupted while waiting for chunks that helpers are
     *         still running; those still run to their end
     */
    public static void run(PoolCore core, int from, int to, int grain, IntConsumer body)
            throws InterruptedException {
        if (from == to) {
            return;
        }
        ParallelFor job = new ParallelFor(core, grain, body);
        WorkerThread self = core.currentWorker();
        if (self != null) {
            new Range(job, from, to).run(); // nested parallelFor: joins on this worker, no admission check
        } else {
            new Claims(job, from, to).runFromOutside();
        }
        Throwable t = job.failure.get();
        if (t != null) {
            throw new TaskFailedException("parallelFor(from=" + from + ", to=" + to + ", grain=" + grain
                    + "): body failed: " + t, t);
        }
    }

    private void leaf(int lo, int hi) {
        if (failure.get() == null) {
            try {
                for (int i = lo; i < hi; i++) {
                    body.accept(i);
                }
            } catch (Throwable t) {
                failure.compareAndSet(null, t); // the first one wins; the rest of this leaf is skipped
            }
        }
    }

    /** Runs the claimed chunk {@code [lo, hi)} as leaves of at most {@link #grain} indices. */
    private void chunk(int lo, int hi) {
        for (long l = lo; l < hi; l += grain) { // long: lo + grain may pass Integer.MAX_VALUE
            leaf((int) l, (int) Math.min(hi, l + grain));
        }
    }

    /**
     * An outside call's shared state: the cursor every participant claims chunks from, and the count of indices
     * whose chunks have ended. Submitted as the helper task itself (the same object up to {@code maxThreads}
     * times), so a helper allocates nothing.
     *
     * <h3>The caller's wait (Dekker, on two volatile words)</h3>
     * A participant that runs out of chunks adds the indices it ran to {@link #finished}. The caller, after its
     * own add, waits until {@code finished == total}: it stores {@link #waiter}, then re-reads
     * {@code finished}, then parks. A helper's add (a volatile read-modify-write), then its read of
     * {@code waiter}: all four accesses are volatile, so in their single synchronization order either the
     * helper's read sees the waiter (and unparks it) or the caller's re-read sees the helper's add. Whichever
     * add makes the count whole, the caller cannot park after it unseen. jcstress
     * {@code ParallelForClaimsTest} checks this and the claims.
     *
     * <p>Not a {@link dev.threadpool.WaitGroup}: that one is built for one done per task from many workers (a
     * padded, striped array of 0.7 to 1.4 KB, {@code int} deltas); here at most {@code maxThreads + 1} adds of
     * {@code long} counts per call meet one waiter, and two plain volatile words cost 121 B per call in all.
     */
    public static final class Claims implements Runnable {
        private static final VarHandle NEXT;
        private static final VarHandle FINISHED;

        static {
            try {
                MethodHandles.Lookup l = MethodHandles.lookup();
                NEXT = l.findVarHandle(Claims.class, "next", long.class);
                FINISHED = l.findVarHandle(Claims.class, "finished", long.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        private final ParallelFor job;
        private final long to;
        private final long total;
        /** Participants the guided chunk size divides the rest among: the caller and the helpers it offered. */
        private int participants = 1;
        /** The first index nobody has claimed; claimed by CAS ({@link #claimAndRun}). */
        @SuppressWarnings("unused") // through NEXT
        private volatile long next;
        /** Indices whose chunks have ended; each participant adds its own once, when it runs out. */
        @SuppressWarnings("unused") // through FINISHED
        private volatile long finished;
        /** The outside caller once it waits for others' chunks, else null. */
        private volatile Thread waiter;

        Claims(ParallelFor job, int from, int to) {
            this.job = job;
            this.to = to;
            this.total = (long) to - from;
            this.next = from;
        }

        /** The outside caller: offers helpers, runs chunks itself, then waits for the helpers' last chunks. */
        void runFromOutside() throws InterruptedException {
            PoolCore core = job.core;
            long leaves = (total + job.grain - 1) / job.grain;
            int wanted = (int) Math.min(core.config().maxThreads(), leaves - 1);
            participants = 1 + wanted; // before the first submit, whose hand-over publishes it to the helpers
            for (int h = 0; h < wanted; h++) {
                try {
                    if (!core.submit(this, 0, null, WaitMode.NO_WAIT, 0L)) {
                        break; // full: the participants there are share the rest
                    }
                } catch (RejectedExecutionException | IllegalStateException shuttingDown) {
                    // PoolShutdownException (a RejectedExecutionException) once admission closed after the
                    // caller's check, IllegalStateException once closed: the caller runs what is left
                    break;
                }
            }
            runAsCaller(Long.MAX_VALUE);
        }

        /**
         * The caller's part: claims and runs chunks until none is left, then waits until every chunk has ended,
         * at most {@code waitNanos} ({@link Long#MAX_VALUE}: no limit). False only if that bound passed first,
         * including a park that slept to it (a lost wake-up, for tests). A helper's unpark may land after the
         * caller saw the total on its own re-read and returned: the thread then keeps a spare permit, which
         * {@code LockSupport} allows (every correct park loop re-checks its condition).
         */
        public boolean runAsCaller(long waitNanos) throws InterruptedException {
            long mine = claimAndRun();
            // volatile RMW: the caller's share joins the count; its result seeing the total means every helper's
            // add (and so its chunks' writes) came before it
            if ((long) FINISHED.getAndAdd(this, mine) + mine == total) {
                return true; // every chunk ended, the caller's last: nobody to wait for
            }
            waiter = Thread.currentThread(); // volatile; then the re-read below (the class comment's Dekker)
            long deadline = waitNanos == Long.MAX_VALUE ? 0L : System.nanoTime() + waitNanos;
            // volatile load: the re-read of the Dekker pair; the total seen pairs with the helpers' adds
            while ((long) FINISHED.getVolatile(this) != total) {
                if (Thread.interrupted()) {
                    throw new InterruptedException("interrupted while waiting for parallelFor chunks that workers"
                            + " are still running; they run to their end");
                }
                if (waitNanos == Long.MAX_VALUE) {
                    LockSupport.park(this);
                } else {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        return false;
                    }
                    LockSupport.parkNanos(this, left);
                    if (System.nanoTime() - deadline >= 0) {
                        return false; // slept to the bound: a wake-up was missed (re-reading now would hide it)
                    }
                }
            }
            return true;
        }

        /**
         * A range's shared state with no pool behind it, for tests of the claims and the wait (jcstress, stress):
         * {@code participants} sizes the guided chunks; run {@link #runAsCaller} on one thread and {@link #run}
         * on the others.
         */
        public static Claims standalone(int from, int to, int grain, int participants, IntConsumer body) {
            if (from > to || grain < 1 || participants < 1) {
                throw new IllegalArgumentException("from <= to, grain >= 1, participants >= 1: from=" + from + ", to="
                        + to + ", grain=" + grain + ", participants=" + participants);
            }
            Claims c = new Claims(new ParallelFor(null, grain, body), from, to);
            c.participants = participants;
            return c;
        }

        /** The first failure of {@code body} in this range, or null. */
        public Throwable failure() {
            return job.failure.get();
        }

        /** A helper, on a worker: claims and runs chunks until none is left, then counts them out. */
        @Override
        public void run() {
            long mine = claimAndRun();
            // volatile RMW after the last chunk: publishes its writes to the caller's load that sees the total
            if (mine != 0 && (long) FINISHED.getAndAdd(this, mine) + mine == total) {
                Thread w = waiter; // volatile, after the add (the class comment's Dekker)
                if (w != null) {
                    LockSupport.unpark(w);
                }
            }
        }

        /** Claims chunks from the cursor and runs them until it passes {@code to}; returns the indices run. */
        private long claimAndRun() {
            long mine = 0;
            for (;;) {
                // opaque: a hint for the CAS below, which alone decides a claim; nothing is published through the
                // cursor, and no other access is ordered against this load (the caller's wait pairs FINISHED
                // with waiter, not with the cursor)
                long lo = (long) NEXT.getOpaque(this);
                if (lo >= to) {
                    return mine;
                }
                // Guided: a share of what is left, in whole leaves and at least one, so chunks shrink towards
                // the end and only the range's last leaf can be short.
                long grain = job.grain;
                long share = (to - lo) / (2L * participants) / grain * grain;
                long hi = Math.min(to, lo + Math.max(grain, share));
                // The CAS makes [lo, hi) this participant's alone; a failed one re-reads the cursor.
                if (NEXT.compareAndSet(this, lo, hi)) {
                    job.chunk((int) lo, (int) hi);
                    mine += hi - lo;
                }
            }
        }

        @Override
        public String toString() {
            return "parallelFor helper [next=" + next + ", to=" + to + "]";
        }
    }

    /** A range: a leaf, or a join of its two halves. Runs on a worker of the job's pool. */
    private static final class Range implements Runnable {
        private final ParallelFor job;
        private final int lo;
        private final int hi;

        Range(ParallelFor job, int lo, int hi) {
            this.job = job;
            this.lo = lo;
            this.hi = hi;
        }

        @Override
        public void run() {
            if (hi - lo <= job.grain) {
                job.leaf(lo, hi);
                return;
            }
            int mid = (int) (((long) lo + hi) >>> 1);
            // a leaf never throws (it keeps the failure), so neither does this join
            job.core.joinAccepted(job.core.currentWorker(), new Range(job, lo, mid), new Range(job, mid, hi));
        }
    }
}
