package dev.threadpool.jcstress;

import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.scheduler.DescriptorTable;
import dev.threadpool.internal.scheduler.OutsideDescCaches;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.Expect;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.IIII_Result;

/**
 * Races on one stripe of {@link OutsideDescCaches}: two outside threads of the same stripe (try-lock against
 * try-lock), and a thread draining another stripe's cache (an acquirer that found nothing, Slots' hazard rule 5)
 * against that stripe's thread popping. A table of 4 slots, one stripe with refills of 4: the setup pops one
 * (held), so the cache holds the other three and the freelist is empty. Afterwards the arbiter collects every slot
 * from every party (the two actors, the one held, the cache, the freelist) as a bitmask: 15 with no duplicate means
 * each slot was handed out exactly once and none lost. It also checks {@code countFree()} against what it
 * collected and that the lock is free.
 */
public final class OutsideDescCachesTest {
    private OutsideDescCachesTest() {}

    static final int CAP = 4;

    /** Bitmask of slots collected, and whether any slot came twice (or the accounting was off). */
    static final class Owners {
        int seen;
        int dup;

        void add(int idx) {
            if (idx < 0) {
                return;
            }
            if ((seen & (1 << idx)) != 0) {
                dup = 1;
            }
            seen |= 1 << idx;
        }

        /** Pops stripe 0 until -1 (this also refills from, and so empties, the freelist). */
        void drain(OutsideDescCaches c) {
            for (int i; (i = c.pop(0)) >= 0; ) {
                add(i);
            }
        }

        void drain(DescriptorTable t) {
            for (int i; (i = t.acquire()) != -1; ) {
                add(i);
            }
        }
    }

    /** An outside thread's acquire as Slots makes it: the stripe's cache, or the freelist when the lock is held. */
    static int acquire(OutsideDescCaches c, DescriptorTable t, int[] busy, int k) {
        int idx = c.pop(0);
        if (idx == OutsideDescCaches.BUSY) {
            busy[k] = 1;
            idx = t.acquire();
        }
        return idx;
    }

    /** What the two actors got: +1 per slot, checked against countFree() (4 - held - taken). */
    static void checkAccounting(Owners o, DescriptorTable t, OutsideDescCaches c, int taken) {
        if (t.countFree() != CAP - 1 - taken || c.isLocked(0)) {
            o.dup = 1;
        }
    }

    @JCStressTest
    @Description("Two outside threads of one stripe acquire at once: each try-locks the stripe's cache (three"
            + " slots cached, freelist empty); one that finds the lock held falls back to the freelist and never"
            + " waits. r1 = bitmask of all slots collected, r2 = duplicate or accounting flag, r3/r4 = whether"
            + " thread 1 / thread 2 found the lock held.")
    @Outcome(id = "15, 0, 0, 0", expect = Expect.ACCEPTABLE,
            desc = "one after the other: each popped its own slot from the cache")
    @Outcome(id = "15, 0, 1, 0", expect = Expect.ACCEPTABLE,
            desc = "thread 2 held the lock: thread 1 fell back to the freelist (empty: it got none)")
    @Outcome(id = "15, 0, 0, 1", expect = Expect.ACCEPTABLE,
            desc = "thread 1 held the lock: thread 2 fell back to the freelist (empty: it got none)")
    @Outcome(id = "15, 0, 1, 1", expect = Expect.FORBIDDEN,
            desc = "both found the lock held: one of them must have held it")
    @Outcome(expect = Expect.FORBIDDEN,
            desc = "both inside the cache at once (a slot popped twice), a slot lost, or the lock left held")
    @State
    public static class TryLockVsTryLock {
        final DescriptorTable t = new DescriptorTable(PoolMemory.createGcManaged(), CAP);
        final OutsideDescCaches c = new OutsideDescCaches(PoolMemory.createGcManaged(), "jcstress outside", t, 1, CAP);
        final int held = c.pop(0); // refill took all four: 0 held, 1, 2, 3 cached
        final int[] busy = new int[2];
        int a;
        int b;

        @Actor public void thread1() {
            a = acquire(c, t, busy, 0);
        }

        @Actor public void thread2() {
            b = acquire(c, t, busy, 1);
        }

        @Arbiter public void check(IIII_Result r) {
            Owners o = new Owners();
            o.add(held);
            o.add(a);
            o.add(b);
            checkAccounting(o, t, c, (a >= 0 ? 1 : 0) + (b >= 0 ? 1 : 0));
            o.drain(c);
            o.drain(t);
            r.r1 = o.seen;
            r.r2 = o.dup;
            r.r3 = busy[0];
            r.r4 = busy[1];
        }
    }

    @JCStressTest
    @Description("The stripe's own thread pops while another thread, whose acquire found nothing, drains this"
            + " stripe's cache back to the freelist (one CAS) and acquires from the freelist. Three slots cached,"
            + " freelist empty. r1 = bitmask, r2 = duplicate or accounting flag, r3 = what the drain moved"
            + " (-2: the lock was held), r4 = whether the stripe's thread got a slot.")
    @Outcome(id = "15, 0, 2, 1", expect = Expect.ACCEPTABLE, desc = "the pop first, then the drain of the other two")
    @Outcome(id = "15, 0, 3, 1", expect = Expect.ACCEPTABLE,
            desc = "the drain first (all three to the freelist); the pop refilled from it, or found the lock held"
                    + " and took one from the freelist after the drain's CAS")
    @Outcome(id = "15, 0, -2, 1", expect = Expect.ACCEPTABLE,
            desc = "the drainer found the lock held by the popper: it moved nothing (and the freelist was empty)")
    @Outcome(id = "15, 0, 3, 0", expect = Expect.ACCEPTABLE,
            desc = "the popper found the lock held by the drainer and fell back to the freelist before the drain's"
                    + " CAS: it got none, as any acquire that meets an empty freelist")
    @Outcome(expect = Expect.FORBIDDEN, desc = "a slot handed out twice or lost, or the lock left held")
    @State
    public static class DrainVsPop {
        final DescriptorTable t = new DescriptorTable(PoolMemory.createGcManaged(), CAP);
        final OutsideDescCaches c = new OutsideDescCaches(PoolMemory.createGcManaged(), "jcstress outside", t, 1, CAP);
        final int held = c.pop(0); // 0 held, 1, 2, 3 cached
        final int[] busy = new int[1];
        int a;
        int moved;
        int b;

        @Actor public void stripeThread() {
            a = acquire(c, t, busy, 0);
        }

        @Actor public void drainer() {
            moved = c.drain(0);
            b = t.acquire();
        }

        @Arbiter public void check(IIII_Result r) {
            Owners o = new Owners();
            o.add(held);
            o.add(a);
            o.add(b);
            checkAccounting(o, t, c, (a >= 0 ? 1 : 0) + (b >= 0 ? 1 : 0));
            o.drain(c);
            o.drain(t);
            r.r1 = o.seen;
            r.r2 = o.dup;
            r.r3 = moved;
            r.r4 = a >= 0 ? 1 : 0;
        }
    }
}
