package dev.threadpool;

import java.util.Objects;
import java.util.function.ObjLongConsumer;

/**
 * A registered submitting thread: its own entry point into a pool, from {@link ThreadPool#registerSubmitter()}.
 * At most 64 are live per pool (the 65th registration throws {@link PoolBusyException}). Use one from one
 * thread at a time (handing it to another thread needs a happens-before edge, as for any unshared object),
 * and close it from that thread or after it. {@link #close()} gives the registration back (idempotent);
 * nothing it submitted is lost, and the slot can then be registered again.
 *
 * <p>A submitter takes descriptors from its own small cache (refilled from the pool's freelist in batches,
 * one CAS each; handed back on close), where {@code queueCapacity} can spare it. In {@code GLOBAL_QUEUE} and
 * {@code LANE_EXTENSION} it takes the outside path, exactly like {@link ThreadPool#submit} (its detached
 * default-lane tasks are carried by a ring cell, with no descriptor). In {@code WORK_STEALING} its tasks go to its
 * own single-producer queue ({@code localQueueCapacity} entries) that workers steal from, or to the shared
 * inject ring when that queue is full; on close what is still queued moves to the inject ring.
 * Used from one of the pool's own workers, a submitter behaves like a plain submit from that worker.
 */
public final class Submitter implements AutoCloseable {
    private final ThreadPool pool;
    private final int slot;
    private volatile boolean closed;

    Submitter(ThreadPool pool, int slot) {
        this.pool = pool;
        this.slot = slot;
    }

