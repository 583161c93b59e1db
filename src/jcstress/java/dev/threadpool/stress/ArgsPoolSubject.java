package dev.threadpool.stress;

import dev.threadpool.PoolConfig;
import dev.threadpool.PoolStats;
import dev.threadpool.SchedulerVariant;
import dev.threadpool.SubmitOptions;
import dev.threadpool.Submitter;
import dev.threadpool.TaskCancelledException;
import dev.threadpool.ThreadPool;
import dev.threadpool.WaitGroup;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The whole pool fed tasks in argument form ({@code submit(fn, ctx, arg)}, issue 44): item {@code v} is the
 * argument, one of four contexts ({@code v & 3}) the context, and one static function counts it, checking that the
 * context it got is the one its argument was submitted with (a task seen with another task's context or argument
 * counts as garbage). Each (context, argument) pair must come out exactly once. A small table (64 descriptors,
 * 64 carried cells; 128 for the waitables) keeps the pool full most of the time, so every wait, caller-run and full-ring path is taken.
 *
 * <ul>
 *   <li>{@code pool-args} (GLOBAL_QUEUE) and {@code pool-lanes-args} (LANE_EXTENSION): {@code threads} outside
 *       threads submit 16-item chunks, the form chosen per chunk: submit, submit with a group, trySubmit (spun),
 *       trySubmit with a deadline, submit to the blocking lane (a descriptor), and a registered {@link Submitter}'s
 *       submit and trySubmit (its submitter closed and registered again every 64 chunks).</li>
 *   <li>{@code pool-ws-args} (WORK_STEALING): the same, and one chunk in eight submitted from a worker: a task submits
 *       its 16 argument tasks (its LIFO slot, its local queue, inject, or inline when the pool is full).</li>
 *   <li>{@code pool-args-waitable} (WORK_STEALING): every item a waitable task in argument form (the pool's, the
 *       blocking lane's or a Submitter's), one in four cancelled right after its submit; a cancel that wins counts
 *       the item itself (the task must then never run), and every handle is awaited (cancelled exactly when its
 *       cancel won).</li>
 * </ul>
 * After close the accounting must be exact: nothing live, every accepted task ended.
 */
final class ArgsPoolSubject implements StressSubject {
    enum Kind { OUTSIDE, WORKERS, WAITABLE }

    private final String name;
    private final SchedulerVariant variant;
    private final Kind kind;

    ArgsPoolSubject(String name, SchedulerVariant variant, Kind kind) {
        this.name = name;
        this.variant = variant;
        this.kind = kind;
    }

    @Override
    public String name() {
        return name;
    }

    /** A context: which of the four it is, where it counts, and the group of the forms that have none. */
    static final class Ctx {
        final int k;
        final Seen seen;
        final WaitGroup all;

        Ctx(int k, Seen seen, WaitGroup all) {
            this.k = k;
            this.seen = seen;
            this.all = all;
        }

        /** Counts item {@code v}: garbage (0) unless this context is the one {@code v} was submitted with. */
        static void count(Ctx c, long v) {
            c.seen.hit((v & 3) == c.k ? v : 0);
        }

        /** {@link #count}, then the task's own {@code done()} (the forms without a group). */
        static void countAndDone(Ctx c, long v) {
            count(c, v);
            c.all.done();
        }
    }

