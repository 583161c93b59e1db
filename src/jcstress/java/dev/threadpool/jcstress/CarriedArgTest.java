package dev.threadpool.jcstress;

import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.BoundedRing;
import dev.threadpool.internal.queue.CarriedBatches;
import dev.threadpool.internal.queue.QueueEntry;
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
 * Carried tasks in argument form (issue 44; BoundedRing, "Argument cells"): a cell's function, group, context
 * marker and argument ride the cell's hand-over with the task, and the pop that takes the cell hands over exactly
 * what its producer wrote: never a stale argument or context of an earlier lap, never an argument cell taken for
 * a {@code Runnable} task (or the other way round), never a context left behind for the next lap. The rings are a
 * few laps in, their cells used before by {@code Runnable} tasks, so a consumer that read the marker or the value
 * stale would see the old lap's (a null marker, {@code CARRIED}). The ring is popped as the pool pops it: the
 * sweep's {@link BoundedRing#tryPop(Object[], long[])} and the workers' {@link CarriedBatches} claims.
 */
public final class CarriedArgTest {
    private CarriedArgTest() {}

    /** What the consumer saw of an argument cell: 1 intact, 0 anything else (-1: nothing popped). */
    static long intact(long e, Object[] taken, long[] arg, Object fn, Object group, Object ctxMarker, long want) {
        if (e == QueueEntry.EMPTY) {
            return -1;
        }
        return e == QueueEntry.CARRIED && taken[0] == fn && taken[1] == group && taken[2] == ctxMarker
                && arg[0] == want ? 1 : 0;
    }

    @JCStressTest
    @Description("A producer pushes an argument cell (fn, group, ctx, 42) into a cell whose earlier laps held Runnable"
            + " tasks; a consumer pops it. r1: 1 popped, 0 empty; r2: 1 function, group, context and argument all"
            + " the producer's, 0 anything else (a stale marker makes it a Runnable task), -1 nothing popped.")
    @Outcome(id = "0, -1", expect = Expect.ACCEPTABLE, desc = "pop ran before the publish: empty")
    @Outcome(id = "1, 1", expect = Expect.ACCEPTABLE, desc = "pop after the publish: the whole argument task")
    @Outcome(id = "1, 0", expect = Expect.FORBIDDEN,
            desc = "the consumer took the cell but not what was written with it (the release does not cover it)")
    @Outcome(expect = Expect.FORBIDDEN, desc = "anything else")
    @State
    public static class PublishVsPop {
        final BoundedRing r = BoundedRingTest.carryingRing(2, 5);
        final Object fn = new Object();
        final Object group = new Object();
        final Object ctx = new Object();

        @Actor public void producer() { r.pushCarriedArg(fn, group, ctx, 42); }

        @Actor public void consumer(JJ_Result res) {
            Object[] taken = new Object[3];
            long[] arg = new long[1];
            long e = r.tryPop(taken, arg);
            res.r1 = e == QueueEntry.CARRIED ? 1 : 0;
            res.r2 = intact(e, taken, arg, fn, group, ctx, 42);
        }
    }

    @JCStressTest
    @Description("As PublishVsPop with a null context and the argument CARRIED itself (Long.MIN_VALUE): the value"
            + " word cannot tell this cell from a Runnable task's, the marker (NULL_CTX) must. r1: 1 popped, 0 empty;"
            + " r2: 1 handed over as an argument task with NULL_CTX and its argument, 0 anything else, -1 nothing.")
    @Outcome(id = "0, -1", expect = Expect.ACCEPTABLE, desc = "pop ran before the publish: empty")
    @Outcome(id = "1, 1", expect = Expect.ACCEPTABLE, desc = "the argument task, marker and argument intact")
    @Outcome(id = "1, 0", expect = Expect.FORBIDDEN, desc = "taken for a Runnable task, or a stale marker")
    @Outcome(expect = Expect.FORBIDDEN, desc = "anything else")
    @State
    public static class ArgumentThatLooksCarried {
        final BoundedRing r = BoundedRingTest.carryingRing(2, 5);
        final Object fn = new Object();

        @Actor public void producer() { r.pushCarriedArg(fn, null, null, QueueEntry.CARRIED); }

        @Actor public void consumer(JJ_Result res) {
            Object[] taken = new Object[3];
            long[] arg = new long[1];
            long e = r.tryPop(taken, arg);
            res.r1 = e == QueueEntry.CARRIED ? 1 : 0;
            res.r2 = intact(e, taken, arg, fn, null, QueueEntry.NULL_CTX, QueueEntry.CARRIED);
        }
    }

