package dev.threadpool;

import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.scheduler.DescriptorTable;
import dev.threadpool.internal.scheduler.ParallelFor;
import dev.threadpool.internal.scheduler.PoolCore;
import dev.threadpool.internal.scheduler.WaitMode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.ObjLongConsumer;

/**
 * A fixed-capacity thread pool whose state lives off-heap in one arena, with exact memory accounting.
 *
 * <pre>{@code
 * try (ThreadPool pool = ThreadPool.create(PoolConfig.builder()
 *         .maxThreads(4).queueCapacity(4096)
 *         .schedulerVariant(SchedulerVariant.GLOBAL_QUEUE).build())) {
 *     WaitGroup wg = new WaitGroup();
 *     for (int i = 0; i < 1000; i++) pool.submit(() -> work(), wg);
 *     wg.await();
 * }
 * }</pre>
 *
 * <h2>Contract</h2>
 * <ul>
 *   <li>Every accepted task runs exactly once, or is reported cancelled ({@link #cancel}, or
 *       {@link ShutdownMode#CANCEL_PENDING}). Submissions after shutdown begins throw
 *       {@link PoolShutdownException}.</li>
 *   <li>A task may throw anything: the worker survives, the failure is counted and kept in
 *       {@link #recentErrors()}, the configured {@link TaskErrorHandler} runs, and awaiting the task throws
 *       {@link TaskFailedException}.</li>
 *   <li>The pool is bounded by {@code queueCapacity} descriptors. {@code submit} waits while full; a task that
 *       submits into a full pool runs the new task inline on its own worker instead (caller-runs), so
 *       recursion can never deadlock the pool. A detached default-lane task submitted from outside the pool
 *       (not through a WORK_STEALING {@link Submitter}, whose own queue holds descriptors) takes no descriptor
 *       unless timestamps are FULL: it is bounded by {@code queueCapacity} ring cells while queued, and holds
 *       nothing while it runs (docs/DESIGN.md, "Carried tasks").</li>
 *   <li>{@code shutdown} and {@code close} may not be called from one of the pool's own workers
 *       ({@link IllegalStateException} at once). After {@code close} every call fails with a clear exception
 *       except {@link #statsSnapshot()}, which returns the final figures ({@code liveBytes == 0}).</li>
 *   <li>Detached submit allocates nothing per task. A task in argument form,
 *       {@link #submit(ObjLongConsumer, Object, long) submit(fn, ctx, arg)} and its family, is no object at all: with a
 *       static, non-capturing {@code fn} a task that needs a context and a {@code long} allocates nothing on any path
 *       (carried, descriptor, waitable, lane, batch, a worker's own submit, a {@link Submitter}).</li>
 * </ul>
 * All methods are thread-safe.
 */
public final class ThreadPool implements AutoCloseable {
    private final PoolCore core;
    /** The {@link #asExecutor()} view: made once, so handing it around allocates nothing. */
    private final Executor executor = this::executeDetached;
    /** The {@link #asExecutorService()} view, made on first use (it installs a sweep hook in the core). */
    private volatile PoolExecutorService executorService;

    private ThreadPool(PoolCore core) {
        this.core = core;
    }

    /**
     * Starts a pool: allocates its arena and starts {@code maxThreads} workers (LANE_EXTENSION also starts
     * its watchdog thread).
     *
     * @param config the pool's configuration (not null), fixed for the pool's life
     * @return the running pool; close it ({@link #close()}) to stop the workers and free the arena
     * @throws NullPointerException if {@code config} is null
     */
    public static ThreadPool create(PoolConfig config) {
        Objects.requireNonNull(config, "config must not be null");
        return new ThreadPool(new PoolCore(config));
    }

    /**
     * A pool with {@link PoolConfig#defaults()}.
     *
     * @return the running pool
     */
    public static ThreadPool create() {
        return create(PoolConfig.defaults());
    }

    /**
     * The configuration this pool was created with.
     *
     * @return the pool's config (immutable)
     */
    public PoolConfig config() {
        return core.config();
    }

    // ---- submit --------------------------------------------------------------------------------------------

    /**
     * Submits a detached task; waits while the pool is full (from one of its own workers: runs it inline).
     *
     * @param task the task (not null)
     * @throws NullPointerException if an argument is null
     * @throws PoolShutdownException once shutdown has begun
     */
    public void submit(Runnable task) {
        submit(task, SubmitOptions.DEFAULT);
    }

    /**
     * Submits a detached task with options; waits while the pool is full.
     *
     * @param task    the task (not null)
     * @param options the lane to route it to (not null)
     * @throws NullPointerException if an argument is null
     * @throws PoolShutdownException once shutdown has begun
     */
    public void submit(Runnable task, SubmitOptions options) {
        Arguments.requireTask(task);
        int flags = flags(options);
        detached(PoolCore.NO_SUBMITTER, task, flags, null, WaitMode.UNBOUNDED, 0L);
    }

    /**
     * Submits a detached task counted by {@code group}; waits while full. The pool calls {@code group.done()}
     * once the task has ended, or at once if the submission is refused.
     *
     * @param task  the task (not null)
     * @param group counts the task until it ends (not null)
     * @throws NullPointerException if an argument is null
     * @throws PoolShutdownException once shutdown has begun
     */
    public void submit(Runnable task, WaitGroup group) {
        submit(task, group, SubmitOptions.DEFAULT);
    }

    /**
     * As {@link #submit(Runnable, WaitGroup)}, with options (the lane).
     *
     * @param task    the task (not null)
     * @param group   counts the task until it ends (not null)
     * @param options the lane to route it to (not null)
     * @throws NullPointerException if an argument is null
     * @throws PoolShutdownException once shutdown has begun
     */
    public void submit(Runnable task, WaitGroup group, SubmitOptions options) {
        Arguments.requireTask(task);
        Objects.requireNonNull(group, "group must not be null");
        int flags = flags(options);
        detached(PoolCore.NO_SUBMITTER, task, flags, group, WaitMode.UNBOUNDED, 0L);
    }

    /**
     * One attempt, never waits: false when the pool is full.
     *
     * @param task the task (not null)
     * @return true when the task was accepted, false when the pool was full (nothing submitted)
     * @throws NullPointerException if an argument is null
     * @throws PoolShutdownException once shutdown has begun
     */
    public boolean trySubmit(Runnable task) {
        Arguments.requireTask(task);
        return detached(PoolCore.NO_SUBMITTER, task, 0, null, WaitMode.NO_WAIT, 0L);
    }

    /**
     * Waits up to {@code timeout} for space; {@link Duration#ZERO} means one attempt. The deadline covers the
     * whole call. Returns false when the pool stayed full.
     *
     * @param task    the task (not null)
     * @param timeout the longest wait for space (not null, not negative)
     * @return true when the task was accepted, false when the pool stayed full until the deadline
     * @throws IllegalArgumentException if {@code timeout} is negative
     * @throws NullPointerException if an argument is null
     * @throws PoolShutdownException once shutdown has begun
     */
    public boolean trySubmit(Runnable task, Duration timeout) {
        return trySubmit(task, timeout, SubmitOptions.DEFAULT);
    }

    /**
     * As {@link #trySubmit(Runnable, Duration)}, with options (the lane); {@link Duration#ZERO} makes it one
     * attempt, as {@link #trySubmit(Runnable)}.
     *
     * @param task    the task (not null)
     * @param timeout the longest wait for space (not null, not negative)
     * @param options the lane to route it to (not null)
     * @return true when the task was accepted, false when the pool stayed full until the deadline
     * @throws IllegalArgumentException if {@code timeout} is negative
     * @throws NullPointerException if an argument is null
     * @throws PoolShutdownException once shutdown has begun
     */
    public boolean trySubmit(Runnable task, Duration timeout, SubmitOptions options) {
        Arguments.requireTask(task);
        long nanos = Arguments.timeoutNanos(timeout);
        int flags = flags(options);
        if (nanos == 0) {
            return detached(PoolCore.NO_SUBMITTER, task, flags, null, WaitMode.NO_WAIT, 0L);
        }
        // nanoTime-based, compared by difference, so a sum that wraps still measures the right span; Long.MAX_VALUE
        // nanos (292 years) is no deadline at all. Either way the wait never turns into caller-runs: UNTIL_DEADLINE.
        long deadline = nanos == Long.MAX_VALUE ? Long.MAX_VALUE : System.nanoTime() + nanos;
        return detached(PoolCore.NO_SUBMITTER, task, flags, null, WaitMode.UNTIL_DEADLINE, deadline);
    }

