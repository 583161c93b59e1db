package dev.threadpool.jcstress;

import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.BoundedRing;
import dev.threadpool.internal.queue.CarriedRings;
import dev.threadpool.internal.queue.QueueEntry;
import dev.threadpool.internal.stats.PoolCounters;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.Expect;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.IIII_Result;
import org.openjdk.jcstress.infra.results.III_Result;
import org.openjdk.jcstress.infra.results.JJ_Result;

/**
 * Admission: shutdown's close against submitters. The count it returns is what the shutdown waits for (every task
 * in it must run or be cancelled), so it must hold exactly the tasks whose submit went on. A task with a
 * descriptor is accepted on one of {@link PoolCounters}' admission words: a worker's own, a registered submitter
 * slot's, or, from any other thread, the outside stripe its thread id hashes to; a carried task by its push into
 * the carried {@link BoundedRing}, whose tail is its counter ({@code BoundedRing}, "Closing to pushes"). The
 * lifecycle closes the words, then the ring ({@code counters.closeAdmission() + scheduler.closeCarried()}), as
 * here. A pool's
 * carried rings are striped ({@link CarriedRings}): the close closes each stripe in index order and sums their
 * counts, and a push goes on past a full or closed stripe to the next, where that stripe's close counts it
 * ({@code CarriedRings}, "Admission"); the last two tests race pushes in different stripes, and one that
 * overflows from a full stripe into the next, against it.
 */
public final class AdmissionTest {
    private AdmissionTest() {}

    static PoolCounters counters() {
        return new PoolCounters(PoolMemory.createGcManaged(), 1);
    }

    static BoundedRing carriedRing() {
        return new BoundedRing(PoolMemory.createGcManaged(), "jcstress carried ring", 2, true);
    }

    /** The cells of a carrying ring still holding a task: what a drain would run. */
    static int drain(BoundedRing ring) {
        Object[] taken = new Object[2];
        int n = 0;
        while (ring.tryPop(taken) == QueueEntry.CARRIED) {
            n++;
        }
        return n;
    }

    @JCStressTest
    @Description("Issue 48's per-worker admission: worker 1 accepts on its own ADMITTED word while the shutdown"
            + " closes SUBMITTED, then each outside stripe, each worker's word, then each submitter slot's (worker 0,"
            + " submitter slot 1 and an outside thread accepted one each before). r1: the accept, r2: the count the"
            + " shutdown waits for, r3: submittedWithDescriptor after both (what the stats report).")
    @Outcome(id = "1, 4, 4", expect = Expect.ACCEPTABLE, desc = "accepted before its word closed: counted")
    @Outcome(id = "0, 3, 3", expect = Expect.ACCEPTABLE, desc = "its word closed first: refused, not counted")
    @Outcome(expect = Expect.FORBIDDEN,
            desc = "accepted and not counted (shutdown finishes early), counted and refused (it waits forever), or"
                    + " the stats disagree with the close")
    @State
    public static class WorkerAcceptVsClose {
        final PoolCounters c = new PoolCounters(PoolMemory.createGcManaged(), 2, 2);
        int accepted;
        long counted;

        {
            c.tryAcceptOnWorker(0, 1);
            c.tryAcceptOnSubmitter(1, 1);
            c.tryAcceptOutside(1);
        }

        @Actor
        public void worker1() {
            accepted = c.tryAcceptOnWorker(1, 1) ? 1 : 0;
        }

        @Actor
        public void shutdown() {
            counted = c.closeAdmission();
        }

        @Arbiter
        public void arbiter(III_Result r) {
            r.r1 = accepted;
            r.r2 = (int) counted;
            r.r3 = (int) c.submittedWithDescriptor();
        }
    }

