package dev.threadpool.jcstress;

import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.BoundedRing;
import dev.threadpool.internal.queue.CarriedBatches;
import dev.threadpool.internal.queue.QueueEntry;
import java.util.concurrent.atomic.AtomicLong;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.Expect;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.JJJ_Result;
import org.openjdk.jcstress.infra.results.JJ_Result;

/**
 * Races of {@link CarriedBatches} and of the ring claim under it ({@link BoundedRing#popManyCarried}). Items are
 * boxed numbers pushed as carried tasks whose "group" is the negated number, so a task handed over with another
 * push's group shows up. Every test's arbiter drains what is left and checks that each item came out exactly
 * once; worker 0 owns the batch.
 */
public final class CarriedBatchesTest {
    private CarriedBatchesTest() {}

    /** A carrying ring of {@code capacity} cells, a lap in (the cells' indices wrap), holding {@code first..last}. */
    static BoundedRing ring(int capacity, long first, long last) {
        BoundedRing r = BoundedRingTest.carryingRing(capacity, 1);
        for (long v = first; v <= last; v++) {
            if (!r.tryPushCarried(v, -v)) {
                throw new IllegalStateException("setup: ring full at " + v);
            }
        }
        return r;
    }

    /**
     * Records item {@code taken[0]} in {@code seen} (bit v), checking its group; returns the item, or 0 for none.
     * A duplicate or torn pair sets bit 63.
     */
    static long record(long[] seen, boolean got, Object[] taken) {
        if (!got) {
            return 0;
        }
        long v = (Long) taken[0];
        if ((Long) taken[1] != -v || (seen[0] & (1L << v)) != 0) {
            seen[0] |= Long.MIN_VALUE;
        }
        seen[0] |= 1L << v;
        taken[0] = null;
        taken[1] = null;
        return v;
    }

    /** Drains batch 0 and the ring into {@code seen}; returns 1 if {@code 1..n} each came out exactly once. */
    static long exactlyOnce(long[] seen, CarriedBatches b, BoundedRing r, int n) {
        Object[] taken = new Object[2];
        while (b.take(0, taken)) {
            record(seen, true, taken);
        }
        while (r.tryPop(taken) == QueueEntry.CARRIED) {
            record(seen, true, taken);
        }
        long all = ((1L << (n + 1)) - 1) & ~1L; // bits 1..n
        return seen[0] == all ? 1 : 0;
    }

    @JCStressTest
    @Description("The owner claimed 1..4 from a ring of 1..8 (it runs 1); it takes its next entry while a thief"
            + " steals one. r1 = the owner's, r2 = the thief's, r3 = 1 if every item came out exactly once.")
    @Outcome(id = {"2, 3, 1", "3, 2, 1"}, expect = Expect.ACCEPTABLE, desc = "each CAS on next took its own entry")
    @Outcome(expect = Expect.FORBIDDEN, desc = "an entry taken twice, lost, or handed over with another's group")
    @State
    public static class OwnerTakeVsThief {
        final BoundedRing r = ring(16, 1, 8);
        final CarriedBatches b = new CarriedBatches(PoolMemory.createGcManaged(), 2);
        final long[] seen = new long[1];
        long owner;
        long thief;

        {
            Object[] taken = new Object[2];
            if (b.refill(0, r, taken, 4) != 4 || (Long) taken[0] != 1L) {
                throw new IllegalStateException("setup: expected a claim of 4 starting at 1");
            }
            seen[0] = 1L << 1;
        }

        @Actor public void owner() {
            Object[] taken = new Object[2];
            owner = b.take(0, taken) ? (Long) taken[0] * 1000 + -(Long) taken[1] : 0; // v * 1000 + v when intact
        }

        @Actor public void thief() {
            Object[] taken = new Object[2];
            thief = b.take(0, taken) ? (Long) taken[0] * 1000 + -(Long) taken[1] : 0;
        }

