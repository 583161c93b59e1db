package dev.threadpool;

import static dev.threadpool.TestSupport.WAIT;
import static dev.threadpool.TestSupport.assertAccounting;
import static dev.threadpool.TestSupport.awaitQuiescent;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * WORK_STEALING specifics, in every local queue kind: counting tests (every task runs exactly once) for each
 * way in (external, batched, registered submitter, recursive from workers, fan-out far beyond queueCapacity),
 * the LIFO-slot starvation bound, and shutdown in both modes while workers steal.
 */
class WorkStealingTest {

    static PoolConfig.Builder config(QueueKind kind) {
        return PoolConfig.builder().schedulerVariant(SchedulerVariant.WORK_STEALING).queueKind(kind)
                .maxThreads(4).queueCapacity(64).localQueueCapacity(16).daemon(true);
    }

    /** Counts run ids; {@link #assertEachOnce} checks that every id in [0, n) ran exactly once. */
    static final class Tally {
        final AtomicIntegerArray runs;

        Tally(int n) {
            runs = new AtomicIntegerArray(n);
        }

        Runnable task(int id) {
            return () -> runs.incrementAndGet(id);
        }

        void assertEachOnce() {
            for (int i = 0; i < runs.length(); i++) {
                if (runs.get(i) != 1) {
                    fail("task " + i + " ran " + runs.get(i) + " times");
                }
            }
        }
    }

    @ParameterizedTest
    @EnumSource(QueueKind.class)
    void externalSubmitsRunExactlyOnce(QueueKind kind) throws InterruptedException {
        final int n = 20_000;
        Tally t = new Tally(n);
        try (ThreadPool pool = ThreadPool.create(config(kind).build())) {
            WaitGroup wg = new WaitGroup();
            for (int i = 0; i < n; i++) {
                pool.submit(t.task(i), wg);
            }
            assertTrue(wg.await(WAIT));
            t.assertEachOnce();
            assertAccounting(awaitQuiescent(pool));
        }
    }

    @ParameterizedTest
    @EnumSource(QueueKind.class)
    void batchedSubmitsRunExactlyOnce(QueueKind kind) {
        final int n = 20_000;
        Tally t = new Tally(n);
        Runnable[] batch = new Runnable[n];
        for (int i = 0; i < n; i++) {
            batch[i] = t.task(i);
        }
        try (ThreadPool pool = ThreadPool.create(config(kind).build())) {
            assertEquals(n, pool.submitBatch(batch, 0, n));
            PoolStats s = awaitQuiescent(pool);
            t.assertEachOnce();
            assertEquals(n, s.completed());
            assertAccounting(s);
        }
    }

    @ParameterizedTest
    @EnumSource(QueueKind.class)
    void registeredSubmittersRunExactlyOnce(QueueKind kind) throws Exception {
        final int perThread = 10_000;
        final int threads = 2;
        Tally t = new Tally(perThread * threads);
        try (ThreadPool pool = ThreadPool.create(config(kind).build())) {
            WaitGroup wg = new WaitGroup();
            wg.add(perThread * threads);
            Thread[] ts = new Thread[threads];
            for (int k = 0; k < threads; k++) {
                final int base = k * perThread;
                ts[k] = new Thread(() -> {
                    try (Submitter s = pool.registerSubmitter()) {
                        for (int i = 0; i < perThread; i++) {
                            final Runnable r = t.task(base + i);
                            s.submit(() -> {
                                r.run();
                                wg.done();
                            });
                        }
                    }
                });
                ts[k].start();
            }
            for (Thread th : ts) {
                th.join(WAIT.toMillis());
            }
            assertTrue(wg.await(WAIT));
            t.assertEachOnce();
            assertAccounting(awaitQuiescent(pool));
            assertEquals(0, pool.statsSnapshot().taskDescLive());
        }
    }

    /** A binary tree of tasks, each node submitting its two children from a worker. */
    private static void node(ThreadPool pool, Tally t, WaitGroup wg, int id, int nodes) {
        t.runs.incrementAndGet(id);
        for (int c = 2 * id + 1; c <= 2 * id + 2; c++) {
            if (c < nodes) {
                final int child = c;
                pool.submit(() -> node(pool, t, wg, child, nodes), wg);
            }
        }
    }

    @ParameterizedTest
    @EnumSource(QueueKind.class)
    void recursiveSubmitsRunExactlyOnce(QueueKind kind) throws InterruptedException {
        final int nodes = (1 << 15) - 1;
        Tally t = new Tally(nodes);
        try (ThreadPool pool = ThreadPool.create(config(kind).build())) {
            WaitGroup wg = new WaitGroup();
            pool.submit(() -> node(pool, t, wg, 0, nodes), wg);
            assertTrue(wg.await(WAIT));
            t.assertEachOnce();
            PoolStats s = awaitQuiescent(pool);
            assertEquals(nodes, s.completed());
            assertAccounting(s);
        }
    }