    /**
     * Submits {@code tasks[from..to)} as detached tasks, waiting while full, and returns how many were
     * submitted: {@code to - from}, or fewer if shutdown began part-way (then the rest were not submitted).
     * Every element is checked before any is submitted.
     *
     * @param tasks   the tasks; {@code tasks[from..to)} are submitted, none may be null
     * @param from    the first index, inclusive
     * @param to      the last index, exclusive; an empty range submits nothing and returns 0
     * @return how many tasks were submitted: {@code to - from}, or fewer if shutdown began part-way
     * @throws IndexOutOfBoundsException if the range is not within the array
     * @throws NullPointerException naming the first null element
     */
    public int submitBatch(Runnable[] tasks, int from, int to) {
        return submitBatch(tasks, from, to, SubmitOptions.DEFAULT);
    }

    /**
     * As {@link #submitBatch(Runnable[], int, int)}, every task with the same options (the lane).
     *
     * @param tasks   the tasks; {@code tasks[from..to)} are submitted, none may be null
     * @param from    the first index, inclusive
     * @param to      the last index, exclusive; an empty range submits nothing and returns 0
     * @param options the lane to route every task to (not null)
     * @return how many tasks were submitted: {@code to - from}, or fewer if shutdown began part-way
     * @throws IndexOutOfBoundsException if the range is not within the array
     * @throws NullPointerException if {@code options} is null, or naming the first null element
     */
    public int submitBatch(Runnable[] tasks, int from, int to, SubmitOptions options) {
        int flags = flags(options);
        return batch(PoolCore.NO_SUBMITTER, tasks, from, to, flags, null);
    }

    /**
     * As {@link #submitBatch(Runnable[], int, int)}, every task counted by {@code group}, as
     * {@link #submit(Runnable, WaitGroup)} counts one: the group is added to once per chunk of up to 64 tasks
     * before they are handed over, and the pool calls {@code group.done()} once per task after it ends. If
     * shutdown stops the batch part-way, the group counts exactly the tasks submitted (the return value), so
     * {@code group.await()} still returns once those have ended.
     *
     * @param tasks   the tasks; {@code tasks[from..to)} are submitted, none may be null
     * @param from    the first index, inclusive
     * @param to      the last index, exclusive; an empty range submits nothing and returns 0
     * @param group   counts every submitted task until it ends (not null)
     * @return how many tasks were submitted: {@code to - from}, or fewer if shutdown began part-way
     * @throws IndexOutOfBoundsException if the range is not within the array
     * @throws NullPointerException if {@code group} is null, or naming the first null element
     */
    public int submitBatch(Runnable[] tasks, int from, int to, WaitGroup group) {
        return submitBatch(tasks, from, to, group, SubmitOptions.DEFAULT);
    }

    /**
     * As {@link #submitBatch(Runnable[], int, int, WaitGroup)}, every task with the same options (the lane).
     *
     * @param tasks   the tasks; {@code tasks[from..to)} are submitted, none may be null
     * @param from    the first index, inclusive
     * @param to      the last index, exclusive; an empty range submits nothing and returns 0
     * @param group   counts every submitted task until it ends (not null)
     * @param options the lane to route every task to (not null)
     * @return how many tasks were submitted: {@code to - from}, or fewer if shutdown began part-way
     * @throws IndexOutOfBoundsException if the range is not within the array
     * @throws NullPointerException if {@code group} or {@code options} is null, or naming the first null element
     */
    public int submitBatch(Runnable[] tasks, int from, int to, WaitGroup group, SubmitOptions options) {
        Objects.requireNonNull(group, "group must not be null");
        int flags = flags(options);
        return batch(PoolCore.NO_SUBMITTER, tasks, from, to, flags, group);
    }

    /**
     * Submits a task that can be awaited or cancelled; returns its handle. Its descriptor stays allocated
     * until the first {@link #await} after it ends: await every handle.
     *
     * <p>A handle is a positive {@code long}, {@code gen << log2(queueCapacity) | slot}: the descriptor slot and
     * how many times that slot has been used. It is valid from this call until the slot is reused by a later
     * submit, which can only happen after the task has ended and been awaited; from then on it is stale and
     * {@link #await} and {@link #cancel} refuse it with {@link InvalidHandleException}. No handle value is
     * ever issued twice by one pool: a slot that has used up its generations ({@code 2^39} uses for the
     * largest {@code queueCapacity}, {@code 2^56} up to 128) is retired instead of reused, so the pool loses
     * one descriptor per that many reuses of one slot.
     *
     * @param task the task (not null)
     * @return the task's handle (positive), for {@link #await(long)} and {@link #cancel(long)}
     * @throws NullPointerException if {@code task} is null
     * @throws PoolShutdownException once shutdown has begun
     */
    public long submitWaitable(Runnable task) {
        return submitWaitable(task, SubmitOptions.DEFAULT);
    }

    /**
     * As {@link #submitWaitable(Runnable)}, with options.
     *
     * @param task    the task (not null)
     * @param options the lane to route it to (not null)
     * @return the task's handle (positive), for {@link #await(long)} and {@link #cancel(long)}
     * @throws NullPointerException if an argument is null
     * @throws PoolShutdownException once shutdown has begun
     */
    public long submitWaitable(Runnable task, SubmitOptions options) {
        Arguments.requireTask(task);
        int flags = flags(options);
        return waitable(PoolCore.NO_SUBMITTER, task, flags);
    }

    // ---- submit with arguments: zero-allocation tasks ----------------------------------------------------------
    // A task as a function, a context and a long: each method mirrors the Runnable one above it, and the pool
    // allocates nothing for the task on any path (DESIGN.md, "Tasks with arguments").

    /**
     * Submits a detached task in argument form: the pool calls {@code fn.accept(ctx, arg)} once, on a worker. With a
     * static, non-capturing {@code fn} (a method reference such as {@code Engine::onOrder}, static with parameters
     * {@code (Engine, long)} or an instance method of {@code Engine} taking a {@code long}) the task is no object:
     * the function, the context and the {@code long} ride in the task's ring cell or descriptor, so nothing is
     * allocated per task on any path, where {@code () -> engine.onOrder(id)} would be a new object each time.
     * Otherwise exactly {@link #submit(Runnable)}: waits while the pool is full (from one of its own workers: runs
     * it inline); a throw from {@code fn} is handled as a task's (the {@link TaskErrorHandler} then gets a
     * {@code Runnable} made for the report, whose {@code toString} names the function, context and argument).
     *
     * <pre>{@code
     * static void onOrder(Engine engine, long orderId) { ... }
     * pool.submit(Engine::onOrder, engine, orderId); // nothing allocated
     * }</pre>
     *
     * @param fn  the function (not null), called as {@code fn.accept(ctx, arg)}
     * @param ctx its first argument, any object or null; the pool keeps no reference to it once the task has ended
     * @param arg its second argument
     * @param <T> the type of the context
     * @throws NullPointerException if {@code fn} is null
     * @throws PoolShutdownException once shutdown has begun
     */
    public <T> void submit(ObjLongConsumer<? super T> fn, T ctx, long arg) {
        submit(fn, ctx, arg, SubmitOptions.DEFAULT);
    }

    /**
     * As {@link #submit(ObjLongConsumer, Object, long)}, with options (the lane), as
     * {@link #submit(Runnable, SubmitOptions)}; waits while the pool is full.
     *
     * @param fn      the function (not null), called as {@code fn.accept(ctx, arg)}
     * @param ctx     its first argument, any object or null
     * @param arg     its second argument
     * @param options the lane to route it to (not null)
     * @param <T>     the type of the context
     * @throws NullPointerException if {@code fn} or {@code options} is null
     * @throws PoolShutdownException once shutdown has begun
     */
    public <T> void submit(ObjLongConsumer<? super T> fn, T ctx, long arg, SubmitOptions options) {
        Arguments.requireFn(fn);
        int flags = flags(options);
        detachedArg(PoolCore.NO_SUBMITTER, fn, ctx, arg, flags, null, WaitMode.UNBOUNDED, 0L);
    }

    /**
     * As {@link #submit(ObjLongConsumer, Object, long)}, counted by {@code group}, as
     * {@link #submit(Runnable, WaitGroup)}: the pool calls {@code group.done()} once the task has ended, or at
     * once if the submission is refused. Waits while full.
     *
     * @param fn    the function (not null), called as {@code fn.accept(ctx, arg)}
     * @param ctx   its first argument, any object or null
     * @param arg   its second argument
     * @param group counts the task until it ends (not null)
     * @param <T>   the type of the context
     * @throws NullPointerException if {@code fn} or {@code group} is null
     * @throws PoolShutdownException once shutdown has begun
     */
    public <T> void submit(ObjLongConsumer<? super T> fn, T ctx, long arg, WaitGroup group) {
        submit(fn, ctx, arg, group, SubmitOptions.DEFAULT);
    }

