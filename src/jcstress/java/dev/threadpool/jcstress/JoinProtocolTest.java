package dev.threadpool.jcstress;

import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.scheduler.JoinDeques;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.Expect;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.III_Result;
import org.openjdk.jcstress.infra.results.II_Result;
import java.util.function.ObjLongConsumer;

/**
 * The races of {@code ThreadPool.join} ({@link JoinDeques}, protocol in {@code Joining}): the owner popping its
 * offered half back against a thief stealing it, the thief's completion signal against the owner that
 * decides to park on it, the owner reclaiming an abandoned frame against its thief, the publication of a
 * half in argument form (function, context and the off-heap long) and of a fork's half (and its handle, which says
 * its form) to the thief that steals it, and of a stolen typed half's result to its owner. Worker 0 owns the deque;
 * worker 1 is the thief. Frame 0 (worker 0's depth 0) holds the half.
 */
public final class JoinProtocolTest {
    private JoinProtocolTest() {}

    static final int OWNER = 0;
    static final int THIEF = 1;
    static final int IDX = 0;

    static JoinDeques deques() {
        return new JoinDeques(PoolMemory.createGcManaged(), 2, 2); // frame 0 is worker 0's first

    }

    /** A half that counts its runs (plain: a second run would race the first, and show up in the count). */
    static final class Half implements Runnable {
        int runs;

        @Override
        public void run() {
            runs++;
        }
    }

    @JCStressTest
    @Description("The owner offered its only half (slot 0) and, after its left half, pops it back while a thief"
            + " steals from the same deque: Chase-Lev's last-entry race. r1 = the owner's popBack took it,"
            + " r2 = the thief's steal took it (and ran and completed it), r3 = runs of the half, the owner's"
            + " inline run included, read by the arbiter.")
    @Outcome(id = "1, 0, 1", expect = Expect.ACCEPTABLE,
            desc = "the owner's take won (its bottom store before the thief's bottom load, or its CAS on top"
                    + " first): it runs the half inline, no descriptor CAS; the thief found the deque empty")
    @Outcome(id = "0, 1, 1", expect = Expect.ACCEPTABLE,
            desc = "the thief's CAS on top won: the owner's take returns EMPTY and it waits for DONE")
    @Outcome(id = "1, 1, .*", expect = Expect.FORBIDDEN,
            desc = "both took the half: it runs twice (the owner's full fence or the top CAS is missing)")
    @Outcome(id = "0, 0, .*", expect = Expect.FORBIDDEN, desc = "nobody took the half: it is lost")
    @Outcome(expect = Expect.FORBIDDEN, desc = "anything else")
    @State
    public static class PopBackVsSteal {
        final JoinDeques d = deques();
        final Half half = new Half();
        int popped;
        int stolen;

        public PopBackVsSteal() {
            d.offer(OWNER, IDX, half); // the state is built on some thread; jcstress publishes it to both actors
        }

        @Actor
        public void owner() {
            if (d.popBack(OWNER, IDX)) {
                popped = 1;
                ((Runnable) d.half(IDX)).run();
            }
        }

        @Actor
        public void thief() {
            int idx = d.steal(OWNER);
            if (idx >= 0) {
                stolen = 1;
                d.markStolen(idx, THIEF);
                ((Runnable) d.half(idx)).run();
                d.complete(idx, OWNER, null);
            }
        }

        @Arbiter
        public void arbiter(III_Result r) {
            r.r1 = popped;
            r.r2 = stolen;
            r.r3 = half.runs;
        }
    }

    @JCStressTest
    @Description("The half was stolen and the thief named itself (STOLEN(1)). The owner reads the word and, if it"
            + " is not DONE, CASes PARKED into it (it would park next); the thief completes (getAndSet DONE,"
            + " unpark if the old word had PARKED). r1 = owner: 1 marked PARKED, 2 read DONE, 3 its CAS failed;"
            + " r2 = the thief unparked the owner.")
    @Outcome(id = "1, 1", expect = Expect.ACCEPTABLE,
            desc = "the owner's CAS came first: it parks, and the thief's getAndSet sees PARKED and unparks it")
    @Outcome(id = "2, 0", expect = Expect.ACCEPTABLE,
            desc = "the thief completed first and the owner's acquire load read DONE: no park, no unpark")
    @Outcome(id = "3, 0", expect = Expect.ACCEPTABLE,
            desc = "the owner read STOLEN(1), then the thief's getAndSet came before the owner's CAS, which fails:"
                    + " the owner looks again (and reads DONE); no unpark needed")
    @Outcome(id = "1, 0", expect = Expect.FORBIDDEN,
            desc = "lost wake: the owner parks and the thief did not see PARKED (it would sleep until its bound)")
    @Outcome(expect = Expect.FORBIDDEN, desc = "anything else (an unpark nobody asked for)")
    @State
    public static class CompletionVsPark {
        final JoinDeques d = deques();
        int owner;
        int unparked;

