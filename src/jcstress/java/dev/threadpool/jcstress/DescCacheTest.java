package dev.threadpool.jcstress;

import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.scheduler.DescCache;
import dev.threadpool.internal.scheduler.DescriptorTable;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.Expect;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.IIII_Result;
import org.openjdk.jcstress.infra.results.III_Result;

/**
 * Races between a {@link DescCache}'s batch refill / drain and the single-slot freelist operations of
 * {@link DescriptorTable}. A table of 4 slots; afterwards the arbiter collects every slot from every
 * party (the cache's owner, the other thread, the freelist) as a bitmask: 15 with no duplicate means every
 * slot is owned by exactly one party, none lost. The arbiter also checks countFree() against what it
 * collected.
 */
public final class DescCacheTest {
    private DescCacheTest() {}

    static final int CAP = 4;

    /** Bitmask of slots collected, and whether any slot came twice. */
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

        /** Pops the cache until -1 (this also refills from, and so empties, the freelist). */
        void drain(DescCache c) {
            for (int i; (i = c.pop()) != -1; ) {
                add(i);
            }
        }

        void drain(DescriptorTable t) {
            for (int i; (i = t.acquire()) != -1; ) {
                add(i);
            }
        }
    }

    @JCStressTest
    @Description("Thread A's cache is empty and pops (refill: one CAS for up to 32 slots) while thread B"
            + " releases the slot it holds to the freelist and acquires one. Freelist before: 1 -> 2 -> 3; B"
            + " holds 0. r1 = bitmask of all slots collected, r2 = duplicate flag, r3 = slots A's refill took,"
            + " r4 = B's acquire.")
    @Outcome(id = "15, 0, 3, 0", expect = Expect.ACCEPTABLE,
            desc = "A's refill CAS took 1, 2, 3 before B's release (or after B's release and acquire): B's"
                    + " acquire gets its own 0 back")
    @Outcome(id = "15, 0, 4, -1", expect = Expect.ACCEPTABLE,
            desc = "B's release pushed 0 first; A's refill (maybe after failing its CAS against that push and"
                    + " walking again) took all four; B's acquire finds the freelist empty")
    @Outcome(expect = Expect.FORBIDDEN, desc = "a slot lost, owned twice, or the refill kept a stale walk")
    @State
    public static class RefillVsReleaseAcquire {
        final DescriptorTable t = new DescriptorTable(PoolMemory.createGcManaged(), CAP);
        final DescCache cache = new DescCache(PoolMemory.createGcManaged(), "jcstress cache", t);
        final int held = t.acquire(); // 0
        int a;
        int refilled;
        int b;

        @Actor public void cacheOwner() {
            a = cache.pop();
            refilled = cache.count() + 1;
        }

        @Actor public void other() {
            t.unreserve(held);
            b = t.acquire();
        }

        @Arbiter public void check(IIII_Result r) {
            Owners o = new Owners();
            o.add(a);
            o.add(b);
            int reserved = (a >= 0 ? 1 : 0) + (b >= 0 ? 1 : 0);
            if (t.countFree() != CAP - reserved) {
                o.dup = 1; // accounting: every slot not held by A or B must be FREE
            }
            o.drain(cache);
            o.drain(t);
            r.r1 = o.seen;
            r.r2 = o.dup;
            r.r3 = refilled;
            r.r4 = b;
        }
    }

    @JCStressTest
    @Description("Thread A releases its slot into its cache and drains the cache (one CAS for all four)"
            + " while thread B acquires twice from the freelist, which starts empty. r1 = bitmask, r2 ="
            + " duplicate flag, r3 = how many B got.")
    @Outcome(id = "15, 0, 0", expect = Expect.ACCEPTABLE, desc = "both acquires before A's drain CAS: empty")
    @Outcome(id = "15, 0, 1", expect = Expect.ACCEPTABLE,
            desc = "B's first acquire before the drain CAS, the second after it")
    @Outcome(id = "15, 0, 2", expect = Expect.ACCEPTABLE,
            desc = "the drain CAS published all four (links and FREE states) before B's first acquire")
    @Outcome(expect = Expect.FORBIDDEN, desc = "a slot lost, owned twice, or B read an unpublished link")
    @State
    public static class DrainVsAcquire {
        final DescriptorTable t = new DescriptorTable(PoolMemory.createGcManaged(), CAP);
        final DescCache cache = new DescCache(PoolMemory.createGcManaged(), "jcstress cache", t);
        final int held = cache.pop(); // the refill took all four; A holds 0, the cache 1, 2, 3
        int b1;
        int b2;

        @Actor public void cacheOwner() {
            t.freeReserved(held);
            cache.push(held);
            cache.drainAll();
        }

        @Actor public void other() {
            b1 = t.acquire();
            b2 = t.acquire();
        }

        @Arbiter public void check(III_Result r) {
            Owners o = new Owners();
            o.add(b1);
            o.add(b2);
            int got = (b1 >= 0 ? 1 : 0) + (b2 >= 0 ? 1 : 0);
            if (cache.count() != 0 || t.countFree() != CAP - got) {
                o.dup = 1;
            }
            o.drain(t);
            r.r1 = o.seen;
            r.r2 = o.dup;
            r.r3 = got;
        }
    }

    @JCStressTest
    @Description("Two caches refill at once from the full freelist of four: one batch CAS takes the whole"
            + " list; the loser's CAS fails and its second walk finds the list empty. r1 = bitmask, r2 ="
            + " duplicate flag, r3/r4 = slots held by cache 1 / cache 2 after their pop (popped one"
            + " included).")
    @Outcome(id = "15, 0, 4, 0", expect = Expect.ACCEPTABLE, desc = "cache 1's refill CAS first: it has all")
    @Outcome(id = "15, 0, 0, 4", expect = Expect.ACCEPTABLE, desc = "cache 2's refill CAS first: it has all")
    @Outcome(expect = Expect.FORBIDDEN, desc = "the two batches overlap (a slot in both caches) or one is lost")
    @State
    public static class TwoRefills {
        final DescriptorTable t = new DescriptorTable(PoolMemory.createGcManaged(), CAP);
        final DescCache[] caches = DescCache.allocateArray(PoolMemory.createGcManaged(), "jcstress caches", t, 2);
        int a1;
        int a2;
        int held1;
        int held2;

        @Actor public void owner1() {
            a1 = caches[0].pop();
            held1 = a1 < 0 ? 0 : caches[0].count() + 1;
        }

        @Actor public void owner2() {
            a2 = caches[1].pop();
            held2 = a2 < 0 ? 0 : caches[1].count() + 1;
        }

        @Arbiter public void check(IIII_Result r) {
            Owners o = new Owners();
            o.add(a1);
            o.add(a2);
            o.drain(caches[0]);
            o.drain(caches[1]);
            o.drain(t);
            r.r1 = o.seen;
            r.r2 = o.dup;
            r.r3 = held1;
            r.r4 = held2;
        }
    }
}
