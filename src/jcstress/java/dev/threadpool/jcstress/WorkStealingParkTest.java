package dev.threadpool.jcstress;

import dev.threadpool.internal.memory.Mem;
import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.BoundedRing;
import dev.threadpool.internal.queue.LifoSlot;
import dev.threadpool.internal.queue.QueueEntry;
import dev.threadpool.internal.queue.RingQueue;
import dev.threadpool.internal.scheduler.ParkingLot;
import dev.threadpool.internal.scheduler.WakeCoalescer;
import dev.threadpool.internal.scheduler.WorkSummary;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.Expect;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * Submit vs park in the WORK_STEALING topology, on the real primitives and the real {@link WakeCoalescer}
 * rule. The worker starts counted as searching (it has just found its queues empty); it announces, stops
 * searching, then re-checks. The submitter publishes into a peer's local queue, a LIFO slot, the inject
 * ring or the carried-task ring, then runs the coalesced wake. r1 = the submitter woke the worker, r2 = the re-check saw the entry.
 * "0, 0" is a lost wakeup: the worker parks with the entry queued and nobody wakes it.
 */
public final class WorkStealingParkTest {
    private WorkStealingParkTest() {}

    /** Shared set-up: one worker, searching, with a wake batch so large that a coalesced submit never wakes. */
    abstract static class Base {
        final PoolMemory m = PoolMemory.createGcManaged();
        final ParkingLot parking = new ParkingLot(m, 1);
        final WakeCoalescer wake = new WakeCoalescer(m, parking, 1 << 12);

        Base() {
            parking.register(0, new Thread(() -> { })); // never started: unpark is a no-op
            wake.beginSearch();
        }

        abstract boolean visible();

        void park(II_Result r) {
            parking.announce(0);
            wake.endSearch(); // after the announcement (WakeCoalescer, "Why no submit is lost")
            r.r2 = visible() ? 1 : 0;
        }
    }

    @JCStressTest
    @Description("local-queue push (release) + full fence + coalesced wake vs announce, stop searching, re-check")
    @Outcome(id = {"1, 1", "1, 0", "0, 1"}, expect = Expect.ACCEPTABLE, desc = "woken, or saw the entry, or both")
    @Outcome(id = "0, 0", expect = Expect.FORBIDDEN, desc = "lost wakeup")
    @State
    public static class LocalPushVsPark extends Base {
        final RingQueue local = new RingQueue(m, "local 1", 2, true);

        @Override
        boolean visible() {
            return local.size() > 0; // volatile loads of head and tail
        }

        @Actor
        public void submitter(II_Result r) {
            local.tryPush(1);
            VarHandle.fullFence(); // as WorkStealingScheduler.signalWork
            r.r1 = wake.signalWork() ? 1 : 0;
        }

        @Actor
        public void worker(II_Result r) {
            park(r);
        }
    }

    @JCStressTest
    @Description("LIFO-slot put (getAndSet) + coalesced wake vs announce, stop searching, re-check")
    @Outcome(id = {"1, 1", "1, 0", "0, 1"}, expect = Expect.ACCEPTABLE, desc = "woken, or saw the entry, or both")
    @Outcome(id = "0, 0", expect = Expect.FORBIDDEN, desc = "lost wakeup")
    @State
    public static class LifoPutVsPark extends Base {
        final LifoSlot lifo = new LifoSlot(m, "lifo", 2);

        @Override
        boolean visible() {
            return lifo.peekVolatile(1) != QueueEntry.EMPTY;
        }

        @Actor
        public void submitter(II_Result r) {
            lifo.put(1, 1);
            VarHandle.fullFence();
            r.r1 = wake.signalWork() ? 1 : 0;
        }

        @Actor
        public void worker(II_Result r) {
            park(r);
        }
    }

