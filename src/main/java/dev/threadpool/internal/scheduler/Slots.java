package dev.threadpool.internal.scheduler;

import dev.threadpool.WaitGroup;
import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.stats.PoolCounters;
import dev.threadpool.internal.stats.Timestamps;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntConsumer;

/**
 * Slots: who holds a descriptor, and how it comes back. The on-heap reference arrays indexed by descriptor
 * slot (task, group, per-slot signal), the descriptor caches of workers, registered submitters and outside
 * stripes, and the release rules that keep {@code taskDescLive} exact and no space waiter stranded.
 *
 * <pre>
 *   acquire:  acquireFast(self, submitter)   worker cache | submitter cache | outside stripe's cache
 *                                            (try-locked; held: freelist) | freelist              (one pop)
 *                                            none: drain the outside caches, retry the freelist once
 *             acquireMany(self, submitter, ..) a batch: from the caller's cache, else one freelist CAS per chunk
 *             acquireOrReclaim()             a space waiter's retry: freelist, else drain outside caches + retry
 *   publish:  publish(idx, ...)              refs (plain), prepare, (gen, QUEUED) release store -> entry
 *             publishArg(idx, fn, ctx, arg ..) the same for a task in argument form (ARG, FLAG_ARGUMENT)
 *   release:  releaseSlot(self, idx, ...)    worker cache, unless somebody waits for space -> freelist + signal
 *   flush:    flushWorkerCache(self)         a worker that runs out of work gives its cache back
 * </pre>
 *
 * <h2>References and who may write them</h2>
 * {@code tasks[idx]} and {@code groups[idx]} are written only by the slot's owner (see DescriptorTable,
 * "References and who may write them"): the submitter before publish, the worker that won the start CAS
 * after the run, the sweep or the awaiter that won a cancelled slot. A waitable task's failure lives in the
 * table, next to the generation that guards it. {@code signals[idx]} is created on first await and kept.
 *
 * <h2>Tasks in argument form</h2>
 * A task submitted as {@code (fn, ctx, arg)} ({@link DescriptorTable#FLAG_ARGUMENT}) leaves {@code tasks[idx]}
 * null: its function and context sit side by side in {@code argRefs} ({@code fn} at {@code 2 idx}, {@code ctx} at
 * {@code 2 idx + 1}, one line for both) and its {@code long} in the descriptor ({@code ARG}). Written plain by the
 * submitter before the publish, under exactly the rule of {@code tasks[idx]}, and cleared by the owner that gives
 * the slot up ({@link #clearArgRefs}: the worker after the run, the sweep of a cancelled detached slot, the
 * awaiter that releases a cancelled waitable), so no context is retained once its task has ended. A separate
 * array rather than an {@code Object[] tasks}: a {@code Runnable} task's path reads and writes exactly what it did,
 * with no cast, and {@code argRefs} is only touched for tasks in argument form.
 *
 * <h2>Descriptor caches</h2>
 * A worker acquires from and releases to its own {@link DescCache} (refill / spill in batches, one CAS each);
 * a registered submitter acquires from its own (refills of {@link #submitterRefill} slots; it never
 * releases, the workers do). Any other thread (an unregistered outside thread) acquires from the
 * {@link OutsideDescCaches} cache of its admission stripe ({@code PoolCounters.outsideStripeOfCurrentThread}),
 * shared by the threads hashed there and so try-locked: a thread that finds it held takes from the freelist,
 * never waits (refills of {@link #outsideRefill}; never releases either). Cached slots are FREE, and are counted
 * as released when they enter a cache (a worker's) or were never counted as taken (a refill), so taskDescLive
 * stays exact.
 *
 * <p>Hazard: {@link DescriptorTable#hasFree()} and {@link SpaceWaiters} see only the freelist, never a cache.
 * A producer waiting for space must not wait while the slots sit cached, so:
 * <ol>
 *   <li>a release goes straight to the freelist (+ signal) while {@link SpaceWaiters#hasWaiters()};</li>
 *   <li>a worker flushes its cache before it parks ({@link Idle#announce}; BUSY_SPIN, which never parks, when it
 *       runs out of work);</li>
 *   <li>a submitter's cache is flushed by {@code Submitter.close} ({@link #flushSubmitterCache});</li>
 *   <li>{@code purgeWorkerCaches()} waits until every worker cache is empty ({@link #awaitWorkerCachesFlushed}),
 *       and drains every outside stripe's cache ({@link #awaitOutsideCachesDrained});</li>
 *   <li>an outside stripe's cache belongs to no thread that could flush it when it goes away, so anybody drains
 *       it: an acquire that finds its own cache (a worker's, a submitter's or its stripe's) and the freelist both
 *       empty first drains every other outside cache it can try-lock back to the freelist (one CAS each, then a
 *       signal to space waiters) and tries the freelist once more before it reports no slot
 *       ({@link #acquireFast}; a worker's caller-runs and helping then start only when the outside stripes are
 *       empty too); a space waiter's condition does the same at every look ({@link #freeOrReclaimed}), so slots
 *       a refill took after the waiter's own drain (its lock was held then) are reclaimed at its next poll,
 *       within the capped park; and the shutdown drains them once every worker is joined
 *       ({@link #drainOutsideCaches}).</li>
 * </ol>
 * A waiter that registers just after a release chose the cache still makes progress: its park is capped
 * ({@code SpaceWaiters.PARK_CAP_NANOS}), every later release goes to the freelist, and an idle pool has
 * flushed every worker cache. The caches are only built when {@code queueCapacity} can spare them
 * ({@link #workerCacheLimit}, {@link #submitterRefill}, {@link #outsideRefill}), so a small pool behaves exactly
 * as without them.
 *
 * <h2>Shares of the table</h2>
 * Each kind of cache may hold at most a quarter of the table, so all caches together (worker + submitter +
 * outside) hold at most three quarters and at least a quarter is always on the freelist or in use: the worker
 * caches {@code workerSlots x workerCacheLimit}, the 64 submitter caches {@code 64 x submitterRefill}, the outside
 * caches {@code OUTSIDE_STRIPES x outsideRefill} (an acquire-only cache holds at most one refill).
 *
 * <h2>Worker caches sized by capacity over workers</h2>
 * All worker caches together hold at most a quarter of the descriptors: each holds up to
 * {@link #workerCacheLimit} = the largest power of two at most {@code min(64, queueCapacity / (4 x workerSlots))}
 * (64 at every worker count with the default capacity, which grows with the workers: 4096 up to 16 workers,
 * 16384 at 64; PoolConfig.Builder#queueCapacity; workerSlots counts LANE_EXTENSION's overflow workers too, so
 * there the limit may be one step smaller, e.g. 32 at 32 workers + 16 overflow). Caches were all-or-nothing
 * before: at 33 workers with 4096 descriptors they switched off, and every descriptor then cost a CAS on the
 * freelist head to take and another to give back (issue 48's cliff). A smaller cache refills and spills in
 * smaller batches: at limit L a worker that only takes pays one CAS per L descriptors, one that only gives back
 * one per L / 2, and one that does both (a worker running its own submits) none at steady state. Below a limit of
 * {@link #MIN_WORKER_CACHE} the caches are not built.
 */
