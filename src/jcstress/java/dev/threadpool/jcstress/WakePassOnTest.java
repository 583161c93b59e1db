package dev.threadpool.jcstress;

import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.BoundedRing;
import dev.threadpool.internal.queue.LifoSlot;
import dev.threadpool.internal.queue.QueueEntry;
import dev.threadpool.internal.scheduler.ParkingLot;
import dev.threadpool.internal.scheduler.WakeCoalescer;
import java.lang.invoke.VarHandle;
import java.util.function.IntPredicate;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.Expect;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * The pass-on rule of {@link WakeCoalescer} (issue 13), on the real primitives and the real rule. Three workers:
 * 0 is searching, 1 is parked (its idle bit set), 2 is busy and forks C into its LIFO slot, then runs the wake
 * rule (which coalesces while worker 0 is counted). Worker 0 stops searching and takes another entry, E1, in
 * which it may block for as long as it likes; then it applies the pass-on. Nobody takes C in this test, so C is
 * still queued at the end: r1 = the fork woke worker 1, r2 = worker 0's pass-on woke worker 1. "0, 0" means C
 * waits while worker 1 sleeps and worker 0 is busy elsewhere.
 *
 * <p>{@link OldRule} is the same race with the rule as it was: only a chained wake when the source the searcher
 * took from (the inject ring) still holds entries. Its "0, 0" is the defect (interesting, not forbidden,
 * because that rule is wrong).</p>
 */
public final class WakePassOnTest {
    private WakePassOnTest() {}

    abstract static class Base {
        static final long E1 = QueueEntry.pack(1, 1);
        static final long C = QueueEntry.pack(1, 2);
        final PoolMemory m = PoolMemory.createGcManaged();
        final ParkingLot parking = new ParkingLot(m, 3);
        final WakeCoalescer wake = new WakeCoalescer(m, parking, 1 << 12); // a coalesced submit never wakes
        final BoundedRing inject = new BoundedRing(m, "inject", 2);
        final LifoSlot lifo = new LifoSlot(m, "lifo", 3);
        /** WorkStealingScheduler.hasWork, reduced to the queues of this test: published entries. */
        final IntPredicate published = w -> inject.hasReadyEntry() || lifo.peekVolatile(0) != QueueEntry.EMPTY
                || lifo.peekVolatile(1) != QueueEntry.EMPTY || lifo.peekVolatile(2) != QueueEntry.EMPTY;

        Base() {
            for (int i = 0; i < 3; i++) {
                parking.register(i, new Thread(() -> { })); // never started: unpark is a no-op
            }
            parking.announce(1); // worker 1 is parked
            wake.beginSearch(); // worker 0 found its own queues empty
        }

        void fork(II_Result r) {
            lifo.put(2, C); // getAndSet (seq_cst): WorkStealingScheduler.tryEnqueue from worker 2
            VarHandle.fullFence(); // as WorkStealingScheduler.signalWork
            r.r1 = wake.signalWork() ? 1 : 0;
        }
    }

    @JCStressTest
    @Description("WORK_STEALING: coalesced LIFO fork vs a searcher that takes the inject entry, then passes on")
    @Outcome(id = {"1, 0", "0, 1"}, expect = Expect.ACCEPTABLE, desc = "the fork or the pass-on woke worker 1")
    @Outcome(id = "0, 0", expect = Expect.FORBIDDEN, desc = "C waits while worker 1 sleeps")
    @Outcome(id = "1, 1", expect = Expect.FORBIDDEN, desc = "two wakes claimed one idle bit")
    @State
    public static class InjectTakeVsCoalescedFork extends Base {
        public InjectTakeVsCoalescedFork() {
            inject.tryPush(E1);
        }

        @Actor
        public void busyWorker(II_Result r) {
            fork(r);
        }

        @Actor
        public void searcher(II_Result r) {
            wake.endSearch(); // its spin saw work
            inject.tryPop(); // E1: refillFromInject comes before stealing (one entry, ring empty: no chained wake)
            r.r2 = wake.passOn(published, 0) ? 1 : 0; // WorkStealingScheduler.passOnIfOwed
        }
    }

    @JCStressTest
    @Description("LANE_EXTENSION: coalesced default-lane fork vs a blocking worker's search that takes a blocking"
            + " entry, then passes on over the default lane")
    @Outcome(id = {"1, 0", "0, 1"}, expect = Expect.ACCEPTABLE, desc = "the fork or the pass-on woke worker 1")
    @Outcome(id = "0, 0", expect = Expect.FORBIDDEN, desc = "C waits while worker 1 sleeps")
    @Outcome(id = "1, 1", expect = Expect.FORBIDDEN, desc = "two wakes claimed one idle bit")
    @State
    public static class BlockingTakeVsCoalescedFork extends Base {
        final BoundedRing blocking = new BoundedRing(m, "blocking inject", 2);

        public BlockingTakeVsCoalescedFork() {
            blocking.tryPush(E1);
        }

        @Actor
        public void busyWorker(II_Result r) {
            fork(r);
        }

        @Actor
        public void searcher(II_Result r) {
            wake.endSearch();
            blocking.tryPop(); // LaneScheduler.next: a blocking worker takes its own lane first
            r.r2 = wake.passOn(published, 0) ? 1 : 0; // defaults.passOnIfOwed: the default lane only
        }
    }

    @JCStressTest
    @Description("the old rule: after its take, the searcher wakes only if the ring it took from is non-empty")
    @Outcome(id = {"1, 0", "0, 1"}, expect = Expect.ACCEPTABLE, desc = "the fork or the chained wake woke worker 1")
    @Outcome(id = "0, 0", expect = Expect.ACCEPTABLE_INTERESTING,
            desc = "the defect: the fork coalesced on the searcher, which took E1; C waits while worker 1 sleeps")
    @Outcome(id = "1, 1", expect = Expect.FORBIDDEN, desc = "two wakes claimed one idle bit")
    @State
    public static class OldRule extends Base {
        public OldRule() {
            inject.tryPush(E1);
        }

        @Actor
        public void busyWorker(II_Result r) {
            fork(r);
        }

        @Actor
        public void searcher(II_Result r) {
            wake.endSearch();
            inject.tryPop();
            r.r2 = !inject.isEmpty() && parking.idleMask() != 0 && parking.wakeOne() >= 0 ? 1 : 0;
        }
    }
}