    /**
     * The re-check as WorkStealingScheduler.hasWork does it since issue 48: the WorkSummary words first, then only
     * the sources of a worker whose bit is set. The submitter (worker 1) puts into its LIFO slot, marks HELD
     * (a getAndOr while its bit is clear), then fences and runs the coalesced wake. {@code staleBit}: the bit is
     * set before the race (left from an earlier run of work), so the submitter's mark writes nothing.
     */
    abstract static class SummaryLifoBase extends Base {
        final ParkingLot parking2 = new ParkingLot(m, 2);
        final WorkSummary summary = parking2.work();
        final LifoSlot lifo = new LifoSlot(m, "lifo", 2);

        /** Whether the submitter fences before the wake rule (signalWork); signalWorkFrom after a LIFO put does not. */
        final boolean fence;

        SummaryLifoBase(boolean staleBit) {
            this(staleBit, true);
        }

        SummaryLifoBase(boolean staleBit, boolean fence) {
            this.fence = fence;
            if (staleBit) {
                summary.mark(WorkSummary.HELD, 1);
            }
        }

        @Override
        boolean visible() {
            // volatile load of HELD, then of the slot only when worker 1's bit is set (WorkSummary)
            return (summary.mask(WorkSummary.HELD) & 2L) != 0 && lifo.peekVolatile(1) != QueueEntry.EMPTY;
        }

        void submit(II_Result r) {
            lifo.put(1, 1); // getAndSet
            summary.mark(WorkSummary.HELD, 1); // getAndOr while clear
            if (fence) {
                VarHandle.fullFence(); // as WorkStealingScheduler.signalWork
            }
            r.r1 = wake.signalWork() ? 1 : 0;
        }
    }

    @JCStressTest
    @Description("LIFO put + HELD mark + coalesced wake vs announce, stop searching, re-check through the summary")
    @Outcome(id = {"1, 1", "1, 0", "0, 1"}, expect = Expect.ACCEPTABLE, desc = "woken, or saw the entry, or both")
    @Outcome(id = "0, 0", expect = Expect.FORBIDDEN, desc = "lost wakeup: the bit and the wake both missed")
    @State
    public static class SummaryLifoPutVsPark extends SummaryLifoBase {
        public SummaryLifoPutVsPark() {
            super(false);
        }

        @Actor
        public void submitter(II_Result r) {
            submit(r);
        }

        @Actor
        public void worker(II_Result r) {
            park(r);
        }
    }

    @JCStressTest
    @Description("LIFO put + HELD mark + coalesced wake with no fence between (WorkStealingScheduler.signalWorkFrom,"
            + " a put that displaced nothing) vs announce, stop searching, re-check through the summary")
    @Outcome(id = {"1, 1", "1, 0", "0, 1"}, expect = Expect.ACCEPTABLE, desc = "woken, or saw the entry, or both")
    @Outcome(id = "0, 0", expect = Expect.FORBIDDEN, desc = "lost wakeup: the seq_cst exchange did not order the loads")
    @State
    public static class SummaryLifoPutNoFenceVsPark extends SummaryLifoBase {
        public SummaryLifoPutNoFenceVsPark() {
            super(false, false);
        }

        @Actor
        public void submitter(II_Result r) {
            submit(r);
        }

        @Actor
        public void worker(II_Result r) {
            park(r);
        }
    }

    @JCStressTest
    @Description("as SummaryLifoPutNoFenceVsPark with HELD already set (a stale bit): the exchange alone vs the"
            + " re-check of the slot")
    @Outcome(id = {"1, 1", "1, 0", "0, 1"}, expect = Expect.ACCEPTABLE, desc = "woken, or saw the entry, or both")
    @Outcome(id = "0, 0", expect = Expect.FORBIDDEN, desc = "lost wakeup")
    @State
    public static class SummaryStaleBitLifoPutNoFenceVsPark extends SummaryLifoBase {
        public SummaryStaleBitLifoPutNoFenceVsPark() {
            super(true, false);
        }

