package dev.threadpool.jcstress;

import dev.threadpool.WaitGroup;
import java.time.Duration;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.Expect;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;
import org.openjdk.jcstress.infra.results.I_Result;

/**
 * The races of {@link WaitGroup}'s split counters: the striped {@code added} and the striped {@code done} live on
 * different lines, so "zero" is read in two steps (every done stripe, then every added stripe), a waiter is woken
 * only by a done that sees it queued, and a done picks its stripe by a look at the queue that races the enqueue.
 */
public final class WaitGroupTest {
    private WaitGroupTest() {}

    /** How long a waiter waits in these tests before it reports a lost wake-up. */
    static final Duration WAKE_BOUND = Duration.ofSeconds(2);

    /** A waiter's outcome: 1 the wait returned at zero, 0 it ran out its {@link #WAKE_BOUND}, -1 interrupted. */
    static int awaitOutcome(WaitGroup g) {
        try {
            return g.await(WAKE_BOUND) ? 1 : 0;
        } catch (InterruptedException e) {
            return -1;
        }
    }

    @JCStressTest
    @Description("count 1 (task A); one thread adds task B, then A is done (1 -> 2 -> 1); an observer reads the"
            + " count: it must never see 0, which reading added before done would show")
    @Outcome(id = "1", expect = Expect.ACCEPTABLE, desc = "observed before the add, or after A's done")
    @Outcome(id = "2", expect = Expect.ACCEPTABLE, desc = "observed between the add and A's done")
    @Outcome(id = "0", expect = Expect.FORBIDDEN,
            desc = "zero while a task was outstanding: the two counters were read in the wrong order")
    @State
    public static class ZeroNeverEarly {
        final WaitGroup g = new WaitGroup();

        public ZeroNeverEarly() {
            g.add(1); // task A
        }

        @Actor
        public void addThenDone() {
            g.add(1); // task B is handed over ...
            g.done(); // ... then A ends
        }

        @Actor
        public void observer(I_Result r) {
            r.r1 = g.pending();
        }
    }

    @JCStressTest
    @Description("a waiter (enqueue, re-check zero, park) vs the last done (count, then look for a waiter)")
    @Outcome(id = "1, 0", expect = Expect.ACCEPTABLE,
            desc = "the done came first, or the done saw the queued waiter and released it: the wait returned")
    @Outcome(id = "0, 0", expect = Expect.FORBIDDEN,
            desc = "the waiter missed the zero and the done missed the waiter: a lost wake-up")
    @State
    public static class WaiterVsLastDone {
        final WaitGroup g = new WaitGroup();

        public WaiterVsLastDone() {
            g.add(1);
        }

        @Actor
        public void waiter(II_Result r) {
            r.r1 = awaitOutcome(g);
        }

        @Actor
        public void lastDone() {
            g.done();
        }

        @Arbiter
        public void after(II_Result r) {
            r.r2 = g.pending();
        }
    }

    @JCStressTest
    @Description("two dones from two threads (two stripes) and a waiter: the wait returns, and only after both")
    @Outcome(id = "1, 0", expect = Expect.ACCEPTABLE, desc = "the waiter returned and the count is zero")
    @Outcome(id = "0, 0", expect = Expect.FORBIDDEN, desc = "a lost wake-up: the last done missed the waiter")
    @State
    public static class TwoStripesAndWaiter {
        final WaitGroup g = new WaitGroup();

        public TwoStripesAndWaiter() {
            g.add(2);
        }

        @Actor
        public void waiter(II_Result r) {
            r.r1 = awaitOutcome(g);
        }

        @Actor
        public void done1() {
            g.done();
        }

        @Actor
        public void done2() {
            g.done();
        }

        @Arbiter
        public void after(II_Result r) {
            r.r2 = g.pending();
        }
    }

    /**
     * {@link TwoStripesAndWaiter} in two actors, so that it runs on two CPUs (jcstress skips a test with more
     * actors than CPUs): the waiter makes one of the two dones itself, on its own thread's stripe, before it waits.
     * Whichever done is last, on whichever stripe (the other thread's, or the shared one once the waiter is
     * queued), the wait returns.
     */
    @JCStressTest
    @Description("two dones from two threads (two stripes), one of them the waiter's own before it waits: the wait"
            + " returns, and only after both")
    @Outcome(id = "1, 0", expect = Expect.ACCEPTABLE, desc = "the waiter returned and the count is zero")
    @Outcome(id = "0, 0", expect = Expect.FORBIDDEN, desc = "a lost wake-up: the last done missed the waiter")
    @State
    public static class DoneThenWaitVsDone {
        final WaitGroup g = new WaitGroup();

        public DoneThenWaitVsDone() {
            g.add(2);
        }

        @Actor
        public void doneThenWait(II_Result r) {
            g.done();
            r.r1 = awaitOutcome(g);
        }

        @Actor
        public void done() {
            g.done();
        }

        @Arbiter
        public void after(II_Result r) {
            r.r2 = g.pending();
        }
    }

    @JCStressTest
    @Description("two dones from one thread vs a waiter: each done picks its stripe (the thread's, or the shared one"
            + " once it sees the waiter queued) by a look that races the enqueue; the wait returns either way")
    @Outcome(id = "1, 0", expect = Expect.ACCEPTABLE, desc = "the waiter returned and the count is zero")
    @Outcome(id = "0, 0", expect = Expect.FORBIDDEN,
            desc = "a lost wake-up, or a done missing from the count: the stripes were summed wrongly")
    @State
    public static class RoutedDonesVsWaiter {
        final WaitGroup g = new WaitGroup();

        public RoutedDonesVsWaiter() {
            g.add(2);
        }

        @Actor
        public void waiter(II_Result r) {
            r.r1 = awaitOutcome(g);
        }

        @Actor
        public void twoDones() {
            g.done();
            g.done();
        }

        @Arbiter
        public void after(II_Result r) {
            r.r2 = g.pending();
        }
    }

    @JCStressTest
    @Description("a negative add as the last decrement vs a waiter: the same Dekker pair as done()")
    @Outcome(id = "1", expect = Expect.ACCEPTABLE, desc = "the wait returned")
    @Outcome(id = "0", expect = Expect.FORBIDDEN, desc = "a lost wake-up")
    @State
    public static class NegativeAddWakes {
        final WaitGroup g = new WaitGroup();

        public NegativeAddWakes() {
            g.add(3);
        }

        @Actor
        public void waiter(I_Result r) {
            r.r1 = awaitOutcome(g);
        }

        @Actor
        public void subtract() {
            g.add(-3);
        }
    }
}
