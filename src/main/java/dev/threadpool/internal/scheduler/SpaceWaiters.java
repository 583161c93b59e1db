package dev.threadpool.internal.scheduler;

import dev.threadpool.internal.memory.CacheLine;
import dev.threadpool.internal.memory.Mem;
import dev.threadpool.internal.memory.PoolMemory;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * Submitters waiting for space (a free descriptor or a free ring cell), and the signal that wakes them.
 * Allocation-free: 64 fixed waiter slots, claimed through a bitmap.
 *
 * <h2>Protocol</h2>
 * <pre>
 *   waiter                                        signaller (a worker that just freed space)
 *   1. claim slot k in CLAIMED (CAS)              a. free the space (seq_cst CAS on freelist / ring head)
 *   2. threads[k] = me; WAITING |= bit(k) (RMW)   b. m = WAITING (seq_cst load)
 *   3. re-check space (seq_cst load)              c. if m != 0: unpark threads[lowest bit of m]
 *   4. if none: parkNanos(min(remaining, cap))
 * </pre>
 * As in {@link ParkingLot}, either 2 precedes b (the signaller sees the waiter) or a precedes 3 (the waiter
 * sees the space): a wake-up cannot be lost. A signal goes to one waiter; the woken waiter, once it gets its
 * space, clears its bit, so the next signal reaches the next waiter. The park is also bounded by
 * {@link #PARK_CAP_NANOS}, which covers the two cases the handshake does not: more than 64 simultaneous
 * waiters (the 65th polls), and a signal spent on a waiter that then lost the race for the space.
 *
 * <p>Signalling costs the signaller one volatile load of a line that is written only while somebody waits.
 *
 * <h2>Yield before park</h2>
 * Before it registers, a waiter yields its CPU up to {@link #YIELDS_BEFORE_PARK} times, re-checking after
 * each yield. The room it waits for is made by the pool's workers, and where runnable threads outnumber CPUs
 * (two producers and two workers on two CPUs in {@code burst_bounded}) a yield hands this CPU to one of them
 * at once, while a park hands it over only until the signal, and then the waiter needs a CPU back, a wake and
 * a reschedule, about as long as the workers take to drain the half ring a waiter is woken for
 * (PERFORMANCE_TRACKING 39, 43, 67). With a CPU to spare, each yield returns at once and the phase is a short
 * poll, bounded by the count, before the park. The phase registers nothing, so it cannot lose a wake: the
 * handshake below begins only with the park phase.
 */
public final class SpaceWaiters {

    /**
     * Off-heap layout: two bitmaps, each on its own line. Waiters write both; signallers read only
     * {@code WAITING}.
     * <pre>
     *   CLAIMED  long @0    bit k set: waiter slot k is taken (CAS to claim, getAndAnd to free)
     *   pad to PAD
     *   WAITING  long @PAD  bit k set: threads[k] is written and waits (getAndOr / getAndAnd)
     *   pad to 2 * PAD
     * </pre>
     */
    static final class Layout {
        static final long CLAIMED_OFFSET = 0;
        static final long WAITING_OFFSET = CacheLine.PAD;
        static final long LENGTH = 2L * CacheLine.PAD;
        /** Waiter slots: one bit each of a {@code long} bitmap. */
        static final int SLOTS = Long.SIZE;

        private Layout() {}
    }

    /**
     * Upper bound of one park, so an unlucky waiter re-checks at least this often. 1 ms: it bounds the delay
     * of the two cases the handshake does not cover (see the class comment), while a waiter that polls wakes at
     * most a thousand times a second.
     */
    static final long PARK_CAP_NANOS = 1_000_000L;

    /**
     * Yields before a waiter registers and parks (class comment, "Yield before park"). 16: 16, 64 and 256 moved
     * {@code burst_bounded} alike (PERFORMANCE_TRACKING 67), and with a CPU to spare the fewest burn the least.
     */
    static final int YIELDS_BEFORE_PARK = 16;

    private final MemorySegment seg;
    /** The block's address for {@link #hasWaitersOnWorker} ({@link Mem#RAW}), else 0. */
    private final long base;
    private final Thread[] threads = new Thread[Layout.SLOTS];

    public SpaceWaiters(PoolMemory memory, String purpose) {
        this.seg = memory.allocate(purpose, Layout.LENGTH);
        this.base = Mem.RAW ? seg.address() : 0L;
    }

    /**
     * Waits until {@code ready} holds, {@code abort} holds, or the deadline passes ({@code deadline} is a
     * {@link System#nanoTime()} value; {@link Long#MAX_VALUE} means no deadline). Returns true when
     * {@code ready} held; the caller then retries its operation (which may fail again and wait again).
     */
    public boolean await(BooleanSupplier ready, BooleanSupplier abort, long deadline) {
        for (int y = 0; y < YIELDS_BEFORE_PARK; y++) { // the yield phase: registers nothing (class comment)
            if (ready.getAsBoolean()) {
                return true;
            }
            if (abort.getAsBoolean() || (deadline != Long.MAX_VALUE && deadline - System.nanoTime() <= 0)) {
                return false;
            }
            Thread.yield();
        }
        int k = register();
        try {
            for (;;) {
                if (ready.getAsBoolean()) {
                    return true;
                }
                if (abort.getAsBoolean()) {
                    return false;
                }
                long now = System.nanoTime();
                long remaining = deadline - now;
                if (remaining <= 0) {
                    return false;
                }
                LockSupport.parkNanos(this, Math.min(remaining, PARK_CAP_NANOS));
            }
        } finally {
            if (k >= 0) {
                deregister(k);
            }
        }
    }

    /**
     * Steps 1 and 2: takes a waiter slot for the calling thread and announces it; -1 when all 64 are taken.
     * Public for the jcstress handshake test; {@link #await} is the API.
     */
    public int register() {
        final MemorySegment s = seg;
        Thread me = Thread.currentThread();
        for (;;) {
            long claimed = Mem.getLongVolatile(s, Layout.CLAIMED_OFFSET);
            long free = ~claimed;
            if (free == 0) {
                return -1; // all 64 slots taken: poll with the park cap
            }
            int k = Long.numberOfTrailingZeros(free);
            if (Mem.casLong(s, Layout.CLAIMED_OFFSET, claimed, claimed | (1L << k))) {
                threads[k] = me;
                // getAndOr (seq_cst): publishes threads[k] and must precede our re-check of space (step 3)
                // in the total order; pairs with signal()'s volatile load.
                Mem.getAndOrLong(s, Layout.WAITING_OFFSET, 1L << k);
                return k;
            }
        }
    }

    /** Gives slot {@code k} back (after {@link #register}). */
    public void deregister(int k) {
        final MemorySegment s = seg;
        Mem.getAndAndLong(s, Layout.WAITING_OFFSET, ~(1L << k));
        threads[k] = null;
        Mem.getAndAndLong(s, Layout.CLAIMED_OFFSET, ~(1L << k)); // after clearing threads[k]: slot reusable
    }

    /** Step b and c: wakes one waiter if there is one. Call after freeing space. */
    public void signal() {
        // volatile load (seq_cst): pairs with register()'s getAndOr; the caller's release of space precedes it.
        long m = Mem.getLongVolatile(seg, Layout.WAITING_OFFSET);
        if (m != 0) {
            Thread t = threads[Long.numberOfTrailingZeros(m)];
            if (t != null) {
                LockSupport.unpark(t);
            }
        }
    }

    /** Wakes every waiter (shutdown: each re-checks its abort condition). */
    public void signalAll() {
        long m = Mem.getLongVolatile(seg, Layout.WAITING_OFFSET);
        while (m != 0) {
            int k = Long.numberOfTrailingZeros(m);
            Thread t = threads[k];
            if (t != null) {
                LockSupport.unpark(t);
            }
            m &= m - 1;
        }
    }

    /** True while some thread waits. */
    public boolean hasWaiters() {
        return Mem.getLongVolatile(seg, Layout.WAITING_OFFSET) != 0;
    }

    /**
     * {@link #hasWaiters()} for a worker's look after each carried pop: the same volatile load, by raw address
     * (native-notes/FFM.md, "Raw addresses": the block is freed after every worker has been joined). Only on the
     * pool's workers.
     */
    public boolean hasWaitersOnWorker() {
        return Mem.getLongVolatileAt(seg, base, Layout.WAITING_OFFSET) != 0;
    }
}