        @Actor
        public void submitter(II_Result r) {
            submit(r);
        }

        @Actor
        public void worker(II_Result r) {
            park(r);
        }
    }

    @JCStressTest
    @Description("as SummaryLifoPutVsPark with HELD already set (a stale bit): the plain Dekker pair on the slot")
    @Outcome(id = {"1, 1", "1, 0", "0, 1"}, expect = Expect.ACCEPTABLE, desc = "woken, or saw the entry, or both")
    @Outcome(id = "0, 0", expect = Expect.FORBIDDEN, desc = "lost wakeup")
    @State
    public static class SummaryStaleBitLifoPutVsPark extends SummaryLifoBase {
        public SummaryStaleBitLifoPutVsPark() {
            super(true);
        }

        @Actor
        public void submitter(II_Result r) {
            submit(r);
        }

        @Actor
        public void worker(II_Result r) {
            park(r);
        }
    }

    @JCStressTest
    @Description("local push (release) + NONEMPTY mark + full fence + coalesced wake vs announce, stop searching,"
            + " re-check through the summary")
    @Outcome(id = {"1, 1", "1, 0", "0, 1"}, expect = Expect.ACCEPTABLE, desc = "woken, or saw the entry, or both")
    @Outcome(id = "0, 0", expect = Expect.FORBIDDEN, desc = "lost wakeup")
    @State
    public static class SummaryLocalPushVsPark extends Base {
        final WorkSummary summary = new ParkingLot(m, 2).work();
        final RingQueue local = new RingQueue(m, "local 1", 2, true);

        @Override
        boolean visible() {
            return (summary.mask(WorkSummary.NONEMPTY) & 2L) != 0 && local.size() > 0;
        }

        @Actor
        public void submitter(II_Result r) {
            local.tryPush(1); // release store of tail
            summary.mark(WorkSummary.NONEMPTY, 1); // LocalQueues.markNonEmpty: getAndOr while clear
            VarHandle.fullFence(); // as WorkStealingScheduler.signalWork
            r.r1 = wake.signalWork() ? 1 : 0;
        }

        @Actor
        public void worker(II_Result r) {
            park(r);
        }
    }

    @JCStressTest
    @Description("inject push (CAS) + coalesced wake vs announce, stop searching, re-check")
    @Outcome(id = {"1, 1", "1, 0", "0, 1"}, expect = Expect.ACCEPTABLE, desc = "woken, or saw the entry, or both")
    @Outcome(id = "0, 0", expect = Expect.FORBIDDEN, desc = "lost wakeup")
    @State
    public static class InjectPushVsPark extends Base {
        final BoundedRing inject = new BoundedRing(m, "inject", 2);

        @Override
        boolean visible() {
            return !inject.isEmpty();
        }

        @Actor
        public void submitter(II_Result r) {
            inject.tryPush(1);
            VarHandle.fullFence();
            r.r1 = wake.signalWork() ? 1 : 0;
        }

        @Actor
        public void worker(II_Result r) {
            park(r);
        }
    }

    /**
     * The carried push has no fence before the wake rule (WorkStealingScheduler.signalCarried): the worker's
     * re-check may miss the still-buffered publish (r2 = 2: it sees the claimed cell through pendingPush and
     * parks for at most PENDING_PARK_NANOS) but never both the cell and the wake.
     */
    @JCStressTest
    @Description("carried-ring push (tail CAS, references, release of the cell) + coalesced wake, no fence, vs"
            + " announce, stop searching, re-check of both shared rings (hasWork: published entries; then"
            + " pendingPush: claimed cells), as WorkStealingScheduler")
    @Outcome(id = {"1, 1", "1, 0", "0, 1", "1, 2"}, expect = Expect.ACCEPTABLE,
            desc = "woken, or saw the entry, or both")
    @Outcome(id = "0, 2", expect = Expect.ACCEPTABLE_INTERESTING,
            desc = "not woken, the publish still buffered: the claimed cell is seen, the park is bounded")
    @Outcome(id = "0, 0", expect = Expect.FORBIDDEN, desc = "lost wakeup: the carried task sits unseen")
    @State
    public static class CarriedPushVsPark extends Base {
        final BoundedRing inject = new BoundedRing(m, "inject", 2);
        final BoundedRing carried = new BoundedRing(m, "carried", 2, true);
        final Runnable task = () -> { };

