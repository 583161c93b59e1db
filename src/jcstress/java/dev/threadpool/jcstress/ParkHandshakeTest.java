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
 * The park handshake of {@link ParkingLot}, on the real ring and idle mask: a submitter publishes an entry and
 * then looks for an idle worker; a worker announces itself idle and then re-checks the ring. If neither saw
 * the other, the worker would park with work queued and nobody would wake it.
 */
public final class ParkHandshakeTest {
    private ParkHandshakeTest() {}

    @JCStressTest
    @Description("submit (push, then wakeOne) vs park (announce, then re-check the ring)")
    @Outcome(id = "1, 1", expect = Expect.ACCEPTABLE,
            desc = "announce -> push -> wakeOne sees the bit; the worker's re-check also saw the entry")
    @Outcome(id = "1, 0", expect = Expect.ACCEPTABLE,
            desc = "announce -> re-check (empty) -> push -> wakeOne: the submitter wakes the worker")
    @Outcome(id = "0, 1", expect = Expect.ACCEPTABLE,
            desc = "push -> wakeOne (no bit yet) -> announce -> re-check sees the entry: the worker does not park")
    @Outcome(id = "0, 0", expect = Expect.FORBIDDEN,
            desc = "the submitter missed the announcement and the worker missed the entry: a lost wakeup")
    @State
    public static class SubmitVsPark {
        final BoundedRing ring;
        final ParkingLot parking;

        public SubmitVsPark() {
            PoolMemory m = PoolMemory.createGcManaged();
            ring = new BoundedRing(m, "inject", 2);
            parking = new ParkingLot(m, 1);
            parking.register(0, new Thread(() -> { })); // never started: unpark is a no-op
        }

        @Actor
        public void submitter(II_Result r) {
            ring.tryPush(1);
            r.r1 = parking.wakeOne() >= 0 ? 1 : 0;
        }

        @Actor
        public void worker(II_Result r) {
            parking.announce(0);
            r.r2 = ring.isEmpty() ? 0 : 1;
        }
    }

    @JCStressTest
    @Description("two submitters race to wake the single announced worker: exactly one wakes it")
    @Outcome(id = {"1, 0", "0, 1"}, expect = Expect.ACCEPTABLE, desc = "one waker cleared the bit; the other saw it gone")
    @Outcome(id = "1, 1", expect = Expect.FORBIDDEN, desc = "both claimed the same wake-up")
    @Outcome(id = "0, 0", expect = Expect.FORBIDDEN, desc = "nobody woke the announced worker")
    @State
    public static class TwoWakersOneSleeper {
        final ParkingLot parking;

        public TwoWakersOneSleeper() {
            parking = new ParkingLot(PoolMemory.createGcManaged(), 1);
            parking.register(0, new Thread(() -> { }));
            parking.announce(0);
        }

        @Actor public void waker1(II_Result r) { r.r1 = parking.wakeOne() >= 0 ? 1 : 0; }
        @Actor public void waker2(II_Result r) { r.r2 = parking.wakeOne() >= 0 ? 1 : 0; }
    }
}
