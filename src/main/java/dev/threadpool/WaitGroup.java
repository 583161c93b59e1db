package dev.threadpool;

import dev.threadpool.internal.scheduler.WorkerThread;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.concurrent.locks.AbstractQueuedSynchronizer;

/**
 * Counts outstanding tasks and lets threads wait for the count to reach zero, like Go's
 * {@code sync.WaitGroup}. {@link ThreadPool#submit(Runnable, WaitGroup)} adds one before the task is handed
 * over and the pool calls {@link #done()} once the task has completed, failed or been cancelled (or when the
 * submission is refused), so {@link #await()} returns once every task submitted with the group has ended.
 *
 * <p>Reusable: once the count is back at zero, more tasks may be added. {@link #done()} allocates nothing.
 *
 * <h2>Two monotonic counters, striped, on lines of their own</h2>
 * The count is {@code added - done}, kept as two counters that only grow: {@code added} (written by
 * {@link #add} with a positive delta: the submitting threads) and {@code done} (written by {@link #done} and
 * by {@link #add} with a negative delta: the pool's workers). Each is split into stripes, one line each, picked
 * by the calling thread's id. A submitter's {@code add} and a worker's {@code done} therefore never write the
 * same cache line; two workers on different stripes do not either, nor two submitters on different stripes: two
 * producers adding to one group on one line paid a miss per task each (PERFORMANCE_TRACKING 68).
 * <pre>
 *   cells: long[], PAD = 16 longs (128 bytes: a line and its adjacent-line prefetch partner)
 *     [0, PAD)                          padding (the array header's neighbours)
 *     ADDED(s) @PAD * (1 + s)           s in [0, STRIPES): positive deltas of the threads hashed to s
 *     DONE(s)  @PAD * (1 + STRIPES + s) dones and negative deltas of the threads hashed to s
 *     AWAITED  @PAD * (1 + 2 * STRIPES) one more done stripe, every thread's while a waiter is queued
 *     padding  PAD longs after the last stripe
 * </pre>
 *
 * <h2>How many stripes</h2>
 * The processors rounded up to a power of two, at least 2, at most {@link PoolConfig#MAX_THREADS} (64). A group
 * is not tied to one pool, and the threads that can write one stripe at the same instant are at most the
 * processors, which also bound the workers a pool can keep busy: with fewer stripes than processors, the
 * workers of a wide pool share done lines (8 stripes made 8 of 64 workers share each). Workers are created one
 * after the other, so their ids, and thus their stripes, differ in the low bits. What the stripes cost:
 * <ul>
 *   <li><b>Memory.</b> Two padded cells per stripe (an added and a done), plus {@code AWAITED} and a pad at
 *       each end: {@code 128 * (3 + 2 * STRIPES)} bytes a group (and the array's header): 896 bytes on 2
 *       processors, 2.4 KiB on 8, 16.4 KiB on 64 or more. A program that makes a group per request on a wide machine pays that per
 *       request; one reused group (a group is reusable) pays it once.</li>
 *   <li><b>Reading the count.</b> {@link #pending}, {@link #await}'s test, a negative {@link #add} and a
 *       {@code done} made while a waiter is queued read every stripe: {@code 2 * STRIPES + 1} volatile loads
 *       (129 on 64 processors). The add and the done themselves write one stripe whatever the count; the
 *       stripes nobody writes meanwhile stay in the reader's cache, so the loads are mostly hits
 *       ("While a waiter is queued").</li>
 * </ul>
 *
 * <h2>Zero, linearizably</h2>
 * {@link #isZero} reads every {@code done} stripe first, then every {@code added} stripe, and says zero when
 * the two sums are equal. Both counters only grow, and every {@code done} follows (in happens-before) the {@code add}
 * it matches, so {@code done <= added} at every instant of a correct use. If the stripes summed to {@code D}
 * (each read no later than instant {@code t}, so {@code D <= done(t)}) and the {@code added} stripes then
 * summed to {@code A = D} (each read after {@code t}, so {@code added(t) <= A}), then {@code added(t) <= D <=
 * done(t) <= added(t)}: the count was zero at {@code t}. Reading {@code added} first would prove nothing: an
 * add and its done could both land between the two reads.
 *
 * <h2>Waking waiters: only a waiter costs the done side more</h2>
 * Waiters park in an {@link AbstractQueuedSynchronizer} whose {@code tryAcquireShared} is {@link #isZero}.
 * A {@code done} is one seq_cst getAndAdd on its stripe, then one volatile look at the synchronizer's queue
 * ({@code hasQueuedThreads}: its tail and head, written only when a waiter enqueues or leaves); only if a
 * waiter is queued does it evaluate {@link #isZero} and, on zero, release. Dekker pair: the waiter's enqueue
 * (a CAS on the tail) precedes its last {@code isZero} before it parks; the done's getAndAdd precedes its
 * look at the queue. In the total order of these seq_cst accesses, either the look comes after the enqueue
 * (the done sees the waiter, checks zero and releases it) or the enqueue comes after the look, hence after
 * the getAndAdd, and the waiter's re-check sees the count at zero.
 *
 * <h2>While a waiter is queued, one done stripe for all</h2>
 * Every done made while a waiter is queued tests for zero, reading every stripe. On per-thread stripes that
 * cost each done two misses: its getAndAdd took back the line another worker had just read for its own test,
 * and its read of that worker's stripe found it just written (a whole burst awaited: the workers' CPU per task
 * 195-292 ns against 154-188 with nobody queued; PERFORMANCE_TRACKING 69). So a done that sees a waiter queued
 * counts itself on {@code AWAITED}, one stripe shared by every thread: one miss per done, and the per-thread
 * stripes, written by nobody meanwhile, stay in every reader's cache. The choice is a look at the queue before
 * the getAndAdd and has no ordering role: {@code AWAITED} is a done stripe like the others, read with them
 * before the added stripes, so the zero proof and the Dekker pair above are the same whichever stripe a done
 * lands on.
 *
 * <h2>Misuse</h2>
 * Driving the count below zero ({@code done()} with nothing outstanding) cannot be detected at the
 * {@code done()} itself without every done reading the line every add writes, which is the cost this class
 * exists to avoid. {@link #add} with a negative delta checks first ({@link IllegalStateException} if the
 * count it sees would go negative); a {@code done()} too many is detected by the next {@link #pending},
 * {@link #await} or negative {@link #add}, which throw {@link IllegalStateException}.
 */