final class Slots {
    /** Marks a submit that comes from no registered submitter. */
    static final int NO_SUBMITTER = -1;
    /**
     * Worker caches may hold at most 1/WORKER_CACHE_SHARE of the descriptors in all; so may submitter caches, and
     * so may outside caches ("Shares of the table").
     */
    private static final int WORKER_CACHE_SHARE = 4;
    /** Smallest worker cache worth building: spills of 4, refills of up to 8. */
    static final int MIN_WORKER_CACHE = 8;
    /** How long purgeWorkerCaches waits for every worker to flush its cache. */
    private static final long PURGE_WAIT_NANOS = 5_000_000_000L;
    /** How long purgeWorkerCaches parks between two looks at a worker's cache. */
    private static final long PURGE_POLL_NANOS = 100_000L;

    private static final VarHandle SIGNALS = MethodHandles.arrayElementVarHandle(SlotSignal[].class);

    private final DescriptorTable table;
    private final SpaceWaiters space;
    /** TimestampMode.FULL; every use reads {@code Timestamps.COMPILED && timestamps} (see PoolCore). */
    private final boolean timestamps;

    /**
     * Each slot's {@code Runnable}, held as {@code Object}. A store into a {@code Runnable[]} is type-checked against
     * the interface, and C2's check of the store in {@link #publish} trapped ({@code array_check}, four times, about
     * two seconds into each of three wsum JVMs logged), which threw away the compiled submit path (16 KB of code)
     * and compiled it again. A store into an {@code Object[]} needs no such check, and none trapped; {@link #task}
     * casts on the way out (PERFORMANCE_TRACKING 90).
     */
    private final Object[] tasks;
    /** Tasks in argument form: slot i's function at {@code 2i}, its context at {@code 2i + 1} (class comment). */
    private final Object[] argRefs;
    private final WaitGroup[] groups;
    private final SlotSignal[] signals;
    /**
     * One descriptor cache per worker slot, or null when {@code queueCapacity} is too small to spare them
     * ({@link #workerCacheLimit}). Each is touched only by its worker's thread.
     */
    private final DescCache[] workerCaches;
    /** One acquire-only descriptor cache per submitter slot (refills of {@link #submitterRefill}), or null. */
    private final DescCache[] submitterCaches;
    /**
     * One try-locked, acquire-only descriptor cache per outside admission stripe (refills of {@link #outsideRefill}),
     * or null when {@code queueCapacity} is too small to spare them.
     */
    private final OutsideDescCaches outsideCaches;

