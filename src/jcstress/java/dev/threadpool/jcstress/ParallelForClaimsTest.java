package dev.threadpool.jcstress;

import dev.threadpool.internal.scheduler.ParallelFor;
import java.util.function.IntConsumer;
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
 * The races of an outside {@code parallelFor} call ({@link ParallelFor.Claims}, standalone: no pool): the caller
 * and its helpers claim guided chunks from one cursor by CAS, run them as leaves of at most {@code grain}
 * indices, and each adds the indices it ran to {@code finished} once when the cursor runs out; the caller then
 * waits for {@code finished == total} (store {@code waiter}, re-read {@code finished}, park) against the helper
 * whose add makes the count whole (add, then read {@code waiter}, unpark).
 *
 * <p>Every body counts its index in a plain per-index counter and in a plain per-thread tally ({@link Ledger}):
 * an index run twice shows up in the tallies' sum even when the two plain increments of its counter race and
 * one is lost. The caller reads the per-index counters itself, plain, right after its wait returns: the helpers'
 * body writes must be visible to it through {@code finished}, as a real caller reads what its body wrote.
 * A lost wake-up shows as a caller that slept until its bound ({@link Base#callerWaits}).
 *
 * <p>The two-helper tests have three actors: jcstress runs them only on a machine with at least three CPUs.
 */
public final class ParallelForClaimsTest {
    private ParallelForClaimsTest() {}

    /** How long the caller may sleep in these tests; sleeping half of it or more counts as a lost wake-up. */
    static final long WAKE_BOUND_NANOS = 2_000_000_000L;

    /**
     * The body: counts each index and which participant ran it. The thread fields are set by their own actor
     * before it starts and only compared by identity; a racy read of another's field sees null or that other
     * thread, never the reader, so each run is tallied to the right participant.
     */
    static final class Ledger implements IntConsumer {
        final int[] counts;
        final int failAt;
        final RuntimeException boom = new RuntimeException("body failed");
        Thread caller;
        Thread helper1;
        Thread helper2;
        int byCaller;
        int byHelper1;
        int byHelper2;
        int byOther;

        Ledger(int n, int failAt) {
            this.counts = new int[n];
            this.failAt = failAt;
        }

        @Override
        public void accept(int i) {
            counts[i]++;
            Thread t = Thread.currentThread();
            if (t == caller) {
                byCaller++;
            } else if (t == helper1) {
                byHelper1++;
            } else if (t == helper2) {
                byHelper2++;
            } else {
                byOther++;
            }
            if (i == failAt) {
                throw boom;
            }
        }

        /** Indices whose counter reads exactly 1 (plain reads). */
        int exactlyOnce() {
            int n = 0;
            for (int c : counts) {
                n += c == 1 ? 1 : 0;
            }
            return n;
        }

        /** Body runs, every participant's tally together. */
        int calls() {
            return byCaller + byHelper1 + byHelper2 + byOther;
        }

        /** Participants that ran at least one index. */
        int participantsThatRan() {
            return (byCaller > 0 ? 1 : 0) + (byHelper1 > 0 ? 1 : 0) + (byHelper2 > 0 ? 1 : 0) + (byOther > 0 ? 1 : 0);
        }
    }

    /** A range's claims and its ledger, with the caller's and the helpers' actions. */
    abstract static class Base {
        final Ledger ledger;
        final ParallelFor.Claims claims;

        Base(int n, int grain, int participants, int failAt) {
            ledger = new Ledger(n, failAt);
            claims = ParallelFor.Claims.standalone(0, n, grain, participants, ledger);
        }

        Base(int n, int grain, int participants) {
            this(n, grain, participants, -1);
        }

        /**
         * The outside caller: 1 its wait returned well within the bound; 0 it returned false, or only after sleeping
         * for at least half the bound (a lost wake-up: a park that missed the last add runs to its bound, and the
         * loop's re-read after it then finds the count whole and returns true, so the return value alone does not
         * show it; a real wait here lasts microseconds); -1 interrupted.
         */
        int callerWaits() {
            ledger.caller = Thread.currentThread();
            long t0 = System.nanoTime();
            try {
                boolean returned = claims.runAsCaller(WAKE_BOUND_NANOS);
                return returned && System.nanoTime() - t0 < WAKE_BOUND_NANOS / 2 ? 1 : 0;
            } catch (InterruptedException e) {
                return -1;
            }
        }

        void helper1Runs() {
            ledger.helper1 = Thread.currentThread();
            claims.run();
        }

        void helper2Runs() {
            ledger.helper2 = Thread.currentThread();
            claims.run();
        }
    }

    @JCStressTest
    @Description("Caller vs one helper over [0, 4), grain 1, 2 participants (every guided chunk is one index):"
            + " r1 = the caller's wait returned, r2 = indices the caller sees run exactly once right after it"
            + " returned (plain reads), r3 = body runs in all (arbiter), r4 = indices the caller ran (arbiter)")
    @Outcome(id = "1, 4, 4, 4", expect = Expect.ACCEPTABLE,
            desc = "the caller claimed every index (the helper started after the cursor ran out): no wait")
    @Outcome(id = "1, 4, 4, 0", expect = Expect.ACCEPTABLE,
            desc = "the helper claimed every index before the caller's first claim; the caller waited for its add"
                    + " (or read the count whole)")
    @Outcome(id = "1, 4, 4, [1-3]", expect = Expect.ACCEPTABLE,
            desc = "both claimed: the caller waited for the helper's last chunk, or ran the last one itself")
    @Outcome(id = "0, .*", expect = Expect.FORBIDDEN,
            desc = "lost wake-up: the caller parked after the helper's add and the helper missed the waiter: it"
                    + " slept until its bound")
    @Outcome(id = "1, [0-3], .*", expect = Expect.FORBIDDEN,
            desc = "the wait returned before every index ran, or the helper's body writes were not visible, or"
                    + " an index ran twice")
    @Outcome(id = "1, 4, ([5-9]|\\d\\d+), .*", expect = Expect.FORBIDDEN,
            desc = "an index ran more than once: two participants claimed overlapping chunks")
    @Outcome(expect = Expect.FORBIDDEN, desc = "anything else")
    @State
    public static class CallerVsHelperLeaves extends Base {
        public CallerVsHelperLeaves() {
            super(4, 1, 2);
        }

        @Actor
        public void caller(IIII_Result r) {
            r.r1 = callerWaits();
            r.r2 = ledger.exactlyOnce();
        }

        @Actor
        public void helper() {
            helper1Runs();
        }

        @Arbiter
        public void arbiter(IIII_Result r) {
            r.r3 = ledger.calls();
            r.r4 = ledger.byCaller;
        }
    }

    @JCStressTest
    @Description("Caller vs one helper over [0, 17), grain 2, 2 participants: guided chunks of 4, 2, 2, 2, 2, 2,"
            + " 2 and 1 indices (whole leaves, the last one short), so a chunk is up to two leaves. r1 = the"
            + " caller's wait returned, r2 = indices the caller sees run exactly once right after it returned (plain reads),"
            + " r3 = body runs in all (arbiter), r4 = indices the caller ran (arbiter)")
    @Outcome(id = "1, 17, 17, 17", expect = Expect.ACCEPTABLE,
            desc = "the caller claimed every chunk (the helper started after the cursor ran out): no wait")
    @Outcome(id = "1, 17, 17, 0", expect = Expect.ACCEPTABLE,
            desc = "the helper claimed every chunk before the caller's first claim")
    @Outcome(id = "1, 17, 17, ([1-9]|1[0-6])", expect = Expect.ACCEPTABLE,
            desc = "both claimed chunks: the caller waited for the helper's last one, or ran the last one itself")
    @Outcome(id = "0, .*", expect = Expect.FORBIDDEN,
            desc = "lost wake-up: the caller parked after the helper's add and the helper missed the waiter: it"
                    + " slept until its bound")
    @Outcome(id = "1, ([0-9]|1[0-6]), .*", expect = Expect.FORBIDDEN,
            desc = "the wait returned before every index ran, or the helper's body writes were not visible, or"
                    + " an index ran twice")
    @Outcome(id = "1, 17, (1[8-9]|[2-9]\\d|\\d\\d\\d+), .*", expect = Expect.FORBIDDEN,
            desc = "an index ran more than once: two participants claimed overlapping chunks")
    @Outcome(expect = Expect.FORBIDDEN, desc = "anything else")
    @State
    public static class CallerVsHelperChunks extends Base {
        public CallerVsHelperChunks() {
            super(17, 2, 2);
        }

        @Actor
        public void caller(IIII_Result r) {
            r.r1 = callerWaits();
            r.r2 = ledger.exactlyOnce();
        }

        @Actor
        public void helper() {
            helper1Runs();
        }

        @Arbiter
        public void arbiter(IIII_Result r) {
            r.r3 = ledger.calls();
            r.r4 = ledger.byCaller;
        }
    }

    @JCStressTest
    @Description("Caller vs two helpers over [0, 6), grain 1, 3 participants (one index per chunk): either"
            + " helper's add may be the one that makes the count whole. r1 = the caller's wait returned,"
            + " r2 = indices the caller sees run exactly once right after it returned (plain reads), r3 = body"
            + " runs in all (arbiter), r4 = participants that ran at least one index (arbiter)")
    @Outcome(id = "1, 6, 6, 1", expect = Expect.ACCEPTABLE,
            desc = "one participant claimed every index before the others looked")
    @Outcome(id = "1, 6, 6, 2", expect = Expect.ACCEPTABLE, desc = "two participants shared the indices")
    @Outcome(id = "1, 6, 6, 3", expect = Expect.ACCEPTABLE, desc = "all three shared the indices")
    @Outcome(id = "0, .*", expect = Expect.FORBIDDEN,
            desc = "lost wake-up: the caller parked after the last add and that helper missed the waiter: it slept"
                    + " until its bound")
    @Outcome(id = "1, [0-5], .*", expect = Expect.FORBIDDEN,
            desc = "the wait returned before every index ran, or a helper's body writes were not visible, or an"
                    + " index ran twice")
    @Outcome(id = "1, 6, ([7-9]|\\d\\d+), .*", expect = Expect.FORBIDDEN,
            desc = "an index ran more than once: two participants claimed overlapping chunks")
    @Outcome(expect = Expect.FORBIDDEN, desc = "anything else")
    @State
    public static class CallerVsTwoHelpers extends Base {
        public CallerVsTwoHelpers() {
            super(6, 1, 3);
        }

        @Actor
        public void caller(IIII_Result r) {
            r.r1 = callerWaits();
            r.r2 = ledger.exactlyOnce();
        }

        @Actor
        public void helper1() {
            helper1Runs();
        }

        @Actor
        public void helper2() {
            helper2Runs();
        }

        @Arbiter
        public void arbiter(IIII_Result r) {
            r.r3 = ledger.calls();
            r.r4 = ledger.participantsThatRan();
        }
    }

    @JCStressTest
    @Description("Caller vs two helpers over [0, 25), grain 2, 3 participants: guided chunks of 4, then 2s, then 1"
            + " (whole leaves, the last one short). r1 = the caller's wait returned, r2 = indices"
            + " the caller sees run exactly once right after it returned (plain reads), r3 = body runs in all"
            + " (arbiter), r4 = participants that ran at least one index (arbiter)")
    @Outcome(id = "1, 25, 25, [1-3]", expect = Expect.ACCEPTABLE,
            desc = "every index ran once, shared among 1, 2 or 3 participants")
    @Outcome(id = "0, .*", expect = Expect.FORBIDDEN,
            desc = "lost wake-up: the caller parked after the last add and that helper missed the waiter: it slept"
                    + " until its bound")
    @Outcome(id = "1, (\\d|1\\d|2[0-4]), .*", expect = Expect.FORBIDDEN,
            desc = "the wait returned before every index ran, or a helper's body writes were not visible, or an"
                    + " index ran twice")
    @Outcome(id = "1, 25, (2[6-9]|[3-9]\\d|\\d\\d\\d+), .*", expect = Expect.FORBIDDEN,
            desc = "an index ran more than once: two participants claimed overlapping chunks")
    @Outcome(expect = Expect.FORBIDDEN, desc = "anything else")
    @State
    public static class CallerVsTwoHelpersChunks extends Base {
        public CallerVsTwoHelpersChunks() {
            super(25, 2, 3);
        }

        @Actor
        public void caller(IIII_Result r) {
            r.r1 = callerWaits();
            r.r2 = ledger.exactlyOnce();
        }

        @Actor
        public void helper1() {
            helper1Runs();
        }

        @Actor
        public void helper2() {
            helper2Runs();
        }

        @Arbiter
        public void arbiter(IIII_Result r) {
            r.r3 = ledger.calls();
            r.r4 = ledger.participantsThatRan();
        }
    }

    @JCStressTest
    @Description("Caller vs one helper over [0, 4), grain 1, 2 participants; the body throws at index 0 (after"
            + " counting it). r1 = the caller's wait returned, r2 = right after the return the caller sees the"
            + " body's failure (failure() is the thrown exception), r3 = body runs in all (arbiter): index 0 always"
            + " runs, a leaf that starts after the failure skips the body")
    @Outcome(id = "1, 1, 4", expect = Expect.ACCEPTABLE,
            desc = "every other leaf started before the failure was recorded (or checked it first)")
    @Outcome(id = "1, 1, [1-3]", expect = Expect.ACCEPTABLE,
            desc = "some leaves started after the failure and skipped the body")
    @Outcome(id = "0, .*", expect = Expect.FORBIDDEN,
            desc = "lost wake-up: the caller parked after the helper's add and the helper missed the waiter: it"
                    + " slept until its bound")
    @Outcome(id = "1, 0, .*", expect = Expect.FORBIDDEN,
            desc = "the wait returned but the failure recorded before the last add is not visible to the caller")
    @Outcome(expect = Expect.FORBIDDEN, desc = "anything else (an index run twice, index 0 never run)")
    @State
    public static class FailureReachesTheCaller extends Base {
        public FailureReachesTheCaller() {
            super(4, 1, 2, 0);
        }

        @Actor
        public void caller(III_Result r) {
            r.r1 = callerWaits();
            r.r2 = claims.failure() == ledger.boom ? 1 : 0;
        }

        @Actor
        public void helper() {
            helper1Runs();
        }

        @Arbiter
        public void arbiter(III_Result r) {
            r.r3 = ledger.counts[0] == 1 ? ledger.calls() : -1;
        }
    }

    @JCStressTest
    @Description("Caller vs one helper over [0, 4), grain 2, 2 participants; then (arbiter) a helper that starts"
            + " after the range is done, as a helper task dequeued late does: it must claim nothing and return."
            + " r1 = the caller's wait returned, r2 = body runs of the two participants, r3 = body runs of the late"
            + " helper")
    @Outcome(id = "1, 4, 0", expect = Expect.ACCEPTABLE, desc = "every index ran once; the late helper found the"
            + " cursor at the end")
    @Outcome(id = "0, .*", expect = Expect.FORBIDDEN,
            desc = "lost wake-up: the caller parked after the helper's add and the helper missed the waiter: it"
                    + " slept until its bound")
    @Outcome(id = "1, 4, [1-9]\\d*", expect = Expect.FORBIDDEN, desc = "the late helper ran indices again")
    @Outcome(expect = Expect.FORBIDDEN, desc = "anything else")
    @State
    public static class LateHelperClaimsNothing extends Base {
        public LateHelperClaimsNothing() {
            super(4, 2, 2);
        }

        @Actor
        public void caller(III_Result r) {
            r.r1 = callerWaits();
        }

        @Actor
        public void helper() {
            helper1Runs();
        }

        @Arbiter
        public void arbiter(III_Result r) {
            r.r2 = ledger.calls();
            claims.run(); // on the arbiter's thread: tallied as "other"
            r.r3 = ledger.calls() - r.r2;
        }
    }
}
