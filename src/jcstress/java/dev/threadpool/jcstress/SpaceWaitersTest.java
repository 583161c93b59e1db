package dev.threadpool.jcstress;

import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.BoundedRing;
import dev.threadpool.internal.scheduler.DescriptorTable;
import dev.threadpool.internal.scheduler.SpaceWaiters;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.Expect;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * The space-wait handshake of {@link SpaceWaiters} on a real descriptor table: a producer that found the
 * table full registers as a waiter and re-checks the freelist; a worker frees a descriptor and then looks
 * for waiters. If neither saw the other, the producer would sleep (up to the park cap) next to a free slot.
 */
public final class SpaceWaitersTest {
    private SpaceWaitersTest() {}

    @JCStressTest
    @Description("waiter (register, then re-check the freelist) vs releaser (free a slot, then look for waiters)")
    @Outcome(id = "1, 1", expect = Expect.ACCEPTABLE, desc = "register -> release -> both see each other")
    @Outcome(id = "0, 1", expect = Expect.ACCEPTABLE,
            desc = "register -> re-check (still full) -> release -> the releaser sees the waiter and wakes it")
    @Outcome(id = "1, 0", expect = Expect.ACCEPTABLE,
            desc = "release -> look (no waiter yet) -> register -> re-check sees the free slot")
    @Outcome(id = "0, 0", expect = Expect.FORBIDDEN,
            desc = "the waiter missed the free slot and the releaser missed the waiter: a lost wake-up")
    @State
    public static class WaitVsRelease {
        final DescriptorTable table;
        final SpaceWaiters waiters;
        final int held;

        public WaitVsRelease() {
            PoolMemory m = PoolMemory.createGcManaged();
            table = new DescriptorTable(m, 2);
            waiters = new SpaceWaiters(m, "space");
            held = table.acquire();
            table.acquire(); // the table is full
        }

        @Actor
        public void waiter(II_Result r) {
            waiters.register(); // stays registered, as a waiter about to park would be
            r.r1 = table.hasFree() ? 1 : 0;
        }

        @Actor
        public void releaser(II_Result r) {
            table.unreserve(held);
            r.r2 = waiters.hasWaiters() ? 1 : 0;
        }
    }

    /**
     * The carried ring's waiter (Submission.awaitCarriedRoom, with hysteresis): a submitter that found the ring
     * full registers and re-checks the low-water mark ({@code atMostHalfFull}); a worker pops a carried task and
     * then looks for waiters and at the mark (WorkerLoop.runCarried). Three of four cells queued, so the pop
     * brings the ring to the mark: one of the two must see the other's step.
     */
    @JCStressTest
    @Description("carried-ring waiter (register, re-check the half mark) vs popper (pop, look for waiters and the mark)")
    @Outcome(id = "1, 1", expect = Expect.ACCEPTABLE, desc = "register -> pop -> both see each other")
    @Outcome(id = "0, 1", expect = Expect.ACCEPTABLE,
            desc = "register -> re-check (above half) -> pop -> the popper sees the waiter at the mark and signals")
    @Outcome(id = "1, 0", expect = Expect.ACCEPTABLE,
            desc = "pop -> look (no waiter yet) -> register -> re-check sees the ring at half")
    @Outcome(id = "0, 0", expect = Expect.FORBIDDEN,
            desc = "the waiter missed the drained ring and the popper missed the waiter: a lost wake-up")
    @State
    public static class LowWaterVsPop {
        final BoundedRing ring;
        final SpaceWaiters waiters;
        final Object[] taken = new Object[2];

        public LowWaterVsPop() {
            PoolMemory m = PoolMemory.createGcManaged();
            ring = new BoundedRing(m, "carried", 4, true);
            waiters = new SpaceWaiters(m, "carried-ring waiters");
            Runnable task = () -> { };
            for (int i = 0; i < 3; i++) {
                ring.tryPushCarried(task, null); // 3 of 4 queued: above the mark (2)
            }
        }

        @Actor
        public void waiter(II_Result r) {
            waiters.register(); // stays registered, as a waiter about to park would be
            r.r1 = ring.atMostHalfFull() ? 1 : 0;
        }

        @Actor
        public void popper(II_Result r) {
            ring.tryPop(taken);
            r.r2 = waiters.hasWaiters() && ring.atMostHalfFull() ? 1 : 0;
        }
    }
}