public final class WaitGroup {
    /** Longs per padded cell: 128 bytes, so two cells never share a line nor an adjacent-line prefetch pair. */
    private static final int PAD = 16;
    private static final int FIRST_ADDED = PAD;
    /** Stripes of each counter: {@link #stripesFor} this machine's processors ("How many stripes"). */
    private static final int STRIPES = stripesFor(Runtime.getRuntime().availableProcessors());
    private static final int STRIPE_MASK = STRIPES - 1;
    private static final int FIRST_DONE = PAD * (1 + STRIPES);

    private static final VarHandle CELLS = MethodHandles.arrayElementVarHandle(long[].class);

    /** The done stripe of every thread while a waiter is queued ("While a waiter is queued"). */
    private static final int AWAITED = PAD * (1 + 2 * STRIPES);

    private final long[] cells = new long[PAD * (3 + 2 * STRIPES)];
    private final Sync sync = new Sync(this);

    /** A group with a count of zero: {@link #await()} returns at once until something is added. */
    public WaitGroup() {
    }

    private static final class Sync extends AbstractQueuedSynchronizer {
        private static final long serialVersionUID = 1L;
        private final transient WaitGroup group;

        Sync(WaitGroup group) {
            this.group = group;
        }

        @Override
        protected int tryAcquireShared(int ignored) {
            return group.isZero() ? 1 : -1;
        }

        @Override
        protected boolean tryReleaseShared(int ignored) {
            return true; // the caller saw zero: wake the queued waiters, each re-checks with tryAcquireShared
        }
    }

    /**
     * Stripes of each counter for a machine of {@code processors} processors: the processors rounded up to a
     * power of two, at least 2, at most {@link PoolConfig#MAX_THREADS} ("How many stripes").
     *
     * @throws IllegalArgumentException if {@code processors} is below 1
     */
    static int stripesFor(int processors) {
        if (processors < 1) {
            throw new IllegalArgumentException("processors must be >= 1, got " + processors);
        }
        int p = Math.min(processors, PoolConfig.MAX_THREADS); // first: the shift below cannot overflow
        return Integer.highestOneBit(Math.max(1, p - 1) << 1); // rounded up: 1 -> 2, 2 -> 2, 3 -> 4, 8 -> 8
    }

    /** Stripes of each counter in this JVM (tests). */
    static int stripes() {
        return STRIPES;
    }

    /** The calling thread's stripe, as an offset from the first cell of either counter. */
    private static int stripeOffset() {
        return PAD * ((int) Thread.currentThread().threadId() & STRIPE_MASK);
    }

    /** Sum of the done stripes (volatile loads: the first half of {@link #isZero}). */
    private long doneSum() {
        long d = 0;
        for (int s = 0; s < STRIPES; s++) {
            // volatile: ordered before the loads of the added stripes that follow (the order isZero's proof needs)
            d += (long) CELLS.getVolatile(cells, FIRST_DONE + PAD * s);
        }
        // volatile, as the stripes above: AWAITED is one of the done stripes
        d += (long) CELLS.getVolatile(cells, AWAITED);
        return d;
    }

    /** The count: done stripes first, then the added stripes (see "Zero, linearizably"). */
    private long count() {
        long d = doneSum();
        long a = 0;
        for (int s = 0; s < STRIPES; s++) {
            // volatile: after every done stripe load above
            a += (long) CELLS.getVolatile(cells, FIRST_ADDED + PAD * s);
        }
        return a - d;
    }

    /**
     * True when the count was zero at some instant during the call (see "Zero, linearizably").
     *
     * @throws IllegalStateException if the count is negative (more dones than adds)
     */
    private boolean isZero() {
        long c = count();
        if (c < 0) {
            throw negative(c);
        }
        return c == 0;
    }

