package dev.threadpool;

import java.util.Objects;

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

    /** The submitter slot, 0..63. */
    public int slot() {
        return slot;
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("submitter " + slot + " is closed");
        }
    }

    /** As {@link ThreadPool#submit(Runnable)}. */
    public void submit(Runnable task) {
        ensureOpen();
        pool.submitFrom(slot, task, SubmitOptions.DEFAULT);
    }

    /** As {@link ThreadPool#submit(Runnable, SubmitOptions)}. */
    public void submit(Runnable task, SubmitOptions options) {
        ensureOpen();
        pool.submitFrom(slot, task, options);
    }

    /** As {@link ThreadPool#trySubmit(Runnable)}. */
    public boolean trySubmit(Runnable task) {
        ensureOpen();
        return pool.trySubmitFrom(slot, task);
    }

    /** As {@link ThreadPool#submitBatch(Runnable[], int, int)}. */
    public int submitBatch(Runnable[] tasks, int from, int to) {
        ensureOpen();
        return pool.submitBatchFrom(slot, tasks, from, to, null);
    }

    /** As {@link ThreadPool#submitBatch(Runnable[], int, int, WaitGroup)}. */
    public int submitBatch(Runnable[] tasks, int from, int to, WaitGroup group) {
        ensureOpen();
        return pool.submitBatchFrom(slot, tasks, from, to, Objects.requireNonNull(group, "group must not be null"));
    }

    /** As {@link ThreadPool#submitWaitable(Runnable)}. */
    public long submitWaitable(Runnable task) {
        ensureOpen();
        return pool.submitWaitableFrom(slot, Objects.requireNonNull(task, "task must not be null"));
    }

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
