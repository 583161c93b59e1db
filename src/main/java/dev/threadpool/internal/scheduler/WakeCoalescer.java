package dev.threadpool.internal.scheduler;

import dev.threadpool.internal.memory.CacheLine;
import dev.threadpool.internal.memory.Mem;
import dev.threadpool.internal.memory.PoolMemory;
import java.lang.foreign.MemorySegment;
import java.util.function.IntPredicate;

/**
 * Who is searching, and when a submit must wake a parked worker: the wake rule of every topology (GLOBAL_QUEUE,
 * WORK_STEALING, and LANE_EXTENSION's default lane; its blocking lane wakes without coalescing, see
 * {@code LaneScheduler}). Each scheduler owns one, over the pool's {@link ParkingLot}.
 *
 * <h2>Rule</h2>
 * After publishing an entry (seq_cst), a submitter calls {@link #signalWork}:
 * <pre>
 *   m = IDLE_MASK (seq_cst)                 nobody parked (m == 0): nothing to do
 *   s = SEARCHING (seq_cst)                 nobody searching (s == 0): wake one (ParkingLot.wakeOne)
 *   otherwise                               wake one only every wakeCoalesceBatch-th such submit
 * </pre>
 * A worker counts itself in SEARCHING from the moment its queues come up empty until <em>after</em> its
 * seq_cst announcement in the idle mask; only then does it re-check every queue (seq_cst) and park.
 *
 * <h2>Why no submit is lost</h2>
 * All accesses below are seq_cst, so they lie in one total order. Take an entry E published at P, then the
 * submitter's loads of IDLE_MASK (M) and SEARCHING (S).
 * <ul>
 *   <li>M sees 0: every worker that later parks announces after M, hence after P, and its re-check sees E
 *       (the plain ParkingLot handshake).</li>
 *   <li>S sees 0 and M sees a bit: the submitter wakes that worker (ParkingLot's one-waker-per-bit CAS).</li>
 *   <li>S sees some worker W counted, and the submit is coalesced: W's decrement of SEARCHING follows S, hence
 *       P; W decrements only after its announcement and re-checks after that, so W either takes E or finds it
 *       on its re-check and does not park. Some worker that is not parked sees E.</li>
 * </ul>
 * The argument only ever uses searchers that are counted; a worker that searches uncounted (BUSY_SPIN's, which
 * never parks: Idle) only makes S smaller, so a submitter wakes where it might have coalesced, never the other
 * way.
 * That argument is about safety (no entry is stranded with every worker parked), not parallelism: the searcher
 * that sees E may take another entry (the inject ring before a peer's LIFO slot; LANE_EXTENSION's blocking
 * worker, its own lane first) and block in it, while E waits and a worker that could take it sleeps.
 *
 * <h2>The pass-on rule</h2>
 * So a coalesced wake is counted against the search, not against E: every search obliges the searcher to pass
 * the wake on once it has taken its entry. A worker's first take after {@link #beginSearch} (whether the search
 * ended in the spin, on the park re-check, or with a wake from park) is followed by {@link #passOn}:
 * <pre>
 *   m = IDLE_MASK (seq_cst)            nobody parked: done (a worker that parks later re-checks)
 *   published entry left? (seq_cst)    no: done
 *   wake one (ParkingLot.wakeOne)
 * </pre>
 * unless the take itself already ran a chained wake (below), which is the same wake. Why E no longer waits:
 * a submitter that coalesced on W loaded S before W's decrement D, so its publish P precedes D, which precedes
 * W's loads in passOn. Either E is gone by then (some worker that is not parked took it), or W sees E and
 * (IDLE_MASK seen non-zero) wakes a parked worker, or IDLE_MASK was zero and every later parker re-checks after
 * its announcement, hence sees E. The woken worker was searching too (it began a search before it parked), so
 * it passes the wake on after its own take: the chain goes on while entries are left and workers sleep. A wake
 * from park is therefore one more {@code IDLE_MASK} load and, only while a worker is parked, one more seq_cst
 * look at the queues. The jcstress tests {@code WakePassOnTest} check the rule against a coalesced fork.
 * WORK_STEALING (and so LANE_EXTENSION) calls {@link #passOn} after the first take following a search;
 * GLOBAL_QUEUE does not need to: its chained wake follows every pop (below), and its ring is its only queue.
 *
 * <h2>Chained wakes</h2>
 * A worker that takes work from a shared source and leaves some behind wakes one more parked worker itself,
 * never coalesced, searching or not: in WORK_STEALING after an inject refill, a steal-half or a submitter-queue
 * steal ({@link #wakeOneIfIdle}); in GLOBAL_QUEUE after a pop that leaves the ring non-empty (its own
 * {@code ParkingLot.wakeOne}). Each woken worker does the same, so a burst coalesced into one wake still reaches
 * every idle worker, even when every task blocks.
 */
public final class WakeCoalescer {