    @JCStressTest
    @Description("Capacity 2, full: A (a Runnable task) at p, B (an argument task) at p + 1. The consumer of p takes"
            + " A while the producer of p + 2 pushes C (an argument task: fnC, ctxC, 3) into A's cell. The consumer"
            + " must get A as a Runnable task, never C's marker or argument (written before the cell was freed), and"
            + " C must come out whole after B. r1: the pop (1 = A as a Runnable, 3 = C's marker seen, 9 other), r2:"
            + " the push took, r3: what is left, in order (2 = B intact, 23 = B then C intact, 9 = a torn one).")
    @Outcome(id = "1, 1, 23", expect = Expect.ACCEPTABLE, desc = "the pop freed the cell, then the push landed")
    @Outcome(id = "1, 0, 2", expect = Expect.ACCEPTABLE, desc = "the push saw the ring full first")
    @Outcome(id = "3, .*", expect = Expect.FORBIDDEN,
            desc = "the consumer read the next lap's marker: the producer wrote before the cell was freed")
    @Outcome(expect = Expect.FORBIDDEN, desc = "lost, duplicated, torn, or a marker left behind")
    @State
    public static class ArgLapVsPop {
        final BoundedRing r = BoundedRingTest.carryingRing(2, 3);
        static final Object A = "A";
        static final Object FN_B = "fnB";
        static final Object CTX_B = "ctxB";
        static final Object FN_C = "fnC";
        static final Object CTX_C = "ctxC";
        long popped;
        long pushed;

        { r.tryPushCarried(A, null); r.pushCarriedArg(FN_B, null, CTX_B, 2); }

        @Actor public void producer() { pushed = r.pushCarriedArg(FN_C, null, CTX_C, 3) >= 0 ? 1 : 0; }

        @Actor public void consumer() {
            Object[] taken = new Object[3];
            long[] arg = new long[1];
            long e = r.tryPop(taken, arg);
            popped = e != QueueEntry.CARRIED ? 0 : taken[0] == A && taken[2] == null ? 1
                    : taken[2] == CTX_C || arg[0] == 3 ? 3 : 9;
        }

        @Arbiter public void check(JJJ_Result res) {
            res.r1 = popped;
            res.r2 = pushed;
            Object[] taken = new Object[3];
            long[] arg = new long[1];
            long code = 0;
            for (long e; (e = r.tryPop(taken, arg)) != QueueEntry.EMPTY; ) {
                boolean b = taken[0] == FN_B && taken[2] == CTX_B && arg[0] == 2;
                boolean c = taken[0] == FN_C && taken[2] == CTX_C && arg[0] == 3;
                code = code * 10 + (b ? 2 : c ? 3 : 9);
                taken[2] = null; // the consumer's rule: null between pops
            }
            res.r3 = code;
        }
    }

    /** A ring a lap in holding argument tasks 1..last: function {@code v}, context {@code -v}, argument {@code 10v}. */
    static BoundedRing argRing(int capacity, long last) {
        BoundedRing r = BoundedRingTest.carryingRing(capacity, 1);
        for (long v = 1; v <= last; v++) {
            if (r.pushCarriedArg(v, null, -v, 10 * v) < 0) {
                throw new IllegalStateException("setup: ring full at " + v);
            }
        }
        return r;
    }

    /**
     * The item of a taken argument task if its context and argument are its own, else -(item) - 1000, or -999 for
     * something that is no argument task of {@link #argRing} at all (a stale Runnable copy).
     */
    static long item(boolean got, Object[] taken, long[] arg) {
        if (!got) {
            return 0;
        }
        Object marker = taken[2];
        taken[2] = null; // the consumer's rule: null between takes
        if (!(taken[0] instanceof Long v)) {
            return -999;
        }
        boolean whole = marker instanceof Long c && c == -v && arg[0] == 10 * v;
        return whole ? v : -v - 1000;
    }

