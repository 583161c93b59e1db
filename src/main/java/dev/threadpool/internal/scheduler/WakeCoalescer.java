package dev.threadpool.internal.scheduler;

import dev.threadpool.internal.memory.CacheLine;
import dev.threadpool.internal.memory.Mem;
import dev.threadpool.internal.memory.PoolMemory;
import java.lang.foreign.MemorySegment;

/**
 * Who is searching, and when a submit must wake a parked worker (WORK_STEALING).
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
 * That argument is about safety (no entry is stranded with every worker parked), not parallelism: the searcher
 * that sees E may run one entry and block in it. So a worker that takes work from a shared source (inject
 * refill, steal-half, a submitter queue) and leaves some behind wakes one more parked worker itself, never
 * coalesced ({@link #wakeOneIfIdle}, the chained wake of {@code WorkStealingScheduler}); each woken worker does
 * the same, so a burst coalesced into one wake still reaches every idle worker, even when every task blocks.
 *
 * <pre>
 *   layout: SEARCHING (long) @0, PAD; SUBMITS (long) @PAD, PAD  (SUBMITS only counts coalesced submits)
 * </pre>
 */
public final class WakeCoalescer {
    static final long SEARCHING_OFFSET = 0;
    static final long SUBMITS_OFFSET = CacheLine.PAD;

    private final MemorySegment seg;
    private final ParkingLot parking;
    private final int batch;

    public WakeCoalescer(PoolMemory memory, ParkingLot parking, int wakeCoalesceBatch) {
        this.seg = memory.allocate("wake coalescer", 2L * CacheLine.PAD);
        this.parking = parking;
        this.batch = wakeCoalesceBatch;
    }

    /** A worker starts searching (getAndAdd, seq_cst: read by signalWork's S load). */
    public void beginSearch() {
        Mem.getAndAddLong(seg, SEARCHING_OFFSET, 1);
    }

    /**
     * A worker stops searching: after its announcement when it is about to park, or when it found work.
     * getAndAdd (seq_cst): must follow the announcement in the total order; pairs with signalWork's S load.
     */
    public void endSearch() {
        Mem.getAndAddLong(seg, SEARCHING_OFFSET, -1);
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
        if (Mem.getLongVolatile(seg, SEARCHING_OFFSET) > 0) {
            // getAndAdd: the coalescing counter, only touched when somebody is both parked and searching.
            long n = Mem.getAndAddLong(seg, SUBMITS_OFFSET, 1);
            if ((n + 1) % batch != 0) {
                return false;
            }
        }
        return parking.wakeOne() >= 0; // scanAndWake: from the rotating hint, the first parked worker
    }

    /** Forced wake (chained wake of a searcher that found more than it runs). */
    void wakeOneIfIdle() {
        if (parking.idleMask() != 0) { // volatile load; a miss only costs latency, never a lost entry
            parking.wakeOne();
        }
    }
}
