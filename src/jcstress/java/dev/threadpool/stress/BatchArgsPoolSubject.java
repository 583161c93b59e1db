package dev.threadpool.stress;

import dev.threadpool.PoolConfig;
import dev.threadpool.PoolStats;
import dev.threadpool.QueueKind;
import dev.threadpool.SchedulerVariant;
import dev.threadpool.SubmitOptions;
import dev.threadpool.Submitter;
import dev.threadpool.ThreadPool;
import dev.threadpool.WaitGroup;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The whole pool fed batches of tasks in argument form ({@code submitBatch(fn, ctx, args, from, to)}, issue 44): each
 * item {@code v} becomes one element of a batch, whose argument is {@code v << 2 | k} for the batch's context
 * {@code k} (one of four, by batch), and one static function counts {@code v}, checking that the context it got is
 * the one its argument was submitted with (a task seen with another batch's context counts as garbage). Each
 * (context, argument) pair must come out exactly once. A small table (64 descriptors, 64 carried cells) keeps the
 * pool full most of the time, so every batch meets the full-pool paths: a chunk that finds no room, the single path's
 * wait, and on a worker caller-runs.
 *
 * <p>{@code threads} outside threads take 100 items at a time (a chunk of 64 and part of another) into a buffer of
 * their own, which they reuse as soon as the call returns (the pool must have copied every argument by then), and
 * submit them as one batch in the form chosen per batch: {@code submitBatch}, with a group, on the blocking lane with
 * and without a group, a registered {@link Submitter}'s with and without a group (the submitter closed and
 * registered again every 64 batches), or from a worker: a task submits the batch (its LIFO slot, its local queue,
 * inject, or inline when the pool is full). The range starts at an offset into the buffer. Every call must return
 * the whole batch (nothing shuts the pool down meanwhile).
 *
 * <p>Subjects: {@code pool-batch-args} (GLOBAL_QUEUE), {@code pool-ws-batch-args} (WORK_STEALING, ring local
 * queues), {@code pool-ws-cl-batch-args} (WORK_STEALING, Chase-Lev) and {@code pool-lanes-batch-args}
 * (LANE_EXTENSION, 3 workers, 1 blocking). After close the accounting must be exact: nothing live, every accepted
 * task ended.
 */
final class BatchArgsPoolSubject implements StressSubject {
    /** Items per batch: one chunk of 64 and part of the next. */
    private static final int BATCH = 100;
    /** Where the batch's range starts in its buffer. */
    private static final int OFFSET = 3;
    private static final int FORMS = 7;

    private final String name;
    private final SchedulerVariant variant;
    private final QueueKind queueKind;

    BatchArgsPoolSubject(String name, SchedulerVariant variant, QueueKind queueKind) {
        this.name = name;
        this.variant = variant;
        this.queueKind = queueKind;
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

        /** Counts the item of argument {@code a}: garbage (0) unless this context is the one {@code a} names. */
        static void count(Ctx c, long a) {
            c.seen.hit((a & 3) == c.k ? a >>> 2 : 0);
        }

        /** {@link #count}, then the task's own {@code done()} (the forms without a group). */
        static void countAndDone(Ctx c, long a) {
            count(c, a);
            c.all.done();
        }
    }

    @Override
    public String run(int items, int threads, Seen seen) throws Exception {
        PoolConfig.Builder b = PoolConfig.builder().maxThreads(2).queueCapacity(64).localQueueCapacity(16)
                .schedulerVariant(variant).queueKind(queueKind);
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
        AtomicLong batches = new AtomicLong();
        AtomicLong failures = new AtomicLong();
        for (int p = 0; p < parties; p++) {
            ts[p] = new Thread(() -> {
                Submitter sub = pool.registerSubmitter();
                long[] buffer = new long[OFFSET + BATCH + OFFSET];
                int count = 0;
                try {
                    for (;;) {
                        long first = next.getAndAdd(BATCH);
                        if (first > items) {
                            return;
                        }
                        int n = (int) Math.min(BATCH, items - first + 1);
                        long batch = batches.getAndIncrement();
                        Ctx c = ctxs[(int) (batch & 3)];
                        int form = (int) ((batch >>> 2) % FORMS);
                        if (!submit(pool, sub, c, all, first, n, form, buffer, spawners, failures)) {
                            failures.incrementAndGet();
                        }
                        if (++count % 64 == 0) { // hand the queue and cache back while workers take from it
                            sub.close();
                            sub = pool.registerSubmitter();
                        }
                    }
                } finally {
                    sub.close();
                }
            }, "batch-args-submitter-" + p);
        }
        for (Thread t : ts) t.start();
        for (Thread t : ts) t.join();
        if (!all.await(Duration.ofSeconds(120))) {
            throw new IllegalStateException("tasks did not finish within 120 s: pending=" + all.pending());
        }
        pool.close();
        if (failures.get() != 0) {
            throw new IllegalStateException(failures.get() + " batches returned fewer than their length");
        }
        long expected = items + spawners.get();
        PoolStats after = pool.statsSnapshot();
        if (after.taskDescLive() != 0 || after.liveBytes() != 0 || after.submitted() != expected
                || after.completed() != expected || after.cancelled() != 0
                || after.totalAllocBytes() != after.totalFreeBytes()) {
            throw new IllegalStateException("accounting broken after close: " + after + " expected " + expected
                    + " submitted and completed");
        }
        return "workers " + pool.config().maxThreads() + "  submitters " + parties + "  batches " + batches.get()
                + "  completed " + after.completed() + "  inline " + after.inlineRuns() + "  parks " + after.parks();
    }

    /**
     * Items {@code first .. first + n - 1} as one batch of context {@code c} in form {@code form}, from
     * {@code buffer[OFFSET, OFFSET + n)}; false if the call returned fewer than {@code n}.
     */
    private static boolean submit(ThreadPool pool, Submitter sub, Ctx c, WaitGroup all, long first, int n, int form,
            long[] buffer, AtomicLong spawners, AtomicLong failures) {
        long[] args = buffer;
        if (form == 6) {
            args = new long[buffer.length]; // the worker reads it after this call returns: not the reused buffer
        }
        for (int i = 0; i < n; i++) {
            args[OFFSET + i] = (first + i) << 2 | c.k;
        }
        int from = OFFSET;
        int to = OFFSET + n;
        int got;
        switch (form) {
            case 0 -> {
                all.add(n);
                got = pool.submitBatch(Ctx::countAndDone, c, args, from, to);
            }
            case 1 -> got = pool.submitBatch(Ctx::count, c, args, from, to, all); // the pool adds and calls done
            case 2 -> got = pool.submitBatch(Ctx::count, c, args, from, to, all, SubmitOptions.BLOCKING);
            case 3 -> {
                all.add(n);
                got = pool.submitBatch(Ctx::countAndDone, c, args, from, to, SubmitOptions.BLOCKING);
            }
            case 4 -> {
                all.add(n);
                got = sub.submitBatch(Ctx::countAndDone, c, args, from, to);
            }
            case 5 -> got = sub.submitBatch(Ctx::count, c, args, from, to, all);
            default -> { // from a worker: its own batch
                all.add(1);
                spawners.incrementAndGet();
                long[] own = args;
                pool.submit(() -> {
                    if (pool.submitBatch(Ctx::count, c, own, from, to, all) != n) {
                        failures.incrementAndGet();
                    }
                    all.done();
                });
                got = n;
            }
        }
        return got == n;
    }
}