        @Arbiter public void check(JJJ_Result res) {
            res.r1 = owner % 1001 == 0 ? owner / 1001 : -owner; // the item, or its torn code negated
            res.r2 = thief % 1001 == 0 ? thief / 1001 : -thief;
            if (res.r1 > 0) {
                seen[0] |= 1L << res.r1;
            }
            if (res.r2 > 0) {
                seen[0] |= 1L << res.r2;
            }
            res.r3 = res.r1 > 0 && res.r2 > 0 && res.r1 != res.r2 ? exactlyOnce(seen, b, r, 8) : 0;
        }
    }

    @JCStressTest
    @Description("Batch 0 holds one entry (3) of the owner's claim of 1..3 from a ring of 1..20. The owner asks for"
            + " its next task twice (its batch, then a new claim from the ring once the batch is empty) while a"
            + " thief takes from the batch twice: a thief that read the old batch must never win its CAS on the new"
            + " one with the old references (the generation in the state word). r1, r2 = the owner's two items,"
            + " r3 = 1 if every item came out exactly once with its own group.")
    @Outcome(id = "3, 4, 1", expect = Expect.ACCEPTABLE,
            desc = "the owner took 3 from its batch, then claimed 4..7 (the thief took nothing, or some of 5..7)")
    @Outcome(id = {"4, 5, 1", "4, 6, 1"}, expect = Expect.ACCEPTABLE,
            desc = "the thief took 3 first; the owner's claim of 4..7 runs 4, then its batch's next (6: the thief"
                    + " took 5)")
    @Outcome(expect = Expect.FORBIDDEN, desc = "an item taken twice or lost, or a task with another push's group")
    @State
    public static class RefillVsStaleThief {
        final BoundedRing r = ring(32, 1, 20);
        final CarriedBatches b = new CarriedBatches(PoolMemory.createGcManaged(), 2);
        final long[] ownerSeen = new long[1];
        final long[] thiefSeen = new long[1];
        long first;
        long second;

        {
            Object[] taken = new Object[2];
            // max 3: at least 6 ready, so a claim of 3: 1 to us, 2 and 3 batched; 4..20 stay (17 >= 2 * 4)
            if (b.refill(0, r, taken, 3) != 3 || (Long) taken[0] != 1L || !b.take(0, taken) || (Long) taken[0] != 2L) {
                throw new IllegalStateException("setup: expected a claim of 1..3 and 2 taken");
            }
        }

        @Actor public void owner() {
            Object[] taken = new Object[2];
            first = record(ownerSeen, b.refill(0, r, taken, 4) > 0, taken);
            second = record(ownerSeen, b.refill(0, r, taken, 4) > 0, taken);
        }

        @Actor public void thief() {
            Object[] taken = new Object[2];
            record(thiefSeen, b.take(0, taken), taken);
            record(thiefSeen, b.take(0, taken), taken);
        }

        @Arbiter public void check(JJJ_Result res) {
            res.r1 = first;
            res.r2 = second;
            long[] seen = {ownerSeen[0] | thiefSeen[0] | (1L << 1) | (1L << 2)};
            boolean overlap = (ownerSeen[0] & thiefSeen[0]) != 0;
            res.r3 = !overlap && ownerSeen[0] >= 0 && thiefSeen[0] >= 0 ? exactlyOnce(seen, b, r, 20) : 0;
        }
    }

    @JCStressTest
    @Description("Dekker pair between a refill and a worker going idle: the owner claims a batch (its publishing"
            + " getAndSet is seq_cst) and then loads the idle flag, while an idle worker announces itself (a"
            + " seq_cst RMW, as ParkingLot's mask) and then re-checks hasStealable. r1 = the owner saw the"
            + " announcement, r2 = the idle worker saw the batch.")
    @Outcome(id = {"1, 1", "1, 0", "0, 1"}, expect = Expect.ACCEPTABLE,
            desc = "at least one side saw the other: the owner wakes the worker, or the worker does not park")
    @Outcome(id = "0, 0", expect = Expect.FORBIDDEN,
            desc = "both missed: the worker parks while the batch sits behind the owner's running task")
    @State
    public static class RefillVsIdleRecheck {
        final BoundedRing r = ring(16, 1, 8);
        final CarriedBatches b = new CarriedBatches(PoolMemory.createGcManaged(), 2);
        final AtomicLong idleMask = new AtomicLong();

