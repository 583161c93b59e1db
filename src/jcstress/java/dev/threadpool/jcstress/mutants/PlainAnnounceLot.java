package dev.threadpool.jcstress.mutants;

import dev.threadpool.internal.memory.CacheLine;
import dev.threadpool.internal.memory.Mem;
import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.scheduler.ParkingLot;
import java.lang.foreign.MemorySegment;

/**
 * MUTANT of {@link ParkingLot}'s handshake (DELIBERATELY BROKEN, test code only): {@link #announce} sets the
 * idle bit with a plain load and a plain store instead of the seq_cst {@code getAndOr}, so on x86 the bit can
 * sit in the store buffer while the worker's re-check loads the queue (store->load reordering). The waker side
 * is the real one: a volatile load of the mask, then {@code getAndAnd} to claim the bit. Only the one-worker
 * handshake is copied (no threads, no hint): {@link ParkMutantsTest.PlainAnnounceVsSubmit} races it.
 */
public final class PlainAnnounceLot {
    private final MemorySegment seg;

    public PlainAnnounceLot(PoolMemory memory) {
        this.seg = memory.allocate("mutant idle mask", CacheLine.PAD);
    }

    /** ParkingLot.announce with its getAndOr weakened to a plain read and a plain store (the mutation). */
    public void announce(int i) {
        // MUTATION: plain, where ParkingLot.announce has getAndOr (seq_cst, a locked instruction on x86 that
        // drains the store buffer before the worker's re-check).
        Mem.setLongPlain(seg, 0, Mem.getLongPlain(seg, 0) | (1L << i));
    }

    /** ParkingLot.wakeOne for one worker, unchanged: true when this call claimed worker 0's bit. */
    public boolean wakeOne() {
        // volatile load (seq_cst), as in ParkingLot.wakeOne: pairs with announce
        long m = Mem.getLongVolatile(seg, 0);
        return m != 0 && (Mem.getAndAndLong(seg, 0, ~1L) & 1L) != 0; // getAndAnd, as in ParkingLot.wakeOne
    }
}
