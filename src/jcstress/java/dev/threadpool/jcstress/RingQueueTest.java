package dev.threadpool.jcstress;

import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.QueueEntry;
import dev.threadpool.internal.queue.RingQueue;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.Expect;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.III_Result;
import org.openjdk.jcstress.infra.results.JJJJ_Result;
import org.openjdk.jcstress.infra.results.JJJ_Result;
import org.openjdk.jcstress.infra.results.JJ_Result;
import org.openjdk.jcstress.infra.results.J_Result;

/**
 * Races of the SPMC local queue ({@link RingQueue}): the owner's push and pop against thieves' steal and
 * stealHalf. Tiny capacities, and queues that start a lap or more in, so every race also crosses the
 * wrap-around of cell indices and stale cells hold old values (1000+) that a broken read would return.
 * Outcomes print {@code -1} for EMPTY. Entries are distinct bits so that a bitmask with a duplicate flag
 * proves "every entry exactly once".
 */
public final class RingQueueTest {
    private RingQueueTest() {}

    static RingQueue queue(int capacity, int laps) {
        RingQueue q = new RingQueue(PoolMemory.createGcManaged(), "jcstress ring queue", capacity, true); // as a worker's: raw push and pop
        for (int i = 0; i < laps * capacity + 1; i++) { // advance past the wrap, leave stale cells, empty
            q.tryPush(1000 + i);
            q.pop();
        }
        return q;
    }

    /** Bitmask of entries seen, and 1 if any entry was seen twice (or a stale 1000+ value appeared). */
    static final class Tally {
        long seen;
        long dup;

        void add(long v) {
            if (v == QueueEntry.EMPTY) {
                return;
            }
            if (v >= 1000 || (seen & v) != 0) {
                dup = 1;
            }
            seen |= v;
        }

        /** Drains {@code q} as its owner (the arbiter runs after every actor). */
        void drain(RingQueue q) {
            for (long v; (v = q.pop()) != QueueEntry.EMPTY; ) {
                add(v);
            }
        }
    }

    @JCStressTest
    @Description("The owner pops the last entry while a thief steals it: both claim through the same CAS on"
            + " head, exactly one wins.")
    @Outcome(id = "7, -1", expect = Expect.ACCEPTABLE,
            desc = "owner's CAS head h -> h+1 first; the thief then reads head == tail (or loses the CAS and"
                    + " re-reads it): empty")
    @Outcome(id = "-1, 7", expect = Expect.ACCEPTABLE,
            desc = "thief's CAS first; the owner's pop then sees head == tail: empty")
    @Outcome(id = "7, 7", expect = Expect.FORBIDDEN, desc = "both CASes succeeded on one position: duplicated")
    @Outcome(id = "-1, -1", expect = Expect.FORBIDDEN, desc = "nobody took a published entry: lost")
    @Outcome(expect = Expect.FORBIDDEN, desc = "a stale cell value (1000+) or garbage was returned")
    @State
    public static class LastEntryPopVsSteal {
        final RingQueue q = queue(2, 1);

        { q.tryPush(7); }

        @Actor public void owner(JJ_Result r) { r.r1 = q.pop(); }
        @Actor public void thief(JJ_Result r) { r.r2 = q.steal(); }
    }

    @JCStressTest
    @Description("Two thieves steal the only entry: exactly one gets it.")
    @Outcome(id = {"7, -1", "-1, 7"}, expect = Expect.ACCEPTABLE,
            desc = "one thief's CAS on head won; the other lost the CAS, re-read head == tail: empty")
    @Outcome(id = "7, 7", expect = Expect.FORBIDDEN, desc = "both thieves took the entry: duplicated")
    @Outcome(id = "-1, -1", expect = Expect.FORBIDDEN, desc = "nobody took a published entry: lost")
    @Outcome(expect = Expect.FORBIDDEN, desc = "a stale cell value (1000+) or garbage was returned")
    @State
    public static class TwoThievesOneEntry {
        final RingQueue q = queue(2, 2);

        { q.tryPush(7); }

