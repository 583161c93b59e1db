package dev.threadpool.jcstress;

import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.BoundedRing;
import dev.threadpool.internal.scheduler.ParkingLot;
import java.lang.invoke.VarHandle;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.Expect;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * The park re-check against a ring push when the re-check looks at published cells (issue 13): a producer
 * claims a cell (tail CAS), publishes it (release store of its seq) and then loads the idle mask to wake a
 * worker; the worker announces and re-checks, first for a published head cell ({@link BoundedRing#hasReadyEntry})
 * and, when there is none, for a claimed one ({@code !isEmpty()}: the producer is mid-push).
 * r1 = the producer woke the worker; r2 = 1 published entry seen (no park), 2 only a claimed cell (the worker
 * parks, bounded by {@code Scheduler.PENDING_PARK_NANOS}), 0 nothing (the worker parks with no bound).
 *
 * <ul>
 *   <li>"0, 0" is forbidden with or without a fence: the tail CAS and the worker's tail load are seq_cst, the
 *       plain ParkingLot handshake.</li>
 *   <li>"0, 2" (the worker parks on a claimed cell, and the producer's wake missed it) is forbidden when a full
 *       fence separates the publish from the mask load (WORK_STEALING's signalWork): if the mask load misses
 *       the announcement, the fence precedes it, so the re-check's seq load sees the publish. Without the fence
 *       (GLOBAL_QUEUE, the blocking lane) the mask load may pass the publish still in the store buffer: that
 *       outcome is why a park on a claimed cell is bounded rather than indefinite.</li>
 * </ul>
 */
public final class RingPublishParkTest {
    private RingPublishParkTest() {}

    abstract static class Base {
        final PoolMemory m = PoolMemory.createGcManaged();
        final BoundedRing ring = new BoundedRing(m, "inject", 2);
        final ParkingLot parking = new ParkingLot(m, 1);

        Base() {
            parking.register(0, new Thread(() -> { })); // never started: unpark is a no-op
        }

        void announceAndRecheck(II_Result r) {
            parking.announce(0); // step 1
            r.r2 = ring.hasReadyEntry() ? 1 : !ring.isEmpty() ? 2 : 0; // Idle.idle: hasWork, then pendingPush
        }
    }

    @JCStressTest
    @Description("push, full fence, wake (WORK_STEALING) vs announce, re-check published, then claimed cells")
    @Outcome(id = {"1, 0", "1, 1", "1, 2", "0, 1"}, expect = Expect.ACCEPTABLE,
            desc = "woken, or saw the published entry")
    @Outcome(id = "0, 2", expect = Expect.FORBIDDEN, desc = "the fence orders the publish before the mask load")
    @Outcome(id = "0, 0", expect = Expect.FORBIDDEN, desc = "lost wakeup")
    @State
    public static class FencedPublishVsPark extends Base {
        @Actor
        public void producer(II_Result r) {
            ring.tryPush(1);
            VarHandle.fullFence(); // WorkStealingScheduler.signalWork
            r.r1 = parking.wakeOne() >= 0 ? 1 : 0;
        }

        @Actor
        public void worker(II_Result r) {
            announceAndRecheck(r);
        }
    }

    @JCStressTest
    @Description("push, wake, no fence (GLOBAL_QUEUE, blocking lane) vs announce, re-check published, then claimed")
    @Outcome(id = {"1, 0", "1, 1", "1, 2", "0, 1"}, expect = Expect.ACCEPTABLE,
            desc = "woken, or saw the published entry")
    @Outcome(id = "0, 2", expect = Expect.ACCEPTABLE_INTERESTING,
            desc = "the mask load passed the buffered publish: the worker's park on the claimed cell is bounded")
    @Outcome(id = "0, 0", expect = Expect.FORBIDDEN, desc = "lost wakeup: the tail CAS is seq_cst")
    @State
    public static class UnfencedPublishVsPark extends Base {
        @Actor
        public void producer(II_Result r) {
            ring.tryPush(1);
            r.r1 = parking.wakeOne() >= 0 ? 1 : 0; // GlobalQueueScheduler.signalWork: no fence after the push
        }

        @Actor
        public void worker(II_Result r) {
            announceAndRecheck(r);
        }
    }
}
