package dev.threadpool.jcstress;

import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.BoundedRing;
import dev.threadpool.internal.queue.QueueEntry;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.Expect;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.JJ_Result;
import org.openjdk.jcstress.infra.results.JJJ_Result;
import org.openjdk.jcstress.infra.results.J_Result;

/**
 * Races of the Vyukov MPMC ring ({@link BoundedRing}). Capacity 2 everywhere, and most states start with
 * head and tail already a lap or more in, so every race also crosses the wrap-around of cell indices.
 * Outcomes print {@code -1} for EMPTY.
 */
public final class BoundedRingTest {
    private BoundedRingTest() {}

    static BoundedRing ring(int capacity, int laps) {
        BoundedRing r = new BoundedRing(PoolMemory.createGcManaged(), "jcstress ring", capacity);
        for (int i = 0; i < laps * capacity + 1; i++) { // advance past the wrap, leave it empty
            r.tryPush(1000 + i);
            r.tryPop();
        }
        return r;
    }

    @JCStressTest
    @Description("Two consumers race for the last entry: exactly one gets it.")
    @Outcome(id = {"7, -1", "-1, 7"}, expect = Expect.ACCEPTABLE,
            desc = "one consumer's head CAS won the entry; the other saw the cell already freed or lost the CAS")
    @Outcome(id = "7, 7", expect = Expect.FORBIDDEN, desc = "both consumers took the entry: duplicated")
    @Outcome(id = "-1, -1", expect = Expect.FORBIDDEN, desc = "nobody took a published entry: lost")
    @State
    public static class LastEntryTwoConsumers {
        final BoundedRing r = ring(2, 1);

        { r.tryPush(7); }

        @Actor public void consumer1(JJ_Result res) { res.r1 = r.tryPop(); }
        @Actor public void consumer2(JJ_Result res) { res.r2 = r.tryPop(); }
    }

    @JCStressTest
    @Description("Two producers race into an empty ring of capacity 2; the arbiter drains it: both entries"
            + " arrive exactly once, in one of the two orders.")
    @Outcome(id = {"1, 2, -1", "2, 1, -1"}, expect = Expect.ACCEPTABLE,
            desc = "producer order decided by the tail CAS; both published")
    @Outcome(expect = Expect.FORBIDDEN, desc = "an entry lost, duplicated, or a third one appeared")
    @State
    public static class TwoProducers {
        final BoundedRing r = ring(2, 3);

        @Actor public void producer1() { r.tryPush(1); }
        @Actor public void producer2() { r.tryPush(2); }

        @Arbiter public void drain(JJJ_Result res) {
            res.r1 = r.tryPop();
            res.r2 = r.tryPop();
            res.r3 = r.tryPop();
        }
    }

    @JCStressTest
    @Description("A producer pushes into a full ring while a consumer pops: the push succeeds only if the pop"
            + " freed the cell first, and nothing is lost.")
    @Outcome(id = "1, 1, 2", expect = Expect.ACCEPTABLE,
            desc = "pop freed the cell, then the push landed (remaining: 2, then 3)")
    @Outcome(id = "1, 0, 2", expect = Expect.ACCEPTABLE,
            desc = "push saw the ring full before the pop freed the cell (remaining: 2)")
    @Outcome(expect = Expect.FORBIDDEN, desc = "lost, duplicated, or a push landed on an occupied cell")
    @State
    public static class PushIntoFullVsPop {
        final BoundedRing r = ring(2, 2);
        long popped;
        long pushed;

        { r.tryPush(1); r.tryPush(2); }

        @Actor public void producer() { pushed = r.tryPush(3) ? 1 : 0; }
        @Actor public void consumer() { popped = r.tryPop(); }

        @Arbiter public void check(JJJ_Result res) {
            res.r1 = popped;
            res.r2 = pushed;
            long a = r.tryPop();
            long b = r.tryPop();
            long c = r.tryPop();
            // expected remainder: [2] or [2, 3]; encode "2" when it is exactly that
            boolean ok = a == 2 && (pushed == 1 ? b == 3 : b == QueueEntry.EMPTY) && c == QueueEntry.EMPTY;
            res.r3 = ok ? 2 : -99;
        }
    }

    @JCStressTest
    @Description("popMany(2) races tryPop over three entries: each entry comes out exactly once. Encoded as"
            + " the bitmask of entries seen once (7 = all three) and a duplicate flag.")
    @Outcome(id = "7, 0", expect = Expect.ACCEPTABLE, desc = "every entry out exactly once, whoever won")
    @Outcome(expect = Expect.FORBIDDEN, desc = "an entry lost or duplicated")
    @State
    public static class PopManyVsPop {
        final BoundedRing r = ring(4, 1);
        final long[] batch = new long[2];
        int batchCount;
        long single;

        { r.tryPush(1); r.tryPush(2); r.tryPush(4); }

        @Actor public void batcher() { batchCount = r.popMany(batch, 2); }
        @Actor public void popper() { single = r.tryPop(); }

        @Arbiter public void check(JJ_Result res) {
            long seen = 0;
            long dup = 0;
            long[] all = new long[8];
            int n = 0;
            for (int i = 0; i < batchCount; i++) all[n++] = batch[i];
            if (single != QueueEntry.EMPTY) all[n++] = single;
            for (long v; (v = r.tryPop()) != QueueEntry.EMPTY; ) all[n++] = v;
            for (int i = 0; i < n; i++) {
                if ((seen & all[i]) != 0) dup = 1;
                seen |= all[i];
            }
            res.r1 = seen;
            res.r2 = dup;
        }
    }

