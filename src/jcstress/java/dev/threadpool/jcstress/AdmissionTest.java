package dev.threadpool.jcstress;

import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.BoundedRing;
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
 * descriptor is accepted on {@link PoolCounters}' SUBMITTED word; a carried task by its push into the carried
 * {@link BoundedRing}, whose tail is its counter ({@code BoundedRing}, "Closing to pushes"). The lifecycle closes
 * the word, then the ring ({@code counters.closeAdmission() + scheduler.closeCarried()}), as here.
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

    @JCStressTest
    @Description("A full carrying ring (capacity 2): one consumer frees a cell while a carried push and the close"
            + " race. r1: the push (1 accepted), r2: the count shutdown waits for, r3: the tasks popped by the"
            + " consumer and left in the ring together.")
    @Outcome(id = "1, 3, 3", expect = Expect.ACCEPTABLE, desc = "the push took the freed cell before the close")
    @Outcome(id = "0, 2, 2", expect = Expect.ACCEPTABLE, desc = "refused (full, or closed): not counted")
    @Outcome(expect = Expect.FORBIDDEN, desc = "a task accepted and not counted, or counted and never queued")
    @State
    public static class FullRingVsClose {
        final PoolCounters c = counters();
        final BoundedRing ring = carriedRing();
        int pushed;
        int popped;
        long counted;

        {
            ring.tryPushCarried("old-0", null);
            ring.tryPushCarried("old-1", null);
        }

        @Actor
        public void consumer() {
            popped = ring.tryPop(new Object[2]) == QueueEntry.CARRIED ? 1 : 0;
        }

        @Actor
        public void submitter() {
            pushed = ring.tryPushCarried("new", null) ? 1 : 0;
        }

        @Actor
        public void shutdown() {
            counted = c.closeAdmission() + ring.closeToPushes();
        }

        @Arbiter
        public void arbiter(III_Result r) {
            r.r1 = pushed;
            r.r2 = (int) counted;
            r.r3 = popped + drain(ring);
        }
    }

    @JCStressTest
    @Description("One submit with a descriptor (SUBMITTED) and one carried (the ring) against the close, which"
            + " closes the word, then the ring. r1: how many were accepted, r2: the count shutdown waits for:"
            + " always equal.")
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

        @Actor public void described() { a = c.tryAccept(1) ? 1 : 0; }
        @Actor public void carried() { b = ring.tryPushCarried("task", null) ? 1 : 0; }
        @Actor public void shutdown() { counted = c.closeAdmission() + ring.closeToPushes(); }

        @Arbiter
        public void arbiter(JJ_Result r) {
            r.r1 = a + b;
            r.r2 = counted;
        }
    }
}