    private static IllegalStateException negative(long count) {
        return new IllegalStateException("WaitGroup count is negative: count=" + count
                + " (done() called more often than add() counted)");
    }

    /**
     * Adds {@code delta} (may be negative) to the count. A negative delta counts as that many {@link #done}s.
     *
     * @param delta the change in the count: positive before handing over that many tasks, negative to count
     *              that many ends; 0 does nothing
     * @throws IllegalStateException if a negative {@code delta} would drive the count below zero
     */
    public void add(int delta) {
        if (delta > 0) {
            // getAndAdd (seq_cst): the add precedes, in program order, the hand-over of the task whose done it
            // matches, so every done of it follows this in happens-before (the proof of isZero).
            CELLS.getAndAdd(cells, FIRST_ADDED + stripeOffset(), (long) delta);
        } else if (delta < 0) {
            long c = count();
            if (c + delta < 0) {
                throw new IllegalStateException("WaitGroup count would become negative: count=" + c
                        + ", delta=" + delta);
            }
            finish(-(long) delta);
        }
    }

    /** Subtracts one; wakes the waiters when the count reaches zero. */
    public void done() {
        finish(1);
    }

    /**
     * Counts {@code n} dones on the caller's stripe, or on {@code AWAITED} while a waiter is queued; releases the
     * waiters if one is queued and the count is 0.
     */
    private void finish(long n) {
        // volatile loads of the queue's tail and head: only which stripe to count on (no ordering role: class
        // comment, "While a waiter is queued")
        int stripe = sync.hasQueuedThreads() ? AWAITED : FIRST_DONE + stripeOffset();
        // getAndAdd (seq_cst): the first half of the Dekker pair with a waiter's enqueue (class comment)
        CELLS.getAndAdd(cells, stripe, n);
        // volatile loads of the queue's tail and head: the second half; a line written only by waiters
        if (sync.hasQueuedThreads()) {
            long c = count();
            if (c == 0) {
                sync.releaseShared(0);
            }
        }
    }

    /**
     * The current count.
     *
     * @return tasks outstanding now (added, not yet done), capped at {@link Integer#MAX_VALUE}; a snapshot,
     *         stale as soon as it is returned while tasks run
     * @throws IllegalStateException if it is negative (more dones than adds)
     */
    public int pending() {
        long c = count();
        if (c < 0) {
            throw negative(c);
        }
        return (int) Math.min(c, Integer.MAX_VALUE);
    }

    /**
     * Waits until the count is zero. Called from a worker of a pool, it runs queued work (and offered join
     * halves) of that worker's pool while it waits, instead of blocking the worker: on a small pool the tasks
     * it waits for may sit in its own queues. Such a helping wait polls the count between helped tasks and
     * blocks for at most {@link #HELP_POLL_NANOS} at a time when nothing is queued for it.
     *
     * @throws IllegalStateException if the count is negative (more dones than adds)
     * @throws InterruptedException if the calling thread is interrupted while it waits (the count is unchanged)
     */
    public void await() throws InterruptedException {
        if (!isZero() && WorkerThread.currentIsWorker()) {
            awaitHelping(Long.MAX_VALUE);
            return;
        }
        sync.acquireSharedInterruptibly(0);
    }

    /**
     * Waits until the count is zero or the timeout passes; returns true when it reached zero.
     *
     * @param timeout the longest wait (not null, not negative); a duration too long for a {@code long} of
     *                nanoseconds waits without limit
     * @return true when the count reached zero, false when the timeout passed first
     * @throws NullPointerException if {@code timeout} is null
     * @throws IllegalArgumentException if {@code timeout} is negative
     * @throws IllegalStateException if the count is negative (more dones than adds)
     * @throws InterruptedException if the calling thread is interrupted while it waits
     */
    public boolean await(Duration timeout) throws InterruptedException {
        long nanos = Arguments.timeoutNanos(timeout); // null or negative: the exception names the parameter
        if (!isZero() && WorkerThread.currentIsWorker()) {
            return awaitHelping(nanos);
        }
        return sync.tryAcquireSharedNanos(0, nanos);
    }

    /** Longest block of a helping await (a worker's) before it looks for queued work again. */
    static final long HELP_POLL_NANOS = 100_000L;

    /**
     * A worker's await: helps its pool (WorkerThread.helpCurrent, nested and bounded) while the count is not
     * zero; blocks briefly when nothing is queued for it. True when the count reached zero within
     * {@code nanos} ({@link Long#MAX_VALUE}: no limit).
     */
    private boolean awaitHelping(long nanos) throws InterruptedException {
        final long deadline = nanos == Long.MAX_VALUE ? Long.MAX_VALUE : System.nanoTime() + nanos;
        while (!isZero()) {
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            if (WorkerThread.helpCurrent()) {
                continue;
            }
            long left = deadline == Long.MAX_VALUE ? HELP_POLL_NANOS : deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            if (sync.tryAcquireSharedNanos(0, Math.min(left, HELP_POLL_NANOS))) {
                return true;
            }
        }
        return true;
    }

    @Override
    public String toString() {
        return "WaitGroup[pending=" + count() + "]";
    }

}