    /**
     * Off-heap layout: two counters, each on its own line (workers write SEARCHING at every search start and
     * end, and every signalWork that finds a worker parked reads it; SUBMITS is written only by the submits that
     * find a worker parked while another searches).
     * <pre>
     *   SEARCHING  long @0    workers counted as searching (getAndAdd +1 / -1; volatile load in signalWork)
     *   pad to PAD
     *   SUBMITS    long @PAD  submits that found a worker parked and one searching (getAndAdd; every
     *                         wakeCoalesceBatch-th of them wakes anyway, the others are coalesced)
     *   pad to 2 * PAD
     * </pre>
     */
    static final class Layout {
        static final long SEARCHING_OFFSET = 0;
        static final long SUBMITS_OFFSET = CacheLine.PAD;
        static final long LENGTH = 2L * CacheLine.PAD;

        private Layout() {}
    }

    private final MemorySegment seg;
    /** seg's address when {@link Mem#RAW}, else 0: for {@link #searchersOnWorker}. */
    private final long base;
    private final ParkingLot parking;
    private final int batch;

    public WakeCoalescer(PoolMemory memory, ParkingLot parking, int wakeCoalesceBatch) {
        this.seg = memory.allocate("wake coalescer", Layout.LENGTH);
        this.base = Mem.RAW ? seg.address() : 0L;
        this.parking = parking;
        this.batch = wakeCoalesceBatch;
    }

    /** A worker starts searching (getAndAdd, seq_cst: read by signalWork's S load). */
    public void beginSearch() {
        Mem.getAndAddLong(seg, Layout.SEARCHING_OFFSET, 1);
    }

    /**
     * A worker stops searching: after its announcement when it is about to park, or when it found work.
     * getAndAdd (seq_cst): must follow the announcement in the total order; pairs with signalWork's S load.
     */
    public void endSearch() {
        Mem.getAndAddLong(seg, Layout.SEARCHING_OFFSET, -1);
    }

    /**
     * Workers searching now: an opaque load, a hint and no handshake (Joining's demand check: a half that is not
     * offered because this read 0 is run by its owner, so nothing waits on it).
     */
    public long searchers() {
        return Mem.getLongOpaque(seg, Layout.SEARCHING_OFFSET);
    }

    /**
     * {@link #searchers()} by raw address, for the demand check of a worker's join or fork (once per join or fork
     * below the eager levels, inlined into the user's recursion by the fork): the same opaque load without the
     * segment's liveness and bounds checks (native-notes/FFM.md, "Raw addresses": the block is freed after every
     * worker has been joined). Only on the pool's workers.
     */
    public long searchersOnWorker() {
        return Mem.getLongOpaqueAt(seg, base, Layout.SEARCHING_OFFSET); // opaque: pairs with nothing (a hint)
    }

    /**
     * The SEARCHING word's raw address, or 0 where {@link Mem#RAW} is false: for a reader that keeps it in a field
     * of its own and loads it as {@link #searchersOnWorker} does (Joining's demand check). Valid while a worker runs.
     */
    public long searchingAddress() {
        return base == 0 ? 0 : base + Layout.SEARCHING_OFFSET;
    }

    /**
     * After a publish: wakes one parked worker unless a searcher is bound to see the entry (see Rule); true
     * when it woke one. The caller's publish must be seq_cst or followed by a full fence.
     */
    public boolean signalWork() {
        // volatile load (seq_cst) M: pairs with announce(); the caller's publish precedes it.
        if (parking.idleMask() == 0) {
            return false;
        }
        // volatile load (seq_cst) S: pairs with endSearch(); ordered after M.
        if (Mem.getLongVolatile(seg, Layout.SEARCHING_OFFSET) > 0) {
            // getAndAdd: the coalescing counter, only touched when somebody is both parked and searching.
            long n = Mem.getAndAddLong(seg, Layout.SUBMITS_OFFSET, 1);
            if ((n + 1) % batch != 0) {
                return false;
            }
        }
        return parking.wakeOne() >= 0; // from ParkingLot's rotating hint, the first parked worker
    }

    /**
     * The pass-on rule (see there): after a worker's first take following a search. {@code publishedWork} is
     * the scheduler's seq_cst look for a published entry ({@code Scheduler.hasWork}), evaluated only when a
     * worker is parked. True when it woke one. The caller's endSearch (a seq_cst RMW) precedes this in program
     * order, so both loads below follow it in the total order.
     */
    public boolean passOn(IntPredicate publishedWork, int w) {
        // volatile load (seq_cst): pairs with announce(); after our endSearch, hence after any publish whose
        // submitter coalesced on our search.
        if (parking.idleMask() == 0 || !publishedWork.test(w)) {
            return false;
        }
        return parking.wakeOne() >= 0; // one waker per bit: a racing submitter's wake and ours never share one
    }

    /** Forced wake (chained wake of a searcher that found more than it runs). */
    void wakeOneIfIdle() {
        if (parking.idleMask() != 0) { // volatile load; a miss only costs latency, never a lost entry
            parking.wakeOne();
        }
    }
}