        @Actor public void owner(JJ_Result res) {
            Object[] taken = new Object[2];
            b.refill(0, r, taken, 4); // claims 1..4: 2..4 published
            res.r1 = idleMask.get() != 0 ? 1 : 0; // volatile load after the seq_cst getAndSet
        }

        @Actor public void idle(JJ_Result res) {
            idleMask.getAndAdd(2); // announce: a seq_cst RMW
            res.r2 = b.hasStealable(0) ? 1 : 0;
        }
    }

    @JCStressTest
    @Description("A claim of a batch races a plain pop on a ring holding 1..4 (capacity 4, full): the claim takes"
            + " two with one CAS when it sees four ready, else one; every item comes out once. r1 = how many the"
            + " claim took, r2 = the pop's item, r3 = 1 if all four came out exactly once.")
    @Outcome(id = {"2, 3, 1", "1, 1, 1"}, expect = Expect.ACCEPTABLE,
            desc = "the claim saw four ready and took 1, 2 (the pop 3); or the pop took 1 first (before the claim's"
                    + " scan, or its CAS won after it and the claim retried) and the claim, seeing three, took 2")
    @Outcome(expect = Expect.FORBIDDEN, desc = "an item taken twice or lost")
    @State
    public static class ClaimVsPop {
        final BoundedRing r = ring(4, 1, 4);
        final CarriedBatches b = new CarriedBatches(PoolMemory.createGcManaged(), 1);
        final long[] claimSeen = new long[1];
        final long[] popSeen = new long[1];
        long claimed;
        long popped;

        @Actor public void claimer() {
            Object[] taken = new Object[2];
            claimed = b.refill(0, r, taken, 2);
            record(claimSeen, claimed > 0, taken);
        }

        @Actor public void popper() {
            Object[] taken = new Object[2];
            popped = record(popSeen, r.tryPop(taken) == QueueEntry.CARRIED, taken);
        }

        @Arbiter public void check(JJJ_Result res) {
            res.r1 = claimed;
            res.r2 = popped;
            long[] seen = {claimSeen[0] | popSeen[0]};
            boolean ok = (claimSeen[0] & popSeen[0]) == 0 && claimSeen[0] >= 0 && popSeen[0] >= 0;
            res.r3 = ok ? exactlyOnce(seen, b, r, 4) : 0;
        }
    }

    @JCStressTest
    @Description("A full ring (capacity 4: 1..4). A claim of two frees both cells before it returns, while a"
            + " producer pushes 5 into the cell of 1 (one lap later): the claim must hand over 1 and 2, never 5,"
            + " and the push lands only after the cell was freed. r1 = the claim's first item, r2 = the push took,"
            + " r3 = 1 if every pushed item came out exactly once.")
    @Outcome(id = {"1, 1, 1", "1, 0, 1"}, expect = Expect.ACCEPTABLE,
            desc = "the push found the cell freed, or the ring still full")
    @Outcome(expect = Expect.FORBIDDEN,
            desc = "the claim read the next lap's references, an item lost or duplicated")
    @State
    public static class ClaimVsLappingPush {
        final BoundedRing r = ring(4, 1, 4);
        final CarriedBatches b = new CarriedBatches(PoolMemory.createGcManaged(), 1);
        final long[] claimSeen = new long[1];
        long first;
        long pushed;

        @Actor public void claimer() {
            Object[] taken = new Object[2];
            first = record(claimSeen, b.refill(0, r, taken, 2) > 0, taken);
        }

        @Actor public void producer() {
            pushed = r.tryPushCarried(5L, -5L) ? 1 : 0;
        }

        @Arbiter public void check(JJJ_Result res) {
            res.r1 = first;
            res.r2 = pushed;
            res.r3 = claimSeen[0] >= 0 ? exactlyOnce(claimSeen, b, r, pushed == 1 ? 5 : 4) : 0;
        }
    }
}