    /**
     * The outside stripes (issue 48): a thread that is neither a worker nor a registered submitter accepts on the
     * stripe its thread id hashes to, while the shutdown closes SUBMITTED, every stripe in index order, then the
     * worker and submitter words. Three tasks were accepted before, one of them on the last stripe (the actor's own,
     * or another: both are races worth having).
     */
    @JCStressTest
    @Description("Issue 48's outside stripes: an unregistered outside thread accepts on its thread's stripe while"
            + " the shutdown closes SUBMITTED, then each outside stripe, each worker's word and each submitter slot's"
            + " (worker 0, submitter slot 1 and outside stripe OUTSIDE_STRIPES - 1 accepted one each before). r1: the"
            + " accept, r2: the count the shutdown waits for, r3: submittedWithDescriptor after both.")
    @Outcome(id = "1, 4, 4", expect = Expect.ACCEPTABLE, desc = "accepted before its stripe closed: counted")
    @Outcome(id = "0, 3, 3", expect = Expect.ACCEPTABLE, desc = "its stripe closed first: refused, not counted")
    @Outcome(id = {"1, 3, 3", "1, 3, 4"}, expect = Expect.FORBIDDEN,
            desc = "accepted and not counted: shutdown could finish with the task still queued")
    @Outcome(id = {"0, 4, 4", "1, 5, 5", "1, 5, 4"}, expect = Expect.FORBIDDEN,
            desc = "counted but refused, or counted twice: shutdown would wait for a task that never comes")
    @Outcome(expect = Expect.FORBIDDEN, desc = "anything else: the stats disagree with the close")
    @State
    public static class OutsideAcceptVsClose {
        final PoolCounters c = new PoolCounters(PoolMemory.createGcManaged(), 2, 2);
        int accepted;
        long counted;

        {
            c.tryAcceptOnWorker(0, 1);
            c.tryAcceptOnSubmitter(1, 1);
            c.tryAcceptOnStripe(PoolCounters.OUTSIDE_STRIPES - 1, 1);
        }

        @Actor
        public void outside() {
            accepted = c.tryAcceptOutside(1) ? 1 : 0;
        }

        @Actor
        public void shutdown() {
            counted = c.closeAdmission();
        }

        @Arbiter
        public void arbiter(III_Result r) {
            r.r1 = accepted;
            r.r2 = (int) counted;
            r.r3 = (int) c.submittedWithDescriptor();
        }
    }

    /**
     * Two outside accepts on the first and the last stripe against the close, which walks the stripes in index
     * order: the close may fall between them either way round (stripe 0 closed before the first, the last still
     * open for the second), and each is counted exactly when it went in.
     */
    @JCStressTest
    @Description("Two outside accepts, on stripe 0 and then on the last stripe, against closeAdmission (SUBMITTED,"
            + " then the stripes in index order). r1: which were accepted (1: the first, 2: the second), r2: the count"
            + " the close returned, r3: submittedWithDescriptor after both.")
    @Outcome(id = {"0, 0, 0", "1, 1, 1", "2, 1, 1", "3, 2, 2"}, expect = Expect.ACCEPTABLE,
            desc = "the close counted exactly the accepts that went in, on whichever stripe")
    @Outcome(expect = Expect.FORBIDDEN, desc = "an accept lost or counted twice, or counted and refused")
    @State
    public static class TwoStripesVsClose {
        final PoolCounters c = new PoolCounters(PoolMemory.createGcManaged(), 1);
        int accepted;
        long counted;

        @Actor
        public void outside() {
            accepted = (c.tryAcceptOnStripe(0, 1) ? 1 : 0)
                    | (c.tryAcceptOnStripe(PoolCounters.OUTSIDE_STRIPES - 1, 1) ? 2 : 0);
        }

        @Actor
        public void shutdown() {
            counted = c.closeAdmission();
        }

        @Arbiter
        public void arbiter(III_Result r) {
            r.r1 = accepted;
            r.r2 = (int) counted;
            r.r3 = (int) c.submittedWithDescriptor();
        }
    }

    @JCStressTest
    @Description("A carried push against the close of the carried ring. r1: the push (1 accepted, 0 refused),"
            + " r2: whether the refused submitter saw the ring closed (what makes it throw, not wait), r3: the count"
            + " shutdown waits for, r4: the tasks in the ring.")
    @Outcome(id = "1, 0, 1, 1", expect = Expect.ACCEPTABLE, desc = "pushed before the close: counted, in the ring")
    @Outcome(id = "0, 1, 0, 0", expect = Expect.ACCEPTABLE, desc = "closed first: refused, and the submitter knows why")
    @Outcome(id = "1, 0, 0, 1", expect = Expect.FORBIDDEN,
            desc = "accepted but not counted: shutdown could finish with the task still queued")
    @Outcome(id = "0, 1, 1, 0", expect = Expect.FORBIDDEN,
            desc = "counted but refused: shutdown would wait for a task that never comes")
    @Outcome(id = "0, 0, 0, 0", expect = Expect.FORBIDDEN,
            desc = "refused as full although the ring has room: the submitter would wait instead of throwing")
    @Outcome(expect = Expect.FORBIDDEN, desc = "anything else")
    @State
    public static class CarriedPushVsClose {
        final PoolCounters c = counters();
        final BoundedRing ring = carriedRing();
        int pushed;
        int sawClosed;
        long counted;

