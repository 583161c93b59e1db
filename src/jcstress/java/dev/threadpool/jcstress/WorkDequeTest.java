package dev.threadpool.jcstress;

import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.WorkDeque;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.Expect;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.JJJJJJ_Result;
import org.openjdk.jcstress.infra.results.JJJJ_Result;
import org.openjdk.jcstress.infra.results.JJJ_Result;
import org.openjdk.jcstress.infra.results.J_Result;

/**
 * Races of the Chase–Lev deque ({@link WorkDeque}). Initial capacity 2 everywhere, and every state starts with
 * top and bottom a few laps in, so indices wrap around the array and a third entry forces a grow. Outcomes
 * print {@code -1} for EMPTY and {@code -2} for ABORT. Where an arbiter pushes 9 and steals it back, a 9
 * proves the race left top == bottom (nothing lost in the indices).
 */
public final class WorkDequeTest {
    private WorkDequeTest() {}

    /** A capacity-2 deque whose top and bottom are {@code 2 * laps + 1} in: wrapped, empty, never grown. */
    static WorkDeque deque(int laps) {
        WorkDeque q = new WorkDeque(PoolMemory.createGcManaged(), "jcstress deque", 2);
        for (int i = 0; i < 2 * laps + 1; i++) { // the slots keep stale values 1000+i: a stale read shows
            q.push(1000 + i);
            if ((i & 1) == 0) q.steal(); else q.take(); // advance top both ways: steal CAS, last-entry CAS
        }
        return q;
    }

    /** Owner-side check after the actors: push 9 and steal it back; 9 when top == bottom. */
    static long pushStealBack(WorkDeque q) {
        q.push(9);
        return q.steal();
    }

    @JCStressTest
    @Description("The last entry: owner take() vs one thief steal(). Exactly one of them gets it; the CAS on"
            + " top decides when both reach it.")
    @Outcome(id = "7, -1, 9", expect = Expect.ACCEPTABLE,
            desc = "owner wins: take lowered bottom (fence) before the thief loaded it, so the thief saw"
                    + " top == bottom and returned EMPTY; or take's CAS on top came first and the thief then"
                    + " read the new top")
    @Outcome(id = "7, -2, 9", expect = Expect.ACCEPTABLE,
            desc = "both saw the entry: take's CAS top t->t+1 succeeded first, the thief's CAS failed: ABORT")
    @Outcome(id = "-1, 7, 9", expect = Expect.ACCEPTABLE,
            desc = "thief wins: its CAS top t->t+1 came first; take then saw top > bottom (empty) or lost"
                    + " its own CAS, and restored bottom")
    @Outcome(id = "7, 7, 9", expect = Expect.FORBIDDEN, desc = "the entry came out twice")
    @Outcome(expect = Expect.FORBIDDEN, desc = "lost (nobody got it, or an ABORT without a winner), or top and"
            + " bottom left inconsistent (arbiter's 9 not stolen back)")
    @State
    public static class LastItemTakeVsSteal {
        final WorkDeque q = deque(2);

        { q.push(7); }

        @Actor public void owner(JJJ_Result r) { r.r1 = q.take(); }
        @Actor public void thief(JJJ_Result r) { r.r2 = q.steal(); }
        @Arbiter public void check(JJJ_Result r) { r.r3 = pushStealBack(q); }
    }

    @JCStressTest
    @Description("Two entries, owner take() vs one thief steal(): the owner gets the newest, the thief the"
            + " oldest, whatever the order; the thief never competes for the owner's entry.")
    @Outcome(id = "2, 1, 9", expect = Expect.ACCEPTABLE,
            desc = "take reserved index t+1; either it saw top == t (t < b, no CAS) or the steal had already"
                    + " moved top to t+1 (t == b, take's CAS on the last entry succeeded uncontested); the"
                    + " thief's CAS t->t+1 always wins index t")
    @Outcome(expect = Expect.FORBIDDEN, desc = "an entry lost, duplicated, swapped or a steal aborted without"
            + " a competitor")
    @State
    public static class TwoItemsTakeVsSteal {
        final WorkDeque q = deque(3);

        { q.push(1); q.push(2); }

        @Actor public void owner(JJJ_Result r) { r.r1 = q.take(); }
        @Actor public void thief(JJJ_Result r) { r.r2 = q.steal(); }
        @Arbiter public void check(JJJ_Result r) { r.r3 = pushStealBack(q); }
    }