    /**
     * As {@link #submit(ObjLongConsumer, Object, long, WaitGroup)}, with options (the lane).
     *
     * @param fn      the function (not null), called as {@code fn.accept(ctx, arg)}
     * @param ctx     its first argument, any object or null
     * @param arg     its second argument
     * @param group   counts the task until it ends (not null)
     * @param options the lane to route it to (not null)
     * @param <T>     the type of the context
     * @throws NullPointerException if {@code fn}, {@code group} or {@code options} is null
     * @throws PoolShutdownException once shutdown has begun
     */
    public <T> void submit(ObjLongConsumer<? super T> fn, T ctx, long arg, WaitGroup group, SubmitOptions options) {
        Arguments.requireFn(fn);
        Objects.requireNonNull(group, "group must not be null");
        int flags = flags(options);
        detachedArg(PoolCore.NO_SUBMITTER, fn, ctx, arg, flags, group, WaitMode.UNBOUNDED, 0L);
    }

    /**
     * As {@link #trySubmit(Runnable)} for a task in argument form: one attempt, never waits; false when the pool
     * is full (nothing submitted, nothing kept).
     *
     * @param fn  the function (not null), called as {@code fn.accept(ctx, arg)}
     * @param ctx its first argument, any object or null
     * @param arg its second argument
     * @param <T> the type of the context
     * @return true when the task was accepted, false when the pool was full (nothing submitted)
     * @throws NullPointerException if {@code fn} is null
     * @throws PoolShutdownException once shutdown has begun
     */
    public <T> boolean trySubmit(ObjLongConsumer<? super T> fn, T ctx, long arg) {
        Arguments.requireFn(fn);
        return detachedArg(PoolCore.NO_SUBMITTER, fn, ctx, arg, 0, null, WaitMode.NO_WAIT, 0L);
    }

    /**
     * As {@link #trySubmit(Runnable, Duration)} for a task in argument form: waits up to {@code timeout} for space;
     * {@link Duration#ZERO} means one attempt. The deadline covers the whole call. Returns false when the pool
     * stayed full.
     *
     * @param fn      the function (not null), called as {@code fn.accept(ctx, arg)}
     * @param ctx     its first argument, any object or null
     * @param arg     its second argument
     * @param timeout the longest wait for space (not null, not negative)
     * @param <T>     the type of the context
     * @return true when the task was accepted, false when the pool stayed full until the deadline
     * @throws IllegalArgumentException if {@code timeout} is negative
     * @throws NullPointerException if {@code fn} or {@code timeout} is null
     * @throws PoolShutdownException once shutdown has begun
     */
    public <T> boolean trySubmit(ObjLongConsumer<? super T> fn, T ctx, long arg, Duration timeout) {
        return trySubmit(fn, ctx, arg, timeout, SubmitOptions.DEFAULT);
    }

    /**
     * As {@link #trySubmit(ObjLongConsumer, Object, long, Duration)}, with options (the lane); {@link Duration#ZERO}
     * makes it one attempt, as {@link #trySubmit(ObjLongConsumer, Object, long)}.
     *
     * @param fn      the function (not null), called as {@code fn.accept(ctx, arg)}
     * @param ctx     its first argument, any object or null
     * @param arg     its second argument
     * @param timeout the longest wait for space (not null, not negative)
     * @param options the lane to route it to (not null)
     * @param <T>     the type of the context
     * @return true when the task was accepted, false when the pool stayed full until the deadline
     * @throws IllegalArgumentException if {@code timeout} is negative
     * @throws NullPointerException if {@code fn}, {@code timeout} or {@code options} is null
     * @throws PoolShutdownException once shutdown has begun
     */
    public <T> boolean trySubmit(ObjLongConsumer<? super T> fn, T ctx, long arg, Duration timeout,
            SubmitOptions options) {
        Arguments.requireFn(fn);
        long nanos = Arguments.timeoutNanos(timeout);
        int flags = flags(options);
        if (nanos == 0) {
            return detachedArg(PoolCore.NO_SUBMITTER, fn, ctx, arg, flags, null, WaitMode.NO_WAIT, 0L);
        }
        // as trySubmit(Runnable, Duration, SubmitOptions): a nanoTime deadline compared by difference, none at all
        // for Long.MAX_VALUE nanos, and never caller-runs (UNTIL_DEADLINE)
        long deadline = nanos == Long.MAX_VALUE ? Long.MAX_VALUE : System.nanoTime() + nanos;
        return detachedArg(PoolCore.NO_SUBMITTER, fn, ctx, arg, flags, null, WaitMode.UNTIL_DEADLINE, deadline);
    }

    /**
     * Submits one task in argument form per element of {@code args[from..to)}: the pool calls
     * {@code fn.accept(ctx, args[i])} once for each {@code i}, on a worker. Exactly
     * {@link #submitBatch(Runnable[], int, int)} otherwise: the same chunks of up to 64 (one freelist CAS, one accept
     * CAS and one ring claim per chunk where tasks take descriptors; one ring claim per task where they are
     * carried), waits while the pool is full (from one of its own workers: runs a task inline instead), and returns
     * how many were submitted: {@code to - from}, or fewer if shutdown began part-way (then the rest were not
     * submitted). Each task is a task in argument form, as {@link #submit(ObjLongConsumer, Object, long)} makes one:
     * with a static, non-capturing {@code fn} the pool allocates nothing for it, a throw from {@code fn} fails that
     * task alone (the others run), and the pool keeps no reference to {@code ctx} once the batch's tasks have ended.
     * The array is read during the call only: each argument is copied into its task before the call returns.
     *
     * <pre>{@code
     * long[] ids = ...; // the orders of one frame
     * pool.submitBatch(Engine::onOrder, engine, ids, 0, n); // n tasks, nothing allocated
     * }</pre>
     *
     * @param fn   the function (not null), called as {@code fn.accept(ctx, args[i])}
     * @param ctx  its first argument for every task of the batch, any object or null
     * @param args the tasks' second arguments; {@code args[from..to)} are submitted, one task each
     * @param from the first index, inclusive
     * @param to   the last index, exclusive; an empty range submits nothing and returns 0
     * @param <T>  the type of the context
     * @return how many tasks were submitted: {@code to - from}, or fewer if shutdown began part-way
     * @throws NullPointerException if {@code fn} or {@code args} is null
     * @throws IndexOutOfBoundsException if the range is not within the array ({@code 0 <= from <= to <= args.length})
     * @throws PoolShutdownException if shutdown had begun before any task of the batch was submitted
     */
    public <T> int submitBatch(ObjLongConsumer<? super T> fn, T ctx, long[] args, int from, int to) {
        return submitBatch(fn, ctx, args, from, to, SubmitOptions.DEFAULT);
    }

    /**
     * As {@link #submitBatch(ObjLongConsumer, Object, long[], int, int)}, every task with the same options (the
     * lane), as {@link #submitBatch(Runnable[], int, int, SubmitOptions)}.
     *
     * @param fn      the function (not null), called as {@code fn.accept(ctx, args[i])}
     * @param ctx     its first argument for every task of the batch, any object or null
     * @param args    the tasks' second arguments; {@code args[from..to)} are submitted, one task each
     * @param from    the first index, inclusive
     * @param to      the last index, exclusive; an empty range submits nothing and returns 0
     * @param options the lane to route every task to (not null)
     * @param <T>     the type of the context
     * @return how many tasks were submitted: {@code to - from}, or fewer if shutdown began part-way
     * @throws NullPointerException if {@code fn}, {@code args} or {@code options} is null
     * @throws IndexOutOfBoundsException if the range is not within the array ({@code 0 <= from <= to <= args.length})
     * @throws PoolShutdownException if shutdown had begun before any task of the batch was submitted
     */
    public <T> int submitBatch(ObjLongConsumer<? super T> fn, T ctx, long[] args, int from, int to,
            SubmitOptions options) {
        Arguments.requireFn(fn);
        int flags = flags(options);
        return batchArg(PoolCore.NO_SUBMITTER, fn, ctx, args, from, to, flags, null);
    }