        @Actor
        public void submitter() {
            if (ring.tryPushCarried("task", null)) {
                pushed = 1;
            } else {
                sawClosed = ring.closedToPushes() ? 1 : 0;
            }
        }

        @Actor
        public void shutdown() {
            counted = c.closeAdmission() + ring.closeToPushes();
        }

        @Arbiter
        public void arbiter(IIII_Result r) {
            r.r1 = pushed;
            r.r2 = sawClosed;
            r.r3 = (int) counted;
            r.r4 = drain(ring);
        }
    }

    /**
     * A full carrying ring of 2 (two tasks pushed by the constructor), and the three parties of the full-ring tests:
     * a consumer freeing a cell, a submitter pushing a new task, the shutdown's close.
     */
    abstract static class FullRing {
        final PoolCounters c = counters();
        final BoundedRing ring = carriedRing();
        int pushed;
        int popped;
        long counted;

        {
            ring.tryPushCarried("old-0", null);
            ring.tryPushCarried("old-1", null);
        }

        void consume() {
            popped = ring.tryPop(new Object[2]) == QueueEntry.CARRIED ? 1 : 0;
        }

        void push() {
            pushed = ring.tryPushCarried("new", null) ? 1 : 0;
        }

        void close() {
            counted = c.closeAdmission() + ring.closeToPushes();
        }

        /** r1: the push (1 accepted), r2: the count shutdown waits for, r3: the tasks popped and left together. */
        void report(III_Result r) {
            r.r1 = pushed;
            r.r2 = (int) counted;
            r.r3 = popped + drain(ring);
        }
    }

    @JCStressTest
    @Description("A full carrying ring (capacity 2): one consumer frees a cell while a carried push and the close"
            + " race. r1: the push (1 accepted), r2: the count shutdown waits for, r3: the tasks popped by the"
            + " consumer and left in the ring together.")
    @Outcome(id = "1, 3, 3", expect = Expect.ACCEPTABLE, desc = "the push took the freed cell before the close")
    @Outcome(id = "0, 2, 2", expect = Expect.ACCEPTABLE, desc = "refused (full, or closed): not counted")
    @Outcome(expect = Expect.FORBIDDEN, desc = "a task accepted and not counted, or counted and never queued")
    @State
    public static class FullRingVsClose extends FullRing {
        @Actor
        public void consumer() {
            consume();
        }

        @Actor
        public void submitter() {
            push();
        }

        @Actor
        public void shutdown() {
            close();
        }

        @Arbiter
        public void arbiter(III_Result r) {
            report(r);
        }
    }

    /**
     * {@link FullRingVsClose} with the consumer and the shutdown on one thread, so that it runs on two CPUs
     * (jcstress skips a test with more actors than CPUs): the free first, then the close, both racing the push.
     */
    @JCStressTest
    @Description("A full carrying ring (capacity 2): one thread frees a cell and then closes, while a carried push"
            + " races both. Two actors, so that it runs on two CPUs. r1: the push (1 accepted), r2: the count"
            + " shutdown waits for, r3: the tasks popped and left in the ring together.")
    @Outcome(id = "1, 3, 3", expect = Expect.ACCEPTABLE, desc = "the push took the freed cell before the close")
    @Outcome(id = "0, 2, 2", expect = Expect.ACCEPTABLE, desc = "refused (still full, or closed): not counted")
    @Outcome(expect = Expect.FORBIDDEN, desc = "a task accepted and not counted, or counted and never queued")
    @State
    public static class FreeThenCloseVsPush extends FullRing {
        @Actor
        public void consumerThenShutdown() {
            consume();
            close();
        }

        @Actor
        public void submitter() {
            push();
        }

        @Arbiter
        public void arbiter(III_Result r) {
            report(r);
        }
    }

