package dev.threadpool;

import static dev.threadpool.TestSupport.WAIT;
import static dev.threadpool.TestSupport.assertClosedClean;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The pool's lifecycle paths racing each other: {@code ExecutorService.shutdownNow} (PoolCore.cancelQueuedNow,
 * a sweep of queues that live in the arena) against {@code close()} (which frees the arena), and two
 * {@code shutdownNow} calls against each other. Each round checks that no exception escapes either side, that
 * every accepted task either ran, was handed back by a {@code shutdownNow}, or had its future cancelled
 * (exactly one of the three), and that the closed pool's accounting is exact ({@code liveBytes == 0}). Every
 * wait is bounded. Runs on every variant.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class LifecycleRaceTest {
    private static final int WORKERS = 2;
    private static final int TASKS = 100;
    private static final int ROUNDS = 120;

    record Variant(SchedulerVariant scheduler, QueueKind queueKind) {}

    static Stream<Variant> variants() {
        return Stream.of(new Variant(SchedulerVariant.GLOBAL_QUEUE, QueueKind.RING),
                new Variant(SchedulerVariant.WORK_STEALING, QueueKind.RING),
                new Variant(SchedulerVariant.WORK_STEALING, QueueKind.CHASE_LEV),
                new Variant(SchedulerVariant.LANE_EXTENSION, QueueKind.RING));
    }

    static ThreadPool pool(Variant v) {
        PoolConfig.Builder b = PoolConfig.builder().schedulerVariant(v.scheduler()).queueKind(v.queueKind())
                .maxThreads(WORKERS).queueCapacity(256).localQueueCapacity(4).daemon(true)
                .threadNamePrefix("life-" + v.scheduler() + "-" + v.queueKind() + "-");
        if (v.scheduler() == SchedulerVariant.LANE_EXTENSION) {
            // one blocking-lane worker (it helps the default lane), no overflow workers: WORKERS gate tasks
            // occupy every worker
            b.blockingWorkers(1).maxOverflowWorkers(0).blockingPromotionTimeout(Duration.ofHours(1));
        }
        return ThreadPool.create(b.build());
    }

    /** When the racing shutdownNow starts, relative to close(): the four cases cycle over the rounds. */
    enum Start {
        /** At once: both race from the first instruction. */
        AT_ONCE,
        /** After a random spin of up to ~50 µs. */
        JITTER,
        /** Once close() has closed admission (the sweep runs while close drains). */
        AFTER_SHUTDOWN,
        /** Once the pool is TERMINATED: close() is about to free the arena, or has. */
        AFTER_TERMINATED
    }

    /** Tasks of one round: a flag per task set when it runs, so "ran" is exact. */
    private static final class Round {
        final AtomicIntegerArray ran = new AtomicIntegerArray(TASKS);
        final List<Future<?>> futures = new ArrayList<>(TASKS);
        final ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();

        void submit(ExecutorService es) {
            for (int i = 0; i < TASKS; i++) {
                final int id = i;
                futures.add(es.submit(() -> ran.incrementAndGet(id)));
            }
        }

        /** Every task ran, was handed back (in exactly one list), or had its future cancelled: one of the three. */
        void assertEveryTaskAccountedFor(List<List<Runnable>> handedBack, String where) {
            Set<Object> back = Collections.newSetFromMap(new IdentityHashMap<>());
            int handed = 0;
            for (List<Runnable> l : handedBack) {
                assertNotNull(l, where + ": shutdownNow returned null");
                for (Runnable r : l) {
                    assertTrue(back.add(r), where + ": a task was handed back twice: " + r);
                    handed++;
                }
            }
            int ranCount = 0;
            int cancelled = 0;
            for (int i = 0; i < TASKS; i++) {
                Future<?> f = futures.get(i);
                int runs = ran.get(i);
                assertTrue(runs <= 1, where + ": task " + i + " ran " + runs + " times");
                boolean wasBack = back.contains(f);
                if (runs == 1) {
                    ranCount++;
                    assertFalse(wasBack, where + ": task " + i + " ran and was also handed back");
                    assertTrue(f.isDone() && !f.isCancelled(), where + ": task " + i + " ran, future " + f);
                } else if (wasBack) {
                    assertFalse(f.isDone(), where + ": handed-back task " + i + " must be untouched: " + f);
                } else if (f.isCancelled()) {
                    cancelled++;
                } else {
                    fail(where + ": task " + i + " neither ran, nor was handed back, nor cancelled: " + f);
                }
            }
            assertEquals(TASKS, ranCount + handed + cancelled,
                    where + ": ran " + ranCount + " + handed back " + handed + " + cancelled " + cancelled);
        }
    }

    /** Spins until {@code cond} holds or {@link TestSupport#WAIT} passes (a racer that must start at a phase). */
    private static void spinUntil(BooleanSupplier cond) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("phase not reached within " + WAIT);
            }
            Thread.onSpinWait();
        }
    }

    private static void startAt(Start start, ThreadPool pool) {
        switch (start) {
            case AT_ONCE -> { }
            case JITTER -> {
                long until = System.nanoTime() + ThreadLocalRandom.current().nextLong(50_000);
                while (System.nanoTime() - until < 0) {
                    Thread.onSpinWait();
                }
            }
            case AFTER_SHUTDOWN -> spinUntil(pool::isShutdown);
            case AFTER_TERMINATED -> spinUntil(pool::isTerminated);
        }
    }

    /**
     * shutdownNow on one thread while close() runs on another. Both workers are held by gate tasks, so TASKS
     * futures are queued when the race starts; close() opens the gate and drains, the sweep takes what it
     * finds. Before the fix, cancelQueuedNow was not counted by close(): a sweep that started after close had
     * looked at its caller count swept queues in a freed arena, and FFM's "Already closed" escaped shutdownNow.
     */
    @ParameterizedTest
    @MethodSource("variants")
    void shutdownNowRacingCloseNeverTouchesAFreedArena(Variant v) throws Exception {
        for (int round = 0; round < ROUNDS; round++) {
            Start start = Start.values()[round % Start.values().length];
            String where = v + " round " + round + " (" + start + ")";
            ThreadPool pool = pool(v);
            ExecutorService es = pool.asExecutorService();
            CountDownLatch gate = new CountDownLatch(1);
            CountDownLatch inside = new CountDownLatch(WORKERS);
            for (int w = 0; w < WORKERS; w++) {
                es.execute(() -> {
                    inside.countDown();
                    try {
                        gate.await(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                    } catch (InterruptedException shutdownNow) {
                        // shutdownNow interrupts the workers; the gate task just ends
                    }
                });
            }
            assertTrue(inside.await(WAIT.toMillis(), TimeUnit.MILLISECONDS), where + ": workers occupied");
            Round r = new Round();
            r.submit(es);

            List<List<Runnable>> handedBack = Collections.synchronizedList(new ArrayList<>());
            CyclicBarrier go = new CyclicBarrier(2);
            Thread racer = new Thread(() -> {
                try {
                    go.await(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                    startAt(start, pool);
                    handedBack.add(es.shutdownNow());
                } catch (Throwable e) {
                    r.errors.add(e);
                }
            }, "life-racer");
            racer.start();
            try {
                go.await(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                gate.countDown();
                pool.close();
            } catch (Throwable e) {
                r.errors.add(e);
            }
            racer.join(WAIT.toMillis());
            assertFalse(racer.isAlive(), where + ": shutdownNow returned");
            assertTrue(r.errors.isEmpty(), () -> where + ": exception escaped: " + describe(r.errors));
            assertTrue(pool.isClosed(), where);
            r.assertEveryTaskAccountedFor(handedBack, where);
            assertClosedClean(pool);
        }
    }

    /**
     * Two shutdownNow calls at once: each must get a list of its own (never null), and together they hand
     * back every swept task exactly once. Before the fix both shared one "collecting" field: the later call
     * replaced the earlier one's list, the earlier one returned the later one's, and the later one got null.
     */
    @ParameterizedTest
    @MethodSource("variants")
    void concurrentShutdownNowCallsEachReturnTheirOwnTasks(Variant v) throws Exception {
        for (int round = 0; round < ROUNDS; round++) {
            String where = v + " round " + round;
            ThreadPool pool = pool(v);
            ExecutorService es = pool.asExecutorService();
            CountDownLatch gate = new CountDownLatch(1);
            CountDownLatch inside = new CountDownLatch(WORKERS);
            for (int w = 0; w < WORKERS; w++) {
                es.execute(() -> {
                    inside.countDown();
                    try {
                        gate.await(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                    } catch (InterruptedException shutdownNow) {
                        // the gate task just ends
                    }
                });
            }
            assertTrue(inside.await(WAIT.toMillis(), TimeUnit.MILLISECONDS), where + ": workers occupied");
            Round r = new Round();
            r.submit(es);
            List<List<Runnable>> handedBack = Collections.synchronizedList(new ArrayList<>());
            CyclicBarrier go = new CyclicBarrier(2);
            Thread[] racers = new Thread[2];
            for (int t = 0; t < racers.length; t++) {
                racers[t] = new Thread(() -> {
                    try {
                        go.await(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                        handedBack.add(es.shutdownNow());
                    } catch (Throwable e) {
                        r.errors.add(e);
                    }
                }, "life-racer-" + t);
                racers[t].start();
            }
            for (Thread t : racers) {
                t.join(WAIT.toMillis());
                assertFalse(t.isAlive(), where + ": shutdownNow returned");
            }
            gate.countDown();
            assertTrue(es.awaitTermination(WAIT.toMillis(), TimeUnit.MILLISECONDS), where + ": terminated");
            pool.close();
            assertTrue(r.errors.isEmpty(), () -> where + ": exception escaped: " + describe(r.errors));
            r.assertEveryTaskAccountedFor(handedBack, where);
            assertClosedClean(pool);
        }
    }

    /** Every lifecycle call of the ExecutorService view after close() returns quietly and touches nothing. */
    @ParameterizedTest
    @MethodSource("variants")
    void lifecycleCallsAfterCloseTouchNothing(Variant v) throws Exception {
        ThreadPool pool = pool(v);
        ExecutorService es = pool.asExecutorService();
        es.submit(() -> { }).get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        pool.close();
        assertEquals(List.of(), es.shutdownNow(), "nothing is queued in a closed pool");
        es.shutdown();
        assertTrue(es.awaitTermination(WAIT.toMillis(), TimeUnit.MILLISECONDS));
        assertTrue(pool.shutdown(ShutdownMode.CANCEL_PENDING, WAIT));
        assertClosedClean(pool);
    }

    private static String describe(ConcurrentLinkedQueue<Throwable> errors) {
        StringBuilder sb = new StringBuilder();
        for (Throwable t : errors) {
            sb.append(t).append(" at ");
            StackTraceElement[] st = t.getStackTrace();
            for (int i = 0; i < Math.min(6, st.length); i++) {
                sb.append(st[i]).append(" <- ");
            }
            sb.append('\n');
        }
        return sb.toString();
    }
}
