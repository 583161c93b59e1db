package dev.threadpool.jcstress;

import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.BoundedRing;
import dev.threadpool.internal.queue.QueueEntry;
import dev.threadpool.internal.scheduler.DescriptorTable;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.Expect;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.III_Result;
import org.openjdk.jcstress.infra.results.I_Result;
import org.openjdk.jcstress.infra.results.II_Result;
import org.openjdk.jcstress.infra.results.ZZ_Result;

/** Races of the descriptor table: the freelist, exactly-once dispatch, cancel, and the release of waitables. */
public final class DescriptorTableTest {
    private DescriptorTableTest() {}

    static DescriptorTable table(int capacity) {
        return new DescriptorTable(PoolMemory.createGcManaged(), capacity);
    }

    @JCStressTest
    @Description("Two threads acquire from a freelist holding one slot: exactly one gets it.")
    @Outcome(id = {"1, -1", "-1, 1"}, expect = Expect.ACCEPTABLE, desc = "one pop's CAS won the last slot")
    @Outcome(id = "1, 1", expect = Expect.FORBIDDEN, desc = "the slot was handed out twice")
    @Outcome(id = "-1, -1", expect = Expect.FORBIDDEN, desc = "a free slot was lost")
    @State
    public static class LastSlotTwoAcquirers {
        final DescriptorTable t = table(2);

        { t.acquire(); } // slot 0 taken: slot 1 is the last free one

        @Actor public void a(II_Result r) { r.r1 = t.acquire(); }
        @Actor public void b(II_Result r) { r.r2 = t.acquire(); }
    }

    @JCStressTest
    @Description("Two threads give a slot back at once (two freelist pushes): the CAS on the tagged head keeps"
            + " both. The arbiter then drains the freelist and counts what it got.")
    @Outcome(id = "2", expect = Expect.ACCEPTABLE, desc = "both pushes landed: each CAS saw the other's head, or"
            + " failed and retried")
    @Outcome(expect = Expect.FORBIDDEN, desc = "a slot lost (one push overwrote the other's head) or handed out"
            + " twice")
    @State
    public static class TwoReleases {
        final DescriptorTable t = table(2);
        final int a = t.acquire();
        final int b = t.acquire(); // the freelist is empty now

        @Actor public void first() { t.unreserve(a); }
        @Actor public void second() { t.unreserve(b); }

        @Arbiter
        public void drain(I_Result r) {
            int x = t.acquire();
            int y = t.acquire();
            int z = t.acquire(); // -1: only two slots exist
            r.r1 = (x >= 0 ? 1 : 0) + (y >= 0 && y != x ? 1 : 0) + (z >= 0 ? 10 : 0);
        }
    }

    @JCStressTest
    @Description("ABA: one thread acquires and gives back two slots while another acquires once; the tagged"
            + " head keeps the freelist intact. The arbiter then drains it: the three outcomes say which slot"
            + " the racer got and how many remained free (of 3).")
    @Outcome(id = {"0, 2, 0", "1, 2, 0", "2, 2, 0"}, expect = Expect.ACCEPTABLE,
            desc = "the racer got one slot; exactly the other two were left free, none twice")
    @Outcome(expect = Expect.FORBIDDEN, desc = "a slot lost or duplicated: ABA broke the stack")
    @State
    public static class AbaPopPushPop {
        final DescriptorTable t = table(3);
        int racer = -2;

        @Actor public void churn() {
            int a = t.acquire();
            int b = t.acquire();
            t.unreserve(a); // pushes a back on top: the classic A-B-A under the racer's pop
            t.unreserve(b);
        }

        @Actor public void racer() { racer = t.acquire(); }

