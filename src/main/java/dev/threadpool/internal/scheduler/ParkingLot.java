package dev.threadpool.internal.scheduler;

import dev.threadpool.internal.memory.CacheLine;
import dev.threadpool.internal.memory.Mem;
import dev.threadpool.internal.memory.PoolMemory;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;

/**
 * Who is asleep, and the handshake that keeps a submit from being lost by a worker that is about to park.
 *
 * <h2>The handshake (a Dekker pair)</h2>
 * <pre>
 *   worker i                                   submitter
 *   1. IDLE_MASK |= bit(i)     (seq_cst RMW)   a. publish the entry in the queue (seq_cst CAS on tail)
 *   2. queue empty? stopping?  (seq_cst loads) b. m = IDLE_MASK               (seq_cst load)
 *   3. if nothing: park                        c. if m != 0: clear one bit, unpark that worker
 * </pre>
 * All four accesses are sequentially consistent, so in their single total order either 1 precedes b (the
 * submitter sees the bit and wakes the worker) or a precedes 2 (the worker sees the entry and does not park).
 * "Neither" is impossible: no submit is left with every worker asleep. A wake that arrives before the worker
 * has actually parked is not lost either: {@link LockSupport#unpark} leaves a permit that makes the next
 * {@code park} return at once. The jcstress test {@code ParkHandshakeTest} checks exactly this outcome.
 *
 * <p>Step 2 looks for <em>published</em> entries (a ring cell's sequence, not just its tail), so that a worker
 * does not spin on a cell whose producer has claimed it and not yet published it. For a ring that pairs step a'
 * (the release store publishing the cell) with step b, which needs a StoreLoad barrier in between; where the
 * submitter has none, a worker that sees only claimed cells parks for a bounded time (see {@code Scheduler},
 * "Claimed but unpublished ring cells"); the tail CAS still pairs with step 2's tail load as above, so a worker
 * that sees no claimed cell at all may park without a bound.</p>
 *
 * <h2>Who clears the bit</h2>
 * A waker clears the bit it wakes with a CAS-like {@code getAndAnd} and only unparks when its own clear
 * removed the bit, so one waker wakes one worker. A worker that returns from {@code park} clears its own
 * bit; if it was already clear, somebody woke it on purpose (counted as a wakeup), otherwise it was a
 * spurious return.
 */
public final class ParkingLot {

    /**
     * Off-heap layout: one line. The hint shares the mask's line: a waker stores it right after its
     * {@code getAndAnd} on the mask, while it holds that line.
     * <pre>
     *   IDLE_MASK  long @0   bit i set: worker i announced it is about to park (getAndOr; getAndAnd to clear)
     *   WAKE_HINT  long @8   where the next wakeOne starts looking: the last woken index + 1 (opaque)
     *   pad to PAD
     * </pre>
     */
    static final class Layout {
        static final long IDLE_MASK_OFFSET = 0;
        static final long WAKE_HINT_OFFSET = IDLE_MASK_OFFSET + Long.BYTES;
        static final long LENGTH = CacheLine.PAD;
        /** Worker slots: one bit each of the {@code long} idle mask (hence {@code PoolConfig.MAX_THREADS} = 64). */
        static final int SLOTS = Long.SIZE;
        /** A bit index modulo {@link #SLOTS}: brings the hint and a rotated index back into the mask. */
        static final int SLOT_MASK = SLOTS - 1;

        private Layout() {}
    }

    private static final VarHandle THREADS = MethodHandles.arrayElementVarHandle(Thread[].class);

    private final MemorySegment seg;
    /** The block's address for {@link #idleMaskOnWorker} ({@link Mem#RAW}), else 0. */
    private final long base;
    private final Thread[] threads;
    private final int workers;
    /**
     * The other side of the handshake: which workers may hold work another worker could take (WorkSummary). A
     * parking worker's re-check reads it after its announcement instead of every worker's queues.
     */
    private final WorkSummary work;
    /** Where a waker stamps the unpark for the wake-latency histogram; null unless TimestampMode.FULL. */
    private dev.threadpool.internal.stats.WorkerTimes wakeStamps;

    public ParkingLot(PoolMemory memory, int workers) {
        this.seg = memory.allocate("idle mask", Layout.LENGTH);
        this.work = new WorkSummary(memory, workers);
        this.base = Mem.RAW ? seg.address() : 0L;
        this.workers = workers;
        this.threads = new Thread[workers];
    }

    /** Where work may be: the summary a parking worker's re-check reads after its announcement (WorkSummary). */
    public WorkSummary work() {
        return work;
    }

    /** Registers worker {@code i}'s thread before it starts (published by {@code Thread.start}). */
    public void register(int i, Thread t) {
        threads[i] = t;
    }

    /**
     * Makes {@link #wakeOne} stamp {@code System.nanoTime()} into the woken worker's wake word just before its
     * unpark: for the wake-latency histogram (TimestampMode.FULL) and for PARK's idle window, which measures an
     * idle spell up to the moment a submitter wanted the worker (Idle). One clock read per unpark, a syscall
     * anyway. Called from the pool's constructor, before any thread can wake (published with the pool).
     */
    public void stampWakesInto(dev.threadpool.internal.stats.WorkerTimes times) {
        this.wakeStamps = times;
    }

    /**
     * Registers the thread of a worker slot that is (re)used after the pool started (LANE_EXTENSION's
     * overflow workers). A waker reads {@code threads[i]} only after a volatile load of the idle mask saw
     * bit i, which the new thread sets itself after its start, so the plain store is published to wakers
     * by Thread.start plus that volatile read; {@link #wakeAll} may still see the slot's previous, exited
     * thread, whose unpark is a no-op, and the new one re-checks the stop flag after its timed park.
     */
    public void registerLate(int i, Thread t) {
        THREADS.setRelease(threads, i, t); // release: at least ordered after the thread object's construction
    }