    /**
     * As {@link #submitBatch(ObjLongConsumer, Object, long[], int, int)}, every task counted by {@code group}, as
     * {@link #submitBatch(Runnable[], int, int, WaitGroup)} counts them: the group is added to once per chunk of up
     * to 64 tasks before they are handed over, and the pool calls {@code group.done()} once per task after it ends.
     * If shutdown stops the batch part-way, the group counts exactly the tasks submitted (the return value).
     *
     * @param fn    the function (not null), called as {@code fn.accept(ctx, args[i])}
     * @param ctx   its first argument for every task of the batch, any object or null
     * @param args  the tasks' second arguments; {@code args[from..to)} are submitted, one task each
     * @param from  the first index, inclusive
     * @param to    the last index, exclusive; an empty range submits nothing and returns 0
     * @param group counts every submitted task until it ends (not null)
     * @param <T>   the type of the context
     * @return how many tasks were submitted: {@code to - from}, or fewer if shutdown began part-way
     * @throws NullPointerException if {@code fn}, {@code args} or {@code group} is null
     * @throws IndexOutOfBoundsException if the range is not within the array ({@code 0 <= from <= to <= args.length})
     * @throws PoolShutdownException if shutdown had begun before any task of the batch was submitted
     */
    public <T> int submitBatch(ObjLongConsumer<? super T> fn, T ctx, long[] args, int from, int to,
            WaitGroup group) {
        return submitBatch(fn, ctx, args, from, to, group, SubmitOptions.DEFAULT);
    }

    /**
     * As {@link #submitBatch(ObjLongConsumer, Object, long[], int, int, WaitGroup)}, every task with the same options
     * (the lane).
     *
     * @param fn      the function (not null), called as {@code fn.accept(ctx, args[i])}
     * @param ctx     its first argument for every task of the batch, any object or null
     * @param args    the tasks' second arguments; {@code args[from..to)} are submitted, one task each
     * @param from    the first index, inclusive
     * @param to      the last index, exclusive; an empty range submits nothing and returns 0
     * @param group   counts every submitted task until it ends (not null)
     * @param options the lane to route every task to (not null)
     * @param <T>     the type of the context
     * @return how many tasks were submitted: {@code to - from}, or fewer if shutdown began part-way
     * @throws NullPointerException if {@code fn}, {@code args}, {@code group} or {@code options} is null
     * @throws IndexOutOfBoundsException if the range is not within the array ({@code 0 <= from <= to <= args.length})
     * @throws PoolShutdownException if shutdown had begun before any task of the batch was submitted
     */
    public <T> int submitBatch(ObjLongConsumer<? super T> fn, T ctx, long[] args, int from, int to, WaitGroup group,
            SubmitOptions options) {
        Arguments.requireFn(fn);
        Objects.requireNonNull(group, "group must not be null");
        int flags = flags(options);
        return batchArg(PoolCore.NO_SUBMITTER, fn, ctx, args, from, to, flags, group);
    }

    /**
     * As {@link #submitWaitable(Runnable)} for a task in argument form: returns a handle that {@link #await} and
     * {@link #cancel} accept. Its descriptor (which holds the argument) stays allocated until the first
     * {@link #await} after it ends: await every handle. The pool drops its references to {@code fn} and
     * {@code ctx} when the task ends or, if cancelled, when its await releases the descriptor.
     *
     * @param fn  the function (not null), called as {@code fn.accept(ctx, arg)}
     * @param ctx its first argument, any object or null
     * @param arg its second argument
     * @param <T> the type of the context
     * @return the task's handle (positive), for {@link #await(long)} and {@link #cancel(long)}
     * @throws NullPointerException if {@code fn} is null
     * @throws PoolShutdownException once shutdown has begun
     */
    public <T> long submitWaitable(ObjLongConsumer<? super T> fn, T ctx, long arg) {
        return submitWaitable(fn, ctx, arg, SubmitOptions.DEFAULT);
    }

    /**
     * As {@link #submitWaitable(ObjLongConsumer, Object, long)}, with options.
     *
     * @param fn      the function (not null), called as {@code fn.accept(ctx, arg)}
     * @param ctx     its first argument, any object or null
     * @param arg     its second argument
     * @param options the lane to route it to (not null)
     * @param <T>     the type of the context
     * @return the task's handle (positive), for {@link #await(long)} and {@link #cancel(long)}
     * @throws NullPointerException if {@code fn} or {@code options} is null
     * @throws PoolShutdownException once shutdown has begun
     */
    public <T> long submitWaitable(ObjLongConsumer<? super T> fn, T ctx, long arg, SubmitOptions options) {
        Arguments.requireFn(fn);
        int flags = flags(options);
        return waitableArg(PoolCore.NO_SUBMITTER, fn, ctx, arg, flags);
    }

    // ---- java.util.concurrent interop --------------------------------------------------------------------

    /**
     * This pool as a plain {@link Executor}: {@code execute(task)} is a detached {@link #submit(Runnable)}
     * (waits while full, allocates nothing). Always the same instance. {@code execute} throws
     * {@link java.util.concurrent.RejectedExecutionException} (a {@link PoolShutdownException}) once shutdown
     * has begun, and {@link NullPointerException} for a null task. Works with
     * {@code CompletableFuture.runAsync(task, pool.asExecutor())}.
     *
     * @return the executor view of this pool
     */
    public Executor asExecutor() {
        return executor;
    }

    /**
     * This pool as a full {@link ExecutorService} (futures, {@code invokeAll}/{@code invokeAny}, the
     * shutdown methods mapped onto {@link ShutdownMode}); always the same instance. Its {@code shutdown()} and
     * {@code shutdownNow()} shut this pool down without waiting, its {@code close()} closes this pool. See
     * docs/ECOSYSTEM.md for the exact mapping.
     *
     * @return the executor-service view of this pool, made on the first call
     */
    public ExecutorService asExecutorService() {
        PoolExecutorService es = executorService;
        if (es == null) {
            synchronized (this) {
                es = executorService;
                if (es == null) {
                    es = new PoolExecutorService(this, core);
                    executorService = es;
                }
            }
        }
        return es;
    }

    private void executeDetached(Runnable task) {
        try {
            submit(task);
        } catch (PoolBusyException busy) {
            throw new RejectedExecutionException(busy.getMessage(), busy);
        }
    }

    // ---- fork/join -------------------------------------------------------------------------------------

    /**
     * Runs {@code left} and {@code right}, possibly in parallel, and returns when both are done. On a worker of
     * this pool {@code right} is offered to idle workers and run here after {@code left} unless one took it
     * (no allocation, no shared atomic, no descriptor; nested over 256 deep on one worker: right after left);
     * from any other thread the pair is handed over as one task. See docs/DESIGN.md, "join".
     *
     * @param left  the half run on the calling thread (not null)
     * @param right the half offered to other workers (not null)
     * @throws NullPointerException if {@code left} or {@code right} is null
     * @throws JoinFailedException (a {@link TaskFailedException}) after both ended, if either threw: cause
     *         left's throwable, else right's
     * @throws PoolShutdownException once shutdown has begun, as {@link #submit(Runnable)}
     * @throws TaskCancelledException (outside caller) {@code shutdown(CANCEL_PENDING)} swept the pair first
     * @throws InterruptedException (outside caller) interrupted while waiting; the pair runs on
     */
    public void join(Runnable left, Runnable right) throws InterruptedException {
        Objects.requireNonNull(left, "left must not be null");
        Objects.requireNonNull(right, "right must not be null");
        try {
            core.join(left, right);
        } catch (IllegalStateException e) {
            throw submitFailure(e);
        }
    }

