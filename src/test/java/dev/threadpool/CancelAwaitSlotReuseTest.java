package dev.threadpool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The user's reproduction of the cancel / await / reuse race (issue 13, item 1): a {@code cancel} that won
 * the CANCELLED CAS used to clear the slot's task reference afterwards, while an awaiter that had already
 * seen CANCELLED released the slot and the next submit reused it: the late store wiped the new task, and
 * its await failed with a NullPointerException ("because task is null").
 *
 * <p>Four pairs of threads on a one-worker GLOBAL_QUEUE pool of 16 descriptors. In each pair, B submits h1,
 * hands it to A, which cancels it, while B polls {@code await(h1, 0)} until it ends; then B submits h2 and
 * awaits it, which must complete normally. The race window is a few instructions (the canceller must be
 * descheduled between its CAS and its store). The user saw it about once per million rounds (30 s); on the
 * 2-core VM of this project the code before the fix survived 3.8 million rounds (11 minutes under C2 and C1,
 * plus 17,000 interpreted), so this short run ({@code -Ddev.threadpool.test.cancelRaceSeconds}, default 3)
 * guards the scenario but is not the proof: the deterministic version of the same interleaving,
 * {@code internal.scheduler.SlotOwnershipTest}, failed on that code every time.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class CancelAwaitSlotReuseTest {
    private static final long NONE = -1L;

    @Test
    void aCancelThatRacesTheAwaitNeverWipesTheNextTaskInTheReusedSlot() throws Exception {
        long seconds = Long.getLong("dev.threadpool.test.cancelRaceSeconds", 3L);
        int pairs = 4;
        List<Throwable> errors = new CopyOnWriteArrayList<>();
        AtomicLong rounds = new AtomicLong();
        try (ThreadPool pool = ThreadPool.create(PoolConfig.builder().schedulerVariant(SchedulerVariant.GLOBAL_QUEUE)
                .maxThreads(1).queueCapacity(16).recentErrorCapacity(4).daemon(true).build())) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLongArray box = new AtomicLongArray(pairs); // B -> A: the handle to cancel
            Thread[] threads = new Thread[2 * pairs];
            Runnable noop = () -> { };
            for (int p = 0; p < pairs; p++) {
                final int me = p;
                box.set(me, NONE);
                threads[2 * p] = new Thread(() -> { // A: cancels whatever B hands over
                    try {
                        while (!stop.get()) {
                            long h = box.getAndSet(me, NONE);
                            if (h != NONE) {
                                try {
                                    pool.cancel(h);
                                } catch (InvalidHandleException late) {
                                    // taken after B's await released the slot and h2 reused it: stale, refused
                                }
                            } else {
                                Thread.onSpinWait();
                            }
                        }
                    } catch (Throwable t) {
                        errors.add(t);
                        stop.set(true);
                    }
                }, "canceller-" + p);
                threads[2 * p + 1] = new Thread(() -> { // B: submit, hand over, poll; then submit and await
                    try {
                        while (!stop.get() && System.nanoTime() - deadline < 0) {
                            long h1 = pool.submitWaitable(noop);
                            box.set(me, h1);
                            try {
                                while (!pool.await(h1, Duration.ZERO)) {
                                    Thread.onSpinWait();
                                }
                            } catch (TaskCancelledException expected) {
                                // A won: fine, the slot is released
                            }
                            // A may still hold h1 (not yet taken from the box, or cancelling it): a finished
                            // or stale handle, which cancel() reports false for or refuses, never harms.
                            long h2 = pool.submitWaitable(noop);
                            pool.await(h2); // TaskFailedException(NPE) if the slot's new task was wiped
                            rounds.incrementAndGet();
                        }
                    } catch (Throwable t) {
                        errors.add(t);
                    } finally {
                        stop.set(true);
                    }
                }, "submitter-" + p);
            }
            for (Thread t : threads) {
                t.setDaemon(true);
                t.start();
            }
            for (Thread t : threads) {
                t.join(TimeUnit.SECONDS.toMillis(seconds) + TestSupport.WAIT.toMillis());
            }
            for (Thread t : threads) {
                assertTrue(!t.isAlive(), t.getName() + " did not finish");
            }
            assertTrue(errors.isEmpty(), () -> "after " + rounds.get() + " rounds: " + describe(errors));
            assertTrue(rounds.get() > 0, "no round completed");
            PoolStats s = TestSupport.awaitQuiescent(pool);
            assertEquals(0, s.failed(), "no task failed: " + s + " " + pool.recentErrors());
        }
    }

    private static String describe(List<Throwable> errors) {
        StringBuilder b = new StringBuilder();
        for (Throwable t : errors) {
            b.append(t).append(" caused by ").append(t.getCause()).append("; ");
        }
        return b.toString();
    }
}