    @ParameterizedTest
    @EnumSource(QueueKind.class)
    void fanOutFarBeyondQueueCapacityNeverDeadlocks(QueueKind kind) throws InterruptedException {
        final int n = 50_000; // queueCapacity is 64, local queues 16
        Tally t = new Tally(n);
        try (ThreadPool pool = ThreadPool.create(config(kind).build())) {
            WaitGroup wg = new WaitGroup();
            pool.submit(() -> {
                for (int i = 0; i < n; i++) {
                    pool.submit(t.task(i), wg); // full: runs inline (caller-runs), never waits
                }
            }, wg);
            assertTrue(wg.await(WAIT));
            t.assertEachOnce();
            assertAccounting(awaitQuiescent(pool));
        }
    }

    @ParameterizedTest
    @EnumSource(QueueKind.class)
    void aTaskResubmittingItselfForeverDoesNotStarveOthers(QueueKind kind) throws InterruptedException {
        // One worker: every resubmission goes to its LIFO slot; without the run bound the others never run.
        // queueCapacity above the 101 tasks alive at once: a full table would make the resubmitter run itself
        // inline (caller-runs), recursing until StackOverflowError, which is not what this test is about.
        try (ThreadPool pool = ThreadPool.create(config(kind).maxThreads(1).queueCapacity(1024).build())) {
            AtomicBoolean stop = new AtomicBoolean();
            AtomicInteger spins = new AtomicInteger();
            CountDownLatchLike started = new CountDownLatchLike();
            Runnable forever = new Runnable() {
                @Override
                public void run() {
                    spins.incrementAndGet();
                    started.open();
                    if (!stop.get()) {
                        pool.submit(this);
                    }
                }
            };
            pool.submit(forever);
            assertTrue(started.await(WAIT), "the resubmitter started");
            WaitGroup others = new WaitGroup();
            AtomicInteger ran = new AtomicInteger();
            for (int i = 0; i < 100; i++) {
                pool.submit(ran::incrementAndGet, others);
            }
            boolean done = others.await(WAIT);
            stop.set(true); // end the resubmitter whatever happened
            assertTrue(done, "other tasks starved: ran " + ran.get() + " of 100 while the resubmitter ran "
                    + spins.get() + " times");
            assertEquals(100, ran.get());
            awaitQuiescent(pool);
        }
    }

    /** A one-shot gate with a bounded wait (WaitGroup of one). */
    static final class CountDownLatchLike {
        private final WaitGroup wg = new WaitGroup();
        private final AtomicBoolean opened = new AtomicBoolean();

        CountDownLatchLike() {
            wg.add(1);
        }

        void open() {
            if (opened.compareAndSet(false, true)) {
                wg.done();
            }
        }

        boolean await(Duration d) throws InterruptedException {
            return wg.await(d);
        }
    }

    /** Keeps every worker stealing: a tree whose nodes keep submitting until shutdown refuses them. */
    private static void spawner(ThreadPool pool, AtomicInteger ran) {
        ran.incrementAndGet();
        for (int k = 0; k < 2; k++) {
            try {
                // trySubmit: when full this branch just ends (a waiting submit would run inline, recursing)
                pool.trySubmit(() -> spawner(pool, ran));
            } catch (PoolShutdownException refused) {
                return; // admission closed: the tree stops growing
            }
        }
    }

    @ParameterizedTest
    @EnumSource(QueueKind.class)
    void shutdownDrainWhileStealingRunsEveryAcceptedTask(QueueKind kind) throws InterruptedException {
        ThreadPool pool = ThreadPool.create(config(kind).build());
        AtomicInteger ran = new AtomicInteger();
        pool.submit(() -> spawner(pool, ran));
        TestSupport.eventually("the tree grows", () -> ran.get() > 5_000);
        assertTrue(pool.shutdown(ShutdownMode.DRAIN, WAIT));
        PoolStats s = pool.statsSnapshot();
        assertEquals(s.submitted(), s.completed() + s.failed(), "DRAIN runs every accepted task: " + s);
        assertEquals(0, s.cancelled());
        assertEquals(s.completed(), ran.get());
        assertAccounting(s);
        pool.close();
        assertEquals(0, pool.statsSnapshot().taskDescLive());
    }

    @ParameterizedTest
    @EnumSource(QueueKind.class)
    void shutdownCancelPendingWhileStealingSweepsEveryQueue(QueueKind kind) throws InterruptedException {
        ThreadPool pool = ThreadPool.create(config(kind).build());
        AtomicInteger ran = new AtomicInteger();
        pool.submit(() -> spawner(pool, ran));
        TestSupport.eventually("the tree grows", () -> ran.get() > 5_000);
        assertTrue(pool.shutdown(ShutdownMode.CANCEL_PENDING, WAIT));
        PoolStats s = pool.statsSnapshot();
        assertEquals(s.submitted(), s.completed() + s.failed() + s.cancelled(),
                "every accepted task either ran or was cancelled: " + s);
        assertEquals(s.completed(), ran.get());
        assertAccounting(s);
        pool.close();
        assertEquals(0, pool.statsSnapshot().taskDescLive());
    }
}