        @Actor public void thief1(JJ_Result r) { r.r1 = q.steal(); }
        @Actor public void thief2(JJ_Result r) { r.r2 = q.steal(); }
    }

    @JCStressTest
    @Description("stealHalf (max 4) races one owner pop over three entries {1, 2, 4}; the arbiter drains the"
            + " victim, the thief's dst and adds the returned entries. r1 = bitmask of entries seen, r2 ="
            + " duplicate flag, r3 = how many the thief took (returned + pushed into dst).")
    @Outcome(id = "7, 0, 2", expect = Expect.ACCEPTABLE,
            desc = "thief's copy-then-CAS h -> h+2 first (len 3, (3+1)/2 = 2): it returns 1 and pushes 2 into"
                    + " dst; the owner then pops 4")
    @Outcome(id = "7, 0, 1", expect = Expect.ACCEPTABLE,
            desc = "owner's pop CAS h -> h+1 first (takes 1); the thief sees len 2 (directly, or after losing"
                    + " its CAS with a len-3 copy and retrying): takes (2+1)/2 = 1, returns 2; 4 stays")
    @Outcome(expect = Expect.FORBIDDEN, desc = "an entry lost or duplicated, a stale value copied, or a wrong"
            + " steal count")
    @State
    public static class StealHalfVsPop {
        final RingQueue q = queue(4, 1);
        final RingQueue dst = queue(4, 1);
        long first;
        long single;

        { q.tryPush(1); q.tryPush(2); q.tryPush(4); }

        @Actor public void thief() { first = q.stealHalf(dst, 4); }
        @Actor public void owner() { single = q.pop(); }

        @Arbiter public void check(JJJ_Result r) {
            Tally t = new Tally();
            t.add(first);
            int taken = (first == QueueEntry.EMPTY ? 0 : 1) + dst.size();
            t.drain(dst);
            t.add(single);
            t.drain(q);
            r.r1 = t.seen;
            r.r2 = t.dup;
            r.r3 = taken;
        }
    }

    @JCStressTest
    @Description("Two thieves stealHalf (max 4) from four entries {1, 2, 4, 8} into their own queues. r1 ="
            + " bitmask, r2 = duplicate flag, r3/r4 = entries taken by thief 1 / thief 2.")
    @Outcome(id = "15, 0, 2, 1", expect = Expect.ACCEPTABLE,
            desc = "thief 1's CAS h -> h+2 first (half of 4); thief 2's CAS with the same h fails, it re-reads"
                    + " len 2 and takes 1; one entry stays")
    @Outcome(id = "15, 0, 1, 2", expect = Expect.ACCEPTABLE, desc = "the mirror image: thief 2 first")
    @Outcome(expect = Expect.FORBIDDEN, desc = "an entry lost or duplicated, or both claimed the same cells")
    @State
    public static class TwoStealHalves {
        final RingQueue q = queue(4, 1);
        final RingQueue dst1 = queue(4, 2);
        final RingQueue dst2 = queue(4, 3);
        long first1;
        long first2;

        { q.tryPush(1); q.tryPush(2); q.tryPush(4); q.tryPush(8); }

        @Actor public void thief1() { first1 = q.stealHalf(dst1, 4); }
        @Actor public void thief2() { first2 = q.stealHalf(dst2, 4); }

        @Arbiter public void check(JJJJ_Result r) {
            Tally t = new Tally();
            r.r3 = (first1 == QueueEntry.EMPTY ? 0 : 1) + dst1.size();
            r.r4 = (first2 == QueueEntry.EMPTY ? 0 : 1) + dst2.size();
            t.add(first1);
            t.add(first2);
            t.drain(dst1);
            t.drain(dst2);
            t.drain(q);
            r.r1 = t.seen;
            r.r2 = t.dup;
        }
    }

