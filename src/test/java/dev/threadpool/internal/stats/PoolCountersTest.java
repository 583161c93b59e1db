package dev.threadpool.internal.stats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.internal.memory.CacheLine;
import dev.threadpool.internal.memory.PoolMemory;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * PoolCounters' admission words (issue 48): the outside stripes' layout, a thread's stripe, and the exact count
 * of {@link PoolCounters#closeAdmission} against many threads accepting on the stripes, on worker words and on
 * submitter words at once. The close's return is what shutdown waits for, so it must be exactly the accepts that
 * succeeded: one lost and shutdown ends with a task queued, one too many and it waits forever. jcstress
 * {@code AdmissionTest.OutsideAcceptVsClose} covers each ordering of one accept against the close; this covers
 * many threads, several on one stripe, over many rounds.
 */
@Timeout(60)
class PoolCountersTest {
    private static final long WAIT_MILLIS = TimeUnit.SECONDS.toMillis(30);

    @Test
    void theOutsideStripesArePaddedLinesBetweenTheColdBlockAndTheWorkerBlocks() {
        int n = PoolCounters.OUTSIDE_STRIPES;
        assertEquals(1, Integer.bitCount(n), "a power of two: " + n);
        assertTrue(n >= 4 && n <= 64, "in [4, 64]: " + n);
        int cpus = Runtime.getRuntime().availableProcessors();
        assertTrue(n >= Math.min(cpus, 64), "at least the processors (up to 64): " + n + " for " + cpus);
        assertEquals(PoolCounters.Layout.COLD_BLOCK_OFFSET + CacheLine.PAD, PoolCounters.Layout.OUTSIDE_STRIPES_OFFSET);
        assertEquals(CacheLine.PAD, PoolCounters.Layout.OUTSIDE_STRIPE_LENGTH);
        assertEquals(PoolCounters.Layout.OUTSIDE_STRIPES_OFFSET + (long) CacheLine.PAD * n,
                PoolCounters.Layout.WORKER_BLOCKS_OFFSET);
        assertEquals(PoolCounters.Layout.WORKER_BLOCKS_OFFSET + 3L * CacheLine.PAD + 2L * CacheLine.PAD,
                PoolCounters.Layout.bytes(3, 2));
    }

    @Test
    void aThreadKeepsItsStripeAndConsecutiveThreadsSpreadOverThem() throws Exception {
        int mine = PoolCounters.outsideStripeOfCurrentThread();
        assertEquals(mine, PoolCounters.outsideStripeOfCurrentThread());
        int n = PoolCounters.OUTSIDE_STRIPES;
        Thread[] ts = new Thread[n];
        int[] stripes = new int[n];
        for (int k = 0; k < n; k++) {
            final int me = k;
            ts[k] = new Thread(() -> stripes[me] = PoolCounters.outsideStripeOfCurrentThread());
        }
        for (Thread t : ts) { // ids are given at creation, one after another: all made before any starts
            t.start();
        }
        Set<Integer> seen = new HashSet<>();
        for (Thread t : ts) {
            t.join(WAIT_MILLIS);
            assertFalse(t.isAlive());
        }
        for (int k = 0; k < n; k++) {
            assertTrue(stripes[k] >= 0 && stripes[k] < n, "stripe " + stripes[k]);
            seen.add(stripes[k]);
        }
        long firstId = ts[0].threadId();
        boolean consecutive = true;
        for (int k = 1; k < n; k++) {
            consecutive &= ts[k].threadId() == firstId + k;
        }
        if (consecutive) {
            assertEquals(n, seen.size(), "threads with consecutive ids share no stripe: " + seen);
        }
    }

    @Test
    void aStripeOutOfRangeIsRefusedWithItsName() {
        PoolCounters c = new PoolCounters(PoolMemory.createGcManaged(), 1);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> c.tryAcceptOnStripe(PoolCounters.OUTSIDE_STRIPES, 1));
        assertTrue(e.getMessage().contains("i must be in [0, " + PoolCounters.OUTSIDE_STRIPES + ")"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> c.tryAcceptOnStripe(-1, 1));
    }

    @Test
    void eachWordCountsItsOwnAcceptsAndTheCloseSumsThemAll() {
        try (PoolMemory mem = PoolMemory.create()) {
            PoolCounters c = new PoolCounters(mem, 2, 2);
            for (int i = 0; i < PoolCounters.OUTSIDE_STRIPES; i++) {
                assertTrue(c.tryAcceptOnStripe(i, i + 1));
            }
            long stripes = (long) PoolCounters.OUTSIDE_STRIPES * (PoolCounters.OUTSIDE_STRIPES + 1) / 2;
            assertTrue(c.tryAcceptOutside(5));
            assertTrue(c.tryAcceptOnWorker(1, 7));
            assertTrue(c.tryAcceptOnSubmitter(0, 11));
            long all = stripes + 5 + 7 + 11;
            assertEquals(all, c.submittedWithDescriptor());
            assertFalse(c.admissionClosed());
            assertEquals(all, c.closeAdmission());
            assertTrue(c.admissionClosed());
            assertEquals(all, c.submittedWithDescriptor(), "the count survives the close");
            for (int i = 0; i < PoolCounters.OUTSIDE_STRIPES; i++) {
                assertFalse(c.tryAcceptOnStripe(i, 1), "stripe " + i + " refuses after the close");
            }
            assertFalse(c.tryAcceptOutside(1));
            assertFalse(c.tryAcceptOnWorker(0, 1));
            assertFalse(c.tryAcceptOnSubmitter(1, 1));
            assertEquals(all, c.submittedWithDescriptor(), "refused accepts count nothing");
        }
    }

    /**
     * Twice as many outside threads as stripes (so every stripe has several, whatever the ids), plus a thread on
     * a worker word and one on a submitter word, accept 1 to 3 tasks at a time until refused, while the test
     * thread closes admission after each thread's first accepts. Each round: the close returns exactly the
     * tasks the threads saw accepted, and so does submittedWithDescriptor.
     */
    @Test
    void theCloseCountsExactlyTheAcceptsThatRacedIt() throws Exception {
        final int outside = 2 * PoolCounters.OUTSIDE_STRIPES;
        final int threads = outside + 2;
        for (int round = 0; round < 100; round++) {
            try (PoolMemory mem = PoolMemory.create()) {
                PoolCounters c = new PoolCounters(mem, 1, 1);
                AtomicLong accepted = new AtomicLong();
                AtomicReference<Throwable> failure = new AtomicReference<>();
                CountDownLatch going = new CountDownLatch(threads);
                Thread[] ts = new Thread[threads];
                for (int k = 0; k < threads; k++) {
                    final int kind = k < outside ? 0 : k - outside + 1; // 0 outside, 1 worker 0, 2 submitter 0
                    ts[k] = new Thread(() -> {
                        long mine = 0;
                        try {
                            for (int i = 0; ; i++) {
                                long n = 1 + (i % 3);
                                boolean ok = switch (kind) {
                                    case 0 -> c.tryAcceptOutside(n);
                                    case 1 -> c.tryAcceptOnWorker(0, n);
                                    default -> c.tryAcceptOnSubmitter(0, n);
                                };
                                if (!ok) {
                                    break;
                                }
                                mine += n;
                                if (i == 8) {
                                    going.countDown();
                                }
                            }
                        } catch (Throwable t) {
                            failure.compareAndSet(null, t);
                        } finally {
                            accepted.addAndGet(mine);
                            if (mine < 1 + 2 + 3 + 1 + 2 + 3 + 1 + 2 + 3) {
                                going.countDown(); // refused before its ninth accept
                            }
                        }
                    }, "accepter-" + k);
                }
                for (Thread t : ts) {
                    t.start();
                }
                assertTrue(going.await(WAIT_MILLIS, TimeUnit.MILLISECONDS), "every accepter started");
                long counted = c.closeAdmission();
                for (Thread t : ts) {
                    t.join(WAIT_MILLIS);
                    assertFalse(t.isAlive(), t.getName() + " stopped once refused");
                }
                assertNull(failure.get());
                assertEquals(accepted.get(), counted, "round " + round + ": the close counted exactly the accepts");
                assertEquals(counted, c.submittedWithDescriptor(), "round " + round);
            }
        }
    }
}
