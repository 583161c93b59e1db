package dev.threadpool.jcstress;

import dev.threadpool.internal.memory.PoolMemory;
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
}
