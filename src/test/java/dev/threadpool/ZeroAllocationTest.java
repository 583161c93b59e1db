package dev.threadpool;

import static dev.threadpool.TestSupport.WAIT;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.TestSupport.PoolVariant;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Tasks in argument form allocate nothing (issue 44): for each form and each path a task can take, a warm loop of
 * {@link #MEASURED} submits of a static, non-capturing function with a context and a {@code long} must leave the
 * submitting thread's allocated-bytes counter ({@code com.sun.management.ThreadMXBean}) within {@link #MARGIN} of
 * where it started (one object per task would be at least 16 bytes each, 1.6 MB in all; the margin is for the
 * JIT's first calls and the bean itself), and so must the pool's workers, which take, run and release the tasks.
 * A {@code Runnable} control (a preallocated task, the path that allocated nothing before) runs through the same
 * harness, so a failure of an argument form is the form's, not the harness's.
 *
 * <p>The paths: carried (a detached default-lane task from outside, every variant), descriptor (TimestampMode.FULL
 * keeps every task on a descriptor; and waitable tasks, awaited once done, so the await never blocks: a blocking
 * await queues a node in the slot's signal, as it always did), LANE_EXTENSION's blocking lane, a registered
 * {@link Submitter} (its own queue on WORK_STEALING, carried elsewhere), a worker's own submit (the LIFO slot, the
 * local queue, inject, caller-runs when full; measured on that worker), and the group forms; and the batch forms,
 * {@code submitBatch(fn, ctx, args, from, to)}, on the same paths ({@link #batchScenarios}).
 */
class ZeroAllocationTest {
    /** Submits before the measured window: every path compiled, every lazily made object made. */
    static final int WARM = 50_000;
    /** Submits measured. */
    static final int MEASURED = 100_000;
    /** Bytes the measured window may allocate in all (not per task): the JIT's first calls, the bean's answers. */
    static final long MARGIN = 16 * 1024;

    /** The context every task is given: counts its runs. */
    static final class Counter {
        final AtomicLong runs = new AtomicLong();

        /** The static, non-capturing function every argument form is given ({@code Counter::hit}). */
        static void hit(Counter c, long arg) {
            c.runs.incrementAndGet();
        }

        /** Waits without allocating until {@code n} tasks have run; bounded by {@link TestSupport#WAIT}. */
        void awaitRuns(long n) {
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (runs.get() < n) {
                if (System.nanoTime() - deadline > 0) {
                    throw new AssertionError("tasks did not run in time: " + runs.get() + " of " + n);
                }
                LockSupport.parkNanos(10_000L);
            }
        }
    }

    /** One submit of task {@code i} (its argument) with context {@code c}; loops until accepted. */
    interface Form {
        void submit(ThreadPool pool, Submitter s, WaitGroup group, Counter c, long i) throws Exception;
    }

    /** Where the loop runs: an outside thread (this one), or a task on one of the pool's workers. */
    enum From { OUTSIDE, WORKER }

    record Scenario(String name, PoolConfig config, From from, Form form) {
        @Override
        public String toString() {
            return name;
        }
    }

    private static final Duration TIMEOUT = WAIT;
    private static final Runnable NOTHING = () -> { };
    /**
     * Tasks per batch of the batch forms: one batch is submitted at every {@code i} that is a multiple of it, so
     * {@link #WARM} and {@link #MEASURED} tasks are still submitted (both divide by it); more than one chunk of 64, so
     * each batch also takes a chunk's boundary. Small enough that one object per batch shows too: the measured
     * window's 1,250 batches times the smallest object (16 bytes) is 20,000 bytes, over {@link #MARGIN}.
     */
    static final int BATCH = 80;
    /** The arguments of every batch in argument form: made once, before any measured window. */
    private static final long[] BATCH_ARGS = new long[BATCH];
    /** The Runnable control's batch: the preallocated task, {@link #BATCH} times. */
    private static final Runnable[] BATCH_TASKS = new Runnable[BATCH];

    static {
        for (int i = 0; i < BATCH; i++) {
            BATCH_ARGS[i] = i;
            BATCH_TASKS[i] = NOTHING;
        }
    }

    static Stream<Scenario> scenarios() {
        List<Scenario> out = new ArrayList<>();
        int k = 0;
        for (PoolVariant v : TestSupport.POOL_VARIANTS) {
            // a prefix of its own per pool, so that its workers are found by name (workerThreadIds)
            PoolConfig carried = v.builder().maxThreads(2).daemon(true).threadNamePrefix("zero-alloc-" + k++ + "-")
                    .build();
            String n = v + " carried ";
            // the control: a preallocated Runnable through the same harness (Counter::hit never runs for it)
            out.add(new Scenario(n + "Runnable submit (control)", carried, From.OUTSIDE,
                    (p, s, g, c, i) -> { p.submit(NOTHING); c.runs.incrementAndGet(); }));
            out.add(new Scenario(n + "submit(fn, ctx, arg)", carried, From.OUTSIDE,
                    (p, s, g, c, i) -> p.submit(Counter::hit, c, i)));
            out.add(new Scenario(n + "submit(fn, ctx, arg, group)", carried, From.OUTSIDE,
                    (p, s, g, c, i) -> p.submit(Counter::hit, c, i, g)));
            out.add(new Scenario(n + "trySubmit(fn, ctx, arg)", carried, From.OUTSIDE,
                    (p, s, g, c, i) -> {
                        while (!p.trySubmit(Counter::hit, c, i)) {
                            Thread.onSpinWait();
                        }
                    }));
            out.add(new Scenario(n + "trySubmit(fn, ctx, arg, timeout)", carried, From.OUTSIDE,
                    (p, s, g, c, i) -> assertTrue(p.trySubmit(Counter::hit, c, i, TIMEOUT))));
            out.add(new Scenario(v + " Submitter.submit(fn, ctx, arg)", carried, From.OUTSIDE,
                    (p, s, g, c, i) -> s.submit(Counter::hit, c, i)));
            out.add(new Scenario(v + " Submitter.trySubmit(fn, ctx, arg)", carried, From.OUTSIDE,
                    (p, s, g, c, i) -> {
                        while (!s.trySubmit(Counter::hit, c, i)) {
                            Thread.onSpinWait();
                        }
                    }));
            out.add(new Scenario(v + " worker's own submit(fn, ctx, arg)", carried, From.WORKER,
                    (p, s, g, c, i) -> p.submit(Counter::hit, c, i)));
            out.add(new Scenario(v + " worker's own submit(fn, ctx, arg, group)", carried, From.WORKER,
                    (p, s, g, c, i) -> p.submit(Counter::hit, c, i, g)));
            // waitable: a descriptor on every variant; awaited once it has ended (a spin on a zero timeout)
            out.add(new Scenario(v + " submitWaitable(fn, ctx, arg) + await", carried, From.OUTSIDE,
                    (p, s, g, c, i) -> awaitDone(p, p.submitWaitable(Counter::hit, c, i))));
            out.add(new Scenario(v + " Submitter.submitWaitable(fn, ctx, arg) + await", carried, From.OUTSIDE,
                    (p, s, g, c, i) -> awaitDone(p, s.submitWaitable(Counter::hit, c, i))));
            // descriptor: TimestampMode.FULL keeps every task on a descriptor, its stamps beside the argument
            PoolConfig full = v.builder().maxThreads(2).daemon(true).timestampMode(TimestampMode.FULL)
                    .threadNamePrefix("zero-alloc-" + k++ + "-").build();
            out.add(new Scenario(v + " descriptor (FULL) submit(fn, ctx, arg)", full, From.OUTSIDE,
                    (p, s, g, c, i) -> p.submit(Counter::hit, c, i)));
            out.add(new Scenario(v + " descriptor (FULL) submit(fn, ctx, arg, group)", full, From.OUTSIDE,
                    (p, s, g, c, i) -> p.submit(Counter::hit, c, i, g)));
            // the blocking lane: LANE_EXTENSION's own ring and workers; a descriptor on the other variants
            out.add(new Scenario(v + " submit(fn, ctx, arg, BLOCKING)", carried, From.OUTSIDE,
                    (p, s, g, c, i) -> p.submit(Counter::hit, c, i, SubmitOptions.BLOCKING)));
            out.add(new Scenario(v + " submit(fn, ctx, arg, group, BLOCKING)", carried, From.OUTSIDE,
                    (p, s, g, c, i) -> p.submit(Counter::hit, c, i, g, SubmitOptions.BLOCKING)));
            batchScenarios(out, v, carried, full);
        }
        return out.stream();
    }

    /**
     * The batch forms, {@code submitBatch(fn, ctx, args, from, to)} and its overloads: a batch of {@link #BATCH}
     * arguments at every {@code i} that is a multiple of it, on the same paths as the single forms (carried,
     * descriptor under FULL, the blocking lane, a Submitter, a worker's own), with a Runnable batch as the control.
     * The batch's chunk buffer is the thread's, made at its first batch (in the warm-up), as for a Runnable batch.
     */
    private static void batchScenarios(List<Scenario> out, PoolVariant v, PoolConfig carried, PoolConfig full) {
        out.add(new Scenario(v + " carried Runnable submitBatch (control)", carried, From.OUTSIDE,
                (p, s, g, c, i) -> {
                    if (i % BATCH == 0) {
                        p.submitBatch(BATCH_TASKS, 0, BATCH);
                        c.runs.addAndGet(BATCH);
                    }
                }));
        out.add(new Scenario(v + " carried submitBatch(fn, ctx, args)", carried, From.OUTSIDE,
                (p, s, g, c, i) -> {
                    if (i % BATCH == 0) {
                        p.submitBatch(Counter::hit, c, BATCH_ARGS, 0, BATCH);
                    }
                }));
        out.add(new Scenario(v + " carried submitBatch(fn, ctx, args, group)", carried, From.OUTSIDE,
                (p, s, g, c, i) -> {
                    if (i % BATCH == 0) {
                        p.submitBatch(Counter::hit, c, BATCH_ARGS, 0, BATCH, g);
                    }
                }));
        out.add(new Scenario(v + " descriptor (FULL) submitBatch(fn, ctx, args)", full, From.OUTSIDE,
                (p, s, g, c, i) -> {
                    if (i % BATCH == 0) {
                        p.submitBatch(Counter::hit, c, BATCH_ARGS, 0, BATCH);
                    }
                }));
        out.add(new Scenario(v + " descriptor (FULL) submitBatch(fn, ctx, args, group)", full, From.OUTSIDE,
                (p, s, g, c, i) -> {
                    if (i % BATCH == 0) {
                        p.submitBatch(Counter::hit, c, BATCH_ARGS, 0, BATCH, g);
                    }
                }));
        out.add(new Scenario(v + " submitBatch(fn, ctx, args, BLOCKING)", carried, From.OUTSIDE,
                (p, s, g, c, i) -> {
                    if (i % BATCH == 0) {
                        p.submitBatch(Counter::hit, c, BATCH_ARGS, 0, BATCH, SubmitOptions.BLOCKING);
                    }
                }));
        out.add(new Scenario(v + " submitBatch(fn, ctx, args, group, BLOCKING)", carried, From.OUTSIDE,
                (p, s, g, c, i) -> {
                    if (i % BATCH == 0) {
                        p.submitBatch(Counter::hit, c, BATCH_ARGS, 0, BATCH, g, SubmitOptions.BLOCKING);
                    }
                }));
        out.add(new Scenario(v + " Submitter.submitBatch(fn, ctx, args)", carried, From.OUTSIDE,
                (p, s, g, c, i) -> {
                    if (i % BATCH == 0) {
                        s.submitBatch(Counter::hit, c, BATCH_ARGS, 0, BATCH);
                    }
                }));
        out.add(new Scenario(v + " Submitter.submitBatch(fn, ctx, args, group)", carried, From.OUTSIDE,
                (p, s, g, c, i) -> {
                    if (i % BATCH == 0) {
                        s.submitBatch(Counter::hit, c, BATCH_ARGS, 0, BATCH, g);
                    }
                }));
        out.add(new Scenario(v + " worker's own submitBatch(fn, ctx, args)", carried, From.WORKER,
                (p, s, g, c, i) -> {
                    if (i % BATCH == 0) {
                        p.submitBatch(Counter::hit, c, BATCH_ARGS, 0, BATCH);
                    }
                }));
        out.add(new Scenario(v + " worker's own submitBatch(fn, ctx, args, group)", carried, From.WORKER,
                (p, s, g, c, i) -> {
                    if (i % BATCH == 0) {
                        p.submitBatch(Counter::hit, c, BATCH_ARGS, 0, BATCH, g);
                    }
                }));
    }

    /** Waits, allocating nothing, until waitable {@code h} has ended, then awaits it (no block: it has ended). */
    private static void awaitDone(ThreadPool pool, long h) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!pool.await(h, Duration.ZERO)) { // a zero timeout returns false at once while the task runs
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("waitable task did not end in time");
            }
            Thread.onSpinWait();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("scenarios")
    @Timeout(120)
    void aWarmLoopOfSubmitsAllocatesNothing(Scenario sc) throws Exception {
        var mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        Assumptions.assumeTrue(mx.isThreadAllocatedMemorySupported() && mx.isThreadAllocatedMemoryEnabled());
        try (ThreadPool pool = TestSupport.track(ThreadPool.create(sc.config()))) {
            Counter c = new Counter();
            WaitGroup group = new WaitGroup();
            long[] workerIds = workerThreadIds(pool);
            long[] workersBefore;
            long submitter;
            try (Submitter s = pool.registerSubmitter()) {
                if (sc.from() == From.OUTSIDE) {
                    loop(pool, s, group, c, sc.form(), 0, WARM);
                    c.awaitRuns(WARM);
                    workersBefore = mx.getThreadAllocatedBytes(workerIds);
                    long before = mx.getCurrentThreadAllocatedBytes();
                    loop(pool, s, group, c, sc.form(), WARM, WARM + MEASURED);
                    c.awaitRuns(WARM + MEASURED);
                    submitter = mx.getCurrentThreadAllocatedBytes() - before;
                } else {
                    // the loop runs in a task: that worker measures its own submits (runs of tasks it helps with or
                    // runs inline when the pool is full included)
                    AtomicLong measured = new AtomicLong(-1);
                    WaitGroup loopDone = new WaitGroup();
                    pool.submit(() -> {
                        try {
                            loop(pool, null, group, c, sc.form(), 0, WARM);
                            long before = mx.getCurrentThreadAllocatedBytes();
                            loop(pool, null, group, c, sc.form(), WARM, WARM + MEASURED);
                            measured.set(mx.getCurrentThreadAllocatedBytes() - before);
                        } catch (Exception e) {
                            throw new AssertionError(e);
                        }
                    }, loopDone);
                    assertTrue(loopDone.await(WAIT), "the worker's loop ended");
                    c.awaitRuns(WARM + MEASURED);
                    submitter = measured.get();
                    workersBefore = null;
                }
            }
            assertTrue(submitter >= 0 && submitter < MARGIN, sc + ": the submitting thread allocated " + submitter
                    + " bytes for " + MEASURED + " tasks (" + (double) submitter / MEASURED + " B/task)");
            if (workersBefore != null) {
                long[] workersAfter = mx.getThreadAllocatedBytes(workerIds);
                long workers = 0;
                for (int k = 0; k < workerIds.length; k++) {
                    if (workersBefore[k] >= 0 && workersAfter[k] >= 0) {
                        workers += workersAfter[k] - workersBefore[k];
                    }
                }
                assertTrue(workers < MARGIN, sc + ": the workers allocated " + workers + " bytes running "
                        + MEASURED + " tasks (" + (double) workers / MEASURED + " B/task)");
            }
            assertTrue(group.await(WAIT));
        }
    }

    /**
     * The harness's own check: the same warm loop submitting the capturing lambda a user would write,
     * {@code () -> Counter.hit(c, i)}, shows at least 16 bytes per task on the submitting thread (a lambda capturing
     * a reference and a long is 24 on a 64-bit JVM with compressed references), so a pass above means no such object.
     */
    @org.junit.jupiter.api.Test
    @Timeout(120)
    void theHarnessSeesACapturingLambdaPerTask() throws Exception {
        var mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        Assumptions.assumeTrue(mx.isThreadAllocatedMemorySupported() && mx.isThreadAllocatedMemoryEnabled());
        try (ThreadPool pool = TestSupport.track(ThreadPool.create(PoolConfig.builder().maxThreads(2).daemon(true)
                .build()))) {
            Counter c = new Counter();
            Form capturing = (p, s, g, ctx, i) -> p.submit(() -> Counter.hit(ctx, i));
            loop(pool, null, null, c, capturing, 0, WARM);
            c.awaitRuns(WARM);
            long before = mx.getCurrentThreadAllocatedBytes();
            loop(pool, null, null, c, capturing, WARM, WARM + MEASURED);
            long allocated = mx.getCurrentThreadAllocatedBytes() - before;
            c.awaitRuns(WARM + MEASURED);
            assertTrue(allocated >= 16L * MEASURED, "a capturing lambda per task: " + allocated + " bytes for "
                    + MEASURED + " tasks");
        }
    }

    private static void loop(ThreadPool pool, Submitter s, WaitGroup group, Counter c, Form form, long from, long to)
            throws Exception {
        for (long i = from; i < to; i++) {
            form.submit(pool, s, group, c, i);
        }
    }

    /** The ids of the pool's base workers (by name: the pool's prefix and an index below maxThreads). */
    private static long[] workerThreadIds(ThreadPool pool) {
        String prefix = pool.config().threadNamePrefix();
        List<Long> ids = new ArrayList<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            String name = t.getName();
            if (name.startsWith(prefix)) {
                String rest = name.substring(prefix.length());
                if (!rest.isEmpty() && rest.chars().allMatch(Character::isDigit)
                        && Integer.parseInt(rest) < pool.config().maxThreads()) {
                    ids.add(t.threadId());
                }
            }
        }
        assertTrue(ids.size() == pool.config().maxThreads(), "found every worker: " + ids);
        return ids.stream().mapToLong(Long::longValue).toArray();
    }
}
