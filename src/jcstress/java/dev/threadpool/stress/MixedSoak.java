package dev.threadpool.stress;

import dev.threadpool.PoolBusyException;
import dev.threadpool.PoolConfig;
import dev.threadpool.PoolStats;
import dev.threadpool.QueueKind;
import dev.threadpool.SchedulerVariant;
import dev.threadpool.SubmitOptions;
import dev.threadpool.Submitter;
import dev.threadpool.TaskCancelledException;
import dev.threadpool.TaskFailedException;
import dev.threadpool.ThreadPool;
import dev.threadpool.WaitGroup;
import java.time.Duration;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The mixed soak (issue 48): every way into the pool at once, for a set time, on every variant at
 * {@code workers} workers (64 by default, {@link PoolConfig#MAX_THREADS}; LANE_EXTENSION with a quarter of them
 * blocking). Per variant two pools in turn, {@code queueCapacity} 256 (no descriptor caches: the table is short
 * and full often) and 8192 (worker caches of 32 and submitter caches at 64 workers). Each pool runs rounds until its share
 * of the time is up; in a round {@value #PARTIES} outside threads draw random operations, each over fresh ids:
 * <ul>
 *   <li>{@code submit} with a group, or without one (the task counts itself down), default or BLOCKING lane;</li>
 *   <li>{@code trySubmit} with a zero timeout (a refused id must never run);</li>
 *   <li>{@code submitBatch} with a group, either lane;</li>
 *   <li>{@code submitWaitable}, then {@code cancel} half of the time (a cancelled id must never run and its
 *       await must throw {@link TaskCancelledException}), then {@code await};</li>
 *   <li>a failing waitable (await must throw {@link TaskFailedException} with the task's own cause) and failing
 *       detached tasks (the error handler must see each exactly once);</li>
 *   <li>a registered {@link Submitter}: submit, trySubmit, submitBatch with a group, then close;</li>
 *   <li>{@code join}: a random binary tree over up to 64 leaves, from outside;</li>
 *   <li>{@code parallelFor} over up to 256 ids at a random grain, from outside;</li>
 *   <li>a task that, on a worker, submits children (some trySubmit), joins a small tree and runs a nested
 *       {@code parallelFor};</li>
 *   <li>now and then a task that parks 20 us (a short blocking call) on either lane.</li>
 * </ul>
 * At the end of a round (every wait bounded by {@link #WAIT}) each id must have run exactly as often as its
 * outcome says: once if accepted, never if refused or cancelled. The snapshot must keep its accounting
 * invariants. After each close: nothing live, alloc == free, no descriptor live, every accepted task ended
 * ({@code submitted == completed + failed + cancelled}), {@code failed} and the error handler's count (it is
 * called for every task that threw, waitable or not) equal to the failing tasks accepted, no worker thread left
 * alive.
 *
 * <pre>
 *   java -cp ... dev.threadpool.stress.MixedSoak [--seconds S] [--workers W] [--variants gq,ws,ws-cl,lanes] [--seed N]
 * </pre>
 * {@code --seconds} is per variant (default 10). Prints one line per pool and {@code mixed soak ... -> OK}
 * (exit 0), or {@code -> BROKEN} with the first violation (exit 1).
 */
public final class MixedSoak {
    static final int PARTIES = 4;
    static final int ROUND_IDS = 1 << 16;
    static final Duration WAIT = Duration.ofSeconds(60);

    /** What was decided for an id: nothing yet (it must not run), accepted (must run once). */
    private static final int ACCEPTED = 1;

    private final ThreadPool pool;
    private final boolean lanes;
    private final AtomicInteger next = new AtomicInteger();
    private final AtomicIntegerArray runs = new AtomicIntegerArray(ROUND_IDS);
    private final AtomicIntegerArray expect = new AtomicIntegerArray(ROUND_IDS);
    private final WaitGroup group = new WaitGroup();
    private final ConcurrentLinkedQueue<String> violations;
    final AtomicLong failingAccepted = new AtomicLong();
    final AtomicLong ops = new AtomicLong();
    final AtomicLong cancelled = new AtomicLong();
    final AtomicLong refused = new AtomicLong();

    private MixedSoak(ThreadPool pool, ConcurrentLinkedQueue<String> violations) {
        this.pool = pool;
        this.lanes = pool.config().schedulerVariant() == SchedulerVariant.LANE_EXTENSION;
        this.violations = violations;
    }

    private static final class Failure extends RuntimeException {
        Failure(int id) {
            super("soak failure " + id, null, false, false);
        }
    }

    public static void main(String[] args) throws Exception {
        long seconds = 10;
        int workers = PoolConfig.MAX_THREADS;
        String variants = "gq,ws,ws-cl,lanes";
        long seed = System.nanoTime();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--seconds" -> seconds = Long.parseLong(args[++i]);
                case "--workers" -> workers = Integer.parseInt(args[++i]);
                case "--variants" -> variants = args[++i];
                case "--seed" -> seed = Long.parseLong(args[++i]);
                default -> {
                    System.err.println("unknown argument: " + args[i]);
                    System.exit(2);
                }
            }
        }
        System.out.printf(Locale.ROOT, "mixed soak: %d workers, %d s per variant, seed %d%n", workers, seconds, seed);
        ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
        long t0 = System.nanoTime();
        long totalOps = 0;
        int pools = 0;
        for (String v : variants.split(",")) {
            PoolConfig.Builder base = switch (v) {
                case "gq" -> PoolConfig.builder().schedulerVariant(SchedulerVariant.GLOBAL_QUEUE);
                case "ws" -> PoolConfig.builder().schedulerVariant(SchedulerVariant.WORK_STEALING)
                        .queueKind(QueueKind.RING);
                case "ws-cl" -> PoolConfig.builder().schedulerVariant(SchedulerVariant.WORK_STEALING)
                        .queueKind(QueueKind.CHASE_LEV);
                case "lanes" -> PoolConfig.builder().schedulerVariant(SchedulerVariant.LANE_EXTENSION)
                        .blockingWorkers(Math.max(1, workers / 4));
                default -> throw new IllegalArgumentException("variant must be gq, ws, ws-cl or lanes: " + v);
            };
            for (int capacity : new int[] {256, 8192}) {
                long[] res = onePool(base, v, workers, capacity, seconds * 500_000_000L, seed++, violations);
                totalOps += res[0];
                pools++;
                if (!violations.isEmpty()) {
                    break;
                }
            }
            if (!violations.isEmpty()) {
                break;
            }
        }
        long ms = (System.nanoTime() - t0) / 1_000_000;
        boolean ok = violations.isEmpty();
        if (!ok) {
            int shown = 0;
            for (String s : violations) {
                System.out.println("  VIOLATION: " + s);
                if (++shown == 20) {
                    System.out.println("  ... " + (violations.size() - shown) + " more");
                    break;
                }
            }
        }
        System.out.printf(Locale.ROOT, "mixed soak: %d pools, %,d operations, %d ms -> %s%n", pools, totalOps, ms,
                ok ? "OK" : "BROKEN");
        System.exit(ok ? 0 : 1);
    }

    /** One pool of {@code variant} for {@code nanos}; returns {operations}. */
    static long[] onePool(PoolConfig.Builder base, String variant, int workers, int capacity, long nanos, long seed,
            ConcurrentLinkedQueue<String> violations) throws Exception {
        AtomicLong handled = new AtomicLong();
        String prefix = "soak-" + variant + "-" + capacity + "-";
        ThreadPool pool = ThreadPool.create(base.maxThreads(workers).queueCapacity(capacity).daemon(true)
                .threadNamePrefix(prefix).errorHandler((task, error) -> {
                    if (error instanceof Failure) {
                        handled.incrementAndGet();
                    } else {
                        violations.add("unexpected task error: " + error);
                    }
                }).build());
        MixedSoak soak = new MixedSoak(pool, violations);
        long deadline = System.nanoTime() + nanos;
        int rounds = 0;
        try {
            do {
                soak.round(seed + rounds);
                rounds++;
            } while (System.nanoTime() - deadline < 0 && violations.isEmpty());
        } finally {
            pool.close();
        }
        PoolStats s = pool.statsSnapshot();
        if (s.liveBytes() != 0 || s.totalAllocBytes() != s.totalFreeBytes() || s.taskDescLive() != 0
                || s.submitted() != s.completed() + s.failed() + s.cancelled() || s.accountingSkewDetected()
                || s.queuedTasks() != 0 || s.activeTasks() != 0) {
            violations.add(variant + " cap " + capacity + ": accounting broken after close: " + s);
        }
        if (s.failed() != soak.failingAccepted.get() || handled.get() != soak.failingAccepted.get()) {
            violations.add(variant + " cap " + capacity + ": failures: accepted " + soak.failingAccepted.get()
                    + " (waitable " + soak.failedWaitables.get() + "), pool counted " + s.failed() + ", handler saw "
                    + handled.get());
        }
        long alive = Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith(prefix)).count();
        if (alive != 0) {
            violations.add(variant + " cap " + capacity + ": " + alive + " worker threads alive after close");
        }
        System.out.printf(Locale.ROOT, "  %-6s x%d cap %5d: %4d rounds  %,9d ops  submitted %,d  completed %,d  "
                + "failed %d  cancelled %d  refused %d  steals %d  parks %d  inline %d%n", variant, workers,
                capacity, rounds, soak.ops.get(), s.submitted(), s.completed(), s.failed(), s.cancelled(),
                soak.refused.get(), s.steals(), s.parks(), s.inlineRuns());
        return new long[] {soak.ops.get()};
    }

    /** The failing tasks of {@link #failingAccepted} that were waitable (await sees them; so does the handler). */
    private final AtomicLong failedWaitables = new AtomicLong();

    /** One round: the parties draw operations until the round's ids are used up; then every id is checked. */
    void round(long seed) throws Exception {
        next.set(0);
        for (int i = 0; i < ROUND_IDS; i++) {
            runs.set(i, 0);
            expect.set(i, 0);
        }
        Thread[] ts = new Thread[PARTIES];
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        for (int p = 0; p < PARTIES; p++) {
            SplittableRandom rnd = new SplittableRandom(seed * 31 + p);
            ts[p] = new Thread(() -> {
                try {
                    while (party(rnd)) {
                        ops.incrementAndGet();
                    }
                } catch (Throwable e) {
                    errors.add(e);
                }
            }, "soak-party-" + p);
        }
        for (Thread t : ts) t.start();
        for (Thread t : ts) {
            t.join(WAIT.toMillis());
            if (t.isAlive()) {
                violations.add(t.getName() + " did not finish its round within " + WAIT + "; pool " + pool.statsSnapshot());
                throw new IllegalStateException("party hung");
            }
        }
        for (Throwable e : errors) {
            violations.add("party threw " + e);
        }
        if (!group.await(WAIT)) {
            violations.add("round tasks did not finish within " + WAIT + ": pending " + group.pending() + "; "
                    + pool.statsSnapshot());
            throw new IllegalStateException("round hung");
        }
        int used = Math.min(next.get(), ROUND_IDS);
        int bad = 0;
        for (int id = 0; id < used; id++) {
            int r = runs.get(id);
            int e = expect.get(id);
            if (r != e) {
                if (bad++ < 5) {
                    violations.add("id " + id + " ran " + r + " times, expected " + e);
                }
            }
        }
        if (bad > 5) {
            violations.add((bad - 5) + " more ids ran a wrong number of times");
        }
        PoolStats s = pool.statsSnapshot();
        if (s.accountingSkewDetected() || s.totalAllocBytes() - s.totalFreeBytes() != s.liveBytes()
                || s.completed() + s.failed() > s.started() || s.started() + s.cancelled() > s.submitted()) {
            violations.add("accounting invariants broken mid-run: " + s);
        }
    }

    /** Claims {@code n} fresh ids; -1 once the round's ids are used up. */
    private int ids(int n) {
        int first = next.getAndAdd(n);
        return first + n <= ROUND_IDS ? first : -1;
    }

    private Runnable task(int id) {
        return () -> runs.incrementAndGet(id);
    }

    /** A task that counts itself in {@link #group} (for the ways in that take no group). */
    private Runnable selfCounted(int id) {
        return () -> {
            try {
                runs.incrementAndGet(id);
            } finally {
                group.done();
            }
        };
    }

    private SubmitOptions lane(SplittableRandom rnd) {
        return rnd.nextInt(4) == 0 ? SubmitOptions.BLOCKING : SubmitOptions.DEFAULT;
    }

    /** One operation; false once the round's ids are used up. */
    private boolean party(SplittableRandom rnd) throws Exception {
        int op = rnd.nextInt(12);
        switch (op) {
            case 0, 1 -> { // submit, with a group or counting itself, either lane; sometimes a short block
                int id = ids(1);
                if (id < 0) return false;
                SubmitOptions lane = lane(rnd);
                boolean blocks = rnd.nextInt(32) == 0;
                Runnable body = task(id);
                Runnable t = blocks ? () -> { LockSupport.parkNanos(20_000); body.run(); } : body;
                if (op == 0) {
                    pool.submit(t, group, lane);
                } else {
                    group.add(1);
                    pool.submit(() -> { try { t.run(); } finally { group.done(); } }, lane);
                }
                expect.set(id, ACCEPTED);
            }
            case 2 -> { // trySubmit, zero timeout: refused ids never run
                int id = ids(1);
                if (id < 0) return false;
                group.add(1);
                if (pool.trySubmit(selfCounted(id), Duration.ZERO, lane(rnd))) {
                    expect.set(id, ACCEPTED);
                } else {
                    group.done();
                    refused.incrementAndGet();
                }
            }
            case 3 -> { // submitBatch with a group
                int n = 1 + rnd.nextInt(48);
                int first = ids(n);
                if (first < 0) return false;
                Runnable[] batch = new Runnable[n];
                for (int k = 0; k < n; k++) batch[k] = task(first + k);
                int done = pool.submitBatch(batch, 0, n, group, lane(rnd));
                for (int k = 0; k < done; k++) expect.set(first + k, ACCEPTED);
            }
            case 4 -> { // waitable, cancelled half of the time
                int id = ids(1);
                if (id < 0) return false;
                long h = pool.submitWaitable(task(id), lane(rnd));
                boolean cancel = rnd.nextBoolean() && pool.cancel(h);
                if (cancel) {
                    cancelled.incrementAndGet();
                    try {
                        pool.await(h);
                        violations.add("await of cancelled id " + id + " returned normally");
                    } catch (TaskCancelledException expected) {
                        // as documented
                    }
                } else {
                    expect.set(id, ACCEPTED);
                    if (!pool.await(h, WAIT)) {
                        violations.add("waitable id " + id + " not done within " + WAIT);
                    }
                }
            }
            case 5 -> { // failures: a failing waitable and a failing detached task
                int id = ids(2);
                if (id < 0) return false;
                long h = pool.submitWaitable(() -> { runs.incrementAndGet(id); throw new Failure(id); });
                expect.set(id, ACCEPTED);
                failingAccepted.incrementAndGet();
                failedWaitables.incrementAndGet();
                try {
                    pool.await(h);
                    violations.add("await of failing id " + id + " returned normally");
                } catch (TaskFailedException e) {
                    if (!(e.getCause() instanceof Failure)) {
                        violations.add("await of failing id " + id + ": cause " + e.getCause());
                    }
                }
                pool.submit(() -> { runs.incrementAndGet(id + 1); throw new Failure(id + 1); }, group);
                expect.set(id + 1, ACCEPTED);
                failingAccepted.incrementAndGet();
            }
            case 6 -> { // a registered submitter: submit, trySubmit, batch with a group, close
                int n = 3 + rnd.nextInt(24);
                int first = ids(n + 2);
                if (first < 0) return false;
                try (Submitter sub = pool.registerSubmitter()) {
                    group.add(1);
                    sub.submit(selfCounted(first));
                    expect.set(first, ACCEPTED);
                    group.add(1);
                    if (sub.trySubmit(selfCounted(first + 1))) {
                        expect.set(first + 1, ACCEPTED);
                    } else {
                        group.done();
                        refused.incrementAndGet();
                    }
                    Runnable[] batch = new Runnable[n];
                    for (int k = 0; k < n; k++) batch[k] = task(first + 2 + k);
                    int done = 0;
                    while (done < n) {
                        done += sub.submitBatch(batch, done, n, group);
                    }
                    for (int k = 0; k < n; k++) expect.set(first + 2 + k, ACCEPTED);
                } catch (PoolBusyException sixtyFourRegistered) {
                    // every submitter slot taken (the parties' and the workers'): nothing was submitted
                }
            }
            case 7 -> { // join from outside: a random tree
                int n = 1 + rnd.nextInt(64);
                int first = ids(n);
                if (first < 0) return false;
                joinTree(first, first + n, rnd.nextLong());
                for (int k = 0; k < n; k++) expect.set(first + k, ACCEPTED);
            }
            case 8 -> { // parallelFor from outside
                int n = 1 + rnd.nextInt(256);
                int first = ids(n);
                if (first < 0) return false;
                pool.parallelFor(first, first + n, 1 + rnd.nextInt(16), runs::incrementAndGet);
                for (int k = 0; k < n; k++) expect.set(first + k, ACCEPTED);
            }
            default -> { // a task that works from a worker: children, a join tree, a nested parallelFor
                int children = 1 + rnd.nextInt(16);
                int leaves = 1 + rnd.nextInt(32);
                int range = 1 + rnd.nextInt(64);
                int first = ids(1 + children + leaves + range);
                if (first < 0) return false;
                long treeSeed = rnd.nextLong();
                SubmitOptions outer = lane(rnd);
                pool.submit(() -> {
                    runs.incrementAndGet(first);
                    for (int c = 0; c < children; c++) {
                        int id = first + 1 + c;
                        if ((c & 3) == 3) {
                            group.add(1);
                            if (pool.trySubmit(selfCounted(id))) {
                                expect.set(id, ACCEPTED);
                            } else {
                                group.done();
                            }
                        } else {
                            pool.submit(task(id), group);
                            expect.set(id, ACCEPTED);
                        }
                    }
                    int lo = first + 1 + children;
                    try {
                        joinTree(lo, lo + leaves, treeSeed);
                        pool.parallelFor(lo + leaves, lo + leaves + range, 4, runs::incrementAndGet);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        violations.add("a worker's join or parallelFor was interrupted");
                    }
                    for (int k = lo; k < lo + leaves + range; k++) expect.set(k, ACCEPTED);
                }, group, outer);
                expect.set(first, ACCEPTED);
            }
        }
        return true;
    }

    /** A random binary join tree over ids [lo, hi): leaves of up to 2 ids, random split points. */
    private void joinTree(int lo, int hi, long seed) throws InterruptedException {
        if (hi - lo <= 2) {
            for (int id = lo; id < hi; id++) runs.incrementAndGet(id);
            return;
        }
        long h = seed * 0x9E3779B97F4A7C15L + lo;
        int mid = lo + 1 + (int) Math.floorMod(h ^ (h >>> 29), (long) (hi - lo - 1));
        long ls = h * 31 + 1;
        long rs = h * 31 + 2;
        pool.join(() -> {
            try {
                joinTree(lo, mid, ls);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, () -> {
            try {
                joinTree(mid, hi, rs);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
    }
}
