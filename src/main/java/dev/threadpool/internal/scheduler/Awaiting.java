package dev.threadpool.internal.scheduler;

import dev.threadpool.InvalidHandleException;
import dev.threadpool.TaskCancelledException;
import dev.threadpool.TaskFailedException;
import dev.threadpool.internal.stats.PoolCounters;

/**
 * Awaiting and cancel: what a handle ({@code gen << log2(queueCapacity) | slot}, DescriptorTable, "Handles
 * and queue entries") can do once its task is queued.
 *
 * <pre>
 *   await:   check the handle -> loop on the control word (gen must match):
 *              COMPLETED / FAILED / CANCELLED  tryReleaseWaitable: the winner frees the slot, all report
 *              FREE (released by an earlier await)  the same outcome and cause, until the slot's next acquire
 *              QUEUED / RUNNING  wait: a worker helps (WorkerLoop.helpNext), at the nesting bound runs its own
 *                                queued target or blocks; any other thread blocks on the slot's signal
 *   cancel:  check the handle -> tryCancel (gen, QUEUED) -> (gen, CANCELLED); after the CAS the slot is not
 *            the canceller's: it only counts and wakes. The awaiter that releases it clears the task.
 * </pre>
 */
final class Awaiting {
    /** How long a helping awaiter blocks before it looks for queued work again. */
    private static final long HELP_POLL_NANOS = 100_000L;

    private final DescriptorTable table;
    private final Slots slots;
    private final PoolCounters counters;
    private final WorkerLoop loop;
    private final Lifecycle lifecycle;
    private final int capacity;

    Awaiting(DescriptorTable table, Slots slots, PoolCounters counters, WorkerLoop loop, Lifecycle lifecycle,
            int capacity) {
        this.table = table;
        this.slots = slots;
        this.counters = counters;
        this.loop = loop;
        this.lifecycle = lifecycle;
        this.capacity = capacity;
    }

    /**
     * Waits for the task of {@code handle} for at most {@code nanos} ({@link Long#MAX_VALUE}: no limit), from
     * {@code self} (the calling worker of this pool, or null). Returns true when it completed, false on
     * timeout; throws for failure, cancellation or a stale handle. The first await of a finished task releases
     * its descriptor (exactly once among concurrent awaiters). Called from a worker of this pool, it runs
     * queued tasks while it waits (helping), so awaiting a child task cannot deadlock the pool.
     */
    boolean await(WorkerThread self, long handle, long nanos) throws InterruptedException {
        lifecycle.ensureNotClosed();
        final int idx = checkHandle(handle);
        final long gen = table.genOf(handle);
        final long deadline = nanos == Long.MAX_VALUE ? Long.MAX_VALUE : System.nanoTime() + nanos;
        for (;;) {
            long c = table.ctlVolatile(idx);
            if (DescriptorTable.gen(c) != gen) {
                throw staleHandle(handle, idx, gen, c);
            }
            if (!DescriptorTable.waitable(c)) {
                throw new InvalidHandleException("not a waitable handle: 0x" + Long.toHexString(handle));
            }
            int st = DescriptorTable.state(c);
            switch (st) {
                case DescriptorTable.COMPLETED, DescriptorTable.FAILED, DescriptorTable.CANCELLED -> {
                    long won = table.tryReleaseWaitable(idx, gen);
                    if (won != 0) {
                        // Ours now (FREE, not yet on the freelist): clear what must be cleared before the
                        // release. A cancelled task's reference is ours to drop: its canceller writes nothing
                        // after its CAS. The failure stays in the table for later awaits, until reuse.
                        int st0 = DescriptorTable.state(won);
                        if (st0 == DescriptorTable.CANCELLED) {
                            slots.clearTask(idx);
                        }
                        Throwable cause = table.failure(idx);
                        slots.releaseSlot(self, idx, true, false); // a helping worker keeps it in its cache
                        counters.addReleasedOther(1);
                        return report(st0, cause, handle);
                    }
                    // lost to a concurrent awaiter: re-read, now FREE with the outcome
                }
                case DescriptorTable.FREE -> {
                    // Released by an earlier await: report the same outcome (and cause) while the handle is
                    // valid, i.e. until the slot's next acquire.
                    int outcome = DescriptorTable.outcome(c);
                    if (outcome != DescriptorTable.FAILED) {
                        return report(outcome, null, handle);
                    }
                    Throwable cause = table.failureOf(idx, gen); // the seqlock read (DescriptorTable)
                    if (cause != null) {
                        return report(outcome, cause, handle);
                    }
                    // the slot moved on while we read: re-read, and the handle is reported stale
                }
                default -> {
                    long remaining = deadline == Long.MAX_VALUE ? Long.MAX_VALUE : deadline - System.nanoTime();
                    if (remaining <= 0) {
                        return false;
                    }
                    if (self != null) {
                        // A worker that blocked here could starve the very task it waits for (think of a
                        // one-worker pool): help by running queued work, nested, and block only briefly
                        // between looks, since the awaited task may be running on another worker.
                        if (WorkerLoop.mayHelp(self)) {
                            if (loop.helpNext(self)) {
                                continue;
                            }
                            slots.signalFor(idx).await(gen, Math.min(remaining, HELP_POLL_NANOS));
                        } else if (st == DescriptorTable.QUEUED) {
                            // At the nesting bound: help no more, but run the awaited task itself while
                            // nobody has started it (tryStart's CAS, exactly as a worker's pop would; its queue
                            // entry is dropped as stale when popped). One level per level of the user's
                            // recursion, and no deadlock on a small pool: we never block on a queued task.
                            loop.runNested(self, handle);
                        } else {
                            // At the bound and RUNNING elsewhere: block until it ends (or the deadline).
                            slots.signalFor(idx).await(gen, remaining);
                        }
                    } else if (!slots.signalFor(idx).await(gen, remaining)) {
                        return false;
                    }
                    lifecycle.ensureNotClosed();
                }
            }
        }
    }