    /**
     * {@link #join(Runnable, Runnable)} in argument form: runs {@code fn.accept(ctx, left)} and
     * {@code fn.accept(ctx, right)}, possibly in parallel, and returns when both are done. On a worker of this pool
     * nothing is allocated: the half offered to idle workers is the function, the context and {@code right}, kept
     * in the join's frame (its {@code long} off-heap beside the frame's completion word), so a recursion over
     * indices needs no node objects at all (ForkJoinPool's halves are task objects). Pack what a half needs into
     * the {@code long}, for example a range as {@code lo << 32 | hi}:
     *
     * <pre>{@code
     * static void sum(Summer s, long range) {
     *     int lo = (int) (range >>> 32), hi = (int) range;
     *     if (hi - lo <= LEAF) { s.add(lo, hi); return; }
     *     int mid = (lo + hi) >>> 1;
     *     s.pool.join(Summer::sum, s, (long) lo << 32 | mid, (long) mid << 32 | hi); // no allocation
     * }
     * }</pre>
     *
     * From any other thread the pair is handed over as one task, as the {@code Runnable} form does; that thread's
     * hand-over object is kept for its next outside join on this pool, so only its first allocates (a blocking
     * wait still queues the JDK's node for the waiting thread, about 32 bytes, as every blocking wait does). The pool
     * keeps no reference to {@code fn} or {@code ctx} once the join has returned. Failures, interrupts and
     * shutdown: exactly as {@link #join(Runnable, Runnable)}.
     *
     * @param fn    the function (not null), called as {@code fn.accept(ctx, left)} here and
     *              {@code fn.accept(ctx, right)} here or on another worker
     * @param ctx   its first argument, any object or null
     * @param left  the argument of the call run on the calling thread
     * @param right the argument of the call offered to other workers
     * @param <T>   the type of the context
     * @throws NullPointerException if {@code fn} is null
     * @throws JoinFailedException (a {@link TaskFailedException}) after both ended, if either threw: cause
     *         left's throwable, else right's
     * @throws PoolShutdownException once shutdown has begun, as {@link #submit(Runnable)}
     * @throws TaskCancelledException (outside caller) {@code shutdown(CANCEL_PENDING)} swept the pair first
     * @throws InterruptedException (outside caller) interrupted while waiting; the pair runs on
     */
    @SuppressWarnings("unchecked")
    public <T> void join(ObjLongConsumer<? super T> fn, T ctx, long left, long right) throws InterruptedException {
        Arguments.requireFn(fn);
        try {
            core.join((ObjLongConsumer<Object>) fn, ctx, left, right);
        } catch (IllegalStateException e) {
            throw submitFailure(e);
        }
    }

    // ---- fork handles: one half forked, the other computed in place --------------------------------------

    /**
     * Forks {@code half}: offers it to idle workers and returns its handle, so the caller can compute the other half
     * in place (a plain call, no object) and then {@link #join(long) join} the handle, which runs {@code half} here if
     * nobody took it, or waits for the worker that did. ForkJoinPool's {@code fork(); compute(); join()} shape, on a
     * worker of this pool only. The handle is a {@code long}: nothing is allocated for it.
     *
     * <pre>{@code
     * long h = pool.fork(rightHalf);   // offered (or kept for the join, when no worker wants work)
     * leftHalf();                      // here, in place
     * pool.join(h);                    // rightHalf ran exactly once, here or elsewhere
     * }</pre>
     *
     * <p>The rules of a fork, for every fork method (docs/DESIGN.md, "join", "Fork handles"):
     * <ul>
     *   <li><b>Where:</b> on a worker of this pool, in a task or a half. From any other thread it throws
     *       {@link IllegalStateException}: start the computation with {@link #invokeLong}, {@link #invokeDouble},
     *       {@link #invoke}, {@link #join(Runnable, Runnable)} or {@link #submitWaitable(Runnable)}.</li>
     *   <li><b>Join each fork once, newest first, in the code that forked it:</b> the join of a fork whose newer
     *       forks are not joined yet, a join from another thread, or from inside a join or fork's half that began
     *       after the fork, throws {@link IllegalStateException}; a handle joined already, a stale one, one that is no
     *       fork handle, or the wrong join method ({@code joinLong} of a {@code fork}) throws
     *       {@link InvalidHandleException}. A misuse changes nothing: the fork stays open.</li>
     *   <li><b>A fork never joined still runs, exactly once:</b> when the task, or the half, that forked it ends
     *       (returns or throws), the pool joins what it left open, newest first, and adds their failures to its
     *       outcome (the task fails, or its own throwable carries them suppressed); their results are dropped. The
     *       join of an older fork does the same for forks left open above it by code that has returned.</li>
     *   <li><b>Failures:</b> the in-place code's throwable propagates as any throwable does (the pending half is then
     *       joined by the pool, as above); a half that threw makes its join throw {@link JoinFailedException} with
     *       that cause (a join failure from inside it passes as it is).</li>
     *   <li><b>Interrupts and shutdown:</b> a join does not respond to interrupts (the half ends first) and keeps
     *       the interrupt status. A fork after shutdown began throws {@link PoolShutdownException}, as a submit
     *       does; a half forked before runs exactly once and its join returns as usual.</li>
     *   <li><b>Cost:</b> as a join's half: offered into the join frame of the worker's depth (past 256 forks and
     *       joins nested on one worker, kept and run at its join), nothing allocated; only forks nested deeper than
     *       ever before on a worker grow its fork stack, once. At most 65,536 forks open on one worker.</li>
     * </ul>
     *
     * @param half the half to fork (not null)
     * @return the fork's handle, for {@link #join(long)}
     * @throws NullPointerException  if {@code half} is null
     * @throws IllegalStateException if the caller is not a worker of this pool
     * @throws PoolShutdownException once shutdown has begun
     */
    public long fork(Runnable half) {
        Objects.requireNonNull(half, "half must not be null");
        return core.fork(half);
    }

    /**
     * {@link #fork(Runnable)} in argument form: forks {@code fn.accept(ctx, arg)}, and allocates nothing, the
     * function, context and {@code arg} kept in the join frame as {@link #join(ObjLongConsumer, Object, long, long)}
     * keeps its half. The pool keeps no reference to {@code fn} or {@code ctx} once the fork is joined.
     *
     * @param fn  the function (not null)
     * @param ctx its first argument, any object or null
     * @param arg its second argument
     * @param <T> the type of the context
     * @return the fork's handle, for {@link #join(long)}
     * @throws NullPointerException  if {@code fn} is null
     * @throws IllegalStateException if the caller is not a worker of this pool
     * @throws PoolShutdownException once shutdown has begun
     */
    public <T> long fork(ObjLongConsumer<? super T> fn, T ctx, long arg) {
        Arguments.requireFn(fn);
        return core.forkArg(fn, ctx, arg);
    }

    /**
     * Forks {@code fn.applyAsLong(ctx, arg)}, whose result {@link #joinLong} returns: a {@code long} result with no
     * holder object and no boxing (a stolen half's result waits off-heap in its join frame). Rules as
     * {@link #fork(Runnable)}; allocates nothing. A recursive sum:
     *
     * <pre>{@code
     * static long sum(Summer s, long range) {
     *     int lo = (int) (range >>> 32), hi = (int) range;
     *     if (hi - lo <= 4096) return s.sumOf(lo, hi);
     *     int mid = (lo + hi) >>> 1;
     *     long h = s.pool.forkLong(Summer::sum, s, (long) mid << 32 | hi); // the right half, offered
     *     long left = sum(s, (long) lo << 32 | mid);                      // the left half, in place
     *     return left + s.pool.joinLong(h);
     * }
     * long total = pool.invokeLong(Summer::sum, summer, (long) 0 << 32 | n); // from outside: on a worker
     * }</pre>
     *
     * @param fn  the function (not null)
     * @param ctx its first argument, any object or null
     * @param arg its second argument
     * @param <T> the type of the context
     * @return the fork's handle, for {@link #joinLong}
     * @throws NullPointerException  if {@code fn} is null
     * @throws IllegalStateException if the caller is not a worker of this pool
     * @throws PoolShutdownException once shutdown has begun
     */
    public <T> long forkLong(ObjLongToLongFunction<? super T> fn, T ctx, long arg) {
        Arguments.requireFn(fn);
        return core.forkLong(fn, ctx, arg);
    }

    /**
     * Forks {@code fn.applyAsDouble(ctx, arg)}, whose result {@link #joinDouble} returns, with no holder object:
     * {@link #forkLong}'s form for {@code double} results (adaptive quadrature, say).
     *
     * @param fn  the function (not null)
     * @param ctx its first argument, any object or null
     * @param arg its second argument
     * @param <T> the type of the context
     * @return the fork's handle, for {@link #joinDouble}
     * @throws NullPointerException  if {@code fn} is null
     * @throws IllegalStateException if the caller is not a worker of this pool
     * @throws PoolShutdownException once shutdown has begun
     */
    public <T> long forkDouble(ObjLongToDoubleFunction<? super T> fn, T ctx, long arg) {
        Arguments.requireFn(fn);
        return core.forkDouble(fn, ctx, arg);
    }

    /**
     * Forks {@code fn.apply(ctx, arg)}, whose result {@link #joinObject} returns: {@link #forkLong}'s form for any
     * result. The pool allocates nothing for it (a stolen half's result waits in its join frame until the join takes
     * it); the result object is the function's own, as ForkJoinPool's {@code RecursiveTask} result is, without the
     * task object around it.
     *
     * @param fn  the function (not null)
     * @param ctx its first argument, any object or null
     * @param arg its second argument
     * @param <T> the type of the context
     * @param <R> the type of the result
     * @return the fork's handle, for {@link #joinObject}
     * @throws NullPointerException  if {@code fn} is null
     * @throws IllegalStateException if the caller is not a worker of this pool
     * @throws PoolShutdownException once shutdown has begun
     */
    public <T, R> long forkObject(ObjLongFunction<? super T, ? extends R> fn, T ctx, long arg) {
        Arguments.requireFn(fn);
        return core.forkObject(fn, ctx, arg);
    }

