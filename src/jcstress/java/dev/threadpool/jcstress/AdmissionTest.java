package dev.threadpool.jcstress;

import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.stats.PoolCounters;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.Expect;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.III_Result;
import org.openjdk.jcstress.infra.results.JJ_Result;

/**
 * Admission ({@link PoolCounters}): shutdown's {@code closeAdmission} against submitters. The count it returns is
 * what the shutdown waits for (every task in it must run or be cancelled), so it must hold exactly the tasks
 * whose submit went on: accepted before the close and not taken back.
 */
public final class AdmissionTest {
    private AdmissionTest() {}

    static PoolCounters counters() {
        return new PoolCounters(PoolMemory.createGcManaged(), 1);
    }

    @JCStressTest
    @Description("A carried submit accepts, finds the ring full and takes its accept back (as trySubmit does),"
            + " while shutdown closes admission. r1: the accept (1 taken, 0 refused), r2: the take-back (1 done,"
            + " 0 refused because admission had closed, -1 not tried), r3: the count shutdown waits for.")
    @Outcome(id = "0, -1, 0", expect = Expect.ACCEPTABLE, desc = "closed first: the submit was refused")
    @Outcome(id = "1, 1, 0", expect = Expect.ACCEPTABLE,
            desc = "accepted and taken back before the close: refused, and shutdown does not wait for it")
    @Outcome(id = "1, 0, 1", expect = Expect.ACCEPTABLE,
            desc = "the close counted it first: the take-back fails, so the submitter pushes it after all")
    @Outcome(id = "1, 1, 1", expect = Expect.FORBIDDEN,
            desc = "taken back although counted: shutdown would wait for a task that never comes")
    @Outcome(id = "1, 0, 0", expect = Expect.FORBIDDEN,
            desc = "kept although not counted: a task accepted after the close")
    @Outcome(expect = Expect.FORBIDDEN, desc = "anything else")
    @State
    public static class UnacceptVsClose {
        final PoolCounters c = counters();
        int accepted;
        int unaccepted = -1;
        long counted;

        @Actor
        public void submitter() {
            if (c.tryAcceptCarried(1)) {
                accepted = 1;
                unaccepted = c.tryUnacceptCarried(1) ? 1 : 0; // the ring was full
            }
        }

        @Actor
        public void shutdown() {
            counted = c.closeAdmission();
        }

        @Arbiter
        public void arbiter(III_Result r) {
            r.r1 = accepted;
            r.r2 = unaccepted;
            r.r3 = (int) counted;
        }
    }

    @JCStressTest
    @Description("One submit with a descriptor (SUBMITTED) and one carried (CARRIED_SUBMITTED) against the close,"
            + " which closes the two words one after the other. r1: how many were accepted, r2: the count"
            + " shutdown waits for: always equal.")
    @Outcome(id = {"0, 0", "1, 1", "2, 2"}, expect = Expect.ACCEPTABLE,
            desc = "the count is exactly the accepted submits, whichever word each used")
    @Outcome(expect = Expect.FORBIDDEN, desc = "a task accepted and not counted, or counted and refused")
    @State
    public static class TwoWordsVsClose {
        final PoolCounters c = counters();
        int a;
        int b;
        long counted;

        @Actor public void described() { a = c.tryAccept(1) ? 1 : 0; }
        @Actor public void carried() { b = c.tryAcceptCarried(1) ? 1 : 0; }
        @Actor public void shutdown() { counted = c.closeAdmission(); }

        @Arbiter
        public void arbiter(JJ_Result r) {
            r.r1 = a + b;
            r.r2 = counted;
        }
    }
}