    /**
     * White-box hook for tests in this package: runs on the cancelling thread right after it won a
     * QUEUED -> CANCELLED CAS ({@link Awaiting#cancel}, the CANCEL_PENDING sweep), with the slot. Null in
     * production.
     */
    volatile IntConsumer cancelledHookForTest;

    Slots(PoolMemory memory, DescriptorTable table, SpaceWaiters space, int capacity, int workerSlots,
            boolean timestamps) {
        this.table = table;
        this.space = space;
        this.timestamps = timestamps;
        int limit = workerCacheLimit(capacity, workerSlots);
        this.workerCaches = limit > 0
                ? DescCache.allocateArray(memory, "worker descriptor caches", table, workerSlots, limit, limit)
                : null;
        int refill = submitterRefill(capacity);
        this.submitterCaches = refill >= 2
                ? DescCache.allocateArray(memory, "submitter descriptor caches", table,
                        SubmitterRegistry.MAX_SUBMITTERS, refill, submitterLimit(refill))
                : null;
        int outside = outsideRefill(capacity, PoolCounters.OUTSIDE_STRIPES);
        this.outsideCaches = outside > 0
                ? new OutsideDescCaches(memory, "outside descriptor caches", table, PoolCounters.OUTSIDE_STRIPES,
                        outside)
                : null;
        this.tasks = new Object[capacity];
        this.argRefs = new Object[2 * capacity];
        this.groups = new WaitGroup[capacity];
        this.signals = new SlotSignal[capacity];
    }

    /**
     * Slots each worker cache may hold so that all of them hold at most a quarter of the table: the largest
     * power of two at most {@code min(64, capacity / (4 x workerSlots))}, or 0 (no worker caches) below
     * {@link #MIN_WORKER_CACHE} (class comment, "Worker caches sized by capacity over workers").
     */
    static int workerCacheLimit(int capacity, int workerSlots) {
        return quarterShare(capacity, workerSlots, DescCache.Layout.CAPACITY);
    }

    /**
     * Slots each of {@code owners} caches may hold so that all of them hold at most a quarter of a table of
     * {@code capacity}: the largest power of two at most {@code min(max, capacity / (4 x owners))}, or 0 below
     * {@link #MIN_WORKER_CACHE}. The worker caches' limit and the outside stripes' refill.
     */
    private static int quarterShare(int capacity, int owners, int max) {
        long share = (long) capacity / ((long) WORKER_CACHE_SHARE * owners);
        if (share < MIN_WORKER_CACHE) {
            return 0;
        }
        return Integer.highestOneBit((int) Math.min(max, share));
    }

    /** Refill size of a submitter cache: all 64 together hold at most a quarter of the table. */
    static int submitterRefill(int capacity) {
        return Math.min(DescCache.Layout.CAPACITY, capacity / (WORKER_CACHE_SHARE * SubmitterRegistry.MAX_SUBMITTERS));
    }

    /**
     * Refill size of an outside stripe's cache, so that all {@code stripes} of them hold at most a quarter of the
     * table: the largest power of two at most {@code min(64, capacity / (4 x stripes))}, or 0 (no outside caches)
     * below {@link #MIN_WORKER_CACHE}. 64 with the default capacity at 64 workers (16384) on any machine; with 4096,
     * 64 up to 16 stripes, 16 at 64.
     */
    static int outsideRefill(int capacity, int stripes) {
        return quarterShare(capacity, stripes, OutsideDescCaches.Layout.CAPACITY);
    }

