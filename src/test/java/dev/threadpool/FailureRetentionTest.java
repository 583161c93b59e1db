package dev.threadpool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What the pool keeps of a task that threw, and what repeated awaits of its handle report (issue 13, item 4).
 *
 * <p>The documented semantics ({@link ThreadPool#await(long)}): a handle stays valid until its slot is
 * reused; every await of a valid handle reports the same outcome, a failure with the same cause; once the
 * slot is reused the handle is stale ({@link InvalidHandleException}). So the pool holds a waitable task's
 * failure exactly until its slot is reused, and a detached task's failure not at all (beyond
 * {@code recentErrors} and the error handler, both off here).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class FailureRetentionTest {

    /** One worker, two descriptors: a released slot is the next one handed out (LIFO freelist). */
    private static ThreadPool smallPool() {
        return ThreadPool.create(PoolConfig.builder().schedulerVariant(SchedulerVariant.GLOBAL_QUEUE).maxThreads(1)
                .queueCapacity(2).recentErrorCapacity(0).daemon(true).build());
    }

    /** Runs GCs until {@code ref} is cleared; false if it survived them all (it is strongly reachable). */
    private static boolean collected(WeakReference<?> ref) {
        for (int i = 0; i < 40 && ref.get() != null; i++) {
            System.gc();
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5)); // give the reference handler a turn
        }
        return ref.get() == null;
    }

    /** A task that throws a fresh exception, remembered only weakly. */
    private static Runnable throwing(AtomicReference<WeakReference<Throwable>> seen) {
        return () -> {
            RuntimeException e = new RuntimeException("boom");
            seen.set(new WeakReference<>(e));
            throw e;
        };
    }

    @Test
    void aDetachedTasksFailureIsNotKeptByThePool() throws Exception {
        AtomicReference<WeakReference<Throwable>> seen = new AtomicReference<>();
        try (ThreadPool pool = smallPool()) {
            pool.submit(throwing(seen));
            PoolStats s = TestSupport.awaitQuiescent(pool);
            assertEquals(1, s.failed(), "it ran and failed: " + s);
            assertNotNull(seen.get(), "the task ran");
            // Before the fix the worker stored it in the slot's failure cell, which nothing ever cleared.
            assertTrue(collected(seen.get()), "a detached task's failure is unreachable once it has been reported");
        }
    }

    @Test
    void aWaitableTasksFailureIsReportedByEveryAwaitUntilTheSlotIsReusedAndThenDropped() throws Exception {
        AtomicReference<WeakReference<Throwable>> seen = new AtomicReference<>();
        try (ThreadPool pool = smallPool()) {
            long h = pool.submitWaitable(throwing(seen));
            TaskFailedException first = assertThrows(TaskFailedException.class, () -> pool.await(h));
            TaskFailedException second = assertThrows(TaskFailedException.class, () -> pool.await(h));
            TaskFailedException third = assertThrows(TaskFailedException.class, () -> pool.await(h, Duration.ZERO));
            assertNotNull(first.getCause(), "the first await has the cause");
            assertSame(first.getCause(), second.getCause(), "a repeated await reports the same cause");
            assertSame(first.getCause(), third.getCause(), "and so does a timed one");
            first = null;
            second = null;
            third = null;
            assertTrue(!collected(seen.get()), "while the handle is valid the pool holds the cause for its awaits");

            pool.await(pool.submitWaitable(() -> { })); // reuses the slot (the one just released is on top)
            assertThrows(InvalidHandleException.class, () -> pool.await(h), "the old handle is stale now");
            assertTrue(collected(seen.get()), "the slot's reuse dropped the old failure");
        }
    }

    @Test
    void aCancelledTasksRunnableIsDroppedWhenItsAwaitReleasesTheSlot() throws Exception {
        try (ThreadPool pool = smallPool()) {
            java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
            java.util.concurrent.CountDownLatch started = new java.util.concurrent.CountDownLatch(1);
            pool.submit(() -> {
                started.countDown();
                try {
                    release.await(TestSupport.WAIT.toMillis(), TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            assertTrue(started.await(TestSupport.WAIT.toMillis(), TimeUnit.MILLISECONDS));
            Object payload = new Object();
            Runnable task = () -> payload.hashCode(); // capturing: a fresh object, not a constant lambda
            WeakReference<Runnable> ref = new WeakReference<>(task);
            long h = pool.submitWaitable(task);
            task = null;
            assertTrue(pool.cancel(h));
            assertThrows(TaskCancelledException.class, () -> pool.await(h));
            assertTrue(collected(ref), "the releasing await cleared the cancelled task's reference");
            release.countDown();
            TestSupport.awaitQuiescent(pool);
        }
    }

    /**
     * Late awaits of a failed task's handle race the slot's reuse. Each must report the failure with its
     * cause, or the handle stale: before the fix, one whose re-read of the control word saw the reuse
     * reported FAILED with a null cause. Bounded: {@code -Ddev.threadpool.test.lateAwaitSeconds} (default 2).
     */
    @Test
    void aLateAwaitThatRacesTheReuseReportsTheCauseOrAStaleHandleNeverANullCause() throws Exception {
        long seconds = Long.getLong("dev.threadpool.test.lateAwaitSeconds", 2L);
        List<String> errors = new CopyOnWriteArrayList<>();
        AtomicLong reports = new AtomicLong();
        AtomicLong rounds = new AtomicLong();
        try (ThreadPool pool = smallPool()) {
            AtomicLong current = new AtomicLong(-1L);
            AtomicReference<Throwable> currentCause = new AtomicReference<>();
            AtomicBoolean stop = new AtomicBoolean();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
            Thread submitter = new Thread(() -> {
                try {
                    while (!stop.get() && System.nanoTime() - deadline < 0) {
                        RuntimeException boom = new RuntimeException("boom");
                        long h = pool.submitWaitable(() -> { throw boom; });
                        TaskFailedException e = assertThrows(TaskFailedException.class, () -> pool.await(h));
                        assertSame(boom, e.getCause());
                        currentCause.set(boom);
                        current.set(h);
                        for (int k = 0; k < 4; k++) {
                            pool.await(pool.submitWaitable(() -> { })); // reuses h's slot
                        }
                        rounds.incrementAndGet();
                    }
                } catch (Throwable t) {
                    errors.add("submitter: " + t);
                } finally {
                    stop.set(true);
                }
            }, "submitter");
            Thread late = new Thread(() -> {
                while (!stop.get()) {
                    Throwable cause = currentCause.get();
                    long h = current.get();
                    if (h == -1L || cause == null) {
                        Thread.onSpinWait();
                        continue;
                    }
                    try {
                        pool.await(h, Duration.ZERO);
                        errors.add("a failed task's handle reported completion");
                    } catch (TaskFailedException e) {
                        if (e.getCause() == null) {
                            errors.add("FAILED with a null cause after " + rounds.get() + " rounds");
                            stop.set(true);
                        }
                        reports.incrementAndGet();
                    } catch (InvalidHandleException stale) {
                        // the slot was reused: the handle is stale
                    } catch (Throwable t) {
                        errors.add("late awaiter: " + t);
                        stop.set(true);
                    }
                }
            }, "late-awaiter");
            submitter.setDaemon(true);
            late.setDaemon(true);
            submitter.start();
            late.start();
            submitter.join(TimeUnit.SECONDS.toMillis(seconds) + TestSupport.WAIT.toMillis());
            late.join(TestSupport.WAIT.toMillis());
            if (submitter.isAlive() || late.isAlive()) {
                fail("threads did not finish");
            }
            assertTrue(errors.isEmpty(), () -> errors.toString());
            assertTrue(rounds.get() > 0, "no round completed");
        }
    }
}