        public CompletionVsPark() {
            d.offer(OWNER, IDX, new Half());
            int idx = d.steal(OWNER);
            d.markStolen(idx, THIEF);
        }

        @Actor
        public void owner() {
            long w = d.word(IDX);
            if (JoinDeques.isDone(w)) {
                owner = 2;
            } else {
                owner = d.tryMarkParked(IDX, w) ? 1 : 3;
            }
        }

        @Actor
        public void thief() {
            unparked = d.complete(IDX, OWNER, null) ? 1 : 0;
        }

        @Arbiter
        public void arbiter(II_Result r) {
            r.r1 = owner;
            r.r2 = unparked;
        }
    }

    @JCStressTest
    @Description("The thief's half writes a plain result and fails; it completes with the failure. The owner reads"
            + " the word once (acquire) and, if DONE, reads the result and the failure (plain). r1 = owner saw"
            + " DONE, r2 = the result it read, r3 = it found the failure.")
    @Outcome(id = "1, 42, 1", expect = Expect.ACCEPTABLE,
            desc = "DONE observed: the getAndSet (release) / acquire pair makes the half's writes and the failure"
                    + " visible")
    @Outcome(id = "0, 0, 0", expect = Expect.ACCEPTABLE, desc = "the owner looked before DONE (it looks again)")
    @Outcome(id = "1, .*, .*", expect = Expect.FORBIDDEN,
            desc = "DONE seen but the half's effects or its failure not: a plain or opaque completion store")
    @Outcome(expect = Expect.FORBIDDEN, desc = "anything else")
    @State
    public static class CompletionPublishesTheRun {
        final JoinDeques d = deques();
        final RuntimeException boom = new RuntimeException("half failed");
        int result;
        int doneSeen;
        int seenResult;
        int sawFailure;

        public CompletionPublishesTheRun() {
            d.offer(OWNER, IDX, new Half());
            d.markStolen(d.steal(OWNER), THIEF);
        }

        @Actor
        public void thief() {
            result = 42; // the half's effect, plain
            d.complete(IDX, OWNER, boom);
        }

        @Actor
        public void owner() {
            if (JoinDeques.isDone(d.word(IDX))) {
                doneSeen = 1;
                seenResult = result;
                sawFailure = d.finishStolen(IDX) == boom ? 1 : 0;
            }
        }

        @Arbiter
        public void arbiter(III_Result r) {
            r.r1 = doneSeen;
            r.r2 = seenResult;
            r.r3 = sawFailure;
        }
    }

    @JCStressTest
    @Description("An abandoned half (an Error left its join between offer and pop-back) was stolen; the thief"
            + " completes it while the owner, at a new join of the same depth, tries to reclaim the frame and, if"
            + " it did, offers the new half there. r1 = the owner reclaimed, r2 = the frame's word at the end"
            + " (0 OFFERED, 512 DONE), r3 = the frame holds the new half.")
    @Outcome(id = "1, 0, 1", expect = Expect.ACCEPTABLE,
            desc = "the owner read DONE (acquire), reset the frame and offered in it: the thief was done with it")
    @Outcome(id = "0, 512, 0", expect = Expect.ACCEPTABLE,
            desc = "the owner looked before DONE: it runs its join inline; the frame stays held until a later join")
    @Outcome(id = "1, 512, .*", expect = Expect.FORBIDDEN,
            desc = "reclaimed before the thief's DONE: the frame would be offered while its thief still uses it")
    @Outcome(expect = Expect.FORBIDDEN, desc = "anything else")
    @State
    public static class ReclaimVsComplete {
        final JoinDeques d = deques();
        final Half fresh = new Half();
        int reclaimed;
        boolean offered;

        public ReclaimVsComplete() {
            d.offer(OWNER, IDX, new Half());
            d.markStolen(d.steal(OWNER), THIEF); // abandoned by its owner, stolen
        }

        @Actor
        public void thief() {
            d.complete(IDX, OWNER, null);
        }

        @Actor
        public void owner() {
            if (d.frameFree(IDX) || d.tryReclaim(IDX)) {
                reclaimed = 1;
                d.offer(OWNER, IDX, fresh);
                offered = true;
            }
        }

        @Arbiter
        public void arbiter(III_Result r) {
            r.r1 = reclaimed;
            r.r2 = (int) d.word(IDX);
            r.r3 = offered && d.half(IDX) == fresh ? 1 : 0;
        }
    }

    /** The function of the argument-form halves below: never run, only compared. */
    static final ObjLongConsumer<Object> FN = (ctx, arg) -> { };
    static final long ARG = 0x1234_5678_9ABC_DEF0L;