    /** Step 1: announce that worker {@code i} is about to park. */
    public void announce(int i) {
        // getAndOr (seq_cst): must precede the worker's re-check of the queue in the total order; pairs with
        // the submitter's volatile load in wakeOne().
        Mem.getAndOrLong(seg, Layout.IDLE_MASK_OFFSET, 1L << i);
    }

    /**
     * Withdraws worker {@code i}'s announcement; returns true if the bit was still set (nobody woke it), false
     * if a waker had already cleared it (this worker was chosen and should count a wakeup).
     */
    public boolean retract(int i) {
        long bit = 1L << i;
        return (Mem.getAndAndLong(seg, Layout.IDLE_MASK_OFFSET, ~bit) & bit) != 0;
    }

    /** Parks the calling worker until unparked (or spuriously); step 3. */
    public void park() {
        LockSupport.park(this);
    }

    /** Parks for at most {@code nanos}. */
    public void parkNanos(long nanos) {
        LockSupport.parkNanos(this, nanos);
    }

    /** The current idle mask (a volatile load; also the submitter's step b). */
    public long idleMask() {
        return Mem.getLongVolatile(seg, Layout.IDLE_MASK_OFFSET);
    }

    /**
     * {@link #idleMask()} for a worker's per-task look after its pop (the chained wake's test): the same volatile
     * load, by raw address (native-notes/FFM.md, "Raw addresses": the block is freed after every worker has been
     * joined). Only on the pool's workers.
     */
    public long idleMaskOnWorker() {
        return Mem.getLongVolatileAt(seg, base, Layout.IDLE_MASK_OFFSET);
    }

    /**
     * The idle mask as a hint, for a worker's decision that no handshake depends on (Joining's demand check, once
     * per join below the eager levels): an opaque load, by raw address as {@link #idleMaskOnWorker}. A stale value
     * costs that join's parallelism, never a wake: an offer that follows still wakes through {@link #wakeOneOf}.
     * Only on the pool's workers.
     */
    public long idleMaskHintOnWorker() {
        return Mem.getLongOpaqueAt(seg, base, Layout.IDLE_MASK_OFFSET); // opaque: pairs with nothing (a hint)
    }

    /**
     * The idle mask's raw address, or 0 where {@link Mem#RAW} is false: for a reader that keeps it in a field of
     * its own and loads it as {@link #idleMaskHintOnWorker} does (Joining's demand check). Valid while a worker runs.
     */
    public long idleMaskAddress() {
        return base == 0 ? 0 : base + Layout.IDLE_MASK_OFFSET;
    }

    /**
     * Steps b and c: wakes one announced worker, starting from a rotating hint so the same worker is not
     * always the one woken. Returns the index woken, or -1 when no worker was idle.
     */
    public int wakeOne() {
        final MemorySegment s = seg;
        // volatile load (seq_cst): pairs with announce(); the caller's queue publish precedes it.
        long m = Mem.getLongVolatile(s, Layout.IDLE_MASK_OFFSET);
        while (m != 0) {
            int hint = (int) (Mem.getLongOpaque(s, Layout.WAKE_HINT_OFFSET) & Layout.SLOT_MASK);
            long rotated = Long.rotateRight(m, hint);
            int i = (Long.numberOfTrailingZeros(rotated) + hint) & Layout.SLOT_MASK;
            long bit = 1L << i;
            long prev = Mem.getAndAndLong(s, Layout.IDLE_MASK_OFFSET, ~bit);
            if ((prev & bit) != 0) {
                // opaque: the hint is only a heuristic; races on it are harmless.
                Mem.setLongOpaque(s, Layout.WAKE_HINT_OFFSET, i + 1);
                dev.threadpool.internal.stats.WorkerTimes stamps = wakeStamps;
                if (stamps != null) {
                    stamps.stampWake(i, System.nanoTime()); // release; the worker takes it after park returns
                }
                LockSupport.unpark(threads[i]);
                return i;
            }
            m = prev & ~bit; // somebody else cleared it first: try the others
        }
        return -1;
    }

    /**
     * Steps b and c restricted to the workers in {@code eligible}: wakes one announced worker whose bit is in
     * the mask (lowest index first) and returns its index, or -1 when none of them is idle. Used for a lane
     * that only some workers may take from (LANE_EXTENSION's blocking lane): waking a worker outside the
     * lane would spend the wake on a worker whose re-check cannot see the entry.
     */
    public int wakeOneOf(long eligible) {
        final MemorySegment s = seg;
        // volatile load (seq_cst): pairs with announce(); the caller's queue publish precedes it.
        long m = Mem.getLongVolatile(s, Layout.IDLE_MASK_OFFSET) & eligible;
        while (m != 0) {
            int i = Long.numberOfTrailingZeros(m);
            long bit = 1L << i;
            long prev = Mem.getAndAndLong(s, Layout.IDLE_MASK_OFFSET, ~bit); // one waker per bit, as in wakeOne
            if ((prev & bit) != 0) {
                LockSupport.unpark(threads[i]);
                return i;
            }
            m = prev & ~bit & eligible;
        }
        return -1;
    }

    /** Wakes every worker whether or not it announced (shutdown: each re-checks its stop condition). */
    public void wakeAll() {
        Mem.getAndAndLong(seg, Layout.IDLE_MASK_OFFSET, 0L);
        for (int i = 0; i < workers; i++) {
            Thread t = threads[i];
            if (t != null) {
                LockSupport.unpark(t);
            }
        }
    }
}
