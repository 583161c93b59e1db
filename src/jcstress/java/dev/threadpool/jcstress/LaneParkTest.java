package dev.threadpool.jcstress;

import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.BoundedRing;
import dev.threadpool.internal.scheduler.ParkingLot;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.Expect;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * Submit BLOCKING vs a blocking-lane worker about to park, in the LANE_EXTENSION wake rule, on the real
 * primitives. Two workers: 0 is the blocking lane's worker, 1 a default-lane worker that is already parked
 * (its idle bit set). The submitter pushes on the blocking ring (seq_cst CAS) and wakes one worker of the lane
 * ({@link ParkingLot#wakeOneOf} with the blocking mask); worker 0 announces and re-checks the blocking ring.
 * r1 = the submitter woke worker 0, r2 = worker 0's re-check saw the entry. "0, 0" is a lost wakeup: worker 0
 * parks with a blocking entry queued that only it may take.
 *
 * <p>{@link WrongMask} is the same race with the lane-less {@link ParkingLot#wakeOne}: it may spend the wake on
 * the parked default worker, whose re-check cannot see the blocking ring, and leave worker 0 asleep. It is
 * there to show the mask is needed (the outcome is "interesting", not forbidden, because that rule is wrong).
 */
public final class LaneParkTest {
    private LaneParkTest() {}

    abstract static class Base {
        static final long BLOCKING_MASK = 1L; // blockingWorkers = 1
        final PoolMemory m = PoolMemory.createGcManaged();
        final ParkingLot parking = new ParkingLot(m, 2);
        final BoundedRing blocking = new BoundedRing(m, "blocking inject", 2);

        Base() {
            parking.register(0, new Thread(() -> { })); // never started: unpark is a no-op
            parking.register(1, new Thread(() -> { }));
            parking.announce(1); // the default-lane worker is parked already
        }

        void blockingWorkerParks(II_Result r) {
            parking.announce(0); // step 1
            r.r2 = blocking.isEmpty() ? 0 : 1; // step 2: LaneScheduler.hasWork(0) checks the blocking ring
        }
    }

    @JCStressTest
    @Description("blocking-ring push + wake within the blocking lane vs the blocking worker's announce + re-check")
    @Outcome(id = {"1, 1", "1, 0", "0, 1"}, expect = Expect.ACCEPTABLE, desc = "woken, or saw the entry, or both")
    @Outcome(id = "0, 0", expect = Expect.FORBIDDEN, desc = "lost wakeup: blocking entry, blocking worker asleep")
    @State
    public static class BlockingSubmitVsPark extends Base {
        @Actor
        public void submitter(II_Result r) {
            blocking.tryPush(1);
            r.r1 = parking.wakeOneOf(BLOCKING_MASK) == 0 ? 1 : 0; // as LaneScheduler.wakeBlocking
        }

        @Actor
        public void worker(II_Result r) {
            blockingWorkerParks(r);
        }
    }

    @JCStressTest
    @Description("cpuHelpsBlocking: no blocking worker idle, so the wake falls back to the default workers; the"
            + " default worker 1 announces and re-checks the blocking ring too")
    @Outcome(id = {"1, 1", "1, 0", "0, 1"}, expect = Expect.ACCEPTABLE, desc = "woken, or saw the entry, or both")
    @Outcome(id = "0, 0", expect = Expect.FORBIDDEN, desc = "lost wakeup")
    @State
    public static class HelpingDefaultWorkerVsPark {
        final PoolMemory m = PoolMemory.createGcManaged();
        final ParkingLot parking = new ParkingLot(m, 2);
        final BoundedRing blocking = new BoundedRing(m, "blocking inject", 2);

        public HelpingDefaultWorkerVsPark() {
            parking.register(0, new Thread(() -> { }));
            parking.register(1, new Thread(() -> { }));
            // worker 0 (blocking) is busy: its bit is clear
        }

        @Actor
        public void submitter(II_Result r) {
            blocking.tryPush(1);
            int woke = parking.wakeOneOf(1L);
            if (woke < 0) {
                woke = parking.wakeOneOf(~1L & 3L); // cpuHelpsBlocking: the other workers' bits
            }
            r.r1 = woke == 1 ? 1 : 0;
        }

        @Actor
        public void worker(II_Result r) {
            parking.announce(1);
            r.r2 = blocking.isEmpty() ? 0 : 1; // hasWork(1) includes the blocking ring under cpuHelpsBlocking
        }
    }

    @JCStressTest
    @Description("the wrong rule: a lane-less wakeOne may wake the parked default worker instead")
    @Outcome(id = {"1, 1", "1, 0", "0, 1"}, expect = Expect.ACCEPTABLE, desc = "woken, or saw the entry, or both")
    @Outcome(id = "0, 0", expect = Expect.ACCEPTABLE_INTERESTING,
            desc = "lost wakeup: the wake went to a worker that cannot take the entry")
    @State
    public static class WrongMask extends Base {
        public WrongMask() {
            // Point the rotating wake hint at worker 1, so that with both bits set wakeOne picks the default one.
            parking.retract(1);
            parking.announce(0);
            parking.wakeOne(); // wakes 0 and moves the hint to 1
            parking.announce(1);
        }

        @Actor
        public void submitter(II_Result r) {
            blocking.tryPush(1);
            r.r1 = parking.wakeOne() == 0 ? 1 : 0;
        }

        @Actor
        public void worker(II_Result r) {
            blockingWorkerParks(r);
        }
    }
}