        @Arbiter public void drain(III_Result r) {
            r.r1 = racer;
            int free = 0;
            int dupOrGarbage = 0;
            boolean[] seen = new boolean[3];
            for (int i; (i = t.acquire()) >= 0; ) {
                if (i == racer || seen[i]) dupOrGarbage++;
                seen[i] = true;
                free++;
            }
            r.r2 = free;
            r.r3 = dupOrGarbage + (racer < 0 ? 10 : 0);
        }
    }

    @JCStressTest
    @Description("A worker's start CAS races cancel() on a queued waitable task: exactly one wins.")
    @Outcome(id = {"true, false", "false, true"}, expect = Expect.ACCEPTABLE,
            desc = "start won (task runs) or cancel won (task never runs)")
    @Outcome(id = "true, true", expect = Expect.FORBIDDEN, desc = "cancelled and run")
    @Outcome(id = "false, false", expect = Expect.FORBIDDEN, desc = "neither: the task would hang")
    @State
    public static class StartVsCancel {
        final DescriptorTable t = table(2);
        final int idx = t.acquire();
        final long gen = t.publish(idx, true);

        @Actor public void worker(ZZ_Result r) { r.r1 = t.tryStart(idx, gen, 0); }
        @Actor public void canceller(ZZ_Result r) { r.r2 = t.tryCancel(idx, gen, true) != 0; }
    }

    @JCStressTest
    @Description("A waitable entry started twice (a worker that popped it, and its awaiter running its own task"
            + " while the entry is still queued): exactly one runs it.")
    @Outcome(id = {"true, false", "false, true"}, expect = Expect.ACCEPTABLE, desc = "one start CAS won")
    @Outcome(expect = Expect.FORBIDDEN, desc = "run twice or not at all")
    @State
    public static class DoubleDispatch {
        final DescriptorTable t = table(2);
        final int idx = t.acquire();
        final long gen = t.publish(idx, true);

        @Actor public void w1(ZZ_Result r) { r.r1 = t.tryStart(idx, gen, 0); }
        @Actor public void w2(ZZ_Result r) { r.r2 = t.tryStart(idx, gen, 1); }
    }

    @JCStressTest
    @Description("A batch acquire (one CAS for up to 2 slots, submitBatch's path) races a single acquire on a"
            + " freelist of 3: no slot twice, none lost, the batch gets at least one.")
    @Outcome(id = {"2, 0", "1, 0"}, expect = Expect.ACCEPTABLE,
            desc = "the batch took 2 (or 1 after losing its CAS to the single pop and halving), the single pop one")
    @Outcome(expect = Expect.FORBIDDEN, desc = "a slot handed out twice, the single pop found none, or the batch none")
    @State
    public static class BatchAcquireVsAcquire {
        final DescriptorTable t = table(3);
        final long[] batch = new long[2];
        int got;
        int single;

        @Actor public void batcher() { got = t.acquireMany(batch, 2); }
        @Actor public void acquirer() { single = t.acquire(); }

        @Arbiter
        public void after(II_Result r) {
            r.r1 = got;
            boolean dup = single < 0 || got < 1;
            for (int i = 0; i < got; i++) {
                dup |= batch[i] == single;
                for (int j = 0; j < i; j++) {
                    dup |= batch[i] == batch[j];
                }
                dup |= DescriptorTable.state(t.ctlAcquire((int) batch[i])) != DescriptorTable.RESERVED;
            }
            r.r2 = dup ? 1 : 0;
        }
    }

    /** A ring holding the one entry of a published detached slot, as the pool's queues hold it. */
    static BoundedRing ringWith(DescriptorTable t, int idx, long gen) {
        BoundedRing ring = new BoundedRing(PoolMemory.createGcManaged(), "ring", 2);
        if (!ring.tryPush(t.handle(idx, gen))) {
            throw new AssertionError("an empty ring of 2 takes one entry");
        }
        return ring;
    }

