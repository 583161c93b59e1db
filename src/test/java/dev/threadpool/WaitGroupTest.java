package dev.threadpool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/** What {@link WaitGroup}'s javadoc promises, with its counters split over lines (striped added, striped done). */
class WaitGroupTest {

    @Test
    void theStripesFollowTheProcessorsUpToSixtyFour() {
        assertEquals(WaitGroup.stripesFor(Runtime.getRuntime().availableProcessors()), WaitGroup.stripes(),
                "this JVM's processors");
        assertEquals(2, WaitGroup.stripesFor(1), "at least two");
        assertEquals(2, WaitGroup.stripesFor(2));
        assertEquals(4, WaitGroup.stripesFor(3), "rounded up to a power of two");
        assertEquals(8, WaitGroup.stripesFor(8));
        assertEquals(16, WaitGroup.stripesFor(9), "past eight: a stripe per processor");
        assertEquals(64, WaitGroup.stripesFor(48));
        assertEquals(64, WaitGroup.stripesFor(PoolConfig.MAX_THREADS));
        assertEquals(PoolConfig.MAX_THREADS, WaitGroup.stripesFor(65), "at most a pool's most workers");
        assertEquals(PoolConfig.MAX_THREADS, WaitGroup.stripesFor(Integer.MAX_VALUE));
        for (int p = 1; p <= 200; p++) {
            int s = WaitGroup.stripesFor(p);
            assertEquals(1, Integer.bitCount(s), "a power of two: " + s);
            assertTrue(s >= Math.min(p, PoolConfig.MAX_THREADS) && s < Math.max(4, 2 * p), p + " processors: " + s);
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> WaitGroup.stripesFor(0));
        assertEquals("processors must be >= 1, got 0", e.getMessage());
    }

    @Test
    void countsAddsAndDones() {
        WaitGroup g = new WaitGroup();
        assertEquals(0, g.pending());
        g.add(3);
        assertEquals(3, g.pending());
        g.done();
        assertEquals(2, g.pending());
        g.add(-2);
        assertEquals(0, g.pending());
        assertEquals("WaitGroup[pending=0]", g.toString());
    }

    @Test
    void awaitReturnsAtOnceAtZeroAndTimesOutWhilePending() throws InterruptedException {
        WaitGroup g = new WaitGroup();
        assertTrue(g.await(Duration.ZERO), "zero: at once");
        g.await();
        g.add(1);
        assertFalse(g.await(Duration.ofMillis(20)), "one outstanding: the bounded wait gives up");
        g.done();
        assertTrue(g.await(Duration.ZERO));
    }

    @Test
    void isReusableOnceBackAtZero() throws InterruptedException {
        WaitGroup g = new WaitGroup();
        for (int round = 0; round < 100; round++) {
            g.add(2);
            g.done();
            assertFalse(g.await(Duration.ZERO), "round " + round + ": one still outstanding");
            g.done();
            assertTrue(g.await(TestSupport.WAIT), "round " + round);
        }
    }

