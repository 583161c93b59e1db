package dev.threadpool;

import static dev.threadpool.TestSupport.WAIT;
import static dev.threadpool.TestSupport.assertAccounting;
import static dev.threadpool.TestSupport.assertClosedClean;
import static dev.threadpool.TestSupport.awaitQuiescent;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.threadpool.TestSupport.PoolVariant;
import dev.threadpool.internal.stats.PoolCounters;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every task exactly once, with bounded waits, for every way in (external, batched, registered submitter,
 * recursive from workers, fan-out far beyond queueCapacity) in every variant of {@link TestSupport#POOL_VARIANTS}
 * (GLOBAL_QUEUE, WORK_STEALING RING and CHASE_LEV, LANE_EXTENSION), each with a queueCapacity too small for
 * descriptor caches (64) and one large enough
 * for worker and submitter caches (2048 with 4 workers); plus shutdown in both modes while workers steal and
 * submitters submit, and the cache hazards (a producer waiting for space while slots are cached; nothing
 * stranded in a cache after purge and Submitter.close).
 */
class SubmissionCountingTest {

    record Setup(PoolVariant variant, int capacity) {
        PoolConfig.Builder config() {
            return variant.builder().maxThreads(variant.workersOr(4)).queueCapacity(capacity).localQueueCapacity(16)
                    .daemon(true);
        }

        @Override
        public String toString() {
            return variant + " cap=" + capacity;
        }
    }

    /**
     * Every variant ({@link TestSupport#POOL_VARIANTS}, the one list) at 4 workers and both capacities, then each
     * at 64 workers ({@link TestSupport#POOL_VARIANTS_64}) with 64 (no worker caches), 4096 (worker caches of 16:
     * Slots.workerCacheLimit; the default before it grew with the workers) and 8192 (caches of 32), so the sized
     * caches and the submitter and outside caches all run at 64 too (the default 16384, full caches of 64, runs in
     * the contract suites' 64-worker cases).
     */
    static Stream<Setup> setups() {
        List<Setup> out = new ArrayList<>();
        for (int cap : new int[] {64, 2048}) {
            TestSupport.poolVariants().forEach(v -> out.add(new Setup(v, cap)));
        }
        for (int cap : new int[] {64, 4096, 8192}) {
            TestSupport.poolVariants64().forEach(v -> out.add(new Setup(v, cap)));
        }
        return out.stream();
    }

    /** Run counts per id; {@link #assertEachOnce} fails on any id that ran zero or several times. */
    static final class Tally {
        final AtomicIntegerArray runs;

        Tally(int n) {
            runs = new AtomicIntegerArray(n);
        }

        void run(int id) {
            runs.incrementAndGet(id);
        }

        void assertEachOnce() {
            for (int i = 0; i < runs.length(); i++) {
                if (runs.get(i) != 1) {
                    fail("task " + i + " ran " + runs.get(i) + " times");
                }
            }
        }
    }

    private static void join(Thread t) throws InterruptedException {
        t.join(WAIT.toMillis());
        assertFalse(t.isAlive(), t.getName() + " did not finish within " + WAIT);
    }

    private static void finishClean(ThreadPool pool) {
        assertAccounting(awaitQuiescent(pool));
        pool.purgeWorkerCaches();
        pool.close();
        assertClosedClean(pool);
    }

    @ParameterizedTest
    @MethodSource("setups")
    void externalSubmits(Setup s) throws Exception {
        final int n = 20_000;
        Tally t = new Tally(n);
        ThreadPool pool = ThreadPool.create(s.config().build());
        WaitGroup wg = new WaitGroup();
        for (int i = 0; i < n; i++) {
            final int id = i;
            pool.submit(() -> t.run(id), wg);
        }
        assertTrue(wg.await(WAIT));
        t.assertEachOnce();
        finishClean(pool);
    }

    @ParameterizedTest
    @MethodSource("setups")
    void batchedSubmits(Setup s) throws Exception {
        final int n = 20_000;
        Tally t = new Tally(n);
        ThreadPool pool = ThreadPool.create(s.config().build());
        CountDownLatch all = new CountDownLatch(n);
        Runnable[] batch = new Runnable[n];
        for (int i = 0; i < n; i++) {
            final int id = i;
            batch[i] = () -> { t.run(id); all.countDown(); };
        }
        int accepted = 0;
        while (accepted < n) {
            accepted += pool.submitBatch(batch, accepted, Math.min(n, accepted + 500));
        }
        assertTrue(all.await(WAIT.toSeconds(), TimeUnit.SECONDS));
        t.assertEachOnce();
        finishClean(pool);
    }

    @ParameterizedTest
    @MethodSource("setups")
    void registeredSubmittersSingleBatchedAndWaitable(Setup s) throws Exception {
        final int perThread = 9_000;
        final int threads = 3;
        Tally t = new Tally(perThread * threads);
        ThreadPool pool = ThreadPool.create(s.config().build());
        CountDownLatch all = new CountDownLatch(perThread * threads);
        AtomicReference<Throwable> err = new AtomicReference<>();
        Thread[] ts = new Thread[threads];
        for (int k = 0; k < threads; k++) {
            final int base = k * perThread;
            ts[k] = new Thread(() -> {
                try (Submitter sub = pool.registerSubmitter()) {
                    Runnable[] batch = new Runnable[100];
                    for (int i = 0; i < perThread; ) {
                        final int id = base + i;
                        Runnable r = () -> { t.run(id); all.countDown(); };
                        switch (i % 3) {
                            case 0 -> { sub.submit(r); i++; }
                            case 1 -> { pool.await(sub.submitWaitable(r)); i++; }
                            default -> {
                                int m = Math.min(batch.length, perThread - i);
                                for (int j = 0; j < m; j++) {
                                    final int bid = base + i + j;
                                    batch[j] = () -> { t.run(bid); all.countDown(); };
                                }
                                int done = 0;
                                while (done < m) {
                                    done += sub.submitBatch(batch, done, m);
                                }
                                i += m;
                            }
                        }
                    }
                } catch (Throwable e) {
                    err.compareAndSet(null, e);
                }
            }, "submitter-" + k);
            ts[k].start();
        }
        for (Thread th : ts) {
            join(th);
        }
        if (err.get() != null) {
            throw new AssertionError(err.get());
        }
        assertTrue(all.await(WAIT.toSeconds(), TimeUnit.SECONDS));
        t.assertEachOnce();
        finishClean(pool);
    }

    /**
     * A binary tree of about 2^15 tasks, each node submitting its children from a worker. When the pool is
     * full, a worker's submit runs the child inline; past {@code MAX_INLINE_DEPTH} nested runs on one worker
     * (reached under CPU load, when helping nests unrelated nodes) the documented answer is a refusal,
     * {@link PoolBusyException}, and nothing was accepted: the node then runs the child itself, as a user
     * would. Every node runs exactly once either way.
     */
    @ParameterizedTest
    @MethodSource("setups")
    void recursiveSubmits(Setup s) throws Exception {
        final int nodes = 1 << 15;
        Tally t = new Tally(nodes);
        ThreadPool pool = ThreadPool.create(s.config().build());
        WaitGroup wg = new WaitGroup();
        pool.submit(() -> node(pool, t, wg, 0, nodes), wg);
        assertTrue(wg.await(WAIT));
        t.assertEachOnce();
        finishClean(pool);
    }

    private static void node(ThreadPool pool, Tally t, WaitGroup wg, int id, int nodes) {
        t.run(id);
        for (int c = 2 * id + 1; c <= 2 * id + 2 && c < nodes; c++) {
            final int child = c;
            try {
                pool.submit(() -> node(pool, t, wg, child, nodes), wg);
            } catch (PoolBusyException refused) { // not accepted; the group was not left counting it
                node(pool, t, wg, child, nodes);
            }
        }
    }

    /** One task fans out 100x queueCapacity children; a full pool runs them inline, never deadlocks. */
    @ParameterizedTest
    @MethodSource("setups")
    void fanOutFarBeyondQueueCapacity(Setup s) throws Exception {
        final int n = 100 * s.capacity();
        Tally t = new Tally(n);
        ThreadPool pool = ThreadPool.create(s.config().build());
        WaitGroup wg = new WaitGroup();
        pool.submit(() -> {
            for (int i = 0; i < n; i++) {
                final int id = i;
                pool.submit(() -> t.run(id), wg);
            }
        }, wg);
        assertTrue(wg.await(WAIT));
        t.assertEachOnce();
        finishClean(pool);
    }

    /**
     * Producers wait for space while workers fill their caches: with every slot taken and released over and
     * over, a waiter must still get one (releases go to the freelist while somebody waits).
     */
    @ParameterizedTest
    @MethodSource("setups")
    void producersWaitingForSpaceAlwaysProgress(Setup s) throws Exception {
        final int perThread = 10 * s.capacity();
        final int threads = 2;
        Tally t = new Tally(perThread * threads);
        ThreadPool pool = ThreadPool.create(s.config().build());
        WaitGroup wg = new WaitGroup();
        Thread[] ts = new Thread[threads];
        for (int k = 0; k < threads; k++) {
            final int base = k * perThread;
            ts[k] = new Thread(() -> {
                for (int i = 0; i < perThread; i++) {
                    final int id = base + i;
                    // each task also submits a child from its worker, so worker caches see traffic both ways
                    pool.submit(() -> {
                        t.run(id);
                    }, wg);
                }
            }, "producer-" + k);
            ts[k].start();
        }
        for (Thread th : ts) {
            join(th);
        }
        assertTrue(wg.await(WAIT));
        t.assertEachOnce();
        finishClean(pool);
    }

    /**
     * After the pool went quiescent, purgeWorkerCaches returned and every submitter closed, no slot sits in
     * a cache: queueCapacity blocking tasks can all be accepted by single non-waiting trySubmit calls.
     */
    @ParameterizedTest
    @MethodSource("setups")
    void nothingStrandedInCachesAfterPurgeAndSubmitterClose(Setup s) throws Exception {
        ThreadPool pool = ThreadPool.create(s.config().build());
        CountDownLatch release = new CountDownLatch(1);
        try {
            WaitGroup wg = new WaitGroup();
            try (Submitter sub = pool.registerSubmitter()) {
                for (int i = 0; i < 5_000; i++) {
                    sub.submit(() -> { });
                    pool.submit(() -> pool.submit(() -> { }, wg), wg); // worker-side acquire and release
                }
            }
            assertTrue(wg.await(WAIT));
            awaitQuiescent(pool);
            pool.purgeWorkerCaches();
            if (TestSupport.carriesOutsideTasks(pool.config())) {
                // An outside trySubmit takes no descriptor here: look at the descriptors from a worker, whose
                // trySubmit does (its own cache first). The checker holds one; the other capacity - 1 must be free.
                long h = pool.submitWaitable(() -> {
                    for (int i = 1; i < s.capacity(); i++) {
                        assertTrue(pool.trySubmit(() -> awaitQuietly(release)),
                                "slot " + i + " of " + s.capacity() + " must be free: " + pool.statsSnapshot());
                    }
                    assertFalse(pool.trySubmit(() -> { }), "every descriptor is taken now");
                });
                pool.await(h, WAIT);
                return;
            }
            CountDownLatch started = new CountDownLatch(s.capacity());
            for (int i = 0; i < s.capacity(); i++) {
                assertTrue(pool.trySubmit(() -> { started.countDown(); awaitQuietly(release); }),
                        "slot " + i + " of " + s.capacity() + " must be free: " + pool.statsSnapshot());
            }
            assertFalse(pool.trySubmit(() -> { }), "the pool is full now");
        } finally {
            release.countDown();
        }
        finishClean(pool);
    }

    static void awaitQuietly(CountDownLatch l) {
        try {
            l.await(WAIT.toSeconds(), TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Closing a submitter hands its queued work over: none lost, the slot registers again. */
    @ParameterizedTest
    @MethodSource("setups")
    void submitterCloseLosesNothingAndTheSlotIsReused(Setup s) throws Exception {
        ThreadPool pool = ThreadPool.create(s.config().build());
        CountDownLatch gate = new CountDownLatch(1);
        int workers = pool.config().maxThreads();
        CountDownLatch busy = new CountDownLatch(workers);
        AtomicInteger ran = new AtomicInteger();
        WaitGroup wg = new WaitGroup();
        try {
            for (int i = 0; i < workers; i++) { // occupy every worker so the submitter's queue keeps its entries
                pool.submit(() -> { busy.countDown(); awaitQuietly(gate); }, wg);
            }
            assertTrue(busy.await(WAIT.toSeconds(), TimeUnit.SECONDS));
            Submitter sub = pool.registerSubmitter();
            int slot = sub.slot();
            int n = Math.min(12, s.capacity() - 8);
            for (int i = 0; i < n; i++) {
                assertTrue(sub.trySubmit(() -> ran.incrementAndGet()));
            }
            sub.close();
            Submitter again = pool.registerSubmitter();
            assertEquals(slot, again.slot());
            again.submit(ran::incrementAndGet);
            again.close();
            gate.countDown();
            assertTrue(wg.await(WAIT));
            TestSupport.eventually("every submitter task ran", () -> ran.get() == n + 1);
        } finally {
            gate.countDown();
        }
        finishClean(pool);
    }

    /** Shutdown in both modes while workers steal and submitters are active: every accepted task ends once. */
    @ParameterizedTest
    @MethodSource("setups")
    void shutdownWhileStealingAndSubmitting(Setup s) throws Exception {
        for (ShutdownMode mode : ShutdownMode.values()) {
            ThreadPool pool = ThreadPool.create(s.config().build());
            final int threads = 3;
            final int cap = 200_000;
            AtomicIntegerArray runs = new AtomicIntegerArray(threads * cap);
            int[] acceptedCount = new int[threads]; // ids base .. base + acceptedCount - 1 were accepted
            CountDownLatch going = new CountDownLatch(threads);
            Thread[] ts = new Thread[threads];
            for (int k = 0; k < threads; k++) {
                final int base = k * cap;
                final int me = k;
                final boolean registered = k != 0;
                ts[k] = new Thread(() -> {
                    Submitter sub = registered ? pool.registerSubmitter() : null;
                    int i = 0;
                    try {
                        for (; i < cap; i++) {
                            final int id = base + i;
                            Runnable r = () -> {
                                runs.incrementAndGet(id);
                                if ((id & 7) == 0) { // some recursion, so workers also steal from peers
                                    pool.trySubmit(() -> { });
                                }
                            };
                            if (registered) {
                                sub.submit(r);
                            } else {
                                pool.submit(r);
                            }
                            if (i == 1000) {
                                going.countDown();
                            }
                        }
                    } catch (PoolShutdownException expected) {
                        // admission closed: id base + i was refused, stop submitting
                    } finally {
                        acceptedCount[me] = i; // published to the test thread by join()
                        going.countDown();
                        if (sub != null) {
                            sub.close();
                        }
                    }
                }, "submitter-" + k);
                ts[k].start();
            }
            assertTrue(going.await(WAIT.toSeconds(), TimeUnit.SECONDS));
            assertTrue(pool.shutdown(mode, WAIT), mode + ": shutdown within " + WAIT);
            for (Thread th : ts) {
                join(th);
            }
            PoolStats st = pool.statsSnapshot();
            for (int k = 0; k < threads; k++) {
                for (int i = 0; i < cap; i++) {
                    int r = runs.get(k * cap + i);
                    if (i >= acceptedCount[k] && r != 0) {
                        fail(mode + ": refused task " + (k * cap + i) + " ran " + r + " times");
                    }
                    if (i < acceptedCount[k] && (r > 1 || (mode == ShutdownMode.DRAIN && r != 1))) {
                        fail(mode + ": accepted task " + (k * cap + i) + " ran " + r + " times");
                    }
                }
            }
            if (mode == ShutdownMode.DRAIN) {
                assertEquals(0, st.cancelled(), "DRAIN cancels nothing: " + st);
            }
            assertEquals(st.submitted(), st.completed() + st.failed() + st.cancelled(),
                    mode + ": every accepted task ended: " + st);
            pool.close();
            assertClosedClean(pool);
        }
    }

    /**
     * Outside threads that are neither workers nor registered submitters, every task with a descriptor
     * ({@code TimestampMode.FULL} carries nothing): more threads than outside admission stripes, so stripes are
     * shared, each mixing a detached submit, a waitable (awaited at once) and a batch of 8, while shutdown closes
     * admission in both modes. Each accept is on the calling thread's stripe (PoolCounters.tryAcceptOutside), and
     * the close must count exactly the accepted ones: afterwards every task a submitter saw accepted ran once or
     * was cancelled, none it saw refused ran, and {@code submitted} is exactly the accepted count, with
     * {@code cancelled} exactly the accepted tasks that did not run.
     */
    @ParameterizedTest
    @MethodSource("setups")
    void shutdownRacingOutsideSubmitsWithDescriptors(Setup s) throws Exception {
        final int threads = PoolCounters.OUTSIDE_STRIPES + 2;
        final int cap = 40_000;
        for (ShutdownMode mode : ShutdownMode.values()) {
            ThreadPool pool = ThreadPool.create(s.config().timestampMode(TimestampMode.FULL).build());
            AtomicIntegerArray runs = new AtomicIntegerArray(threads * cap);
            AtomicIntegerArray accepted = new AtomicIntegerArray(threads * cap);
            AtomicInteger awaitedCancelled = new AtomicInteger();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            CountDownLatch going = new CountDownLatch(threads);
            Thread[] ts = new Thread[threads];
            for (int k = 0; k < threads; k++) {
                final int base = k * cap;
                ts[k] = new Thread(() -> {
                    Runnable[] batch = new Runnable[8];
                    int i = 0;
                    boolean counted = false;
                    try {
                        while (i + batch.length <= cap) {
                            if (!counted && i >= 1000) {
                                counted = true;
                                going.countDown();
                            }
                            final int id = base + i;
                            switch ((i >>> 3) % 3) {
                                case 0 -> {
                                    pool.submit(() -> runs.incrementAndGet(id));
                                    accepted.set(id, 1);
                                    i++;
                                }
                                case 1 -> {
                                    long h = pool.submitWaitable(() -> runs.incrementAndGet(id));
                                    accepted.set(id, 1);
                                    i++;
                                    try {
                                        if (!pool.await(h, WAIT)) {
                                            throw new AssertionError("waitable " + id + " not ended within " + WAIT);
                                        }
                                    } catch (TaskCancelledException e) {
                                        awaitedCancelled.incrementAndGet(); // CANCEL_PENDING swept it
                                    }
                                }
                                default -> {
                                    for (int b = 0; b < batch.length; b++) {
                                        final int bid = id + b;
                                        batch[b] = () -> runs.incrementAndGet(bid);
                                    }
                                    int n = pool.submitBatch(batch, 0, batch.length);
                                    for (int b = 0; b < n; b++) {
                                        accepted.set(id + b, 1);
                                    }
                                    i += batch.length; // the rest of a partial batch was refused
                                    if (n < batch.length) {
                                        return; // shutdown began part-way
                                    }
                                }
                            }
                        }
                    } catch (PoolShutdownException expected) {
                        // admission closed: this submit was refused, stop submitting
                    } catch (Throwable t) {
                        failure.compareAndSet(null, t);
                    } finally {
                        if (!counted) {
                            going.countDown();
                        }
                    }
                }, "outside-submitter-" + k);
                ts[k].start();
            }
            assertTrue(going.await(WAIT.toSeconds(), TimeUnit.SECONDS));
            assertTrue(pool.shutdown(mode, WAIT), mode + ": shutdown within " + WAIT);
            for (Thread th : ts) {
                join(th);
            }
            assertEquals(null, failure.get(), s + " " + mode + ": a submitter failed");
            long acceptedTotal = 0;
            long ranTotal = 0;
            for (int id = 0; id < threads * cap; id++) {
                int r = runs.get(id);
                if (accepted.get(id) == 0) {
                    if (r != 0) {
                        fail(s + " " + mode + ": refused task " + id + " ran " + r + " times");
                    }
                    continue;
                }
                acceptedTotal++;
                ranTotal += r;
                if (r > 1 || (mode == ShutdownMode.DRAIN && r != 1)) {
                    fail(s + " " + mode + ": accepted task " + id + " ran " + r + " times");
                }
            }
            PoolStats st = pool.statsSnapshot();
            assertTrue(acceptedTotal > threads * 1000L, s + " " + mode + ": accepted " + acceptedTotal);
            assertEquals(acceptedTotal, st.submitted(), s + " " + mode + ": submitted counts exactly the accepted: "
                    + st);
            assertEquals(ranTotal, st.completed() + st.failed(), s + " " + mode + ": " + st);
            assertEquals(acceptedTotal - ranTotal, st.cancelled(), s + " " + mode
                    + ": every accepted task that did not run was cancelled: " + st);
            assertTrue(awaitedCancelled.get() <= st.cancelled(), s + " " + mode + ": " + st);
            if (mode == ShutdownMode.DRAIN) {
                assertEquals(0, st.cancelled(), "DRAIN cancels nothing: " + st);
            }
            pool.close();
            assertClosedClean(pool);
        }
    }
}