    @JCStressTest
    @Description("Two workers race to take the one entry of a detached task from a ring, each starting what it"
            + " took: the start is a release store, not a CAS, so only the pop may decide.")
    @Outcome(id = {"1, 0", "0, 1"}, expect = Expect.ACCEPTABLE, desc = "one pop won the entry and ran it")
    @Outcome(id = "1, 1", expect = Expect.FORBIDDEN, desc = "run twice")
    @Outcome(id = "0, 0", expect = Expect.FORBIDDEN, desc = "never run")
    @State
    public static class DetachedPopThenStart {
        final DescriptorTable t = table(2);
        final int idx = t.acquire();
        final long gen = t.publish(idx, false);
        final BoundedRing ring = ringWith(t, idx, gen);

        int takeAndStart(int worker) {
            long e = ring.tryPop();
            return e != QueueEntry.EMPTY && t.tryStart(t.slotOf(e), t.genOf(e), worker) ? 1 : 0;
        }

        @Actor public void w1(II_Result r) { r.r1 = takeAndStart(0); }
        @Actor public void w2(II_Result r) { r.r2 = takeAndStart(1); }
    }

    @JCStressTest
    @Description("The CANCEL_PENDING sweep and a worker race for the one entry of a detached task: each acts only"
            + " on what it popped (the worker starts it with a store, the sweep cancels it with a CAS).")
    @Outcome(id = {"1, 0", "0, 1"}, expect = Expect.ACCEPTABLE, desc = "run, or cancelled: never both")
    @Outcome(id = "1, 1", expect = Expect.FORBIDDEN, desc = "cancelled and run")
    @Outcome(id = "0, 0", expect = Expect.FORBIDDEN, desc = "neither: the accepted task is lost")
    @State
    public static class DetachedSweepVsStart {
        final DescriptorTable t = table(2);
        final int idx = t.acquire();
        final long gen = t.publish(idx, false);
        final BoundedRing ring = ringWith(t, idx, gen);

        @Actor
        public void worker(II_Result r) {
            long e = ring.tryPop();
            r.r1 = e != QueueEntry.EMPTY && t.tryStart(t.slotOf(e), t.genOf(e), 0) ? 1 : 0;
        }

        @Actor
        public void sweep(II_Result r) {
            long e = ring.tryPop();
            r.r2 = e != QueueEntry.EMPTY && t.tryCancel(t.slotOf(e), t.genOf(e), false) != 0 ? 1 : 0;
        }
    }

    @JCStressTest
    @Description("A cancel through a handle (waitableOnly) vs the start of a detached task: the cancel must refuse"
            + " it, or the store-start and the CAS-cancel could both succeed.")
    @Outcome(id = "true, false", expect = Expect.ACCEPTABLE, desc = "started; the cancel refused a detached slot")
    @Outcome(expect = Expect.FORBIDDEN, desc = "a detached slot was cancelled through a handle, or not started")
    @State
    public static class DetachedHandleCancelRefused {
        final DescriptorTable t = table(2);
        final int idx = t.acquire();
        final long gen = t.publish(idx, false);

        @Actor public void worker(ZZ_Result r) { r.r1 = t.tryStart(idx, gen, 0); }
        @Actor public void canceller(ZZ_Result r) { r.r2 = t.tryCancel(idx, gen, true) != 0; }
    }

    @JCStressTest
    @Description("Two awaiters of one finished waitable task race to release its slot: exactly one does.")
    @Outcome(id = {"true, false", "false, true"}, expect = Expect.ACCEPTABLE, desc = "one release CAS won")
    @Outcome(id = "true, true", expect = Expect.FORBIDDEN, desc = "released twice: the freelist would corrupt")
    @Outcome(id = "false, false", expect = Expect.FORBIDDEN, desc = "never released: a slot leak")
    @State
    public static class TwoAwaitersRelease {
        final DescriptorTable t = table(2);
        final int idx = t.acquire();
        final long gen = t.publish(idx, true);

        {
            t.tryStart(idx, gen, 0);
            t.finishWaitable(idx, null);
        }