    /**
     * The other order on the one thread: the close, then the free. A cell frees only after the close, so no push
     * may take it: before the close the ring is full, after it closed.
     */
    @JCStressTest
    @Description("A full carrying ring (capacity 2): one thread closes and then frees a cell, while a carried push"
            + " races both. Two actors. r1: the push (1 accepted), r2: the count shutdown waits for, r3: the tasks"
            + " popped and left in the ring together.")
    @Outcome(id = "0, 2, 2", expect = Expect.ACCEPTABLE, desc = "refused: full before the close, closed after it")
    @Outcome(id = "1, 3, 3", expect = Expect.FORBIDDEN, desc = "the push took the cell freed after the close")
    @Outcome(expect = Expect.FORBIDDEN, desc = "a task accepted and not counted, or counted and never queued")
    @State
    public static class CloseThenFreeVsPush extends FullRing {
        @Actor
        public void shutdownThenConsumer() {
            close();
            consume();
        }

        @Actor
        public void submitter() {
            push();
        }

        @Arbiter
        public void arbiter(III_Result r) {
            report(r);
        }
    }

    @JCStressTest
    @Description("One submit with a descriptor (an outside stripe) and one carried (the ring) against the close,"
            + " which closes the admission words, then the ring. r1: how many were accepted, r2: the count shutdown"
            + " waits for: always equal.")
    @Outcome(id = {"0, 0", "1, 1", "2, 2"}, expect = Expect.ACCEPTABLE,
            desc = "the count is exactly the accepted submits, whichever way each was accepted")
    @Outcome(expect = Expect.FORBIDDEN, desc = "a task accepted and not counted, or counted and refused")
    @State
    public static class TwoWaysVsClose {
        final PoolCounters c = counters();
        final BoundedRing ring = carriedRing();
        int a;
        int b;
        long counted;

        @Actor public void described() { a = c.tryAcceptOutside(1) ? 1 : 0; }
        @Actor public void carried() { b = ring.tryPushCarried("task", null) ? 1 : 0; }
        @Actor public void shutdown() { counted = c.closeAdmission() + ring.closeToPushes(); }

        @Arbiter
        public void arbiter(JJ_Result r) {
            r.r1 = a + b;
            r.r2 = counted;
        }
    }

    /** One thread's two submits, a descriptor accept and a carried push, against the two-step close. */
    abstract static class TwoWaysOnOneThread {
        final PoolCounters c = counters();
        final BoundedRing ring = carriedRing();
        int accepted;
        long counted;

        void close() {
            counted = c.closeAdmission() + ring.closeToPushes();
        }

        /** r1: how many submits were accepted, r2: the count shutdown waits for. */
        void report(JJ_Result r) {
            r.r1 = accepted;
            r.r2 = counted;
        }
    }

    /**
     * {@link TwoWaysVsClose} with both submits on one thread, so that it runs on two CPUs: a descriptor accept,
     * then a carried push, against the close of the admission words and then the ring. The close may fall between
     * the two submits, before both or after both.
     */
    @JCStressTest
    @Description("One thread submits with a descriptor (its outside stripe) and then a carried task (the ring)"
            + " against the close, which closes the admission words, then the ring. Two actors. r1: how many were"
            + " accepted, r2: the count shutdown waits for: always equal.")
    @Outcome(id = {"0, 0", "1, 1", "2, 2"}, expect = Expect.ACCEPTABLE,
            desc = "the count is exactly the accepted submits, whichever way each was accepted")
    @Outcome(expect = Expect.FORBIDDEN, desc = "a task accepted and not counted, or counted and refused")
    @State
    public static class DescribedThenCarriedVsClose extends TwoWaysOnOneThread {
        @Actor
        public void submitter() {
            accepted = (c.tryAcceptOutside(1) ? 1 : 0) + (ring.tryPushCarried("task", null) ? 1 : 0);
        }

        @Actor
        public void shutdown() {
            close();
        }

        @Arbiter
        public void arbiter(JJ_Result r) {
            report(r);
        }
    }

