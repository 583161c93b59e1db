package dev.threadpool;

import java.util.Objects;

/**
 * A registered submitting thread: its own entry point into a pool, from {@link ThreadPool#registerSubmitter()}.
 * At most 64 are live per pool. Use one from one thread at a time. {@link #close()} gives the registration
 * back (idempotent); nothing it submitted is lost.
 *
 * <p>In {@code GLOBAL_QUEUE} a submitter feeds the shared ring, exactly like {@link ThreadPool#submit}; the
 * work-stealing variants give each submitter its own queue that workers steal from.
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
        pool.submit(task);
    }

    /** As {@link ThreadPool#submit(Runnable, SubmitOptions)}. */
    public void submit(Runnable task, SubmitOptions options) {
        ensureOpen();
        pool.submit(task, options);
    }

    /** As {@link ThreadPool#trySubmit(Runnable)}. */
    public boolean trySubmit(Runnable task) {
        ensureOpen();
        return pool.trySubmit(task);
    }

    /** As {@link ThreadPool#submitBatch(Runnable[], int, int)}. */
    public int submitBatch(Runnable[] tasks, int from, int to) {
        ensureOpen();
        return pool.submitBatch(tasks, from, to);
    }

    /** As {@link ThreadPool#submitWaitable(Runnable)}. */
    public long submitWaitable(Runnable task) {
        ensureOpen();
        return pool.submitWaitable(Objects.requireNonNull(task, "task must not be null"));
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