        @Actor public void a1(ZZ_Result r) { r.r1 = t.tryReleaseWaitable(idx, gen) != 0; }
        @Actor public void a2(ZZ_Result r) { r.r2 = t.tryReleaseWaitable(idx, gen) != 0; }
    }

    @JCStressTest
    @Description("The CANCEL_PENDING sweep cancels a queued waitable while its awaiter, as soon as it sees"
            + " CANCELLED, releases the slot and the next acquire takes it. r1: what the word the sweep's CAS"
            + " replaced says (1 waitable); r2: what a re-read of the slot after the CAS says (the decision the"
            + " sweep took before issue 13, item 2); r3: 1 if the awaiter released and re-acquired the slot,"
            + " -1 if it looked too early.")
    @Outcome(id = {"1, 1, -1", "1, 1, 1"}, expect = Expect.ACCEPTABLE,
            desc = "the awaiter looked before the cancel, or re-acquired after the sweep's re-read")
    @Outcome(id = "1, 0, 1", expect = Expect.ACCEPTABLE_INTERESTING,
            desc = "the re-read saw the next owner's RESERVED word (not waitable): a sweep deciding from it"
                    + " would free, as a cancelled detached task, a slot somebody else holds")
    @Outcome(expect = Expect.FORBIDDEN, desc = "the replaced word did not say waitable, or the cancel was lost")
    @State
    public static class SweepCancelVsAwaiterReuse {
        final DescriptorTable t = table(2);
        final int idx = t.acquire();
        final long gen = t.publish(idx, true);

        @Actor public void sweeper(III_Result r) {
            long won = t.tryCancel(idx, gen, false);
            r.r1 = won == 0 ? -1 : DescriptorTable.waitable(won) ? 1 : 0;
            r.r2 = DescriptorTable.waitable(t.ctlAcquire(idx)) ? 1 : 0;
        }

        @Actor public void awaiterThenSubmitter(III_Result r) {
            if (t.tryReleaseWaitable(idx, gen) != 0) {
                t.pushReleased(idx);
                r.r3 = t.acquire() == idx ? 1 : 0;
            } else {
                r.r3 = -1;
            }
        }
    }

    @JCStressTest
    @Description("The failure seqlock: a late await of a released FAILED slot reads its failure while the next"
            + " owner reuses the slot and its new task fails too. The reader must never attribute the new"
            + " generation's failure to the old handle. r1: 1 the old failure, 0 'moved on' (stale), 3 the reuse"
            + " was visible before the read began, 2 the new failure.")
    @Outcome(id = {"1", "0", "3"}, expect = Expect.ACCEPTABLE,
            desc = "the old cause, or the handle seen stale (before or during the read)")
    @Outcome(id = "2", expect = Expect.FORBIDDEN, desc = "the new task's failure reported for the old handle")
    @State
    public static class LateFailureReadVsReuse {
        static final RuntimeException OLD = new RuntimeException("old");
        static final RuntimeException NEW = new RuntimeException("new");
        final DescriptorTable t = table(2);
        final int idx = t.acquire();
        final long gen = t.publish(idx, true);

        {
            t.tryStart(idx, gen, 0);
            t.finishWaitable(idx, OLD);
            t.tryReleaseWaitable(idx, gen);
            t.pushReleased(idx); // on top: the owner's acquire below takes it
        }

        @Actor public void lateAwaiter(I_Result r) {
            long c = t.ctlAcquire(idx);
            if (DescriptorTable.gen(c) != gen) {
                r.r1 = 3;
                return;
            }
            Throwable f = t.failureOf(idx, gen);
            r.r1 = f == OLD ? 1 : f == null ? 0 : 2;
        }

        @Actor public void nextOwner() {
            int i = t.acquire();
            long g = t.publish(i, true);
            t.tryStart(i, g, 0);
            t.finishWaitable(i, NEW);
        }
    }
}