    /**
     * The limit of a submitter cache with refills of {@code refill} (at least 2): the smallest power of two that
     * holds one refill, so each cache's stride is sized by what it can hold (a submitter never pushes, so it
     * never spills).
     */
    static int submitterLimit(int refill) {
        return Integer.highestOneBit(refill - 1) << 1;
    }

    // ---- acquire and publish --------------------------------------------------------------------------

    /**
     * One descriptor for the caller: its own cache (worker, else registered submitter), else its outside stripe's
     * cache, else the freelist; -1 when none is free, and then only after hazard rule 5: the outside caches
     * drained and the freelist tried once more (whoever the caller is: a worker or a submitter that finds nothing
     * must not be refused while the outside stripes hold slots).
     */
    int acquireFast(WorkerThread self, int submitter) {
        int idx;
        if (self != null) {
            DescCache[] wc = workerCaches;
            idx = wc != null ? wc[self.index].pop() : table.acquire();
        } else if (submitter != NO_SUBMITTER) {
            DescCache[] sc = submitterCaches;
            idx = sc != null ? sc[submitter].pop() : table.acquire();
        } else {
            idx = acquireOutside();
        }
        return idx >= 0 || outsideCaches == null ? idx : reclaimAndAcquire();
    }

    /** An unregistered outside thread's descriptor: its stripe's cache, else the freelist; -1: both empty. */
    private int acquireOutside() {
        OutsideDescCaches oc = outsideCaches;
        if (oc == null) {
            return table.acquire();
        }
        int idx = oc.pop(PoolCounters.outsideStripeOfCurrentThread());
        // BUSY: another thread of our stripe holds its cache; never wait for it: the freelist, as before caches
        return idx != OutsideDescCaches.BUSY ? idx : table.acquire();
    }

    /**
     * A space waiter's acquire, and its retry after each wake: the freelist, else (hazard rule 5) the outside
     * caches drained and the freelist once more; -1 when none is free.
     */
    int acquireOrReclaim() {
        int idx = table.acquire();
        return idx >= 0 || outsideCaches == null ? idx : reclaimAndAcquire();
    }

    /** Hazard rule 5: drains every outside cache it can try-lock, then tries the freelist once more. */
    private int reclaimAndAcquire() {
        drainOutsideCaches();
        return table.acquire();
    }

    /**
     * The space waiters' condition (hazard rule 5): true when the freelist looks non-empty, or once the outside
     * caches that look non-empty have been drained into it. Volatile load of the head first, so a waiter with slots
     * on the freelist reads no stripe.
     */
    boolean freeOrReclaimed() {
        return table.hasFree() || (outsideCaches != null && drainOutsideCaches() > 0);
    }

    /**
     * Drains every outside stripe's cache whose lock is free back to the freelist (one CAS each), and signals the
     * space waiters if it moved any; returns how many slots it moved. Any thread may call it.
     */
    int drainOutsideCaches() {
        OutsideDescCaches oc = outsideCaches;
        if (oc == null) {
            return 0;
        }
        int moved = oc.drainAll();
        // volatile load of the waiter mask (as releaseSlot's): slots moved to the freelist for whoever waits
        if (moved > 0 && space.hasWaiters()) {
            space.signalAll();
        }
        return moved;
    }

    /**
     * Up to {@code want} descriptors for a batch, their indices into {@code dst[0..n)}; returns {@code n}, 0 when
     * none is free. A thread with a cache of its own takes them one by one from it; any other thread takes them
     * with one freelist CAS for the whole chunk ({@link DescriptorTable#acquireMany}) instead of one per task.
     */
    int acquireMany(WorkerThread self, int submitter, long[] dst, int want) {
        if (self == null && (submitter == NO_SUBMITTER || submitterCaches == null)) {
            return table.acquireMany(dst, want);
        }
        int got = 0;
        while (got < want) {
            int idx = acquireFast(self, submitter);
            if (idx < 0) {
                break;
            }
            dst[got++] = idx;
        }
        return got;
    }

