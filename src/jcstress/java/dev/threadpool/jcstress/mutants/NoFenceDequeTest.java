package dev.threadpool.jcstress.mutants;

import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.jcstress.WorkDequeTest;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.Expect;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.JJJJ_Result;

/**
 * Mutant detector: {@link WorkDequeTest.TakeVsTwoSteals}, the race that needs take's full fence (seed 002 Case
 * 3), run against {@link NoFenceDeque}, the copy whose take() lacks it. The outcomes are those of the real
 * deque's test, the duplicate FORBIDDEN as there: this test is <em>expected to fail</em>. {@link MutantsCaught}
 * (the {@code jcstress-mutants} execution of {@code mvn verify}) runs it and fails the build if it passes, so
 * CI proves that the race the real deque's test runs does catch a missing fence. Results: docs/TESTING.md,
 * "Weakened orderings".
 */
public final class NoFenceDequeTest {
    private NoFenceDequeTest() {}

    /** A capacity-4 copy whose indices have wrapped, then holding 1 (at index t) and 2 (at t + 1). */
    static NoFenceDeque deque() {
        NoFenceDeque q = new NoFenceDeque(PoolMemory.createGcManaged(), 4);
        for (int i = 0; i < 5; i++) { // wrap the indices, leave it empty
            q.push(1000 + i);
            if ((i & 1) == 0) q.steal(); else q.take();
        }
        q.push(1);
        q.push(2);
        return q;
    }

    @JCStressTest
    @Description("MUTANT (take() without its full fence): owner take() of the last-but-one entry vs a thief that"
            + " steals twice. Expected to FAIL: 'entry 2 taken twice' must show up.")
    @Outcome(id = "2, 1, -1, 9", expect = Expect.ACCEPTABLE,
            desc = "owner took 2 first: the second steal saw top (t+1) == the lowered bottom: EMPTY")
    @Outcome(id = "2, 1, -2, 9", expect = Expect.ACCEPTABLE,
            desc = "first steal moved top to t+1, take saw t == b and both CASed for index t+1: owner won, ABORT")
    @Outcome(id = "-1, 1, 2, 9", expect = Expect.ACCEPTABLE,
            desc = "thief took both: take saw top t+2 > b (empty), or CASed for t+1 and lost")
    @Outcome(id = "2, 1, 2, -1", expect = Expect.FORBIDDEN,
            desc = "THE MUTANT CAUGHT: take's bottom store (t+1) sat in the store buffer while its top load read"
                    + " t; the thief stole index t, loaded top t+1 and the old bottom t+2, and won index t+1 by"
                    + " CAS; the owner, believing t < b, took index t+1 without a CAS. Entry 2 came out twice and"
                    + " top (t+2) is past bottom (t+1), so the arbiter's push is lost")
    @Outcome(expect = Expect.FORBIDDEN, desc = "any other loss or duplication (not expected even without the fence)")
    @State
    public static class TakeVsTwoSteals {
        final NoFenceDeque q = deque();

        @Actor public void owner(JJJJ_Result r) { r.r1 = q.take(); }
        @Actor public void thief(JJJJ_Result r) { r.r2 = q.steal(); r.r3 = q.steal(); }

        @Arbiter public void check(JJJJ_Result r) {
            q.push(9);
            r.r4 = q.steal();
        }
    }
}