    /**
     * Joins the fork of {@code handle} ({@link #fork(Runnable)} or {@link #fork(ObjLongConsumer, Object, long)}):
     * returns once its half ran, here (when nobody took it) or on the worker that stole it, which this worker helps
     * meanwhile (it runs that worker's own offered halves) and then parks for. See {@link #fork(Runnable)} for the
     * rules.
     *
     * @param handle the handle {@code fork} returned, on this worker, in this code
     * @throws JoinFailedException   if the half threw (the cause), or a fork left open above it that the join ran
     * @throws IllegalStateException if the caller is not the worker that forked it, the code that forked it has
     *                               returned, a newer fork is not joined yet, or it is called inside a join or fork's
     *                               half that began after the fork
     * @throws InvalidHandleException if {@code handle} is no fork handle, a fork handle joined already or stale, or
     *                               one from {@code forkLong}, {@code forkDouble} or {@code forkObject}
     */
    public void join(long handle) {
        core.joinFork(handle);
    }

    /**
     * Joins the fork of {@code handle} ({@link #forkLong}) and returns its half's result; as {@link #join(long)}.
     *
     * @param handle the handle {@code forkLong} returned, on this worker, in this code
     * @return the half's result
     * @throws JoinFailedException   as {@link #join(long)}
     * @throws IllegalStateException as {@link #join(long)}
     * @throws InvalidHandleException as {@link #join(long)}, or a handle that {@code forkLong} did not return
     */
    public long joinLong(long handle) {
        return core.joinLong(handle);
    }

    /**
     * Joins the fork of {@code handle} ({@link #forkDouble}) and returns its half's result; as {@link #join(long)}.
     *
     * @param handle the handle {@code forkDouble} returned, on this worker, in this code
     * @return the half's result
     * @throws JoinFailedException   as {@link #join(long)}
     * @throws IllegalStateException as {@link #join(long)}
     * @throws InvalidHandleException as {@link #join(long)}, or a handle that {@code forkDouble} did not return
     */
    public double joinDouble(long handle) {
        return core.joinDouble(handle);
    }

    /**
     * Joins the fork of {@code handle} ({@link #forkObject}) and returns its half's result; as {@link #join(long)}.
     * The pool keeps no reference to the result once this returned.
     *
     * @param handle the handle {@code forkObject} returned, on this worker, in this code
     * @param <R>    the type of the result, as the fork's function returned it (unchecked: the handle is a
     *               {@code long})
     * @return the half's result
     * @throws JoinFailedException   as {@link #join(long)}
     * @throws IllegalStateException as {@link #join(long)}
     * @throws InvalidHandleException as {@link #join(long)}, or a handle that {@code forkObject} did not return
     */
    @SuppressWarnings("unchecked")
    public <R> R joinObject(long handle) {
        return (R) core.joinObject(handle);
    }

    /**
     * Runs {@code fn.applyAsLong(ctx, arg)} on this pool and returns its result: the entry point of a computation
     * that forks (ForkJoinPool's {@code invoke}). On a worker of this pool it is simply called here; from any other
     * thread it is handed to the pool as one task (admission and a descriptor as for {@link #submit(Runnable)},
     * waiting while the pool is full; the hand-over object and its {@code WaitGroup} are made once per calling thread
     * and reused, as an outside {@code join}'s are) and the caller waits for it. Forks the function leaves open are joined before it returns, as a task's are.
     *
     * @param fn  the function (not null)
     * @param ctx its first argument, any object or null
     * @param arg its second argument
     * @param <T> the type of the context
     * @return the function's result
     * @throws NullPointerException   if {@code fn} is null
     * @throws TaskFailedException    if it threw: the cause is what it threw (a {@link TaskFailedException} it threw,
     *                                a {@link JoinFailedException} included, comes back as it is)
     * @throws PoolShutdownException  once shutdown has begun
     * @throws TaskCancelledException (outside caller) {@code shutdown(CANCEL_PENDING)} swept the call first
     * @throws InterruptedException   (outside caller) interrupted while waiting; the call runs on
     */
    public <T> long invokeLong(ObjLongToLongFunction<? super T> fn, T ctx, long arg) throws InterruptedException {
        Arguments.requireFn(fn);
        try {
            return core.invokeLong(fn, ctx, arg);
        } catch (IllegalStateException e) { // the outside hand-over's (a closed pool): as join's
            throw submitFailure(e);
        }
    }

    /**
     * {@link #invokeLong}'s form for a {@code double} result.
     *
     * @param fn  the function (not null)
     * @param ctx its first argument, any object or null
     * @param arg its second argument
     * @param <T> the type of the context
     * @return the function's result
     * @throws NullPointerException   if {@code fn} is null
     * @throws TaskFailedException    as {@link #invokeLong}
     * @throws PoolShutdownException  once shutdown has begun
     * @throws TaskCancelledException (outside caller) {@code shutdown(CANCEL_PENDING)} swept the call first
     * @throws InterruptedException   (outside caller) interrupted while waiting; the call runs on
     */
    public <T> double invokeDouble(ObjLongToDoubleFunction<? super T> fn, T ctx, long arg)
            throws InterruptedException {
        Arguments.requireFn(fn);
        try {
            return core.invokeDouble(fn, ctx, arg);
        } catch (IllegalStateException e) { // the outside hand-over's (a closed pool): as join's
            throw submitFailure(e);
        }
    }

    /**
     * {@link #invokeLong}'s form for any result.
     *
     * @param fn  the function (not null)
     * @param ctx its first argument, any object or null
     * @param arg its second argument
     * @param <T> the type of the context
     * @param <R> the type of the result
     * @return the function's result
     * @throws NullPointerException   if {@code fn} is null
     * @throws TaskFailedException    as {@link #invokeLong}
     * @throws PoolShutdownException  once shutdown has begun
     * @throws TaskCancelledException (outside caller) {@code shutdown(CANCEL_PENDING)} swept the call first
     * @throws InterruptedException   (outside caller) interrupted while waiting; the call runs on
     */
    @SuppressWarnings("unchecked")
    public <T, R> R invoke(ObjLongFunction<? super T, ? extends R> fn, T ctx, long arg) throws InterruptedException {
        Arguments.requireFn(fn);
        try {
            return (R) core.invoke(fn, ctx, arg);
        } catch (IllegalStateException e) { // the outside hand-over's (a closed pool): as join's
            throw submitFailure(e);
        }
    }

    // ---- ranges ----------------------------------------------------------------------------------------

    /**
     * Runs {@code body.accept(i)} for every {@code i} in {@code [from, to)} on this pool and returns when all
     * have run, in leaves of at most {@code grain} indices (a leaf runs {@code body} in a loop), never one task
     * per index.
     *
     * <ul>
     *   <li><b>From outside the pool</b> the calling thread takes part (the caller of
     *       {@code ForkJoinPool.invoke} on a pool other than the common pool does not: it parks until the task
     *       completes): it offers the range to at most {@code maxThreads} helper tasks (one attempt each: a full
     *       or shutting-down pool gets fewer, never a wait), then claims and runs chunks itself from a cursor it
     *       shares with them, and waits only for chunks still running on workers. Chunks are guided, a share of
     *       what is left in whole leaves, big first: 200,000 indices at grain 1024 with two workers are 29
     *       claims by three participants, not 196 leaves nor a binary split's 511 tasks. So
     *       {@code body} runs on the caller's thread too, and every index runs even if no worker is free or the
     *       pool is shut down meanwhile (helpers swept by {@code shutdown(CANCEL_PENDING)} never claimed any).
     *       A helper task that starts after the range is done returns at once. The helpers count in
     *       {@link #statsSnapshot()} as tasks.</li>
     *   <li><b>From one of its workers</b> (nested) it splits on that worker by recursive halving with
     *       {@link #join}, so idle workers steal big halves; a full pool never blocks or deadlocks it: its joins
     *       take no descriptor.</li>
     * </ul>
     *
     * <p>If {@code body} throws, the first {@link Throwable} is kept, indices not yet started are skipped,
     * and once every index has run or been skipped it is rethrown as the cause of a
     * {@link TaskFailedException}. Works on every variant. See docs/DESIGN.md, "parallelFor".
     *
     * @param from  first index, inclusive
     * @param to    last index, exclusive; {@code from <= to}
     * @param grain most indices one leaf runs; {@code >= 1}
     * @param body  called once with each index (not null); it may run on several threads at once
     * @throws IllegalArgumentException if {@code from > to} or {@code grain < 1}
     * @throws NullPointerException if {@code body} is null
     * @throws TaskFailedException if {@code body} threw (the cause is the first throwable)
     * @throws PoolShutdownException if shutdown had begun before the call (a shutdown during it only stops the
     *         helpers: the caller runs what is left)
     * @throws InterruptedException if an outside caller is interrupted while it waits for chunks still
     *         running on workers (those run to their end; no index is left unclaimed by then)
     */
    public void parallelFor(int from, int to, int grain, java.util.function.IntConsumer body)
            throws InterruptedException {
        if (from > to) {
            throw new IllegalArgumentException("from must be <= to: from=" + from + ", to=" + to);
        }
        if (grain < 1) {
            throw new IllegalArgumentException("grain must be >= 1: grain=" + grain);
        }
        Objects.requireNonNull(body, "body must not be null");
        if (from == to) {
            return;
        }
        if (core.isShutdown()) {
            throw new PoolShutdownException(core.isClosed() ? "pool is closed" : "pool is shutting down");
        }
        try {
            ParallelFor.run(core, from, to, grain, body);
        } catch (IllegalStateException e) {
            throw submitFailure(e);
        }
    }