    @JCStressTest
    @Description("A worker's batch claim (CarriedBatches.refill: one head CAS for 4 argument cells of 1..8, the first"
            + " run by the owner, 2..4 published with one getAndSet) races a thief's take from that batch: the thief"
            + " either finds the batch empty or takes 2 with its own context and argument, never the stale copy of an"
            + " earlier batch. r1: the owner's item, r2: the thief's (0 none; negative: torn), r3: 1 if every item"
            + " came out exactly once with its own context and argument.")
    @Outcome(id = {"1, 0, 1", "1, 2, 1"}, expect = Expect.ACCEPTABLE,
            desc = "the thief looked before the publish (nothing), or after it (item 2, whole)")
    @Outcome(expect = Expect.FORBIDDEN, desc = "a torn entry (stale context or argument), lost or taken twice")
    @State
    public static class RefillPublishVsThief {
        final BoundedRing r = argRing(16, 8);
        final CarriedBatches b = new CarriedBatches(PoolMemory.createGcManaged(), 2);
        long owner;
        long thief;

        {
            // an earlier batch of Runnable tasks in the same slots, taken and gone: its copies are what a stale
            // read would see
            BoundedRing old = BoundedRingTest.carryingRing(16, 1);
            for (long v = 1; v <= 8; v++) {
                old.tryPushCarried("old" + v, null);
            }
            Object[] taken = new Object[3];
            long[] arg = new long[1];
            b.refill(0, old, taken, arg, 4);
            while (b.take(0, taken, arg)) {
                taken[2] = null;
            }
        }

        @Actor public void owner() {
            Object[] taken = new Object[3];
            long[] arg = new long[1];
            owner = item(b.refill(0, r, taken, arg, 4) > 0, taken, arg);
        }

        @Actor public void thief() {
            Object[] taken = new Object[3];
            long[] arg = new long[1];
            thief = item(b.take(0, taken, arg), taken, arg);
        }

        @Arbiter public void check(JJJ_Result res) {
            res.r1 = owner;
            res.r2 = thief;
            long seen = 0;
            boolean ok = owner > 0 && thief >= 0;
            seen |= owner > 0 ? 1L << owner : 0;
            seen |= thief > 0 ? 1L << thief : 0;
            Object[] taken = new Object[3];
            long[] arg = new long[1];
            while (b.take(0, taken, arg) || r.tryPop(taken, arg) != QueueEntry.EMPTY) {
                long v = item(true, taken, arg);
                if (v <= 0 || (seen & (1L << v)) != 0) {
                    ok = false;
                } else {
                    seen |= 1L << v;
                }
            }
            res.r3 = ok && seen == (((1L << 9) - 1) & ~1L) ? 1 : 0;
        }
    }

    @JCStressTest
    @Description("The owner claimed argument tasks 1..4 (it runs 1); it takes its next entry while a thief steals one."
            + " Each must get its own entry with that entry's context and argument. r1 = the owner's item, r2 = the"
            + " thief's (negative: torn), r3 = 1 if every item came out exactly once, whole.")
    @Outcome(id = {"2, 3, 1", "3, 2, 1"}, expect = Expect.ACCEPTABLE, desc = "each CAS on next took its own entry")
    @Outcome(expect = Expect.FORBIDDEN, desc = "an entry taken twice, lost, or handed over with another's argument")
    @State
    public static class OwnerTakeVsThief {
        final BoundedRing r = argRing(16, 8);
        final CarriedBatches b = new CarriedBatches(PoolMemory.createGcManaged(), 2);
        long owner;
        long thief;

        {
            Object[] taken = new Object[3];
            long[] arg = new long[1];
            if (b.refill(0, r, taken, arg, 4) != 4 || item(true, taken, arg) != 1) {
                throw new IllegalStateException("setup: expected a claim of 4 starting at 1");
            }
        }

        @Actor public void owner() {
            Object[] taken = new Object[3];
            long[] arg = new long[1];
            owner = item(b.take(0, taken, arg), taken, arg);
        }

        @Actor public void thief() {
            Object[] taken = new Object[3];
            long[] arg = new long[1];
            thief = item(b.take(0, taken, arg), taken, arg);
        }

        @Arbiter public void check(JJJ_Result res) {
            res.r1 = owner;
            res.r2 = thief;
            long seen = 1L << 1 | (owner > 0 ? 1L << owner : 0) | (thief > 0 ? 1L << thief : 0);
            boolean ok = owner > 0 && thief > 0 && owner != thief;
            Object[] taken = new Object[3];
            long[] arg = new long[1];
            while (b.take(0, taken, arg) || r.tryPop(taken, arg) != QueueEntry.EMPTY) {
                long v = item(true, taken, arg);
                if (v <= 0 || (seen & (1L << v)) != 0) {
                    ok = false;
                } else {
                    seen |= 1L << v;
                }
            }
            res.r3 = ok && seen == (((1L << 9) - 1) & ~1L) ? 1 : 0;
        }
    }
}