        @Override
        boolean visible() {
            return inject.hasReadyEntry() || carried.hasReadyEntry(); // published entries only
        }

        @Actor
        public void submitter(II_Result r) {
            carried.tryPushCarried(task, null); // tryEnqueueCarried
            r.r1 = wake.signalWork() ? 1 : 0; // signalCarried: no fence
        }

        @Actor
        public void worker(II_Result r) {
            park(r);
            if (r.r2 == 0 && !(inject.isEmpty() && carried.isEmpty())) { // pendingPush
                r.r2 = 2;
            }
        }
    }

    /**
     * A registered submitter's queue as the park re-check sees it (WorkStealingScheduler.hasWork): the
     * registry mask (volatile), then the head/tail of each registered queue. Slot 0 starts registered.
     */
    abstract static class SubmitterBase extends Base {
        final MemorySegment mask = m.allocate("submitter mask", 8);
        final RingQueue sub = new RingQueue(m, "submitter queue 0", 2);
        final BoundedRing inject = new BoundedRing(m, "inject", 2);

        SubmitterBase() {
            Mem.setLongVolatile(mask, 0, 1L);
        }

        @Override
        boolean visible() {
            if (!inject.isEmpty()) {
                return true;
            }
            return (Mem.getLongVolatile(mask, 0) & 1L) != 0 && sub.size() > 0;
        }
    }

    @JCStressTest
    @Description("submitter-queue push (release) + full fence + coalesced wake vs announce, stop searching, re-check"
            + " of inject, registry mask and submitter queue")
    @Outcome(id = {"1, 1", "1, 0", "0, 1"}, expect = Expect.ACCEPTABLE, desc = "woken, or saw the entry, or both")
    @Outcome(id = "0, 0", expect = Expect.FORBIDDEN, desc = "lost wakeup")
    @State
    public static class SubmitterPushVsPark extends SubmitterBase {
        @Actor
        public void submitter(II_Result r) {
            sub.tryPush(1); // tryEnqueueFromSubmitter
            VarHandle.fullFence(); // as WorkStealingScheduler.signalWork
            r.r1 = wake.signalWork() ? 1 : 0;
        }

        @Actor
        public void worker(II_Result r) {
            park(r);
        }
    }

    @JCStressTest
    @Description("Submitter.close (steal the leftover entry, push it to inject, wake rule, clear the mask bit) vs"
            + " announce, stop searching, re-check of inject, registry mask and submitter queue")
    @Outcome(id = {"1, 1", "1, 0", "0, 1"}, expect = Expect.ACCEPTABLE, desc = "woken, or saw the entry, or both")
    @Outcome(id = "0, 0", expect = Expect.FORBIDDEN, desc = "lost wakeup: the moved entry sits unseen")
    @State
    public static class SubmitterCloseVsPark extends SubmitterBase {
        SubmitterCloseVsPark() {
            sub.tryPush(1); // queued before close (and before the worker started searching)
        }

        @Actor
        public void closer(II_Result r) {
            long e = sub.steal(); // WorkStealingScheduler.closeSubmitter
            inject.tryPush(e);
            VarHandle.fullFence();
            r.r1 = wake.signalWork() ? 1 : 0;
            Mem.getAndAndLong(mask, 0, ~1L); // SubmitterRegistry.release, after the wake rule
        }

        @Actor
        public void worker(II_Result r) {
            park(r);
        }
    }
}