    @JCStressTest
    @Description("The owner offers a half in argument form (function, context, and the long in the frame's"
            + " off-heap ARG word, all plain before the push's release fence) while a thief steals from the"
            + " deque. r1 = the thief stole it, r2 = it read the function and the context, r3 = it read the long.")
    @Outcome(id = "0, 0, 0", expect = Expect.ACCEPTABLE, desc = "the thief looked before the push: nothing stolen")
    @Outcome(id = "1, 1, 1", expect = Expect.ACCEPTABLE,
            desc = "stolen after the push: the function, the context and the long are the owner's")
    @Outcome(id = "1, .*", expect = Expect.FORBIDDEN,
            desc = "stolen, but a reference or the long is stale: the push's release fence does not cover them")
    @Outcome(expect = Expect.FORBIDDEN, desc = "anything else")
    @State
    public static class OfferArgVsSteal {
        final JoinDeques d = deques();
        final Object ctx = new Object();

        @Actor
        public void owner() {
            d.offerArg(OWNER, IDX, FN, ctx, ARG);
        }

        @Actor
        public void thief(III_Result r) {
            int idx = d.steal(OWNER);
            if (idx >= 0) {
                r.r1 = 1;
                d.markStolen(idx, THIEF);
                r.r2 = d.half(idx) == FN && d.ctx(idx) == ctx ? 1 : 0;
                r.r3 = d.arg(idx) == ARG ? 1 : 0;
                d.complete(idx, OWNER, null);
            }
        }
    }

    static final long HANDLE = Long.MIN_VALUE | 1L << 61 | 5; // a forkLong's handle: form LONG (bits 62..61 = 1)

    @JCStressTest
    @Description("The owner offers a fork's half (offerFork: function, context, the off-heap long and the fork's"
            + " handle in the frame's FORK word, all plain before the push's release fence) while a thief steals from"
            + " the deque. r1 = the thief stole it, r2 = it read the function and the context, r3 = it read the long"
            + " and the handle (the half's form).")
    @Outcome(id = "0, 0, 0", expect = Expect.ACCEPTABLE, desc = "the thief looked before the push: nothing stolen")
    @Outcome(id = "1, 1, 1", expect = Expect.ACCEPTABLE,
            desc = "stolen after the push: the function, the context, the long and the handle are the owner's")
    @Outcome(id = "1, .*", expect = Expect.FORBIDDEN,
            desc = "stolen, but a reference, the long or the FORK word is stale: the thief would run the wrong form")
    @Outcome(expect = Expect.FORBIDDEN, desc = "anything else")
    @State
    public static class OfferForkVsSteal {
        final JoinDeques d = deques();
        final Object ctx = new Object();

        @Actor
        public void owner() {
            d.offerFork(OWNER, IDX, FN, ctx, ARG, HANDLE);
        }

        @Actor
        public void thief(III_Result r) {
            int idx = d.steal(OWNER);
            if (idx >= 0) {
                r.r1 = 1;
                d.markStolen(idx, THIEF);
                r.r2 = d.half(idx) == FN && d.ctx(idx) == ctx ? 1 : 0;
                r.r3 = d.arg(idx) == ARG && d.forkHandle(idx) == HANDLE ? 1 : 0;
                d.complete(idx, OWNER, null);
            }
        }
    }

    @JCStressTest
    @Description("A stolen fork's typed half: the thief leaves its results in the frame (the long in the off-heap"
            + " RESULT word, an object in the on-heap results slot, both plain) and completes (getAndSet DONE). The"
            + " owner reads the word once (acquire) and, if DONE, reads both results. r1 = owner saw DONE,"
            + " r2 = the long it read is the thief's, r3 = the object it took is the thief's.")
    @Outcome(id = "1, 1, 1", expect = Expect.ACCEPTABLE,
            desc = "DONE observed: the getAndSet (release) / acquire pair makes both results visible")
    @Outcome(id = "0, 0, 0", expect = Expect.ACCEPTABLE, desc = "the owner looked before DONE (it looks again)")
    @Outcome(id = "1, .*", expect = Expect.FORBIDDEN,
            desc = "DONE seen but a result not: joinLong or joinObject would return what the frame held before")
    @Outcome(expect = Expect.FORBIDDEN, desc = "anything else")
    @State
    public static class ResultVsDone {
        final JoinDeques d = deques();
        final Object result = new Object();

        public ResultVsDone() {
            d.offerFork(OWNER, IDX, FN, new Object(), ARG, HANDLE);
            d.markStolen(d.steal(OWNER), THIEF);
        }

        @Actor
        public void thief() {
            d.setResult(IDX, ARG);
            d.setResultObject(IDX, result);
            d.complete(IDX, OWNER, null);
        }

        @Actor
        public void owner(III_Result r) {
            if (JoinDeques.isDone(d.word(IDX))) {
                r.r1 = 1;
                r.r2 = d.result(IDX) == ARG ? 1 : 0;
                r.r3 = d.takeResultObject(IDX) == result ? 1 : 0;
            }
        }
    }
}