    @Test
    void negativeAddBeyondTheCountIsRefusedAndChangesNothing() {
        WaitGroup g = new WaitGroup();
        g.add(2);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> g.add(-3));
        assertTrue(e.getMessage().contains("count=2") && e.getMessage().contains("delta=-3"), e.getMessage());
        assertEquals(2, g.pending(), "the refused add changed nothing");
    }

    @Test
    void oneDoneTooManyIsReportedByTheNextLook() {
        WaitGroup g = new WaitGroup();
        g.done(); // not detected here: that would cost every done a read of the added line
        IllegalStateException p = assertThrows(IllegalStateException.class, g::pending);
        assertTrue(p.getMessage().contains("count=-1"), p.getMessage());
        assertThrows(IllegalStateException.class, () -> g.await(Duration.ZERO));
        assertThrows(IllegalStateException.class, () -> g.add(-1));
    }

    @Test
    void awaitRejectsBadTimeouts() {
        WaitGroup g = new WaitGroup();
        assertThrows(NullPointerException.class, () -> g.await(null));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> g.await(Duration.ofNanos(-1)));
        assertTrue(e.getMessage().contains("timeout"), e.getMessage());
    }

    /** Many threads (so several done stripes) end the tasks; waiters parked meanwhile all wake, none early. */
    @Test
    void donesFromManyThreadsWakeEveryWaiterAtZeroOnly() throws Exception {
        final int threads = 8;
        final int perThread = 20_000;
        WaitGroup g = new WaitGroup();
        g.add(threads * perThread);
        AtomicInteger ended = new AtomicInteger();
        CountDownLatch waitersIn = new CountDownLatch(3);
        Thread[] waiters = new Thread[3];
        int[] seenAtReturn = new int[3];
        boolean[] returned = new boolean[3];
        for (int w = 0; w < waiters.length; w++) {
            final int k = w;
            waiters[w] = new Thread(() -> {
                waitersIn.countDown();
                try {
                    returned[k] = g.await(TestSupport.WAIT);
                    seenAtReturn[k] = ended.get();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "waiter-" + w);
            waiters[w].start();
        }
        assertTrue(waitersIn.await(TestSupport.WAIT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS));
        Thread[] enders = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            enders[t] = new Thread(() -> {
                for (int i = 0; i < perThread; i++) {
                    ended.incrementAndGet(); // the task's effect, before its done
                    g.done();
                }
            }, "ender-" + t);
            enders[t].start();
        }
        for (Thread t : enders) {
            t.join(TestSupport.WAIT.toMillis());
        }
        for (int w = 0; w < waiters.length; w++) {
            waiters[w].join(TestSupport.WAIT.toMillis());
            assertTrue(returned[w], "waiter " + w + " was woken");
            assertEquals(threads * perThread, seenAtReturn[w], "waiter " + w + " saw every task's effect");
        }
        assertEquals(0, g.pending());
    }

    /**
     * A relay over many threads (so several added and done stripes): one task is outstanding throughout, since each
     * runner adds the next task before it ends the previous one, on its own stripes; an observer reading the count
     * all along must never see zero (reading the added stripes before the done stripes could show it). Only zero
     * is linearizable: a count read while the relay runs may be above two (dones read before, adds after it).
     */
    @Test
    void addsAndDonesFromManyThreadsNeverShowZeroWhileOneIsOutstanding() throws Exception {
        final int runners = 8;
        final int laps = 1_500;
        WaitGroup g = new WaitGroup();
        g.add(1); // the first task: outstanding until runner 0 has added the next
        AtomicInteger turn = new AtomicInteger();
        AtomicLong bad = new AtomicLong(-1); // the first count below 1, or -1
        AtomicLong looks = new AtomicLong();
        Thread[] relay = new Thread[runners];
        final long deadline = System.nanoTime() + TestSupport.WAIT.toNanos();
        for (int r = 0; r < runners; r++) {
            final int me = r;
            relay[r] = new Thread(() -> {
                for (int lap = 0; lap < laps; lap++) {
                    int mine = lap * runners + me;
                    while (turn.get() != mine) { // bounded: the deadline fails the test instead of hanging it
                        if (System.nanoTime() - deadline > 0) {
                            return;
                        }
                        LockSupport.parkNanos(50_000L);
                    }
                    g.add(1); // the next task is handed over ...
                    g.done(); // ... then the previous one ends
                    turn.set(mine + 1);
                    LockSupport.unpark(relay[(me + 1) % runners]);
                }
            }, "relay-" + r);
        }
        Thread observer = new Thread(() -> {
            while (turn.get() < runners * laps && System.nanoTime() - deadline < 0) {
                int c = g.pending();
                looks.incrementAndGet();
                if (c < 1) {
                    bad.compareAndSet(-1, c);
                }
            }
        }, "observer");
        observer.start();
        for (Thread t : relay) {
            t.start();
        }
        for (Thread t : relay) {
            t.join(TestSupport.WAIT.toMillis());
        }
        observer.join(TestSupport.WAIT.toMillis());
        assertEquals(runners * laps, turn.get(), "every hand-over ran within the bound");
        assertEquals(-1, bad.get(), "the count read below 1 while one task was outstanding");
        assertTrue(looks.get() > 0, "the observer looked");
        assertEquals(1, g.pending());
        g.done();
        assertEquals(0, g.pending());
        assertTrue(g.await(Duration.ZERO));
    }

    /**
     * Dones made before a waiter queues land on their threads' stripes, dones made while it is queued on the one
     * shared stripe (WaitGroup, "While a waiter is queued"): the count sums both, the waiter stays parked while any
     * task is outstanding, and the last done, from either kind of thread, wakes it.
     */
    @Test
    void donesBeforeAndWhileAWaiterIsQueuedAllCount() throws Exception {
        WaitGroup g = new WaitGroup();
        g.add(10);
        donesOnAnotherThread(g, 3, "early");
        g.done();
        assertEquals(6, g.pending());
        AtomicInteger outcome = new AtomicInteger(-1); // 1: returned at zero, 0: timed out, 2: interrupted
        Thread waiter = new Thread(() -> {
            try {
                outcome.set(g.await(TestSupport.WAIT) ? 1 : 0);
            } catch (InterruptedException e) {
                outcome.set(2);
            }
        }, "waiter");
        waiter.start();
        TestSupport.eventually("the waiter parked", () -> waiter.getState() == Thread.State.TIMED_WAITING);
        donesOnAnotherThread(g, 3, "late");
        g.done();
        g.done();
        assertEquals(1, g.pending());
        assertEquals(-1, outcome.get(), "the waiter returned with a task outstanding");
        g.done();
        waiter.join(TestSupport.WAIT.toMillis());
        assertEquals(1, outcome.get(), "the last done woke the waiter");
        assertEquals(0, g.pending());
        g.add(1); // reusable: the stripes of both kinds keep counting
        assertEquals(1, g.pending());
        g.done();
        assertEquals(0, g.pending());
    }

    /** {@code n} dones of {@code g} on a new thread (its own stripe, or the shared one while a waiter is queued). */
    private static void donesOnAnotherThread(WaitGroup g, int n, String name) throws InterruptedException {
        Thread t = new Thread(() -> {
            for (int i = 0; i < n; i++) {
                g.done();
            }
        }, name);
        t.start();
        t.join(TestSupport.WAIT.toMillis());
    }
}