    private static boolean report(int outcome, Throwable cause, long handle) {
        switch (outcome) {
            case DescriptorTable.COMPLETED:
                return true;
            case DescriptorTable.FAILED:
                throw new TaskFailedException("task 0x" + Long.toHexString(handle) + " failed: " + cause, cause);
            default:
                throw new TaskCancelledException("task 0x" + Long.toHexString(handle) + " was cancelled");
        }
    }

    /** Cancels a waitable task while it is still queued; true only if this call cancelled it. */
    boolean cancel(long handle) {
        lifecycle.ensureNotClosed();
        int idx = checkHandle(handle);
        long gen = table.genOf(handle);
        long c = table.ctlAcquire(idx);
        if (DescriptorTable.gen(c) != gen) {
            throw staleHandle(handle, idx, gen, c);
        }
        if (table.tryCancel(idx, gen, true) == 0) {
            return false;
        }
        // The slot is no longer ours to write: an awaiter may already have seen CANCELLED, released it, and the
        // next submit reused it. The releasing awaiter clears the task reference (see await).
        slots.cancelled(idx);
        counters.addCancelled(1);
        slots.wakeSlot(idx); // the signal belongs to the slot, not to a generation: at worst a spurious wake-up
        return true;
    }

    // ---- handles ----------------------------------------------------------------------------------------

    /** The slot of a handle of this pool's form; {@link InvalidHandleException}, naming the ranges, if not. */
    private int checkHandle(long handle) {
        if (!table.isValidHandle(handle)) {
            throw new InvalidHandleException("not a task handle of this pool: handle=0x" + Long.toHexString(handle)
                    + " (a handle is gen << " + table.idxBits() + " | slot, with slot in [0, " + capacity
                    + ") and gen in [1, " + table.maxGen() + "])");
        }
        return table.slotOf(handle);
    }

    /** The exception for a handle whose generation is not its slot's current one ({@code c}). */
    private static InvalidHandleException staleHandle(long handle, int idx, long gen, long c) {
        long slotGen = DescriptorTable.gen(c);
        String what = DescriptorTable.state(c) == DescriptorTable.RETIRED
                ? "stale handle 0x" + Long.toHexString(handle) + ": slot " + idx
                        + " has been retired (its generations are used up)"
                : slotGen > gen ? "stale handle 0x" + Long.toHexString(handle) + ": slot " + idx + " has been reused"
                : "not a task handle of this pool: handle=0x" + Long.toHexString(handle) + " has not been issued"
                        + " (slot " + idx + " has not reached that generation)";
        return new InvalidHandleException(what + " (handle gen " + gen + ", slot gen " + slotGen + ")");
    }
}