    /**
     * Writes the references and publishes (gen, QUEUED); returns the queue entry, which is also the task's
     * handle. The last write of the slot by the submitter: once the entry is out, the slot is the worker's
     * (or a canceller's, or an awaiter's).
     */
    long publish(int idx, Runnable task, WaitGroup group, int flags, boolean waitable) {
        tasks[idx] = task; // plain: published by the release store in table.publish
        groups[idx] = group;
        table.prepare(idx, flags, Timestamps.COMPILED && timestamps ? System.nanoTime() : 0L);
        long gen = table.publish(idx, waitable);
        return table.handle(idx, gen);
    }

    /**
     * {@link #publish} of a task in argument form: {@code fn} and {@code ctx} into {@code argRefs}, {@code arg} into
     * the descriptor, {@code flags} with {@link DescriptorTable#FLAG_ARGUMENT} added ("Tasks in argument form").
     */
    long publishArg(int idx, Object fn, Object ctx, long arg, WaitGroup group, int flags, boolean waitable) {
        argRefs[2 * idx] = fn; // plain, all four: published by the release store in table.publish
        argRefs[2 * idx + 1] = ctx;
        groups[idx] = group;
        table.setArg(idx, arg);
        table.prepare(idx, flags | DescriptorTable.FLAG_ARGUMENT,
                Timestamps.COMPILED && timestamps ? System.nanoTime() : 0L);
        long gen = table.publish(idx, waitable);
        return table.handle(idx, gen);
    }

    /** The task of a slot the caller owns or has observed (gen, QUEUED) of (plain: published with the entry). */
    Runnable task(int idx) {
        return (Runnable) tasks[idx];
    }

    /** The group of a slot, under the same rule as {@link #task}. */
    WaitGroup group(int idx) {
        return groups[idx];
    }

    /** The function of a slot in argument form, under the rule of {@link #task}. */
    Object fn(int idx) {
        return argRefs[2 * idx];
    }

    /** The context of a slot in argument form, under the rule of {@link #task}. */
    Object ctx(int idx) {
        return argRefs[2 * idx + 1];
    }

    /** Drops both references of a slot the caller owns, before it gives the slot up. */
    void clearRefs(int idx) {
        tasks[idx] = null;
        groups[idx] = null;
    }

    /**
     * Drops the function and context of a slot in argument form that the caller owns, before it gives the slot up
     * (with {@link #clearRefs}); only for such a slot, so a {@code Runnable} task's path never writes the array.
     */
    void clearArgRefs(int idx) {
        argRefs[2 * idx] = null;
        argRefs[2 * idx + 1] = null;
    }

    /**
     * Drops the task reference of a cancelled waitable slot its releasing awaiter now owns: the {@code Runnable}, or
     * the function and context of a task in argument form (both are cleared: a cold path, no flag read needed).
     */
    void clearTask(int idx) {
        tasks[idx] = null;
        argRefs[2 * idx] = null;
        argRefs[2 * idx + 1] = null;
    }

    // ---- release --------------------------------------------------------------------------------------

    /**
     * Gives back a FREE slot the caller owns off the freelist ({@code freed} true: already FREE, e.g. a won
     * waitable release; false: still RUNNING, a detached task that just ran). To {@code self}'s cache unless
     * somebody waits for space, else to the freelist with a signal.
     */
    void releaseSlot(WorkerThread self, int idx, boolean freed, boolean failed) {
        DescCache[] wc = workerCaches;
        // volatile load of the waiter mask: pairs with SpaceWaiters.register's getAndOr (hazard rule 1).
        if (self != null && wc != null && !space.hasWaiters()) {
            if (!freed) {
                table.finishDetachedHeld(idx, failed);
            }
            wc[self.index].push(idx); // plain: our own cache; a full one spills its oldest three quarters with one CAS
            return;
        }
        if (freed) {
            table.pushReleased(idx);
        } else {
            table.finish(idx, failed); // detached: back on the freelist now
        }
        space.signal();
    }

    /** A worker that ran out of work gives its cached slots back, so no waiter waits for them (hazard rule 2). */
    void flushWorkerCache(WorkerThread self) {
        DescCache[] wc = workerCaches;
        if (wc != null) {
            DescCache c = wc[self.index];
            if (c.count() != 0) {
                c.drainAll(); // one CAS
                if (space.hasWaiters()) {
                    space.signalAll(); // up to a cache's worth of slots at once
                }
            }
        }
    }

