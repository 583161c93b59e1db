package dev.threadpool.internal.scheduler;

import dev.threadpool.TaskCancelledException;
import dev.threadpool.TaskFailedException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntConsumer;

/**
 * {@code ThreadPool.parallelFor}: runs {@code body} for every index of {@code [from, to)} by recursive
 * halving on {@link Joining}'s {@code join}, like a ForkJoin {@code RecursiveAction} with
 * {@code invokeAll(left, right)}, not one task per index.
 *
 * <h2>Splitting</h2>
 * <pre>
 *   range(lo, hi):  hi - lo <= grain:  run body over the leaf [lo, hi)
 *                   else:              mid = (lo + hi) / 2; join(range(lo, mid), range(mid, hi))
 * </pre>
 * On a worker the right half is offered on the worker's join deque and the left one runs at once; idle
 * workers steal the oldest, i.e. biggest, halves; a half nobody stole is popped back and run inline. A range of
 * n indices makes about {@code n / grain} leaves whatever the pool does; joins take no descriptor (a join's
 * frame is its nesting depth on the worker), so a full pool never deadlocks it or throws for it (the recursion
 * depth is at most 31, well inside a worker's join frames). Called from outside the pool, the
 * whole range is handed over as one join (one task) and the caller waits.
 *
 * <h2>Failures, shutdown</h2>
 * The first {@link Throwable} thrown by {@code body} is kept; every leaf that starts after it skips
 * {@code body}; once all indices have run or been skipped it is rethrown wrapped in
 * {@link TaskFailedException}. Join halves are never cancelled: once the range is handed over every index
 * runs (or is skipped). An outside caller's hand-over swept by {@code shutdown(CANCEL_PENDING)} before it
 * started runs no index: {@link TaskCancelledException} says so.
 *
 * <p>Allocation: two small range objects per split (about {@code 2 n / grain}), plus the per-call state; an
 * outside call also the hand-over (Joining).
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
     */
    public static void run(PoolCore core, int from, int to, int grain, IntConsumer body)
            throws InterruptedException {
        if (from == to) {
            return;
        }
        ParallelFor job = new ParallelFor(core, grain, body);
        Range whole = new Range(job, from, to);
        WorkerThread self = core.currentWorker();
        if (self != null) {
            whole.run(); // nested parallelFor: joins on this worker, no admission check (part of a task)
        } else {
            try {
                core.join(whole, NOTHING); // one hand-over; the worker that runs it splits the range
            } catch (TaskCancelledException swept) {
                throw new TaskCancelledException("parallelFor(from=" + from + ", to=" + to + "): " + ((long) to - from)
                        + " indices were cancelled by shutdown(CANCEL_PENDING) before they ran");
            }
        }
        Throwable t = job.failure.get();
        if (t != null) {
            throw new TaskFailedException("parallelFor(from=" + from + ", to=" + to + ", grain=" + grain
                    + "): body failed: " + t, t);
        }
    }

    private static final Runnable NOTHING = () -> { };

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
