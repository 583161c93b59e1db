package dev.threadpool.internal.scheduler;

import dev.threadpool.Lane;
import dev.threadpool.PoolBusyException;
import dev.threadpool.PoolShutdownException;
import dev.threadpool.WaitGroup;
import dev.threadpool.internal.stats.PoolCounters;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * Submission: every way a task enters the pool, from acquiring its descriptor to the wake.
 *
 * <pre>
 *   0. carried (a detached default-lane submit from outside the pool, not from a Submitter with a queue of its
 *      own, not under TimestampMode.FULL: see {@link #carried}): no descriptor at all
 *        admission check, the task and group into a cell of the carried ring (scheduler.tryEnqueueCarried:
 *        BoundedRing, "Carried tasks"), whose claim is also the acceptance ("Closing to pushes": no accept CAS);
 *        closed: refused; full: per WaitMode wait, parked, until the ring has drained to half
 *        ({@link #awaitCarriedRoom}) and try again, or refuse; signal
 *   1. admission check        Lifecycle.checkAccepting (a volatile load; refused once shutdown began)
 *   2. descriptor             Slots.acquireFast: worker cache | submitter cache | outside stripe's cache
 *                             (try-locked; held: freelist) | freelist; none: drain the outside caches, retry
 *        none free:           per WaitMode: NO_WAIT false | UNTIL_DEADLINE wait (SpaceWaiters)
 *                             | UNBOUNDED wait, or on a worker run it inline (caller-runs, bounded nesting)
 *   3. accept                 accept: a worker's CAS on its own ADMITTED word, a registered submitter's on
 *                             its slot's, anyone else's on its thread's outside stripe (PoolCounters; fails
 *                             once admission closed)
 *   4. publish                Slots.publish: refs, prepare, (gen, QUEUED) release store -> the entry
 *   5. push                   scheduler.tryEnqueue(self, entry, lane): a Submitter's own queue first
 *        no room:             waitForRingRoom (a worker helps or runs its own entry; others spin, park)
 *   6. signal                 scheduler.signalWork(n, lane): depth sample, then the topology's wake rule
 * </pre>
 * A task in argument form ({@code submit(fn, ctx, arg)}: {@link DescriptorTable#FLAG_ARGUMENT} in the flags) takes
 * exactly these steps; only what step 0 writes into the cell (BoundedRing, "Argument cells") and step 4 into the
 * slot (Slots, "Tasks in argument form") differ, and caller-runs calls {@code fn.accept(ctx, arg)}. So no step
 * makes an object for it.
 * The lane is derived from the flags once, in step 1's caller, and passed with the entry from then on
 * (Scheduler, "The lane"). A batch repeats 2 to 6 per chunk of {@link #BATCH_CHUNK}: one freelist CAS (a thread
 * without a descriptor cache), one accept CAS and one ring claim per chunk; a carried batch one group add per
 * chunk and one claim per task. A batch in argument form ({@code submitBatch(fn, ctx, args, from, to)}) is the same
 * batch, element {@code i} the task {@code (fn, ctx, args[i])}, written into its cell or slot as a single one is.
 *
 * <h2>Waiting for a descriptor on a worker</h2>
 * A worker never blocks for a descriptor while it could help: a detached UNBOUNDED submit runs the task
 * inline, a waitable one helps run queued work until a descriptor is free ({@link #acquireByHelping}). Past
 * {@code MAX_INLINE_DEPTH} both refuse with {@link PoolBusyException}. (A join half that finds no descriptor
 * runs inline after its left half: Joining.)
 */
final class Submission {
    /** Tasks accepted with one CAS and pushed with one ring claim by {@link #submitBatch}. */
    private static final int BATCH_CHUNK = 64;
    /** Each thread's chunk buffer for {@link #submitBatch}; null while that thread's outermost call uses it. */
    private static final ThreadLocal<long[]> BATCH_BUFFER = new ThreadLocal<>();
    /** How long a worker needing a descriptor finds nothing queued before submitWaitable gives up. */
    private static final long HELP_GIVE_UP_NANOS = 10_000_000L;
    /** waitForRingRoom: spin-wait hints before an outside thread starts to park between attempts. */
    private static final int RING_ROOM_SPINS = 100;
    /** waitForRingRoom: one park of an outside thread between two attempts, once the spins are spent. */
    private static final long RING_ROOM_PARK_NANOS = 50_000L;

    private final Lifecycle lifecycle;
    private final PoolCounters counters;
    private final DescriptorTable table;
    private final Slots slots;
    private final Scheduler scheduler;
    private final SpaceWaiters space;
    /** Submitters waiting for a carried-ring cell (apart from {@link #space}: see {@link #awaitCarriedRoom}). */
    private final SpaceWaiters ringSpace;
    private final WorkerLoop loop;
    private final int capacity;
    /** {@link Scheduler#carriesTasks()}, fixed at construction: read once here, not twice per submit. */
    private final boolean carries;
    /** {@link Scheduler#hasSubmitterQueues()}, fixed at construction, as {@link #carries}. */
    private final boolean submitterQueues;
    // Conditions for SpaceWaiters, made once so waiting allocates nothing.
    private final BooleanSupplier descriptorFree;
    private final BooleanSupplier carriedLowWater;
    private final BooleanSupplier admissionClosed;

    Submission(Lifecycle lifecycle, PoolCounters counters, DescriptorTable table, Slots slots, Scheduler scheduler,
            SpaceWaiters space, SpaceWaiters ringSpace, WorkerLoop loop, int capacity) {
        this.lifecycle = lifecycle;
        this.counters = counters;
        this.table = table;
        this.slots = slots;
        this.scheduler = scheduler;
        this.space = space;
        this.ringSpace = ringSpace;
        this.loop = loop;
        this.capacity = capacity;
        this.carries = scheduler.carriesTasks();
        this.submitterQueues = scheduler.hasSubmitterQueues();
        this.descriptorFree = slots::freeOrReclaimed; // the freelist, or the outside caches drained into it
        this.carriedLowWater = scheduler::carriedLowWater;
        this.admissionClosed = counters::admissionClosed;
    }

    /** The lane of descriptor {@code flags}: derived here, once per submit, and passed on with the entry. */
    private static Lane laneOf(int flags) {
        return (flags & DescriptorTable.FLAG_LANE_BLOCKING) != 0 ? Lane.BLOCKING : Lane.DEFAULT;
    }

    /**
     * Whether a detached submit from {@code self} as {@code submitter} with {@code flags} is carried (step 0):
     * from outside the pool ({@code self} null: a worker's own submits go to its LIFO slot and local queue,
     * which carried references cannot follow), of the default lane (the blocking lane has a ring of its own),
     * and not from a registered Submitter whose topology gives it a queue of its own (WORK_STEALING).
     */
    private boolean carried(WorkerThread self, int submitter, int flags) {
        return self == null && carries && (flags & DescriptorTable.FLAG_LANE_BLOCKING) == 0
                && (submitter == Slots.NO_SUBMITTER || !submitterQueues);
    }

    /**
     * Accepts {@code n} tasks unless admission closed: on the worker's own ADMITTED word when the caller is one of
     * this pool's workers, on its slot's word for a registered submitter, else on the outside stripe the calling
     * thread's id hashes to: no line every submitting thread writes (PoolCounters, "Who writes what").
     */
    private boolean accept(WorkerThread self, int submitter, long n) {
        if (self != null) {
            return counters.tryAcceptOnWorker(self.index, n);
        }
        return submitter != Slots.NO_SUBMITTER ? counters.tryAcceptOnSubmitter(submitter, n)
                : counters.tryAcceptOutside(n);
    }

    /** Counts one refused submission and returns the exception that reports it. */
    private PoolShutdownException rejectedByShutdown() {
        counters.addRejected(1);
        return lifecycle.shutdownRejection();
    }

    // ---- detached -----------------------------------------------------------------------------------------

    /**
     * Detached submit from {@code self} (the calling worker of this pool, or null) as registered submitter
     * {@code submitter} ({@link Slots#NO_SUBMITTER} for none). Returns false when the pool stayed full under
     * {@code mode}; throws {@link PoolShutdownException} once shutdown has begun.
     */
    boolean submit(WorkerThread self, int submitter, Runnable task, int flags, WaitGroup group, WaitMode mode,
            long deadline) {
        return submit(self, submitter, task, null, 0L, flags, group, mode, deadline);
    }

    /**
     * The detached submit of either form: {@code task} is a {@code Runnable}, or, where {@code flags} has
     * {@link DescriptorTable#FLAG_ARGUMENT}, the function of a task in argument form, run as
     * {@code fn.accept(ctx, arg)} ({@code ctx} and {@code arg} are ignored otherwise). The form changes only what
     * is written where (the carried cell or the slot's references, {@link #pushCarried}, {@link #publish}) and how
     * caller-runs calls it; every step of the pipeline is the same.
     */
    boolean submit(WorkerThread self, int submitter, Object task, Object ctx, long arg, int flags, WaitGroup group,
            WaitMode mode, long deadline) {
        lifecycle.checkAccepting();
        if (carried(self, submitter, flags)) {
            return submitCarried(task, ctx, arg, group, flags, mode, deadline);
        }
        if (group != null) {
            group.add(1);
        }
        boolean handedOver = false;
        try {
            int idx = slots.acquireFast(self, submitter);
            if (idx < 0) {
                if (self != null && mode == WaitMode.UNBOUNDED) {
                    if (self.inlineDepth >= WorkerLoop.MAX_INLINE_DEPTH) {
                        counters.addRejected(1);
                        throw new PoolBusyException("pool full and " + WorkerLoop.MAX_INLINE_DEPTH + " tasks already"
                                + " run inline on this worker, nested: refusing to recurse deeper (queueCapacity="
                                + capacity + ")");
                    }
                    if (!accept(self, submitter, 1)) {
                        throw rejectedByShutdown();
                    }
                    handedOver = true;
                    if ((flags & DescriptorTable.FLAG_ARGUMENT) != 0) { // caller-runs: accepted, run here, inline
                        loop.runInlineArg(self, task, ctx, arg, group);
                    } else {
                        loop.runInline(self, (Runnable) task, group);
                    }
                    return true;
                }
                idx = mode == WaitMode.NO_WAIT ? -1
                        : acquireWaiting(mode == WaitMode.UNBOUNDED ? Long.MAX_VALUE : deadline);
                if (idx < 0) {
                    counters.addRejected(1);
                    return false;
                }
            }
            if (!accept(self, submitter, 1)) {
                table.unreserve(idx);
                throw rejectedByShutdown();
            }
            handedOver = true;
            Lane lane = laneOf(flags);
            enqueue(self, submitter, publish(idx, task, ctx, arg, group, flags, false), lane);
            scheduler.signalWorkFrom(self, 1, lane); // a LIFO put that displaced nothing needs no fence
            return true;
        } finally {
            if (group != null && !handedOver) {
                group.done();
            }
        }
    }

    /**
     * Step 0 (class comment): a detached task from outside the pool, carried by its ring cell with no
     * descriptor (so taskDescLive does not count it). The push is the acceptance: the carried ring's tail CAS,
     * which shutdown's close of the ring orders against (BoundedRing, "Closing to pushes"), so there is no accept
     * to take back. A ring that is full leaves the task unaccepted while the caller waits for room (a shutdown
     * that begins meanwhile refuses it, as it refuses a submitter waiting for a descriptor), per {@code mode};
     * then it tries again. A closed ring refuses it.
     */
    private boolean submitCarried(Object task, Object ctx, long arg, WaitGroup group, int flags, WaitMode mode,
            long deadline) {
        if (group != null) {
            group.add(1); // before the push: the task may run (and call done) as soon as it is pushed
        }
        boolean handedOver = false;
        // The deadline passed while waiting for the low-water mark: one more attempt, since the mark is when a
        // waiter is woken, not a bound on the queue (a cell freed meanwhile is taken).
        boolean lastTry = mode == WaitMode.NO_WAIT;
        try {
            while (!pushCarried(task, ctx, arg, group, flags)) { // the claim accepts; checked accesses before it
                if (scheduler.carriedClosed()) {
                    throw rejectedByShutdown(); // closed to pushes: shutdown's count does not hold this task
                }
                if (lastTry) {
                    counters.addRejected(1);
                    return false;
                }
                if (!awaitCarriedRoom(mode == WaitMode.UNBOUNDED ? Long.MAX_VALUE : deadline)) {
                    if (counters.admissionClosed()) {
                        throw rejectedByShutdown();
                    }
                    lastTry = true;
                }
            }
            handedOver = true;
        } finally {
            if (group != null && !handedOver) {
                group.done();
            }
        }
        scheduler.signalCarried(1);
        return true;
    }

    /**
     * One carried push of either form: a {@code Runnable}'s references, or a task in argument form's function,
     * context and argument ({@link DescriptorTable#FLAG_ARGUMENT}; BoundedRing, "Argument cells").
     */
    private boolean pushCarried(Object task, Object ctx, long arg, WaitGroup group, int flags) {
        return (flags & DescriptorTable.FLAG_ARGUMENT) != 0 ? scheduler.tryEnqueueCarriedArg(task, ctx, arg, group)
                : scheduler.tryEnqueueCarried((Runnable) task, group);
    }

    /**
     * Publishes a reserved slot's task of either form (Slots.publish, or Slots.publishArg for a task in argument
     * form) and returns its entry.
     */
    private long publish(int idx, Object task, Object ctx, long arg, WaitGroup group, int flags, boolean waitable) {
        return (flags & DescriptorTable.FLAG_ARGUMENT) != 0 ? slots.publishArg(idx, task, ctx, arg, group, flags,
                waitable) : slots.publish(idx, (Runnable) task, group, flags, waitable);
    }

    /**
     * Waits, not accepted, until the carried ring has drained to half (true), or admission closed or the
     * deadline ({@code System.nanoTime()} based, {@link Long#MAX_VALUE}: none) passed (false; the caller then
     * tries once more, so a timed submit still takes a cell that is free at its deadline).
     *
     * <h3>Waiting for a carried cell</h3>
     * Parked in {@link SpaceWaiters} ({@code ringSpace}), as a submitter waiting for a descriptor is in
     * {@code space}: a worker that pops a carried task looks for waiters after its head CAS and, if the ring
     * is then at most half full, signals one ({@code WorkerLoop.runCarried}); the waiter re-checks the same
     * low-water mark after it registered. Hysteresis: one park and one unpark buy the submitter half a ring
     * of pushes. Resuming at the first free cell cost a futex wake per task on the worker's side and a park per
     * task on the submitter's, with the ring full throughout (PERFORMANCE_TRACKING 38). Why no wake is lost:
     * the waiter saw more than half the ring queued after registering, so the pop of the last of those entries
     * comes after its registration in the total order (each pop's head CAS does), and that pop reads the
     * waiter's bit; the pop that finds the ring at most half full signals. While other submitters keep the
     * ring above half, the waiter polls ({@code PARK_CAP_NANOS}): they are the ones making progress. Before it
     * registers, the waiter yields its CPU a bounded number of times, looking at the low-water mark after each
     * yield ({@code SpaceWaiters}, "Yield before park"): the yield gives the CPU to the workers that make the
     * room, where spinning took it from them (three threads on two CPUs). The waiters
     * have their own {@link SpaceWaiters}: in the shared one, a carried waiter sent every worker's descriptor
     * release to the freelist (Slots, hazard rule 1), and one signal could reach the wrong kind of waiter.
     */
    private boolean awaitCarriedRoom(long deadline) {
        return ringSpace.await(carriedLowWater, admissionClosed, deadline) && !counters.admissionClosed();
    }

    /**
     * Batched detached submit: up to {@link #BATCH_CHUNK} descriptors are accepted with one CAS and pushed with
     * one ring claim. Waits while full (UNBOUNDED, one task at a time). Returns how many of
     * {@code batch[from..to)} were accepted; stops early (returning the count so far) if shutdown begins after
     * at least one was accepted. With a {@code group}, each chunk is added to it (one add) before its accept,
     * and what a chunk could not hand over is taken back ({@link #undo}), so the group counts exactly the tasks
     * accepted and the pool calls {@code done()} once for each.
     */
    int submitBatch(WorkerThread self, int submitter, Runnable[] batch, int from, int to, int flags,
            WaitGroup group) {
        return submitBatch(self, submitter, batch, null, null, null, from, to, flags, group);
    }

    /**
     * {@link #submitBatch(WorkerThread, int, Runnable[], int, int, int, WaitGroup)} in argument form: one task per
     * element of {@code args[from..to)}, each run as {@code fn.accept(ctx, args[i])}; {@code flags} carry
     * {@link DescriptorTable#FLAG_ARGUMENT}. The same chunks, waits, return value and group counting: only what is
     * written into each cell or slot differs ({@link #pushCarried}, {@link #publish}), as for a single submit.
     */
    int submitBatchArg(WorkerThread self, int submitter, Object fn, Object ctx, long[] args, int from, int to,
            int flags, WaitGroup group) {
        return submitBatch(self, submitter, null, fn, ctx, args, from, to, flags, group);
    }

    /**
     * The batch of either form: {@code batch} of {@code Runnable}s (then {@code fn}, {@code ctx} and {@code args}
     * are null), or, where {@code flags} has {@link DescriptorTable#FLAG_ARGUMENT}, {@code fn} and {@code ctx} with
     * an argument per element of {@code args} (then {@code batch} is null).
     */
    private int submitBatch(WorkerThread self, int submitter, Runnable[] batch, Object fn, Object ctx, long[] args,
            int from, int to, int flags, WaitGroup group) {
        lifecycle.checkAccepting();
        // The chunk buffer is borrowed from the thread (allocated once per thread), so a batch submit allocates
        // nothing in steady state. Taken out while in use: a task run inline or while helping may call
        // submitBatch on this thread again, and must get a buffer of its own rather than overwrite our pending
        // entries.
        long[] borrowed = BATCH_BUFFER.get();
        if (borrowed != null) {
            BATCH_BUFFER.set(null);
        } else {
            borrowed = new long[BATCH_CHUNK];
        }
        try {
            return submitBatchChunks(self, submitter, batch, fn, ctx, args, from, to, flags, group, borrowed);
        } finally {
            BATCH_BUFFER.set(borrowed);
        }
    }

    /**
     * The chunks of a batch of either form ({@link #submitBatch(WorkerThread, int, Runnable[], Object, Object,
     * long[], int, int, int, WaitGroup)}). Element {@code i} is {@code batch[i]}, or in argument form the task
     * {@code (fn, ctx, args[i])}: {@link #taskAt} and {@link #argAt} pick the parts, and the carried push, the
     * publish and the single path take the parts of either form as a single submit does.
     */
    private int submitBatchChunks(WorkerThread self, int submitter, Runnable[] batch, Object fn, Object ctx,
            long[] args, int from, int to, int flags, WaitGroup group, long[] entries) {
        final Lane lane = laneOf(flags);
        final boolean carried = carried(self, submitter, flags);
        int done = 0;
        int i = from;
        while (i < to) {
            if (carried) { // step 0 per chunk: one group add, then one carried push (its acceptance) per task
                int n = Math.min(entries.length, to - i);
                if (group != null) {
                    group.add(n); // before the pushes: a task may run (and call done) as soon as it is pushed
                }
                int k = 0;
                while (k < n && pushCarried(taskAt(batch, fn, i + k), ctx, argAt(args, i + k), group, flags)) {
                    k++;
                }
                if (k < n) {
                    undo(group, n - k); // not pushed, so not accepted (yet): not counted
                }
                if (k > 0) {
                    scheduler.signalCarried(k);
                }
                i += k;
                done += k;
                if (k < n && scheduler.carriedClosed()) { // refused from here on: shutdown has begun
                    counters.addRejected(to - i);
                    if (done > 0) {
                        return done;
                    }
                    throw lifecycle.shutdownRejection();
                }
                if (k < n) { // full: one task through the single path, which waits for room unaccepted
                    if (!submitOneWaiting(self, submitter, taskAt(batch, fn, i), ctx, argAt(args, i), flags,
                            group)) {
                        if (done > 0) {
                            return done;
                        }
                        throw lifecycle.shutdownRejection();
                    }
                    i++;
                    done++;
                }
                continue;
            }
            int want = Math.min(entries.length, to - i);
            // the slot indices for now (one freelist CAS for the chunk unless the caller has a cache); each is
            // replaced by its queue entry once published
            int got = slots.acquireMany(self, submitter, entries, want);
            if (got == 0) {
                // Full: hand one task to the single path, which waits (or runs inline on a worker).
                if (!submitOneWaiting(self, submitter, taskAt(batch, fn, i), ctx, argAt(args, i), flags, group)) {
                    if (done > 0) {
                        return done;
                    }
                    throw lifecycle.shutdownRejection();
                }
                i++;
                done++;
                continue;
            }
            if (group != null) {
                group.add(got); // before the accept and the pushes, as above
            }
            if (!accept(self, submitter, got)) { // one CAS accepts the whole chunk
                undo(group, got);
                for (int k = 0; k < got; k++) {
                    table.unreserve((int) entries[k]);
                }
                counters.addRejected(to - i);
                if (done > 0) {
                    return done;
                }
                throw lifecycle.shutdownRejection();
            }
            for (int k = 0; k < got; k++) {
                entries[k] = publish((int) entries[k], taskAt(batch, fn, i + k), ctx, argAt(args, i + k), group,
                        flags, false);
            }
            int pushed = 0;
            if (self == null && submitter != Slots.NO_SUBMITTER) {
                pushed = scheduler.tryEnqueueManyFromSubmitter(submitter, entries, 0, got); // its own queue
            }
            while (pushed < got) {
                int n = scheduler.tryEnqueueMany(self, entries, pushed, got - pushed, lane); // GQ: one tail CAS
                if (n == 0) {
                    waitForRingRoom(self, entries[pushed], lane); // pushes that one entry
                    n = 1;
                }
                pushed += n;
            }
            scheduler.signalWork(got, lane); // GQ: at most one wake per accepted task, stopping when nobody is idle
            i += got;
            done += got;
        }
        return done;
    }

    /** Element {@code i}'s task of a batch: {@code batch[i]}, or in argument form ({@code batch} null) {@code fn}. */
    private static Object taskAt(Runnable[] batch, Object fn, int i) {
        return batch != null ? batch[i] : fn;
    }

    /** Element {@code i}'s argument of a batch: {@code args[i]} in argument form, else 0 (ignored). */
    private static long argAt(long[] args, int i) {
        return args != null ? args[i] : 0L;
    }

    /**
     * One task of a batch, of either form, through the single path, waiting while full; false if shutdown refused
     * it (counted as rejected there; the batch then stops, returning what it had, or throws if that was nothing).
     */
    private boolean submitOneWaiting(WorkerThread self, int submitter, Object task, Object ctx, long arg, int flags,
            WaitGroup group) {
        try {
            // never false: waits
            submit(self, submitter, task, ctx, arg, flags, group, WaitMode.UNBOUNDED, Long.MAX_VALUE);
            return true;
        } catch (PoolShutdownException e) {
            return false;
        }
    }

    /**
     * Takes back {@code n} of a batch's adds to {@code group} (null: none) for tasks that were not handed over: a
     * negative add lands on the caller's done stripe, so the group's count is as if they had never been added.
     */
    private static void undo(WaitGroup group, int n) {
        if (group != null) {
            group.add(-n);
        }
    }

    // ---- waitable -----------------------------------------------------------------------------------------

    /** Waitable submit; returns the handle ({@code gen << log2(queueCapacity) | idx}). Waits while full. */
    long submitWaitable(WorkerThread self, int submitter, Runnable task, int flags) {
        return submitWaitable(self, submitter, task, null, 0L, flags);
    }

    /**
     * The waitable submit of either form ({@code task} as in {@link #submit(WorkerThread, int, Object, Object, long,
     * int, WaitGroup, WaitMode, long)}).
     */
    long submitWaitable(WorkerThread self, int submitter, Object task, Object ctx, long arg, int flags) {
        lifecycle.checkAccepting();
        int idx = slots.acquireFast(self, submitter);
        if (idx < 0) {
            idx = self != null ? acquireByHelping(self) : acquireWaiting(Long.MAX_VALUE);
        }
        if (!accept(self, submitter, 1)) {
            table.unreserve(idx);
            throw rejectedByShutdown();
        }
        long entry = publish(idx, task, ctx, arg, null, flags, true);
        Lane lane = laneOf(flags);
        enqueue(self, submitter, entry, lane);
        scheduler.signalWorkFrom(self, 1, lane);
        return entry; // the queue entry is the handle (DescriptorTable, "Handles and queue entries")
    }

    // ---- descriptors when none is free --------------------------------------------------------------------

    /**
     * Waits for a free descriptor; -1 on deadline; throws once shutdown closes admission. Each try drains the
     * outside stripes' caches when the freelist is empty (Slots, hazard rule 5), and so does the wait's condition.
     */
    private int acquireWaiting(long deadline) {
        for (;;) {
            int idx = slots.acquireOrReclaim();
            if (idx >= 0) {
                return idx;
            }
            if (counters.admissionClosed()) {
                throw rejectedByShutdown();
            }
            if (!space.await(descriptorFree, admissionClosed, deadline) && !counters.admissionClosed()) {
                return -1; // deadline passed
            }
        }
    }

    /**
     * A worker that needs a descriptor for a waitable task helps run queued tasks until one is free. If
     * nothing is queued and nothing frees up, every descriptor is held by running tasks or by finished
     * waitable tasks nobody has awaited yet, and waiting could deadlock the pool: refuse.
     *
     * <p>At the nesting bound it does not help: it waits for a descriptor as an outside submitter does
     * (registered with SpaceWaiters, so releases go to the freelist) for at most the give-up time, then
     * refuses with {@link PoolBusyException}. On a one-worker pool nobody else frees one, so that refusal is
     * certain once the bound is reached with every descriptor taken.
     */
    private int acquireByHelping(WorkerThread self) {
        if (!WorkerLoop.mayHelp(self)) { // the depth cannot change inside this call: decide once
            int idx = acquireWaiting(System.nanoTime() + HELP_GIVE_UP_NANOS);
            if (idx >= 0) {
                return idx;
            }
            counters.addRejected(1);
            throw new PoolBusyException("queueCapacity=" + capacity + " descriptors are all taken and this worker"
                    + " already runs " + self.inlineDepth + " tasks nested (MAX_INLINE_DEPTH="
                    + WorkerLoop.MAX_INLINE_DEPTH + "), so it cannot help: submitWaitable gave up after waiting "
                    + HELP_GIVE_UP_NANOS / 1_000_000 + " ms");
        }
        long giveUp = System.nanoTime() + HELP_GIVE_UP_NANOS;
        for (;;) {
            int idx = slots.acquireFast(self, Slots.NO_SUBMITTER);
            if (idx >= 0) {
                return idx;
            }
            if (counters.admissionClosed()) {
                throw rejectedByShutdown();
            }
            if (loop.helpNext(self)) {
                giveUp = System.nanoTime() + HELP_GIVE_UP_NANOS;
            } else if (System.nanoTime() - giveUp > 0) {
                counters.addRejected(1);
                throw new PoolBusyException("queueCapacity=" + capacity + " descriptors are all running or"
                        + " finished-but-not-awaited; submitWaitable from a pool worker cannot wait for one");
            } else {
                Thread.onSpinWait();
            }
        }
    }

    // ---- push ---------------------------------------------------------------------------------------------

    /**
     * Pushes an accepted entry: a registered submitter's own queue first (outside a worker), then the
     * topology's usual place; the ring only fills up when cancelled entries linger in it.
     */
    private void enqueue(WorkerThread self, int submitter, long entry, Lane lane) {
        if (self == null && submitter != Slots.NO_SUBMITTER && scheduler.tryEnqueueFromSubmitter(submitter, entry)) {
            return;
        }
        if (!scheduler.tryEnqueue(self, entry, lane)) {
            waitForRingRoom(self, entry, lane);
        }
    }

    /**
     * Pushes accepted, published {@code entry}, which found no room. A worker below the nesting bound makes
     * room by running (or dropping, when stale) the next entry it would take, nested. At the bound it runs
     * {@code entry} itself instead (caller-runs: one level per level of the user's recursion) rather than
     * wait: on a one-worker pool nobody else would make room, and the queues can be full of stale entries
     * left by awaiters past the bound that ran their own task (see Awaiting). An outside thread waits.
     */
    private void waitForRingRoom(WorkerThread self, long entry, Lane lane) {
        for (int spins = 0; !scheduler.tryEnqueue(self, entry, lane); spins++) {
            // Help only within the nesting bound: the helped task may submit into the same full ring and help
            // again, and without the bound a fine-grained recursive workload nested thousands deep and
            // overflowed the stack inside the pool's bookkeeping (a push fails transiently while a consumer
            // holds a claimed cell).
            if (self != null) {
                if (WorkerLoop.mayHelp(self)) {
                    if (loop.helpNext(self)) {
                        continue;
                    }
                } else {
                    loop.runNested(self, entry); // our own task, never pushed: we hold it as a pop would
                    return;
                }
            }
            if (spins < RING_ROOM_SPINS) {
                Thread.onSpinWait();
            } else {
                LockSupport.parkNanos(this, RING_ROOM_PARK_NANOS);
            }
        }
    }
}