    /** Submitter {@code slot} is closing: its cached slots go to the freelist (hazard rule 3). */
    void flushSubmitterCache(int slot) {
        DescCache[] sc = submitterCaches;
        if (sc != null && sc[slot].count() != 0) {
            sc[slot].drainAll(); // one CAS
            space.signalAll();
        }
    }

    /**
     * purgeWorkerCaches, descriptor part (hazard rule 4): waits until every worker has flushed its cache;
     * {@link dev.threadpool.PoolBusyException} after {@link #PURGE_WAIT_NANOS}.
     */
    void awaitWorkerCachesFlushed() {
        // Each worker flushes its own cache when it runs out of work (Idle); only its thread may touch it, so
        // wait for that instead of draining from here. A quiescent pool's workers get there at once.
        DescCache[] wc = workerCaches;
        if (wc == null) {
            return;
        }
        long deadline = System.nanoTime() + PURGE_WAIT_NANOS;
        for (int w = 0; w < wc.length; w++) {
            while (wc[w].countAcquire() != 0) { // acquire: pairs with drainAll's release store of the count
                if (System.nanoTime() - deadline > 0) {
                    throw new dev.threadpool.PoolBusyException("purgeWorkerCaches(): worker " + w + " still holds "
                            + wc[w].countAcquire() + " cached descriptors after " + PURGE_WAIT_NANOS / 1_000_000
                            + " ms; is work still being submitted?");
                }
                LockSupport.parkNanos(this, PURGE_POLL_NANOS);
            }
        }
    }

    /**
     * purgeWorkerCaches, outside part (hazard rule 4): drains every outside stripe's cache, waiting for a stripe
     * whose lock an outside thread holds right now; {@link dev.threadpool.PoolBusyException} after
     * {@link #PURGE_WAIT_NANOS} (a stripe still busy: somebody keeps submitting).
     */
    void awaitOutsideCachesDrained() {
        OutsideDescCaches oc = outsideCaches;
        if (oc == null) {
            return;
        }
        long deadline = System.nanoTime() + PURGE_WAIT_NANOS;
        for (int i = 0; i < oc.stripes(); i++) {
            while (oc.drain(i) == OutsideDescCaches.BUSY) {
                if (System.nanoTime() - deadline > 0) {
                    throw new dev.threadpool.PoolBusyException("purgeWorkerCaches(): outside stripe " + i
                            + "'s descriptor cache is still in use after " + PURGE_WAIT_NANOS / 1_000_000
                            + " ms; is work still being submitted?");
                }
                LockSupport.parkNanos(this, PURGE_POLL_NANOS);
            }
        }
        if (space.hasWaiters()) {
            space.signalAll(); // volatile load of the waiter mask, as in drainOutsideCaches
        }
    }

    /** The outside caches (tests in this package), or null when the pool has none. */
    OutsideDescCaches outsideCachesForTest() {
        return outsideCaches;
    }

    // ---- per-slot signals (awaiters) -------------------------------------------------------------------

    /** Wakes the awaiters of slot {@code idx}, if any ever waited on it. */
    void wakeSlot(int idx) {
        // volatile load: the second half of the finish/await Dekker pair (see SlotSignal)
        SlotSignal s = (SlotSignal) SIGNALS.getVolatile(signals, idx);
        if (s != null) {
            s.wake();
        }
    }

    /** The signal of slot {@code idx}, created on first use. */
    SlotSignal signalFor(int idx) {
        SlotSignal s = (SlotSignal) SIGNALS.getVolatile(signals, idx);
        if (s == null) {
            SlotSignal fresh = new SlotSignal(table, idx);
            // CAS (volatile): publishes the signal before the awaiter's re-check of the control word
            s = (SlotSignal) SIGNALS.compareAndExchange(signals, idx, (SlotSignal) null, fresh);
            if (s == null) {
                s = fresh;
            }
        }
        return s;
    }

    /** Close: wakes every awaiter still parked on a slot, so it re-checks and sees the pool closed. */
    void wakeAllSignals() {
        for (int i = 0; i < signals.length; i++) {
            SlotSignal s = (SlotSignal) SIGNALS.getVolatile(signals, i);
            if (s != null) {
                s.wake();
            }
        }
    }

    /** Runs the tests' cancel hook, if one is installed (see {@link #cancelledHookForTest}). */
    void cancelled(int idx) {
        IntConsumer hook = cancelledHookForTest;
        if (hook != null) {
            hook.accept(idx);
        }
    }
}