    // ---- handles ---------------------------------------------------------------------------------------

    /**
     * Waits for a waitable task. Returns normally when it completed.
     *
     * <p>The first await after the task ended releases its descriptor. Every await of a still valid handle
     * (see {@link #submitWaitable(Runnable)}), the first and any later one, reports the same outcome: it
     * returns, or throws {@link TaskFailedException} with the same cause, or {@link TaskCancelledException}.
     * The pool keeps a failed task's cause for these awaits until its slot is reused, and no longer; a
     * detached task's failure it does not keep at all (beyond {@link #recentErrors()}). An await that races
     * the slot's reuse reports the outcome or the stale handle, never a failure without its cause.
     *
     * @param handle the task's handle, from {@link #submitWaitable(Runnable)}
     * @throws TaskFailedException     if it threw (the cause is what it threw)
     * @throws TaskCancelledException  if it was cancelled
     * @throws InvalidHandleException  if the handle is not of this pool's form (the message names the ranges),
     *                                 or stale: its slot has been reused or retired
     * @throws InterruptedException    if the calling thread is interrupted while it waits; the task runs on, and
     *                                 the handle can be awaited again
     */
    public void await(long handle) throws InterruptedException {
        awaitNanos(handle, Long.MAX_VALUE);
    }

    /**
     * As {@link #await(long)} with a timeout; returns false if the task had not ended in time.
     *
     * @param handle  the task's handle, from {@link #submitWaitable(Runnable)}
     * @param timeout the longest wait (not null, not negative)
     * @return true when the task completed, false when it had not ended in time (the handle stays valid)
     * @throws TaskFailedException     if it threw (the cause is what it threw)
     * @throws TaskCancelledException  if it was cancelled
     * @throws InvalidHandleException  as for {@link #await(long)}
     * @throws IllegalArgumentException if {@code timeout} is negative
     * @throws InterruptedException    if the calling thread is interrupted while it waits; the task runs on
     */
    public boolean await(long handle, Duration timeout) throws InterruptedException {
        long nanos = Arguments.timeoutNanos(timeout);
        return awaitNanos(handle, nanos);
    }

    /**
     * Cancels a waitable task that has not started yet; true only if this call cancelled it. Its await then
     * throws {@link TaskCancelledException} (and releases the descriptor).
     *
     * @param handle the task's handle, from {@link #submitWaitable(Runnable)}
     * @return true if this call cancelled the task; false if it had already started, ended or been cancelled
     * @throws InvalidHandleException as for {@link #await(long)}
     */
    public boolean cancel(long handle) {
        try {
            return core.cancel(handle);
        } catch (IllegalStateException e) {
            throw closedFailure(e);
        }
    }

    // ---- submitters ------------------------------------------------------------------------------------

    /**
     * Registers a submitter (at most 64 live at once): an entry point for one thread with its own descriptor
     * cache and, on {@code WORK_STEALING}, its own queue that workers steal from (see {@link Submitter}).
     *
     * @return the new submitter; close it to give the slot back
     * @throws PoolBusyException when 64 are already registered
     * @throws PoolShutdownException if the pool is closed
     */
    public Submitter registerSubmitter() {
        try {
            return new Submitter(this, core.registerSubmitter());
        } catch (IllegalStateException e) { // PoolBusyException included: submitFailure passes it on as it is
            throw submitFailure(e);
        }
    }

    // Submitter entry points: as the public methods above, with the submitter's slot, so its descriptor cache
    // and (WORK_STEALING) its own queue are used. Package-private: Submitter is the API.

    void submitFrom(int slot, Runnable task, SubmitOptions options) {
        Arguments.requireTask(task);
        int flags = flags(options);
        detached(slot, task, flags, null, WaitMode.UNBOUNDED, 0L);
    }

    boolean trySubmitFrom(int slot, Runnable task) {
        Arguments.requireTask(task);
        return detached(slot, task, 0, null, WaitMode.NO_WAIT, 0L);
    }

    int submitBatchFrom(int slot, Runnable[] tasks, int from, int to, WaitGroup group) {
        return batch(slot, tasks, from, to, 0, group);
    }

    long submitWaitableFrom(int slot, Runnable task) {
        Arguments.requireTask(task);
        return waitable(slot, task, 0);
    }

    void submitArgFrom(int slot, ObjLongConsumer<?> fn, Object ctx, long arg, SubmitOptions options) {
        Arguments.requireFn(fn);
        int flags = flags(options);
        detachedArg(slot, fn, ctx, arg, flags, null, WaitMode.UNBOUNDED, 0L);
    }

    boolean trySubmitArgFrom(int slot, ObjLongConsumer<?> fn, Object ctx, long arg) {
        Arguments.requireFn(fn);
        return detachedArg(slot, fn, ctx, arg, 0, null, WaitMode.NO_WAIT, 0L);
    }

    int submitBatchArgFrom(int slot, ObjLongConsumer<?> fn, Object ctx, long[] args, int from, int to,
            WaitGroup group) {
        return batchArg(slot, fn, ctx, args, from, to, 0, group);
    }

    long submitWaitableArgFrom(int slot, ObjLongConsumer<?> fn, Object ctx, long arg) {
        Arguments.requireFn(fn);
        return waitableArg(slot, fn, ctx, arg, 0);
    }

    void releaseSubmitter(int slot) {
        try {
            core.releaseSubmitter(slot);
        } catch (IllegalStateException e) {
            if (!core.isClosed()) {
                throw e;
            }
        }
    }

    // ---- lifecycle -------------------------------------------------------------------------------------

    /**
     * Shuts the pool down: submissions are refused from now on; {@code DRAIN} runs everything accepted,
     * {@code CANCEL_PENDING} cancels what is still queued; then the workers stop. Returns true when every
     * worker has stopped within {@code timeout}, false otherwise (call again, or {@link #close()}, to keep
     * waiting). Idempotent and safe from several threads.
     *
     * @param mode    what becomes of accepted tasks not yet started (not null)
     * @param timeout the longest wait for the workers to stop (not null, not negative)
     * @return true when every worker has stopped, false when the timeout passed first (shutdown goes on)
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code timeout} is negative
     * @throws InterruptedException if the calling thread is interrupted while it waits (shutdown goes on)
     * @throws IllegalStateException if called from one of this pool's workers
     */
    public boolean shutdown(ShutdownMode mode, Duration timeout) throws InterruptedException {
        Objects.requireNonNull(mode, "mode must not be null");
        long nanos = Arguments.timeoutNanos(timeout);
        return core.shutdown(mode, nanos);
    }