    @Override
    public String run(int items, int threads, Seen seen) throws Exception {
        // waitables: 128 descriptors, so that every party's 16 unawaited handles fit at once with room to spare
        PoolConfig.Builder b = PoolConfig.builder().maxThreads(2).queueCapacity(kind == Kind.WAITABLE ? 128 : 64)
                .localQueueCapacity(16).schedulerVariant(variant);
        if (variant == SchedulerVariant.LANE_EXTENSION) {
            b.maxThreads(3).blockingWorkers(1);
        }
        ThreadPool pool = ThreadPool.create(b.build());
        WaitGroup all = new WaitGroup();
        Ctx[] ctxs = new Ctx[4];
        for (int k = 0; k < 4; k++) {
            ctxs[k] = new Ctx(k, seen, all);
        }
        int parties = Math.max(1, threads);
        Thread[] ts = new Thread[parties];
        AtomicLong next = new AtomicLong(1);
        AtomicLong spawners = new AtomicLong();
        AtomicLong cancelled = new AtomicLong();
        for (int p = 0; p < parties; p++) {
            ts[p] = new Thread(() -> {
                Submitter sub = pool.registerSubmitter();
                long[] handles = new long[16];
                boolean[] won = new boolean[16];
                int chunks = 0;
                try {
                    for (;;) {
                        long first = next.getAndAdd(16);
                        if (first > items) {
                            return;
                        }
                        int n = (int) Math.min(16, items - first + 1);
                        if (kind == Kind.WAITABLE) {
                            waitableChunk(pool, sub, ctxs, seen, first, n, handles, won, cancelled);
                        } else {
                            detachedChunk(pool, sub, ctxs, all, first, n, spawners);
                        }
                        if (++chunks % 64 == 0) { // hand the queue and cache back while workers take from it
                            sub.close();
                            sub = pool.registerSubmitter();
                        }
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(e);
                } finally {
                    sub.close();
                }
            }, "args-submitter-" + p);
        }
        for (Thread t : ts) t.start();
        for (Thread t : ts) t.join();
        if (!all.await(Duration.ofSeconds(120))) {
            throw new IllegalStateException("tasks did not finish within 120 s: pending=" + all.pending());
        }
        pool.close();
        long expected = items + spawners.get();
        PoolStats after = pool.statsSnapshot();
        if (after.taskDescLive() != 0 || after.liveBytes() != 0 || after.submitted() != expected
                || after.completed() + after.cancelled() != expected || after.cancelled() != cancelled.get()
                || after.totalAllocBytes() != after.totalFreeBytes()) {
            throw new IllegalStateException("accounting broken after close: " + after + " expected " + expected
                    + " submitted, " + cancelled.get() + " cancelled");
        }
        return "workers " + pool.config().maxThreads() + "  submitters " + parties + "  completed "
                + after.completed() + "  cancelled " + after.cancelled() + "  inline " + after.inlineRuns()
                + "  parks " + after.parks() + "  rejected-tries " + after.rejected();
    }

    /** One chunk of detached tasks in argument form, every task of it through the chunk's form. */
    private void detachedChunk(ThreadPool pool, Submitter sub, Ctx[] ctxs, WaitGroup all, long first, int n,
            AtomicLong spawners) throws InterruptedException {
        int forms = kind == Kind.WORKERS ? 8 : 7;
        int form = (int) ((first >>> 4) % forms);
        if (form == 7) { // from a worker: its own submits
            all.add(1);
            spawners.incrementAndGet();
            pool.submit(() -> {
                for (int k = 0; k < n; k++) {
                    long v = first + k;
                    all.add(1);
                    pool.submit(Ctx::countAndDone, ctxs[(int) (v & 3)], v);
                }
                all.done();
            });
            return;
        }
        for (int k = 0; k < n; k++) {
            long v = first + k;
            Ctx c = ctxs[(int) (v & 3)];
            switch (form) {
                case 0 -> { all.add(1); pool.submit(Ctx::countAndDone, c, v); }
                case 1 -> pool.submit(Ctx::count, c, v, all); // the pool adds and calls done
                case 2 -> {
                    all.add(1);
                    while (!pool.trySubmit(Ctx::countAndDone, c, v)) {
                        Thread.onSpinWait();
                    }
                }
                case 3 -> {
                    all.add(1);
                    while (!pool.trySubmit(Ctx::countAndDone, c, v, Duration.ofMillis(1))) {
                        Thread.onSpinWait(); // a deadline that may pass while full: try again
                    }
                }
                case 4 -> pool.submit(Ctx::count, c, v, all, SubmitOptions.BLOCKING);
                case 5 -> { all.add(1); sub.submit(Ctx::countAndDone, c, v); }
                default -> {
                    all.add(1);
                    while (!sub.trySubmit(Ctx::countAndDone, c, v)) {
                        Thread.onSpinWait();
                    }
                }
            }
        }
    }

    /**
     * One chunk of waitable tasks in argument form, one in four cancelled at once; then every handle is awaited. A
     * cancel that won counts its item here (the task never runs); one that lost leaves it to the task.
     */
    private static void waitableChunk(ThreadPool pool, Submitter sub, Ctx[] ctxs, Seen seen, long first, int n,
            long[] handles, boolean[] won, AtomicLong cancelled) throws InterruptedException {
        for (int k = 0; k < n; k++) {
            long v = first + k;
            Ctx c = ctxs[(int) (v & 3)];
            handles[k] = switch ((int) (v % 3)) {
                case 0 -> pool.submitWaitable(Ctx::count, c, v);
                case 1 -> pool.submitWaitable(Ctx::count, c, v, SubmitOptions.BLOCKING);
                default -> sub.submitWaitable(Ctx::count, c, v);
            };
            won[k] = (v & 3) == 1 && pool.cancel(handles[k]);
            if (won[k]) {
                seen.hit(v); // never runs: counted here, so a run of it as well shows as a duplicate
                cancelled.incrementAndGet();
            }
        }
        for (int k = 0; k < n; k++) {
            try {
                pool.await(handles[k]);
                if (won[k]) {
                    throw new IllegalStateException("a cancelled task's await returned normally: " + (first + k));
                }
            } catch (TaskCancelledException e) {
                if (!won[k]) {
                    throw new IllegalStateException("await says cancelled, but no cancel won: " + (first + k));
                }
            }
        }
    }
}