    /**
     * The submitter slot, 0..63.
     *
     * @return this submitter's slot; it stays the same after {@link #close()}
     */
    public int slot() {
        return slot;
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("submitter " + slot + " is closed");
        }
    }

    /**
     * As {@link ThreadPool#submit(Runnable)}.
     *
     * @param task the task (not null)
     * @throws IllegalStateException this submitter is closed
     */
    public void submit(Runnable task) {
        ensureOpen();
        pool.submitFrom(slot, task, SubmitOptions.DEFAULT);
    }

    /**
     * As {@link ThreadPool#submit(Runnable, SubmitOptions)}.
     *
     * @param task    the task (not null)
     * @param options the lane to route it to (not null)
     * @throws IllegalStateException this submitter is closed
     */
    public void submit(Runnable task, SubmitOptions options) {
        ensureOpen();
        pool.submitFrom(slot, task, options);
    }

    /**
     * As {@link ThreadPool#trySubmit(Runnable)}.
     *
     * @param task the task (not null)
     * @return as {@link ThreadPool#trySubmit(Runnable)}: true when the task was accepted
     * @throws IllegalStateException this submitter is closed
     */
    public boolean trySubmit(Runnable task) {
        ensureOpen();
        return pool.trySubmitFrom(slot, task);
    }

    /**
     * As {@link ThreadPool#submitBatch(Runnable[], int, int)}.
     *
     * @param tasks the tasks; {@code tasks[from..to)} are submitted
     * @param from  the first index, inclusive
     * @param to    the last index, exclusive
     * @return as {@link ThreadPool#submitBatch(Runnable[], int, int)}
     * @throws IllegalStateException this submitter is closed
     */
    public int submitBatch(Runnable[] tasks, int from, int to) {
        ensureOpen();
        return pool.submitBatchFrom(slot, tasks, from, to, null);
    }

    /**
     * As {@link ThreadPool#submitBatch(Runnable[], int, int, WaitGroup)}.
     *
     * @param tasks the tasks; {@code tasks[from..to)} are submitted
     * @param from  the first index, inclusive
     * @param to    the last index, exclusive
     * @param group counts every submitted task until it ends (not null)
     * @return as {@link ThreadPool#submitBatch(Runnable[], int, int, WaitGroup)}
     * @throws NullPointerException {@code group} is null
     * @throws IllegalStateException this submitter is closed
     */
    public int submitBatch(Runnable[] tasks, int from, int to, WaitGroup group) {
        ensureOpen();
        return pool.submitBatchFrom(slot, tasks, from, to, Objects.requireNonNull(group, "group must not be null"));
    }

    /**
     * As {@link ThreadPool#submitWaitable(Runnable)}.
     *
     * @param task the task (not null)
     * @return the task's handle, for {@link ThreadPool}'s {@code await} and {@code cancel}
     * @throws NullPointerException {@code task} is null
     * @throws IllegalStateException this submitter is closed
     */
    public long submitWaitable(Runnable task) {
        ensureOpen();
        return pool.submitWaitableFrom(slot, Objects.requireNonNull(task, "task must not be null"));
    }

    /**
     * As {@link ThreadPool#submit(ObjLongConsumer, Object, long)}: a task in argument form, nothing allocated for it.
     *
     * @param fn  the function (not null), called as {@code fn.accept(ctx, arg)}
     * @param ctx its first argument, any object or null
     * @param arg its second argument
     * @param <T> the type of the context
     * @throws NullPointerException {@code fn} is null
     * @throws IllegalStateException this submitter is closed
     */
    public <T> void submit(ObjLongConsumer<? super T> fn, T ctx, long arg) {
        ensureOpen();
        pool.submitArgFrom(slot, fn, ctx, arg, SubmitOptions.DEFAULT);
    }

    /**
     * As {@link ThreadPool#submit(ObjLongConsumer, Object, long, SubmitOptions)}.
     *
     * @param fn      the function (not null), called as {@code fn.accept(ctx, arg)}
     * @param ctx     its first argument, any object or null
     * @param arg     its second argument
     * @param options the lane to route it to (not null)
     * @param <T>     the type of the context
     * @throws NullPointerException {@code fn} or {@code options} is null
     * @throws IllegalStateException this submitter is closed
     */
    public <T> void submit(ObjLongConsumer<? super T> fn, T ctx, long arg, SubmitOptions options) {
        ensureOpen();
        pool.submitArgFrom(slot, fn, ctx, arg, options);
    }

    /**
     * As {@link ThreadPool#trySubmit(ObjLongConsumer, Object, long)}.
     *
     * @param fn  the function (not null), called as {@code fn.accept(ctx, arg)}
     * @param ctx its first argument, any object or null
     * @param arg its second argument
     * @param <T> the type of the context
     * @return as {@link ThreadPool#trySubmit(ObjLongConsumer, Object, long)}: true when the task was accepted
     * @throws NullPointerException {@code fn} is null
     * @throws IllegalStateException this submitter is closed
     */
    public <T> boolean trySubmit(ObjLongConsumer<? super T> fn, T ctx, long arg) {
        ensureOpen();
        return pool.trySubmitArgFrom(slot, fn, ctx, arg);
    }

    /**
     * As {@link ThreadPool#submitBatch(ObjLongConsumer, Object, long[], int, int)}: one task in argument form per
     * element of {@code args[from..to)}, nothing allocated for them.
     *
     * @param fn   the function (not null), called as {@code fn.accept(ctx, args[i])}
     * @param ctx  its first argument for every task of the batch, any object or null
     * @param args the tasks' second arguments; {@code args[from..to)} are submitted, one task each
     * @param from the first index, inclusive
     * @param to   the last index, exclusive
     * @param <T>  the type of the context
     * @return as {@link ThreadPool#submitBatch(ObjLongConsumer, Object, long[], int, int)}
     * @throws NullPointerException {@code fn} or {@code args} is null
     * @throws IndexOutOfBoundsException the range is not within the array
     * @throws IllegalStateException this submitter is closed
     */
    public <T> int submitBatch(ObjLongConsumer<? super T> fn, T ctx, long[] args, int from, int to) {
        ensureOpen();
        return pool.submitBatchArgFrom(slot, fn, ctx, args, from, to, null);
    }

    /**
     * As {@link ThreadPool#submitBatch(ObjLongConsumer, Object, long[], int, int, WaitGroup)}.
     *
     * @param fn    the function (not null), called as {@code fn.accept(ctx, args[i])}
     * @param ctx   its first argument for every task of the batch, any object or null
     * @param args  the tasks' second arguments; {@code args[from..to)} are submitted, one task each
     * @param from  the first index, inclusive
     * @param to    the last index, exclusive
     * @param group counts every submitted task until it ends (not null)
     * @param <T>   the type of the context
     * @return as {@link ThreadPool#submitBatch(ObjLongConsumer, Object, long[], int, int, WaitGroup)}
     * @throws NullPointerException {@code fn}, {@code args} or {@code group} is null
     * @throws IndexOutOfBoundsException the range is not within the array
     * @throws IllegalStateException this submitter is closed
     */
    public <T> int submitBatch(ObjLongConsumer<? super T> fn, T ctx, long[] args, int from, int to,
            WaitGroup group) {
        ensureOpen();
        Arguments.requireFn(fn);
        return pool.submitBatchArgFrom(slot, fn, ctx, args, from, to,
                Objects.requireNonNull(group, "group must not be null"));
    }

    /**
     * As {@link ThreadPool#submitWaitable(ObjLongConsumer, Object, long)}.
     *
     * @param fn  the function (not null), called as {@code fn.accept(ctx, arg)}
     * @param ctx its first argument, any object or null
     * @param arg its second argument
     * @param <T> the type of the context
     * @return the task's handle, for {@link ThreadPool}'s {@code await} and {@code cancel}
     * @throws NullPointerException {@code fn} is null
     * @throws IllegalStateException this submitter is closed
     */
    public <T> long submitWaitable(ObjLongConsumer<? super T> fn, T ctx, long arg) {
        ensureOpen();
        return pool.submitWaitableArgFrom(slot, Objects.requireNonNull(fn, "fn must not be null"), ctx, arg);
    }

    /**
     * Whether {@link #close()} was called.
     *
     * @return true once this submitter is closed; a closed one refuses every submit
     */
    public boolean isClosed() {
        return closed;
    }

    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            pool.releaseSubmitter(slot);
        }
    }

    @Override
    public String toString() {
        return "Submitter[slot=" + slot + (closed ? ", closed]" : "]");
    }
}