    @JCStressTest
    @Description("pushMany(2) races tryPush into a ring of capacity 4 holding one entry: all four entries"
            + " land, each once (bitmask 15 = all), unless the ring filled up first.")
    @Outcome(id = "15, 0", expect = Expect.ACCEPTABLE, desc = "both claims succeeded, in either order")
    @Outcome(expect = Expect.FORBIDDEN, desc = "an entry lost, duplicated, or overwritten")
    @State
    public static class PushManyVsPush {
        final BoundedRing r = ring(4, 1);

        { r.tryPush(1); }

        @Actor public void batcher() { r.pushMany(new long[] {2, 4}, 0, 2); }
        @Actor public void pusher() { r.tryPush(8); }

        @Arbiter public void check(JJ_Result res) {
            long seen = 0;
            long dup = 0;
            for (long v; (v = r.tryPop()) != QueueEntry.EMPTY; ) {
                if ((seen & v) != 0) dup = 1;
                seen |= v;
            }
            res.r1 = seen;
            res.r2 = dup;
        }
    }

    @JCStressTest
    @Description("A consumer that sees the producer's entry also sees its value (release/acquire on the"
            + " cell sequence word).")
    @Outcome(id = "-1", expect = Expect.ACCEPTABLE, desc = "pop ran before the publish: empty")
    @Outcome(id = "42", expect = Expect.ACCEPTABLE, desc = "pop after the publish: the value written")
    @Outcome(expect = Expect.FORBIDDEN, desc = "the consumer read a stale or torn value")
    @State
    public static class PublishVisibility {
        final BoundedRing r = ring(2, 5);

        @Actor public void producer() { r.tryPush(42); }
        @Actor public void consumer(J_Result res) { res.r1 = r.tryPop(); }
    }

    /** A ring that carries tasks, advanced past the wrap like {@link #ring}. */
    static BoundedRing carryingRing(int capacity, int laps) {
        BoundedRing r = new BoundedRing(PoolMemory.createGcManaged(), "jcstress carrying ring", capacity, true);
        Object[] taken = new Object[2];
        for (int i = 0; i < laps * capacity + 1; i++) {
            r.tryPushCarried("old" + i, null);
            r.tryPop(taken);
        }
        return r;
    }

    @JCStressTest
    @Description("A carried task's references ride on the cell's hand-over: a consumer that pops the CARRIED entry"
            + " sees the task and the group the producer wrote (r1: 1 popped, 0 empty; r2: 1 both references"
            + " right, 0 wrong, -1 nothing popped).")
    @Outcome(id = "0, -1", expect = Expect.ACCEPTABLE, desc = "pop ran before the publish: empty")
    @Outcome(id = "1, 1", expect = Expect.ACCEPTABLE, desc = "pop after the publish: the task and the group")
    @Outcome(id = "1, 0", expect = Expect.FORBIDDEN,
            desc = "the consumer saw the entry but a stale or missing reference (the release does not cover them)")
    @Outcome(expect = Expect.FORBIDDEN, desc = "anything else")
    @State
    public static class CarriedPublishVisibility {
        final BoundedRing r = carryingRing(2, 5);
        final Object task = new Object();
        final Object group = new Object();

        @Actor public void producer() { r.tryPushCarried(task, group); }

        @Actor public void consumer(JJ_Result res) {
            Object[] taken = new Object[2];
            long e = r.tryPop(taken);
            res.r1 = e == QueueEntry.CARRIED ? 1 : 0;
            res.r2 = e == QueueEntry.EMPTY ? -1 : taken[0] == task && taken[1] == group ? 1 : 0;
        }
    }

    @JCStressTest
    @Description("Capacity 2, full: the consumer of position p takes its carried task while the producer of"
            + " p + 2 pushes into the same cell. The consumer must get its own task (A), never the next lap's"
            + " (C), and the push lands only after the cell was freed. r1: the popped task (1 = A, 3 = C, 0"
            + " none), r2: the push took, r3: what is left, in order (encoded 2 = [B], 23 = [B, C]).")
    @Outcome(id = "1, 1, 23", expect = Expect.ACCEPTABLE, desc = "the pop freed the cell, then the push landed")
    @Outcome(id = "1, 0, 2", expect = Expect.ACCEPTABLE, desc = "the push saw the ring full first")
    @Outcome(id = "3, .*", expect = Expect.FORBIDDEN,
            desc = "the consumer read the next lap's reference: the producer wrote before the cell was freed")
    @Outcome(expect = Expect.FORBIDDEN, desc = "lost, duplicated, or a reference overwritten")
    @State
    public static class CarriedLapVsPop {
        final BoundedRing r = carryingRing(2, 3);
        static final Object A = "A";
        static final Object B = "B";
        static final Object C = "C";
        long popped;
        long pushed;

        { r.tryPushCarried(A, null); r.tryPushCarried(B, null); }

        @Actor public void producer() { pushed = r.tryPushCarried(C, null) ? 1 : 0; }

        @Actor public void consumer() {
            Object[] taken = new Object[2];
            long e = r.tryPop(taken);
            popped = e != QueueEntry.CARRIED ? 0 : taken[0] == A ? 1 : taken[0] == C ? 3 : 9;
        }

        @Arbiter public void check(JJJ_Result res) {
            res.r1 = popped;
            res.r2 = pushed;
            Object[] taken = new Object[2];
            long code = 0;
            for (long e; (e = r.tryPop(taken)) != QueueEntry.EMPTY; ) {
                code = code * 10 + (taken[0] == B ? 2 : taken[0] == C ? 3 : 9);
            }
            res.r3 = code;
        }
    }
}