    @JCStressTest
    @Description("The owner pushes 42 into an empty wrapped queue while a thief steals: a thief that sees the"
            + " new tail also sees the cell (release store of tail / acquire load of tail).")
    @Outcome(id = "-1", expect = Expect.ACCEPTABLE, desc = "steal read tail before the owner's release: empty")
    @Outcome(id = "42", expect = Expect.ACCEPTABLE, desc = "steal read the new tail, then the cell: the value")
    @Outcome(expect = Expect.FORBIDDEN, desc = "the thief saw the new tail but a stale cell (1000+ from an"
            + " earlier lap): publication broken")
    @State
    public static class PushVsStealVisibility {
        final RingQueue q = queue(2, 5);

        @Actor public void owner() { q.tryPush(42); }
        @Actor public void thief(J_Result r) { r.r1 = q.steal(); }
    }

    @JCStressTest
    @Description("A thief stealHalfs {1, 2, 4} into its own queue dst (n = 2: returns 1, pushes 2) while a"
            + " second thief steals from dst: the second thief sees either nothing or the copied value, never"
            + " a stale dst cell (the release of dst's tail publishes the copy).")
    @Outcome(id = "1, -1", expect = Expect.ACCEPTABLE,
            desc = "second thief read dst's tail before the first thief's release store: empty")
    @Outcome(id = "1, 2", expect = Expect.ACCEPTABLE,
            desc = "second thief read dst's new tail: sees the copied 2")
    @Outcome(expect = Expect.FORBIDDEN, desc = "a stale dst cell (1000+) or a wrong first entry")
    @State
    public static class StealHalfPublishesDst {
        final RingQueue q = queue(4, 1);
        final RingQueue dst = queue(2, 3);

        { q.tryPush(1); q.tryPush(2); q.tryPush(4); }

        @Actor public void thief(JJ_Result r) { r.r1 = q.stealHalf(dst, 8); }
        @Actor public void thiefOfDst(JJ_Result r) { r.r2 = dst.steal(); }
    }

    @JCStressTest
    @Description("Capacity 2, wrapped, full with {1, 2}: the owner tries to push 4 then 8 while a thief"
            + " stealHalfs (len 2: n = 1, the cell of 1). The owner may overwrite that cell only after the"
            + " thief's CAS moved head. r1/r2 = push of 4 / of 8 succeeded, r3 = bitmask of all entries seen"
            + " (thief's return, its dst, the victim drained), duplicates or stale values give -1.")
    @Outcome(id = "1, 0, 7", expect = Expect.ACCEPTABLE,
            desc = "thief's copy + CAS h -> h+1 before the owner's first head load: push 4 fits into the freed"
                    + " cell; the queue is full again for 8. Thief got 1; 2 and 4 remain")
    @Outcome(id = "0, 1, 11", expect = Expect.ACCEPTABLE,
            desc = "owner's first head load saw the full queue (4 refused); the thief's CAS landed before the"
                    + " second load, so 8 overwrote 1's cell after the thief had copied it")
    @Outcome(id = "0, 0, 3", expect = Expect.ACCEPTABLE,
            desc = "both owner head loads came before the thief's CAS: both pushes refused; thief got 1")
    @Outcome(expect = Expect.FORBIDDEN, desc = "the owner overwrote a cell the thief then claimed (thief"
            + " returned 4 or 8, or an entry is lost or duplicated), or 4 refused and 8 taken out of order")
    @State
    public static class PushIntoWrappedFullVsStealHalf {
        final RingQueue q = queue(2, 2);
        final RingQueue dst = queue(2, 1);
        int pushed4;
        int pushed8;
        long first;

        { q.tryPush(1); q.tryPush(2); }

        @Actor public void owner() {
            pushed4 = q.tryPush(4) ? 1 : 0;
            pushed8 = q.tryPush(8) ? 1 : 0;
        }

        @Actor public void thief() { first = q.stealHalf(dst, 2); }

        @Arbiter public void check(III_Result r) {
            Tally t = new Tally();
            t.add(first);
            if (first != 1) {
                t.dup = 1; // the thief must get the oldest entry, whatever the owner did
            }
            t.drain(dst);
            t.drain(q);
            r.r1 = pushed4;
            r.r2 = pushed8;
            r.r3 = t.dup != 0 ? -1 : (int) t.seen;
        }
    }
}