    /** The other order on the submitting thread: the carried push, then the descriptor accept. */
    @JCStressTest
    @Description("One thread submits a carried task (the ring) and then one with a descriptor (its outside stripe)"
            + " against the close, which closes the admission words, then the ring. Two actors. r1: how many were"
            + " accepted, r2: the count shutdown waits for: always equal.")
    @Outcome(id = {"0, 0", "1, 1", "2, 2"}, expect = Expect.ACCEPTABLE,
            desc = "the count is exactly the accepted submits, whichever way each was accepted")
    @Outcome(expect = Expect.FORBIDDEN, desc = "a task accepted and not counted, or counted and refused")
    @State
    public static class CarriedThenDescribedVsClose extends TwoWaysOnOneThread {
        @Actor
        public void submitter() {
            accepted = (ring.tryPushCarried("task", null) ? 1 : 0) + (c.tryAcceptOutside(1) ? 1 : 0);
        }

        @Actor
        public void shutdown() {
            close();
        }

        @Arbiter
        public void arbiter(JJ_Result r) {
            report(r);
        }
    }

    @JCStressTest
    @Description("Two carried pushes, from home stripe 0 and then from home stripe 1 (CarriedRings of 2 stripes of 2"
            + " cells), against the close of every stripe (stripe 0, then 1). Two actors, so that it runs on two CPUs."
            + " r1, r2: the pushes (1 accepted), r3: the count the close returned, r4: the tasks left in the stripes.")
    @Outcome(id = {"0, 0, 0, 0", "1, 0, 1, 1", "0, 1, 1, 1", "1, 1, 2, 2"}, expect = Expect.ACCEPTABLE,
            desc = "the close counted exactly the pushes that went in, in whichever stripe")
    @Outcome(expect = Expect.FORBIDDEN, desc = "a push accepted and not counted, or counted and refused")
    @State
    public static class StripedPushesVsClose {
        final CarriedRings rings = new CarriedRings(PoolMemory.createGcManaged(), 4, 2);
        int a;
        int b;
        long counted;

        @Actor
        public void submitter() {
            a = rings.tryPushFrom(0, "a", null) ? 1 : 0; // stripe 0 closed: on to stripe 1, if still open
            b = rings.tryPushFrom(1, "b", null) ? 1 : 0;
        }

        @Actor public void shutdown() { counted = rings.close(); }

        @Arbiter
        public void arbiter(IIII_Result r) {
            r.r1 = a;
            r.r2 = b;
            r.r3 = (int) counted;
            r.r4 = drain(rings);
        }
    }

    @JCStressTest
    @Description("A carried push whose home stripe is full overflows into the other stripe while the close runs"
            + " (stripe 0 first, then 1). r1: the push (1 accepted), r2: whether a refused push saw the rings"
            + " closed, r3: the count the close returned, r4: the tasks left in the stripes.")
    @Outcome(id = "1, 0, 3, 3", expect = Expect.ACCEPTABLE,
            desc = "overflowed into stripe 1 before its close: counted there")
    @Outcome(id = "0, 1, 2, 2", expect = Expect.ACCEPTABLE,
            desc = "stripe 1 already closed: refused, the two old tasks counted, and the submitter knows why")
    @Outcome(expect = Expect.FORBIDDEN, desc = "accepted and not counted, counted and refused, or refused as full"
            + " with room in stripe 1")
    @State
    public static class OverflowVsClose {
        final CarriedRings rings = new CarriedRings(PoolMemory.createGcManaged(), 4, 2);
        int pushed;
        int sawClosed;
        long counted;

        {
            rings.tryPushFrom(0, "old-0", null); // stripe 0 is full: a push from home 0 overflows into stripe 1
            rings.tryPushFrom(0, "old-1", null);
        }

        @Actor
        public void submitter() {
            if (rings.tryPushFrom(0, "new", null)) {
                pushed = 1;
            } else {
                sawClosed = rings.closed() ? 1 : 0;
            }
        }

        @Actor public void shutdown() { counted = rings.close(); }

        @Arbiter
        public void arbiter(IIII_Result r) {
            r.r1 = pushed;
            r.r2 = sawClosed;
            r.r3 = (int) counted;
            r.r4 = drain(rings);
        }
    }

    /** The tasks still in any stripe: what a drain would run. */
    static int drain(CarriedRings rings) {
        Object[] taken = new Object[2];
        int n = 0;
        while (rings.tryPop(taken) == QueueEntry.CARRIED) {
            n++;
        }
        return n;
    }
}
