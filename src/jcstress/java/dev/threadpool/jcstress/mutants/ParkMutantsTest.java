package dev.threadpool.jcstress.mutants;

import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.BoundedRing;
import dev.threadpool.internal.queue.RingQueue;
import dev.threadpool.internal.scheduler.ParkingLot;
import dev.threadpool.internal.scheduler.WakeCoalescer;
import dev.threadpool.jcstress.ParkHandshakeTest;
import dev.threadpool.jcstress.WorkStealingParkTest;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.Expect;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * Mutant detectors for the park/wake handshake: each is a real test's race run against one weakened step, with
 * the lost wakeup FORBIDDEN as in the real test, so each is <em>expected to fail</em>. {@link MutantsCaught}
 * (the {@code jcstress-mutants} execution of {@code mvn verify}) fails the build if one of them passes.
 * r1 = the submitter woke the worker, r2 = the worker's re-check saw the entry; "0, 0" is the lost wakeup.
 */
public final class ParkMutantsTest {
    private ParkMutantsTest() {}

    @JCStressTest
    @Description("MUTANT (announce with a plain store instead of getAndOr) in ParkHandshakeTest.SubmitVsPark's"
            + " race. Expected to FAIL: the lost wakeup must show up.")
    @Outcome(id = {"1, 1", "1, 0", "0, 1"}, expect = Expect.ACCEPTABLE, desc = "woken, or saw the entry, or both")
    @Outcome(id = "0, 0", expect = Expect.FORBIDDEN,
            desc = "THE MUTANT CAUGHT: the plain announcement sat in the store buffer while the re-check loaded"
                    + " the ring (empty), and the submitter's mask load missed it: the worker parks, nobody wakes it")
    @State
    public static class PlainAnnounceVsSubmit {
        final PoolMemory m = PoolMemory.createGcManaged();
        final BoundedRing ring = new BoundedRing(m, "inject", 2);
        final PlainAnnounceLot parking = new PlainAnnounceLot(m);

        @Actor
        public void submitter(II_Result r) { // as ParkHandshakeTest.SubmitVsPark
            ring.tryPush(1);
            r.r1 = parking.wakeOne() ? 1 : 0;
        }

        @Actor
        public void worker(II_Result r) {
            parking.announce(0);
            r.r2 = ring.isEmpty() ? 0 : 1;
        }
    }

    /**
     * {@link WorkStealingParkTest.LocalPushVsPark} without the full fence that WorkStealingScheduler.signalWork
     * puts between a local-queue push (a release store of tail) and the wake rule's idle-mask load.
     */
    @JCStressTest
    @Description("MUTANT (WorkStealingScheduler.signalWork without its full fence) in"
            + " WorkStealingParkTest.LocalPushVsPark's race. Expected to FAIL: the lost wakeup must show up.")
    @Outcome(id = {"1, 1", "1, 0", "0, 1"}, expect = Expect.ACCEPTABLE, desc = "woken, or saw the entry, or both")
    @Outcome(id = "0, 0", expect = Expect.FORBIDDEN,
            desc = "THE MUTANT CAUGHT: the push's tail store sat in the store buffer while the submitter's mask"
                    + " load read 0; the worker announced and its re-check missed the entry: a lost wakeup")
    @State
    public static class UnfencedLocalPushVsPark {
        final PoolMemory m = PoolMemory.createGcManaged();
        final ParkingLot parking = new ParkingLot(m, 1);
        final WakeCoalescer wake = new WakeCoalescer(m, parking, 1 << 12);
        final RingQueue local = new RingQueue(m, "local 1", 2, true);

        public UnfencedLocalPushVsPark() {
            parking.register(0, new Thread(() -> { })); // never started: unpark is a no-op
            wake.beginSearch();
        }

        @Actor
        public void submitter(II_Result r) {
            local.tryPush(1);
            // MUTATION: no VarHandle.fullFence() here (WorkStealingScheduler.signalWork has one)
            r.r1 = wake.signalWork() ? 1 : 0;
        }

        @Actor
        public void worker(II_Result r) { // as WorkStealingParkTest.Base.park
            parking.announce(0);
            wake.endSearch();
            r.r2 = local.size() > 0 ? 1 : 0;
        }
    }
}