    @JCStressTest
    @Description("Seed 002 Case 3 shape on the real deque: two entries, owner take() of the last-but-one vs a"
            + " thief that steals twice. The full fences in take and steal make 'entry 2 twice' impossible;"
            + " mutants.NoFenceDequeTest runs the same race without take's fence.")
    @Outcome(id = "2, 1, -1, 9", expect = Expect.ACCEPTABLE,
            desc = "owner took 2 first: the second steal saw top (t+1) == the lowered bottom: EMPTY")
    @Outcome(id = "2, 1, -2, 9", expect = Expect.ACCEPTABLE,
            desc = "first steal moved top to t+1, take then saw t == b and both CASed for index t+1: owner won,"
                    + " second steal ABORT")
    @Outcome(id = "-1, 1, 2, 9", expect = Expect.ACCEPTABLE,
            desc = "thief took both: take saw top t+2 > b (empty), or CASed for t+1 and lost; bottom restored")
    @Outcome(id = "2, 1, 2, -1", expect = Expect.FORBIDDEN,
            desc = "entry 2 taken twice (owner read a stale top while its bottom store was buffered, thief read"
                    + " the old bottom), then top > bottom made the arbiter's push invisible: lost")
    @Outcome(expect = Expect.FORBIDDEN, desc = "any other loss or duplication")
    @State
    public static class TakeVsTwoSteals {
        final WorkDeque q = deque(2);

        { q.push(1); q.push(2); }

        @Actor public void owner(JJJJ_Result r) { r.r1 = q.take(); }
        @Actor public void thief(JJJJ_Result r) { r.r2 = q.steal(); r.r3 = q.steal(); }
        @Arbiter public void check(JJJJ_Result r) { r.r4 = pushStealBack(q); }
    }

    @JCStressTest
    @Description("Two thieves race for one entry: the CAS on top gives it to exactly one.")
    @Outcome(id = {"7, -1, 9", "-1, 7, 9"}, expect = Expect.ACCEPTABLE,
            desc = "one thief's CAS won; the other loaded top after that CAS and saw top == bottom: EMPTY")
    @Outcome(id = {"7, -2, 9", "-2, 7, 9"}, expect = Expect.ACCEPTABLE,
            desc = "both loaded top == t and read the entry; one CAS t->t+1 won, the other failed: ABORT")
    @Outcome(id = "7, 7, 9", expect = Expect.FORBIDDEN, desc = "both thieves got it: duplicated")
    @Outcome(expect = Expect.FORBIDDEN, desc = "lost, or an ABORT with no winner")
    @State
    public static class TwoThievesOneItem {
        final WorkDeque q = deque(2);

        { q.push(7); }

        @Actor public void thief1(JJJ_Result r) { r.r1 = q.steal(); }
        @Actor public void thief2(JJJ_Result r) { r.r2 = q.steal(); }
        @Arbiter public void check(JJJ_Result r) { r.r3 = pushStealBack(q); }
    }

    @JCStressTest
    @Description("Grow under a thief: the array (capacity 2) is full with 1, 2; the owner pushes 3 and 4 while"
            + " a thief steals twice. The thief reads the old array or the new one and gets 1 then 2 either"
            + " way; the arbiter drains the rest FIFO and reports the capacity.")
    @Outcome(id = "1, 2, 3, 4, -1, 4", expect = Expect.ACCEPTABLE,
            desc = "a push loaded top while the array was full and grew it 2 -> 4, copying [top, bottom); each"
                    + " steal read its index from whichever array its acquire load of ARRAY returned")
    @Outcome(id = "1, 2, 3, 4, -1, 2", expect = Expect.ACCEPTABLE,
            desc = "both steals finished before the pushes loaded top: no growth, the pushes reused the two"
                    + " slots the thief had just emptied (acquire top vs the thief's CAS kept its reads first)")
    @Outcome(expect = Expect.FORBIDDEN, desc = "an entry lost, duplicated, out of order or stale across the grow")
    @State
    public static class PushVsStealAcrossGrow {
        final WorkDeque q = deque(2);

        { q.push(1); q.push(2); }

        @Actor public void owner() { q.push(3); q.push(4); }
        @Actor public void thief(JJJJJJ_Result r) { r.r1 = q.steal(); r.r2 = q.steal(); }

        @Arbiter public void check(JJJJJJ_Result r) {
            r.r3 = q.steal();
            r.r4 = q.steal();
            r.r5 = q.steal();
            r.r6 = q.capacity();
        }
    }

    @JCStressTest
    @Description("A thief that sees the pushed bottom sees the pushed value (push's release fence before the"
            + " bottom store, the thief's acquire load of bottom). The slot holds a stale 100x value.")
    @Outcome(id = "-1", expect = Expect.ACCEPTABLE, desc = "steal loaded bottom before push stored it: EMPTY")
    @Outcome(id = "42", expect = Expect.ACCEPTABLE, desc = "steal after the bottom store: the value written")
    @Outcome(expect = Expect.FORBIDDEN, desc = "the thief saw the new bottom but a stale slot value")
    @State
    public static class StealSeesPushedValue {
        final WorkDeque q = deque(3);

        @Actor public void owner() { q.push(42); }
        @Actor public void thief(J_Result r) { r.r1 = q.steal(); }
    }
}
