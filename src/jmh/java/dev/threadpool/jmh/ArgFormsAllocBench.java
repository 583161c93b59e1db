package dev.threadpool.jmh;

import dev.threadpool.PoolConfig;
import dev.threadpool.QueueKind;
import dev.threadpool.SchedulerVariant;
import dev.threadpool.SubmitOptions;
import dev.threadpool.Submitter;
import dev.threadpool.ThreadPool;
import dev.threadpool.WaitGroup;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The pool's own allocation per task in argument form (issue 44): run with {@code -prof gc} and read
 * {@code gc.alloc.rate.norm}, which is bytes per task ({@code @OperationsPerInvocation(TASKS)}: JMH divides every
 * thread's allocation in the iteration by the tasks). The user's code allocates nothing here (a static,
 * non-capturing {@link Ctx#hit}, one context, a {@code long}), so what is left is the pool's: the rule is
 * 0.0 B/task on every path, and anything above ~0.5 B/task is a bug to find. The score (tasks/s) is incidental.
 *
 * <p>One invocation: {@link #TASKS} tasks with arguments {@code base .. base + TASKS - 1} through one form, then
 * a wait, allocating nothing, until all have run (a spin then {@code parkNanos} on the context's run count; the
 * waitable forms then await every handle). The forms ({@code form}; {@code worker_} runs the same loop in a task
 * on one of the pool's workers, which the benchmark thread submits as one preallocated {@code Runnable}):
 * <table>
 *   <caption>forms</caption>
 *   <tr><th>{@code form}</th><th>each task</th></tr>
 *   <tr><td>{@code submit}</td><td>{@code pool.submit(Ctx::hit, ctx, arg)}</td></tr>
 *   <tr><td>{@code trySubmit}</td><td>{@code pool.trySubmit(Ctx::hit, ctx, arg)}, again until accepted</td></tr>
 *   <tr><td>{@code submit_group}</td><td>{@code pool.submit(Ctx::hit, ctx, arg, group)}; the wait also waits for
 *       the group's count to be zero ({@code pending()}, no blocking)</td></tr>
 *   <tr><td>{@code submit_lane}</td><td>{@code pool.submit(Ctx::hit, ctx, arg, SubmitOptions.BLOCKING)}: the
 *       blocking lane (LANE_EXTENSION's own ring and workers; a descriptor on the other variants)</td></tr>
 *   <tr><td>{@code waitable_await}</td><td>{@code h[i] = pool.submitWaitable(Ctx::hit, ctx, arg)}; once all have
 *       run, {@code pool.await(h[i], Duration.ZERO)} until true, for each (an await that never blocks: the
 *       pool's allocation only)</td></tr>
 *   <tr><td>{@code waitable_awaitBlocking}</td><td>the same, awaited at once with {@code pool.await(h[i])}, which
 *       blocks while the task has not ended: what a user writes. A thread that actually parks there gets the
 *       node {@code AbstractQueuedSynchronizer} allocates for it (32 B or so, the JDK's, not the pool's); the
 *       figure counts them too</td></tr>
 *   <tr><td>{@code worker_waitable_await}</td><td>from a worker: submits the invocation's waitables, then
 *       {@code pool.await(h[i])} each, a helping await (it runs queued work while its task has not ended, and
 *       blocks at most 100 µs at a time when there is none)</td></tr>
 *   <tr><td>{@code submitter_submit}</td><td>{@code submitter.submit(Ctx::hit, ctx, arg)} from a
 *       {@link Submitter} registered in setup (WORK_STEALING: its own queue). Outside only: from a worker a
 *       submitter is a plain submit from that worker</td></tr>
 *   <tr><td>{@code submitBatch}, {@code submitBatch_group}, {@code submitBatch_lane},
 *       {@code submitter_submitBatch}</td><td>one {@code submitBatch(Ctx::hit, ctx, args, 0, TASKS)} (with the
 *       group; with {@code SubmitOptions.BLOCKING}; through the {@link Submitter}) of the invocation's arguments,
 *       written into one reused {@code long[]}</td></tr>
 *   <tr><td>{@code join}, {@code worker_join}</td><td>a join tree of {@code TASKS} leaves over offsets packed
 *       {@code lo << 32 | hi} ({@link #tree}), {@code pool.join(ArgFormsAllocBench::tree, this, left, right)} at
 *       every inner node: {@code TASKS - 1} joins, all but the root's on workers. From outside, the root pair is
 *       handed over as one task, which allocates its task object and group (documented, per tree, not per
 *       task)</td></tr>
 *   <tr><td>{@code runnable_submit} (control)</td><td>{@code pool.submit(task)} of one preallocated
 *       {@code Runnable}: the path that allocated nothing before issue 44</td></tr>
 *   <tr><td>{@code lambda_submit} (control)</td><td>{@code pool.submit(() -> Ctx.hit(ctx, arg))}: a capturing
 *       lambda per task, 24 B; shows the profiler sees a per-task object</td></tr>
 *   <tr><td>{@code worker_runnable_submit}, {@code worker_lambda_submit} (controls)</td><td>the same from a
 *       worker: the profiler counts every thread's allocation, the workers' included (the lambda's 24 B show
 *       there too)</td></tr>
 * </table>
 * A new form is a {@code form} value, an {@link Op} and a case in {@link #loop}.
 *
 * <p>Pools ({@code pool}): {@code GLOBAL_QUEUE}, {@code WS_RING} (WORK_STEALING with ring local queues),
 * {@code WS_CHASE_LEV} (WORK_STEALING with Chase-Lev deques), {@code LANE_EXTENSION} (one of its two threads its
 * blocking-lane worker); 2 workers, {@code queueCapacity} {@value #QUEUE}, PARK, default timestamps.
 *
 * <p>Every iteration checks that each task ran once with its own argument (run count and argument sum).
 *
 * <pre>
 * java --enable-native-access=ALL-UNNAMED -cp target/test-classes:target/classes:$(cat target/cp.txt) \
 *     org.openjdk.jmh.Main ArgFormsAllocBench -prof gc -f 1 -wi 2 -i 3
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xms1g", "-Xmx1g"})
public class ArgFormsAllocBench {
    /** Tasks per invocation. */
    static final int TASKS = 1024;
    /** Queue capacity (and descriptors) of the pool: room for every waitable of one invocation. */
    static final int QUEUE = 4096;
    /** A wait that has not ended after this long lost a task. */
    static final long TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(60);

    @Param({"GLOBAL_QUEUE", "WS_RING", "WS_CHASE_LEV", "LANE_EXTENSION"})
    public String pool;

    @Param({"submit", "trySubmit", "submit_group", "submit_lane", "waitable_await", "waitable_awaitBlocking",
            "submitter_submit", "submitBatch", "submitBatch_group", "submitBatch_lane", "submitter_submitBatch",
            "join", "worker_submit", "worker_trySubmit", "worker_submit_group", "worker_submit_lane",
            "worker_waitable_await", "worker_submitBatch", "worker_submitBatch_group", "worker_join",
            "runnable_submit", "lambda_submit", "worker_runnable_submit", "worker_lambda_submit"})
    public String form;

    /** What one task's submit is; {@link #form} is one of these, outside or from a worker. */
    enum Op {
        SUBMIT, TRY_SUBMIT, SUBMIT_GROUP, SUBMIT_LANE, WAITABLE_AWAIT, WAITABLE_AWAIT_BLOCKING, SUBMITTER_SUBMIT,
        SUBMIT_BATCH, SUBMIT_BATCH_GROUP, SUBMIT_BATCH_LANE, SUBMITTER_SUBMIT_BATCH, JOIN, RUNNABLE_SUBMIT,
        LAMBDA_SUBMIT
    }

    /** The context every task gets; counts its runs and sums its arguments. */
    static final class Ctx {
        final AtomicLong runs = new AtomicLong();
        final AtomicLong argSum = new AtomicLong();

        /** The static, non-capturing function of every argument form ({@code Ctx::hit}). */
        static void hit(Ctx c, long arg) {
            c.argSum.addAndGet(arg);
            c.runs.incrementAndGet(); // last: the wait below reads runs, then the sums
        }
    }

    private ThreadPool p;
    private Submitter submitter;
    private Op op;
    private boolean fromWorker;
    private final Ctx ctx = new Ctx();
    private final WaitGroup group = new WaitGroup();
    private final long[] handles = new long[TASKS];
    /** The batch forms' arguments, filled per invocation. */
    private final long[] batchArgs = new long[TASKS];
    /** The join form's first argument: leaves run {@code treeBase + offset}. Plain: published by the join. */
    private long treeBase;
    /** The control's task: counts a run, no argument. */
    private final Runnable counted = () -> ctx.runs.incrementAndGet();
    /** Arguments handed out so far: the next invocation's base. */
    private long next;
    /** Tasks without an argument (the Runnable control): not in the argument sum. */
    private long withoutArg;
    /** Loops the worker has finished (worker forms); volatile: the driver's last write, read by the waiter. */
    private volatile long loopsDone;
    private long loopsStarted;
    private volatile Throwable driverFailure;
    /** The worker forms' driver: one preallocated task that runs the loop on a worker. */
    private final Runnable driver = () -> {
        try {
            loop(next - TASKS);
        } catch (Throwable t) {
            driverFailure = t;
        }
        loopsDone = loopsDone + 1; // volatile write: publishes the loop's handles; only this task writes it
    };

    @Setup(Level.Trial)
    public void setUp() {
        fromWorker = form.startsWith("worker_");
        String base = fromWorker ? form.substring("worker_".length()) : form;
        op = switch (base) {
            case "submit" -> Op.SUBMIT;
            case "trySubmit" -> Op.TRY_SUBMIT;
            case "submit_group" -> Op.SUBMIT_GROUP;
            case "submit_lane" -> Op.SUBMIT_LANE;
            case "waitable_await" -> Op.WAITABLE_AWAIT;
            case "waitable_awaitBlocking" -> Op.WAITABLE_AWAIT_BLOCKING;
            case "submitter_submit" -> Op.SUBMITTER_SUBMIT;
            case "submitBatch" -> Op.SUBMIT_BATCH;
            case "submitBatch_group" -> Op.SUBMIT_BATCH_GROUP;
            case "submitBatch_lane" -> Op.SUBMIT_BATCH_LANE;
            case "submitter_submitBatch" -> Op.SUBMITTER_SUBMIT_BATCH;
            case "join" -> Op.JOIN;
            case "runnable_submit" -> Op.RUNNABLE_SUBMIT;
            case "lambda_submit" -> Op.LAMBDA_SUBMIT;
            default -> throw new IllegalArgumentException("form=" + form + " is not a form ArgFormsAllocBench knows");
        };
        if (fromWorker && (op == Op.SUBMITTER_SUBMIT || op == Op.SUBMITTER_SUBMIT_BATCH)) {
            throw new IllegalArgumentException("form=" + form + ": from a worker a submitter is a plain submit");
        }
        PoolConfig.Builder b = PoolConfig.builder().maxThreads(2).queueCapacity(QUEUE).daemon(true)
                .threadNamePrefix("bench-args-");
        p = ThreadPool.create(switch (pool) {
            case "GLOBAL_QUEUE" -> b.schedulerVariant(SchedulerVariant.GLOBAL_QUEUE).build();
            case "WS_RING" -> b.schedulerVariant(SchedulerVariant.WORK_STEALING).queueKind(QueueKind.RING).build();
            case "WS_CHASE_LEV" -> b.schedulerVariant(SchedulerVariant.WORK_STEALING).queueKind(QueueKind.CHASE_LEV)
                    .build();
            case "LANE_EXTENSION" -> b.schedulerVariant(SchedulerVariant.LANE_EXTENSION).build();
            default -> throw new IllegalArgumentException("pool=" + pool + " is not a pool ArgFormsAllocBench knows");
        });
        if (op == Op.SUBMITTER_SUBMIT || op == Op.SUBMITTER_SUBMIT_BATCH) {
            submitter = p.registerSubmitter();
        }
    }

    @Benchmark
    @OperationsPerInvocation(TASKS)
    public void argForm() throws InterruptedException {
        long base = next;
        next += TASKS;
        if (op == Op.RUNNABLE_SUBMIT) {
            withoutArg += TASKS;
        }
        if (fromWorker) {
            long round = ++loopsStarted;
            p.submit(driver); // one preallocated Runnable per invocation; reads next after this hand-over
            awaitAtLeast(null, round);
            if (driverFailure != null) {
                throw new IllegalStateException(form + " on " + pool + ": the worker's loop failed", driverFailure);
            }
        } else {
            loop(base);
        }
        awaitAtLeast(ctx.runs, next);
        if (op == Op.SUBMIT_GROUP || op == Op.SUBMIT_BATCH_GROUP) {
            awaitGroup();
        }
        if (op == Op.WAITABLE_AWAIT && !fromWorker) {
            awaitEnded();
        }
    }

    /** Submits tasks {@code base .. base + TASKS - 1} through {@link #op}, on the calling thread. */
    private void loop(long base) throws InterruptedException {
        ThreadPool pool = p;
        Ctx c = ctx;
        long end = base + TASKS;
        switch (op) {
            case SUBMIT -> {
                for (long a = base; a < end; a++) {
                    pool.submit(Ctx::hit, c, a);
                }
            }
            case TRY_SUBMIT -> {
                for (long a = base; a < end; a++) {
                    while (!pool.trySubmit(Ctx::hit, c, a)) {
                        Thread.onSpinWait();
                    }
                }
            }
            case SUBMIT_GROUP -> {
                WaitGroup g = group;
                for (long a = base; a < end; a++) {
                    pool.submit(Ctx::hit, c, a, g);
                }
            }
            case SUBMIT_LANE -> {
                for (long a = base; a < end; a++) {
                    pool.submit(Ctx::hit, c, a, SubmitOptions.BLOCKING);
                }
            }
            case WAITABLE_AWAIT, WAITABLE_AWAIT_BLOCKING -> {
                long[] h = handles;
                for (int i = 0; i < TASKS; i++) {
                    h[i] = pool.submitWaitable(Ctx::hit, c, base + i);
                }
                if (op == Op.WAITABLE_AWAIT_BLOCKING || fromWorker) {
                    // blocking awaits; on a worker, a helping await (it runs queued work while it waits)
                    for (int i = 0; i < TASKS; i++) {
                        pool.await(h[i]);
                    }
                }
            }
            case SUBMITTER_SUBMIT -> {
                Submitter s = submitter;
                for (long a = base; a < end; a++) {
                    s.submit(Ctx::hit, c, a);
                }
            }
            case SUBMIT_BATCH, SUBMIT_BATCH_GROUP, SUBMIT_BATCH_LANE, SUBMITTER_SUBMIT_BATCH -> {
                long[] args = batchArgs;
                for (int i = 0; i < TASKS; i++) {
                    args[i] = base + i; // the user's own buffer, reused
                }
                int n = switch (op) {
                    case SUBMIT_BATCH -> pool.submitBatch(Ctx::hit, c, args, 0, TASKS);
                    case SUBMIT_BATCH_GROUP -> pool.submitBatch(Ctx::hit, c, args, 0, TASKS, group);
                    case SUBMIT_BATCH_LANE -> pool.submitBatch(Ctx::hit, c, args, 0, TASKS, SubmitOptions.BLOCKING);
                    default -> submitter.submitBatch(Ctx::hit, c, args, 0, TASKS);
                };
                if (n != TASKS) {
                    throw new IllegalStateException(form + " on " + pool + ": submitBatch took " + n + " of " + TASKS);
                }
            }
            case JOIN -> {
                treeBase = base; // read by the leaves after the join's hand-over
                pool.join(ArgFormsAllocBench::tree, this, TASKS / 2, (long) (TASKS / 2) << 32 | TASKS);
            }
            case RUNNABLE_SUBMIT -> {
                Runnable t = counted;
                for (long a = base; a < end; a++) {
                    pool.submit(t);
                }
            }
            case LAMBDA_SUBMIT -> {
                for (long a = base; a < end; a++) {
                    long arg = a;
                    pool.submit(() -> Ctx.hit(c, arg));
                }
            }
            default -> throw new IllegalStateException("op " + op);
        }
    }

    /**
     * The join form's function over leaf offsets {@code [lo, hi)} packed as {@code lo << 32 | hi} (the root's left
     * half {@code [0, TASKS / 2)} packs as {@code TASKS / 2}): a range of one is a leaf, the task with argument
     * {@code treeBase + lo}; a longer one joins its two halves. {@code TASKS - 1} joins make {@code TASKS} leaves.
     */
    static void tree(ArgFormsAllocBench b, long range) {
        int lo = (int) (range >>> 32);
        int hi = (int) range;
        if (hi - lo == 1) {
            Ctx.hit(b.ctx, b.treeBase + lo);
            return;
        }
        int mid = (lo + hi) >>> 1;
        try {
            b.p.join(ArgFormsAllocBench::tree, b, (long) lo << 32 | mid, (long) mid << 32 | hi);
        } catch (InterruptedException e) { // only an outside caller's join is interruptible; this is a worker's
            Thread.currentThread().interrupt();
            throw new IllegalStateException("a worker's join was interrupted", e);
        }
    }

    /**
     * Waits, allocating nothing, until {@code counter} (or, when null, {@link #loopsDone}) is at least
     * {@code target}: spins a while, then parks 20 µs at a time; fails after {@link #TIMEOUT_NANOS}.
     */
    private void awaitAtLeast(AtomicLong counter, long target) {
        long deadline = 0;
        for (int spins = 0; (counter != null ? counter.get() : loopsDone) < target; spins++) {
            if (spins < 1 << 12) {
                Thread.onSpinWait();
                continue;
            }
            long now = System.nanoTime();
            if (deadline == 0) {
                deadline = now + TIMEOUT_NANOS;
            } else if (now - deadline > 0) {
                throw new IllegalStateException(form + " on " + pool + ": waited 60 s for " + target + ", at "
                        + (counter != null ? counter.get() : loopsDone));
            }
            LockSupport.parkNanos(20_000L);
        }
    }

    /** Waits, allocating nothing, until the group's count is zero (its done() follows each task's body). */
    private void awaitGroup() {
        long deadline = System.nanoTime() + TIMEOUT_NANOS;
        while (group.pending() != 0) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException(form + " on " + pool + ": group still at " + group.pending());
            }
            Thread.onSpinWait();
        }
    }

    /** Awaits every handle of the invocation without blocking: each task has run, its end is moments away. */
    private void awaitEnded() throws InterruptedException {
        long deadline = System.nanoTime() + TIMEOUT_NANOS;
        for (long h : handles) {
            while (!p.await(h, Duration.ZERO)) { // false at once while the task has not ended
                if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException(form + " on " + pool + ": a waitable task did not end");
                }
                Thread.onSpinWait();
            }
        }
    }

    /** Every task ran once with its own argument: the run count and the arguments' sum over the iteration. */
    @TearDown(Level.Iteration)
    public void check() {
        long runs = ctx.runs.get();
        long withArg = next - withoutArg;
        long expectedSum = withArg * (withArg - 1) / 2; // args 0 .. withArg - 1 when every form carries them
        if (runs != next || (withoutArg == 0 && ctx.argSum.get() != expectedSum)) {
            throw new IllegalStateException(form + " on " + pool + ": " + runs + " runs of " + next
                    + " tasks, argument sum " + ctx.argSum.get() + " (expected " + expectedSum + ")");
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        if (submitter != null) {
            submitter.close();
        }
        p.close();
    }
}
