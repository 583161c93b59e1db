package dev.threadpool.internal.scheduler;

import dev.threadpool.TaskCancelledException;
import dev.threadpool.TaskFailedException;
import dev.threadpool.WaitGroup;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntConsumer;

/**
 * {@code ThreadPool.parallelFor}: runs {@code body} for every index of {@code [from, to)} by recursive
 * halving, like the Pascal pool's SubmitRange and like a ForkJoin {@code RecursiveAction}, not one task per
 * index.
 *
 * <h2>Splitting</h2>
 * <pre>
 *   process(lo, hi):  while hi - lo > grain:
 *                         mid = (lo + hi) / 2
 *                         tryFork(chunk [mid, hi))   ... or, if the pool has no free descriptor right now,
 *                                                        process(mid, hi) here (recursion depth <= 31)
 *                         hi = mid                   keep the left half
 *                     run body over the leaf [lo, hi)   (at most grain indices)
 * </pre>
 * On {@code WORK_STEALING} a chunk forked from a worker lands in that worker's LIFO slot / local queue, so
 * the forking worker continues depth-first on the left while idle workers steal the big right halves
 * (steal-half takes the oldest, i.e. biggest, ones); on {@code GLOBAL_QUEUE} chunks go through the shared
 * ring. A range of n indices makes about {@code n / grain} chunks whatever the pool does; a full pool only
 * moves work back onto the splitting thread, so it can never deadlock (the fork never waits).
 *
 * <h2>Waiting, failures, shutdown</h2>
 * The calling thread processes the first chunk itself, then waits for every forked one through one
 * {@link WaitGroup}: blocking when it is an outside thread, running queued work between short waits when it
 * is one of the pool's workers (nested {@code parallelFor}). A worker at the pool's nesting bound
 * ({@code WorkerLoop.MAX_INLINE_DEPTH}) cannot help, so {@code tryFork} refuses to fork for it and it processes
 * the whole range itself: it never waits for chunks only it could run. The first {@link Throwable} thrown by
 * {@code body} is kept; every leaf that starts after it skips {@code body}; once all indices have run or been
 * skipped it is rethrown wrapped in {@link TaskFailedException}. If a shutdown with CANCEL_PENDING cancels
 * queued chunks, their indices never run and {@link TaskCancelledException} says how many.
 *
 * <p>Allocation: one small chunk object per fork (about {@code n / grain}), plus the per-call state.
 */
public final class ParallelFor {
    /** How long a helping worker blocks on the group before it looks for queued work again. */
    private static final Duration HELP_POLL = Duration.ofNanos(100_000L);

    private final PoolCore core;
    private final IntConsumer body;
    private final int grain;
    private final WaitGroup forked = new WaitGroup();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    /** Indices whose leaf has ended, run or skipped. */
    private final AtomicLong finished = new AtomicLong();

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
        job.process(from, to);
        job.awaitForked();
        Throwable t = job.failure.get();
        if (t != null) {
            throw new TaskFailedException("parallelFor(from=" + from + ", to=" + to + ", grain=" + grain
                    + "): body failed: " + t, t);
        }
        long missing = ((long) to - from) - job.finished.get();
        if (missing != 0) {
            throw new TaskCancelledException("parallelFor(from=" + from + ", to=" + to + "): " + missing
                    + " indices were cancelled by shutdown(CANCEL_PENDING) before they ran");
        }
    }

    private void process(int lo, int hi) {
        while (hi - lo > grain) {
            int mid = (int) (((long) lo + hi) >>> 1);
            if (!core.tryFork(new Chunk(this, mid, hi), forked)) {
                process(mid, hi); // no room (or shutting down): the right half is ours too
            }
            hi = mid;
        }
        leaf(lo, hi);
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
        finished.addAndGet(hi - lo);
    }

    private void awaitForked() throws InterruptedException {
        if (!core.onWorker()) {
            forked.await();
            return;
        }
        // A worker must not block on chunks that may sit in its own queues: help until they are all done.
        while (forked.pending() > 0) {
            if (!core.helpOnce()) {
                forked.await(HELP_POLL);
            }
        }
    }

    /** A forked right half. */
    private static final class Chunk implements Runnable {
        private final ParallelFor job;
        private final int lo;
        private final int hi;

        Chunk(ParallelFor job, int lo, int hi) {
            this.job = job;
            this.lo = lo;
            this.hi = hi;
        }

        @Override
        public void run() {
            job.process(lo, hi);
        }
    }
}