    /**
     * {@code shutdown(DRAIN)} with no deadline, join, and close the arena. Idempotent. If the calling thread is
     * interrupted while waiting, the wait continues and the interrupt status is restored afterwards.
     *
     * @throws IllegalStateException if called from one of this pool's workers
     */
    @Override
    public void close() {
        boolean interrupted = false;
        for (;;) {
            try {
                core.close();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * The index (0-based) of the calling thread among this pool's workers, or -1 if it is not one of them.
     * Handy for per-worker accumulators that need no synchronisation. It is below {@link #workerSlots()}:
     * in LANE_EXTENSION, indices {@code [0, blockingWorkers)} are the blocking lane's workers,
     * {@code [blockingWorkers, maxThreads)} the default lane's, and {@code [maxThreads, workerSlots())} the
     * watchdog's overflow workers.
     *
     * @return the calling thread's worker index in {@code [0, workerSlots())}, or -1
     */
    public int currentWorkerIndex() {
        return core.currentWorkerIndex();
    }

    /**
     * How many worker indices this pool may ever use (the bound of {@link #currentWorkerIndex()}):
     * {@code maxThreads}, plus {@code maxOverflowWorkers} in LANE_EXTENSION ({@link PoolConfig#workerSlots()}).
     *
     * @return the number of worker indices, fixed for the pool's life
     */
    public int workerSlots() {
        return core.workerSlots();
    }

    /**
     * Whether shutdown has begun ({@link #shutdown}, {@link #close()} or the executor service's shutdown).
     *
     * @return true once submissions are refused; stays true
     */
    public boolean isShutdown() {
        return core.isShutdown();
    }

    /**
     * Whether shutdown has finished: every worker has stopped.
     *
     * @return true once every worker has stopped (the arena may still be open until {@link #close()})
     */
    public boolean isTerminated() {
        return core.isTerminated();
    }

    /**
     * Whether {@link #close()} has freed the arena.
     *
     * @return true once the pool is closed; only {@link #statsSnapshot()} still works then
     */
    public boolean isClosed() {
        return core.isClosed();
    }

    // ---- observability ---------------------------------------------------------------------------------

    /**
     * A snapshot of the counters and the memory accounting; after close, the final one.
     *
     * @return a new, immutable snapshot; cheap, loads nothing
     */
    public PoolStats statsSnapshot() {
        return core.statsSnapshot();
    }

    /**
     * The most recent task failures (bounded by {@code recentErrorCapacity}), oldest first.
     *
     * @return a snapshot of the kept throwables, at most {@code recentErrorCapacity}; empty when none failed
     */
    public List<Throwable> recentErrors() {
        return core.recentErrors();
    }

    /**
     * How many times the error handler itself threw (each contained).
     *
     * @return the count since the pool was created
     */
    public long errorHandlerFailures() {
        return core.errorHandlerFailures();
    }

    /**
     * Every live off-heap block of the pool; the accounting totals sum {@code countedBytes}.
     *
     * @return a new list, one entry per live block
     */
    public List<MemoryBlock> memoryMap() {
        List<MemoryBlock> out = new ArrayList<>();
        for (PoolMemory.BlockInfo b : core.memoryMap()) {
            out.add(new MemoryBlock(b.purpose(), b.usableBytes(), b.countedBytes(), b.releasable()));
        }
        return out;
    }

    /**
     * Gives back per-worker caches while quiescent: every worker's cached free descriptors go back to the shared
     * freelist (each worker flushes its own when it runs out of work; this waits, at most 5 s, until all have),
     * and every worker's scratch buffer is freed ({@code liveBytes} drops by exactly its counted size).
     * Registered submitters keep their small descriptor caches until {@link Submitter#close()}.
     *
     * @throws PoolBusyException if a task is queued or running, or a worker's cache did not empty in time
     */
    public void purgeWorkerCaches() {
        try {
            core.purgeWorkerCaches();
        } catch (PoolBusyException e) {
            throw e;
        } catch (IllegalStateException e) {
            throw closedFailure(e);
        }
    }

    /**
     * The calling worker's scratch buffer, for temporary off-heap memory inside a running task (see
     * {@link WorkerScratch}). Returns the same object for every call on one worker; allocates nothing.
     *
     * @return the calling worker's scratch buffer
     * @throws IllegalStateException if the caller is not a worker thread of this pool, or the pool is closed
     */
    public WorkerScratch scratch() {
        return core.scratch();
    }

    /**
     * Resident, peak resident and virtual memory of the whole process (not only this pool). The first call
     * loads a native binding (jnr-ffi / jffi) through a lazy holder; a program that never calls it never loads
     * it, and {@link #statsSnapshot()} never does. See {@link ProcessMemory} for what each platform reports.
     *
     * @return the process's memory figures now; {@code -1} for a figure the platform could not provide
     */
    public static ProcessMemory processMemory() {
        return dev.threadpool.internal.os.ProcessMemoryProbe.read();
    }

    @Override
    public String toString() {
        return "ThreadPool[" + core.config() + (core.isClosed() ? ", closed" : core.isShutdown() ? ", shut down" : "")
                + "]";
    }

    // ---- calls into the core -------------------------------------------------------------------------------
    // Each core operation that the facade reaches by several paths is called from one method here, the only
    // place that translates its failures (submitFailure / closedFailure below). Plain methods with the
    // arguments spelled out, not one helper taking a lambda: a lambda capturing the task and its flags would
    // be a new object per call wherever the JIT does not inline and scalar-replace it (always under the
    // interpreter and C1), and detached submit allocates nothing per task.

    /** Every detached submit: {@code slot} is a registered submitter's or {@link PoolCore#NO_SUBMITTER}. */
    private boolean detached(int slot, Runnable task, int flags, WaitGroup group, WaitMode mode, long deadline) {
        try {
            return core.submit(slot, task, flags, group, mode, deadline);
        } catch (IllegalStateException e) {
            throw submitFailure(e);
        }
    }

    /**
     * Every detached submit in argument form (as {@link #detached}): {@code fn} is an {@code ObjLongConsumer} the
     * caller checked, called as {@code fn.accept(ctx, arg)}.
     */
    private boolean detachedArg(int slot, Object fn, Object ctx, long arg, int flags, WaitGroup group, WaitMode mode,
            long deadline) {
        try {
            return core.submitArg(slot, fn, ctx, arg, flags, group, mode, deadline);
        } catch (IllegalStateException e) {
            throw submitFailure(e);
        }
    }

    /** Every batch submit: checks the range and its elements first; an empty range submits nothing. */
    private int batch(int slot, Runnable[] tasks, int from, int to, int flags, WaitGroup group) {
        Arguments.checkBatch(tasks, from, to);
        if (from == to) {
            return 0;
        }
        try {
            return core.submitBatch(slot, tasks, from, to, flags, group);
        } catch (IllegalStateException e) {
            throw submitFailure(e);
        }
    }

    /**
     * Every batch submit in argument form (as {@link #batch}): checks {@code fn}, the array and the range first; an
     * empty range submits nothing.
     */
    private int batchArg(int slot, Object fn, Object ctx, long[] args, int from, int to, int flags, WaitGroup group) {
        Arguments.checkArgBatch(fn, args, from, to);
        if (from == to) {
            return 0;
        }
        try {
            return core.submitBatchArg(slot, fn, ctx, args, from, to, flags, group);
        } catch (IllegalStateException e) {
            throw submitFailure(e);
        }
    }

    /** Every waitable submit. */
    private long waitable(int slot, Runnable task, int flags) {
        try {
            return core.submitWaitable(slot, task, flags);
        } catch (IllegalStateException e) {
            throw submitFailure(e);
        }
    }

    /** Every waitable submit in argument form. */
    private long waitableArg(int slot, Object fn, Object ctx, long arg, int flags) {
        try {
            return core.submitWaitableArg(slot, fn, ctx, arg, flags);
        } catch (IllegalStateException e) {
            throw submitFailure(e);
        }
    }

    /** Both awaits ({@link Long#MAX_VALUE}: no timeout). */
    private boolean awaitNanos(long handle, long nanos) throws InterruptedException {
        try {
            return core.await(handle, nanos);
        } catch (IllegalStateException e) {
            throw closedFailure(e);
        }
    }

    // ---- helpers ---------------------------------------------------------------------------------------

    private static int flags(SubmitOptions options) {
        Objects.requireNonNull(options, "options must not be null");
        return options.lane() == Lane.BLOCKING ? DescriptorTable.FLAG_LANE_BLOCKING : 0;
    }

    /** An FFM access that raced close() fails with IllegalStateException: report it as a closed pool. */
    private RuntimeException submitFailure(IllegalStateException e) {
        if (e instanceof PoolBusyException) {
            return e;
        }
        return core.isClosed() ? new PoolShutdownException("pool is closed") : e;
    }

    private RuntimeException closedFailure(IllegalStateException e) {
        if (e instanceof PoolBusyException) {
            return e;
        }
        return core.isClosed() ? new IllegalStateException("pool is closed", e) : e;
    }
}
