package dev.threadpool.internal.scheduler;

import dev.threadpool.PoolConfig;
import dev.threadpool.QueueKind;
import dev.threadpool.SchedulerVariant;
import dev.threadpool.TimestampMode;
import dev.threadpool.WaitGroup;
import dev.threadpool.internal.counting.Path;
import dev.threadpool.internal.counting.Recorder;
import dev.threadpool.internal.counting.Scenarios;
import java.lang.reflect.Field;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The counted paths (see {@link Path}), run inside a {@code CountingLoader}: this class is loaded there, so the
 * {@link PoolCore} it builds is the rewritten one. In this package for the white-box looks it needs
 * ({@link Scheduler#hasWork}, the idle mask). Every wait is bounded ({@link #WAIT_NANOS}); nothing sleeps.
 *
 * <p>Each scenario warms its path up (a quarter of the counted work, at least a few rounds), then opens a
 * {@link Recorder} window, runs the counted work, and closes it; where the counted threads change from round to
 * round (steals), each round has a window of its own and keeps only that round's path threads.
 */
public final class CountingScenarios implements Scenarios {
    private static final long WAIT_NANOS = TimeUnit.SECONDS.toNanos(30);
    /** Outside submits per burst: the submitter waits for a burst to run before the next (no full-ring waits). */
    private static final int BURST = 64;
    /** Most outside tasks not yet run while the busy pool's submitter submits (outsideBusy). */
    private static final int BUSY_OUTSTANDING = 256;
    /** Tasks a worker pushes for thieves in one steal round. */
    private static final int STEAL_ROUND = 64;

    public CountingScenarios() {}

    @Override
    public Run run(Path path, String variant, String queueKind, int workers, int tasks) throws Exception {
        SchedulerVariant v = SchedulerVariant.valueOf(variant);
        if (path == Path.STEAL && v == SchedulerVariant.GLOBAL_QUEUE) {
            return null; // one shared ring: nothing to steal from
        }
        PoolConfig.Builder b = PoolConfig.builder().maxThreads(workers).schedulerVariant(v)
                .queueKind(QueueKind.valueOf(queueKind));
        if (path == Path.OUTSIDE_DESCRIPTOR || path == Path.OUTSIDE_DESCRIPTOR_BUSY) {
            b.timestampMode(TimestampMode.FULL); // FULL turns the carried path off: every task takes a descriptor
        }
        Recorder.forgetBlocks();
        PoolCore core = new PoolCore(b.build());
        try {
            return switch (path) {
                case OUTSIDE_DETACHED, OUTSIDE_DESCRIPTOR -> outside(core, tasks, false);
                case OUTSIDE_GROUP -> outside(core, tasks, true);
                case OUTSIDE_DETACHED_BUSY, OUTSIDE_DESCRIPTOR_BUSY -> outsideBusy(core, tasks, workers);
                case WORKER_SUBMIT -> chain(core, tasks, false);
                case WORKER_SUBMIT_BUSY -> chainsBusy(core, tasks, workers, false);
                case WORKER_GROUP_BUSY -> chainsBusy(core, tasks, workers, true);
                case WORKER_GROUP -> chain(core, tasks, true);
                case STEAL -> steal(core, tasks);
                case JOIN_OFFERED -> join(core, tasks, 0);
                case JOIN_DEEP -> join(core, tasks, Joining.EAGER_LEVELS);
                case JOIN_STOLEN -> joinStolen(core, tasks);
                case PARK_WAKE -> parkWake(core, tasks, workers);
                case IDLE_LOOK -> idleLook(core, tasks, workers, false);
                case IDLE_LOOK_BUSY -> idleLookBusy(core, tasks, workers);
                case PARK_RECHECK -> idleLook(core, tasks, workers, true);
            };
        } finally {
            if (Recorder.recording()) {
                Recorder.stop();
            }
            core.close();
        }
    }

    // ---- a mixed flood, for the classification's check ------------------------------------------------

    @Override
    public Run flood(String variant, String queueKind, int workers, int tasks) throws Exception {
        Recorder.forgetBlocks();
        PoolCore core = new PoolCore(PoolConfig.builder().maxThreads(workers)
                .schedulerVariant(SchedulerVariant.valueOf(variant)).queueKind(QueueKind.valueOf(queueKind)).build());
        try {
            WaitGroup g = new WaitGroup();
            Runnable leaf = () -> { };
            AtomicInteger n = new AtomicInteger();
            Runnable task = () -> {
                core.submit(leaf, 0, g, WaitMode.UNBOUNDED, Long.MAX_VALUE); // a worker's own submit
                if ((n.incrementAndGet() & 7) == 0) {
                    try {
                        core.join(leaf, leaf);
                    } catch (InterruptedException e) {
                        throw new AssertionError(e);
                    }
                }
            };
            Recorder.start();
            Thread registered = new Thread(() -> {
                int slot = core.registerSubmitter();
                try {
                    for (int i = 0; i < tasks / 2; i++) {
                        core.submit(slot, task, 0, g, WaitMode.UNBOUNDED, Long.MAX_VALUE);
                    }
                } finally {
                    core.releaseSubmitter(slot);
                }
            }, "flood-registered-submitter");
            registered.start();
            for (int i = 0; i < tasks / 2; i++) {
                core.submit(task, 0, (i & 1) == 0 ? g : null, WaitMode.UNBOUNDED, Long.MAX_VALUE);
            }
            registered.join(TimeUnit.NANOSECONDS.toMillis(WAIT_NANOS));
            check(!registered.isAlive(), "the registered submitter finished");
            check(g.await(Duration.ofNanos(WAIT_NANOS)), "the flood's group reached zero");
            List<Recorder.Counts> counts = Recorder.stop();
            Set<Thread> all = ConcurrentHashMap.newKeySet();
            counts.forEach(c -> all.add(c.thread()));
            return new Run(counts, all, tasks, "");
        } finally {
            if (Recorder.recording()) {
                Recorder.stop();
            }
            core.close();
        }
    }

    // ---- outside submits -------------------------------------------------------------------------------

    private static Run outside(PoolCore core, int tasks, boolean withGroup) throws Exception {
        int rounds = Math.max(1, tasks / BURST);
        int warm = Math.max(4, rounds / 4);
        for (int r = 0; r < warm + rounds; r++) {
            if (r == warm) {
                Recorder.start();
            }
            if (withGroup) {
                WaitGroup g = new WaitGroup();
                for (int i = 0; i < BURST; i++) {
                    core.submit(() -> { }, 0, g, WaitMode.UNBOUNDED, Long.MAX_VALUE);
                }
                check(g.await(Duration.ofNanos(WAIT_NANOS)), "a burst of outside submits with a group ran");
            } else {
                CountDownLatch ran = new CountDownLatch(BURST);
                for (int i = 0; i < BURST; i++) {
                    core.submit(ran::countDown, 0, null, WaitMode.UNBOUNDED, Long.MAX_VALUE);
                }
                check(ran.await(WAIT_NANOS, TimeUnit.NANOSECONDS), "a burst of outside submits ran");
            }
        }
        List<Recorder.Counts> counts = Recorder.stop();
        return new Run(counts, Set.of(Thread.currentThread()), (long) rounds * BURST, "");
    }

    // ---- a worker's own submits: a chain, each task submitting the next ----------------------------------

    private static final class Chain implements Runnable {
        private final PoolCore core;
        private final int warm;
        private final int counted;
        private final WaitGroup group;
        private final Set<Thread> threads = ConcurrentHashMap.newKeySet();
        private final CountDownLatch done = new CountDownLatch(1);
        private int next; // plain: one chain, each link published to the next by the pool's own hand-off
        private volatile List<Recorder.Counts> counts;

        Chain(PoolCore core, int warm, int counted, WaitGroup group) {
            this.core = core;
            this.warm = warm;
            this.counted = counted;
            this.group = group;
        }

        @Override
        public void run() {
            int k = next++;
            if (k == warm) {
                Recorder.start(); // counted: tasks warm .. warm + counted - 1 submit, and are released, in the window
            }
            if (k >= warm) {
                threads.add(Thread.currentThread());
            }
            if (k == warm + counted) {
                counts = Recorder.stop();
                done.countDown();
                return;
            }
            core.submit(this, 0, group, WaitMode.UNBOUNDED, Long.MAX_VALUE);
        }
    }

    private static Run chain(PoolCore core, int tasks, boolean withGroup) throws Exception {
        WaitGroup g = withGroup ? new WaitGroup() : null;
        Chain c = new Chain(core, Math.max(64, tasks / 4), tasks, g);
        core.submit(c, 0, null, WaitMode.UNBOUNDED, Long.MAX_VALUE);
        check(c.done.await(WAIT_NANOS, TimeUnit.NANOSECONDS), "the chain of worker submits ended");
        if (g != null) {
            check(g.await(Duration.ofNanos(WAIT_NANOS)), "the chain's group reached zero");
        }
        int hops = c.threads.size();
        return new Run(c.counts, c.threads, tasks, hops == 1 ? "" : "the chain ran on " + hops + " workers");
    }

    // ---- steady state: every worker busy with a chain of its own submits ---------------------------------

    /**
     * One self-submitting chain per worker, running until {@link #stop}: a pool in which nobody parks, the steady
     * state of issue 48's budgets. The links count themselves on a heap counter the pool never sees (test code's
     * own atomics are not rewritten, so not counted). The chains settle one per worker (a worker handed two
     * pushes the displaced one to its queue, and a thief takes it), which {@link #start} waits for, bounded.
     */
    private static final class BusyChains {
        /** Rounds of 64 links per chain that the chains get to spread over the workers before a window opens. */
        private static final int SETTLE_ROUNDS = 3;
        private final PoolCore core;
        private final AtomicLong links = new AtomicLong();
        private final CountDownLatch ended;
        private final Link[] chains;
        /** The group every link is submitted with (added at the submit, done when the link has run), or null. */
        private final WaitGroup group;
        private volatile boolean stop;
        /** Threads that ran a link while {@link #collect} is set. */
        private final Set<Thread> threads = ConcurrentHashMap.newKeySet();
        private volatile boolean collect;

        BusyChains(PoolCore core, int workers) {
            this(core, workers, null);
        }

        BusyChains(PoolCore core, int workers, WaitGroup group) {
            this.core = core;
            this.group = group;
            this.ended = new CountDownLatch(workers);
            this.chains = new Link[workers];
        }

        private final class Link implements Runnable {
            volatile Thread last; // written by each runner: where this chain ran last

            @Override
            public void run() {
                if (stop) {
                    ended.countDown();
                    return;
                }
                Thread t = Thread.currentThread();
                last = t;
                if (collect) {
                    threads.add(t);
                }
                links.incrementAndGet();
                core.submit(this, 0, group, WaitMode.UNBOUNDED, Long.MAX_VALUE);
            }
        }

        /**
         * Starts the chains and lets them settle for {@link #SETTLE_ROUNDS} rounds of 64 links each (bounded),
         * ending early once they sit on distinct workers; returns on how many distinct workers they last ran (a
         * chain sampled just after a move can share one with another, so this reads a little low).
         */
        int start() {
            for (int i = 0; i < chains.length; i++) {
                chains[i] = new Link();
                core.submit(chains[i], 0, null, WaitMode.UNBOUNDED, Long.MAX_VALUE);
            }
            long deadline = System.nanoTime() + WAIT_NANOS;
            int distinct = 0;
            for (int round = 0; round < SETTLE_ROUNDS && distinct < chains.length; round++) {
                long before = links.get();
                while (links.get() - before < 64L * chains.length) {
                    check(System.nanoTime() - deadline < 0, "the busy chains ran");
                    Thread.yield();
                }
                Set<Thread> on = new java.util.HashSet<>();
                for (Link l : chains) {
                    on.add(l.last);
                }
                distinct = on.size();
            }
            return distinct;
        }

        long links() {
            return links.get();
        }

        void collect(boolean on) {
            collect = on;
        }

        Set<Thread> threads() {
            return threads;
        }

        /** Stops every chain and waits (bounded) until each has seen the flag. */
        void stop() throws InterruptedException {
            stop = true;
            check(ended.await(WAIT_NANOS, TimeUnit.NANOSECONDS), "every busy chain ended");
        }
    }

    private static Run chainsBusy(PoolCore core, int tasks, int workers, boolean withGroup) throws Exception {
        BusyChains busy = new BusyChains(core, workers, withGroup ? new WaitGroup() : null);
        int distinct = busy.start();
        try {
            busy.collect(true);
            Recorder.start();
            long from = busy.links();
            long deadline = System.nanoTime() + WAIT_NANOS;
            while (busy.links() - from < tasks) {
                check(System.nanoTime() - deadline < 0, tasks + " links of the busy chains ran");
                Thread.yield();
            }
            List<Recorder.Counts> counts = Recorder.stop();
            long ran = busy.links() - from; // a link or two per chain may straddle the window's edges
            busy.collect(false);
            return new Run(counts, Set.copyOf(busy.threads()), ran, "the " + workers + " chains sat on " + distinct
                    + " distinct workers; " + busy.threads().size() + " workers ran links in the window");
        } finally {
            busy.stop();
        }
    }

    /**
     * Outside submits into a pool whose workers are all busy with their own chains ({@link BusyChains}): at most
     * {@link #BUSY_OUTSTANDING} of the submitter's tasks outstanding, so it never waits for a ring cell or a
     * descriptor (a space waiter's registration is not this path), and a worker takes them between its links.
     */
    private static Run outsideBusy(PoolCore core, int tasks, int workers) throws Exception {
        BusyChains busy = new BusyChains(core, workers);
        int distinct = busy.start();
        try {
            AtomicLong ran = new AtomicLong();
            Runnable task = ran::incrementAndGet;
            int warm = tasks / 4;
            long deadline = System.nanoTime() + WAIT_NANOS;
            for (int i = 0; i < warm + tasks; i++) {
                if (i == warm) {
                    Recorder.start();
                }
                while (i - ran.get() >= BUSY_OUTSTANDING) {
                    check(System.nanoTime() - deadline < 0, "the busy pool ran the outside tasks");
                    Thread.yield();
                }
                core.submit(task, 0, null, WaitMode.UNBOUNDED, Long.MAX_VALUE);
            }
            List<Recorder.Counts> counts = Recorder.stop();
            return new Run(counts, Set.of(Thread.currentThread()), tasks, "the " + workers + " chains sat on "
                    + distinct + " distinct workers");
        } finally {
            busy.stop();
        }
    }

    // ---- steal-half: a worker pushes a round of tasks and holds its thread until thieves ran them --------

    private static Run steal(PoolCore core, int tasks) throws Exception {
        int rounds = Math.max(1, tasks / STEAL_ROUND);
        int warm = Math.max(2, rounds / 4);
        List<Recorder.Counts> kept = new ArrayList<>();
        Set<Thread> allThieves = ConcurrentHashMap.newKeySet();
        long stolen = 0;
        for (int r = 0; r < warm + rounds; r++) {
            CountDownLatch ran = new CountDownLatch(STEAL_ROUND);
            AtomicInteger byThieves = new AtomicInteger();
            Set<Thread> thieves = ConcurrentHashMap.newKeySet();
            CountDownLatch ownerDone = new CountDownLatch(1);
            boolean counted = r >= warm;
            if (counted) {
                Recorder.start();
            }
            core.submit(() -> {
                Thread owner = Thread.currentThread();
                Runnable leaf = () -> {
                    if (Thread.currentThread() != owner) {
                        byThieves.incrementAndGet();
                        thieves.add(Thread.currentThread());
                    }
                    ran.countDown();
                };
                for (int i = 0; i < STEAL_ROUND; i++) {
                    core.submit(leaf, 0, null, WaitMode.UNBOUNDED, Long.MAX_VALUE);
                }
                long deadline = System.nanoTime() + WAIT_NANOS;
                while (ran.getCount() != 0 && System.nanoTime() - deadline < 0) {
                    Thread.yield(); // hold this worker: its queue is the thieves' to take
                }
                ownerDone.countDown();
            }, 0, null, WaitMode.UNBOUNDED, Long.MAX_VALUE);
            check(ran.await(WAIT_NANOS, TimeUnit.NANOSECONDS), "a steal round ran");
            check(ownerDone.await(WAIT_NANOS, TimeUnit.NANOSECONDS), "a steal round's owner returned");
            if (counted) {
                for (Recorder.Counts c : Recorder.stop()) {
                    if (thieves.contains(c.thread())) {
                        kept.add(c);
                    }
                }
                allThieves.addAll(thieves);
                stolen += byThieves.get();
            }
        }
        return new Run(kept, allThieves, stolen, stolen + " of " + (long) rounds * STEAL_ROUND + " tasks stolen");
    }

    // ---- join ------------------------------------------------------------------------------------------

    private static Run join(PoolCore core, int joins, int levels) throws Exception {
        int warm = Math.max(64, joins / 4);
        AtomicInteger stolen = new AtomicInteger();
        List<List<Recorder.Counts>> out = new ArrayList<>();
        Thread[] owner = new Thread[1];
        CountDownLatch done = new CountDownLatch(1);
        core.submit(() -> {
            Thread me = Thread.currentThread();
            owner[0] = me;
            Runnable left = () -> { };
            Runnable right = () -> {
                if (Thread.currentThread() != me) {
                    stolen.incrementAndGet();
                }
            };
            NestedJoins.nested(core, levels, () -> {
                try {
                    for (int j = 0; j < warm + joins; j++) {
                        if (j == warm) {
                            stolen.set(0);
                            Recorder.start();
                        }
                        core.join(left, right);
                    }
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
                out.add(Recorder.stop());
            });
            done.countDown();
        }, 0, null, WaitMode.UNBOUNDED, Long.MAX_VALUE);
        check(done.await(WAIT_NANOS, TimeUnit.NANOSECONDS), "the joins ended");
        return new Run(out.get(0), Set.of(owner[0]), joins, stolen.get() + " of " + joins + " right halves stolen");
    }

    private static Run joinStolen(PoolCore core, int joins) throws Exception {
        int warm = Math.max(4, joins / 4);
        AtomicInteger stolen = new AtomicInteger();
        Set<Thread> threads = ConcurrentHashMap.newKeySet();
        List<List<Recorder.Counts>> out = new ArrayList<>();
        CountDownLatch done = new CountDownLatch(1);
        core.submit(() -> {
            Thread me = Thread.currentThread();
            threads.add(me);
            try {
                for (int j = 0; j < warm + joins; j++) {
                    if (j == warm) {
                        stolen.set(0);
                        Recorder.start();
                    }
                    boolean[] started = new boolean[1];
                    Object lock = started;
                    boolean counted = j >= warm;
                    Runnable right = () -> {
                        if (Thread.currentThread() != me) {
                            stolen.incrementAndGet();
                            if (counted) {
                                threads.add(Thread.currentThread());
                            }
                        }
                        synchronized (lock) {
                            started[0] = true;
                        }
                    };
                    Runnable left = () -> { // hold the owner until a thief has the right half (bounded)
                        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
                        while (System.nanoTime() - deadline < 0) {
                            synchronized (lock) {
                                if (started[0]) {
                                    return;
                                }
                            }
                            Thread.yield();
                        }
                    };
                    core.join(left, right);
                }
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            out.add(Recorder.stop());
            done.countDown();
        }, 0, null, WaitMode.UNBOUNDED, Long.MAX_VALUE);
        check(done.await(WAIT_NANOS * 2, TimeUnit.NANOSECONDS), "the stolen joins ended");
        List<Recorder.Counts> kept = new ArrayList<>();
        for (Recorder.Counts c : out.get(0)) {
            if (threads.contains(c.thread())) {
                kept.add(c);
            }
        }
        return new Run(kept, threads, joins, stolen.get() + " of " + joins + " right halves stolen");
    }

    // ---- park and wake, idle look ---------------------------------------------------------------------------

    private static ParkingLot parking(PoolCore core) throws ReflectiveOperationException {
        Field f = PoolCore.class.getDeclaredField("parking");
        f.setAccessible(true);
        return (ParkingLot) f.get(core);
    }

    /** Waits, bounded, until every one of {@code workers} workers has announced itself idle. */
    private static void awaitAllIdle(ParkingLot parking, int workers) {
        long all = workers == 64 ? -1L : (1L << workers) - 1;
        long deadline = System.nanoTime() + WAIT_NANOS;
        while ((parking.idleMask() & all) != all) {
            check(System.nanoTime() - deadline < 0, "all " + workers + " workers idle (mask "
                    + Long.toHexString(parking.idleMask()) + ")");
            Thread.yield();
        }
    }

    private static Run parkWake(PoolCore core, int cycles, int workers) throws Exception {
        ParkingLot parking = parking(core);
        int warm = Math.max(4, cycles / 4);
        awaitAllIdle(parking, workers);
        Set<Thread> threads = ConcurrentHashMap.newKeySet();
        for (int c = 0; c < warm + cycles; c++) {
            if (c == warm) {
                Recorder.start();
            }
            CountDownLatch ran = new CountDownLatch(1);
            boolean counted = c >= warm;
            core.submit(() -> {
                if (counted) {
                    threads.add(Thread.currentThread());
                }
                ran.countDown();
            }, 0, null, WaitMode.UNBOUNDED, Long.MAX_VALUE);
            check(ran.await(WAIT_NANOS, TimeUnit.NANOSECONDS), "a woken worker ran the task");
            awaitAllIdle(parking, workers); // the cycle ends when the woken worker has announced itself again
        }
        List<Recorder.Counts> counts = Recorder.stop();
        Set<Thread> all = ConcurrentHashMap.newKeySet();
        counts.forEach(c -> all.add(c.thread()));
        return new Run(counts, all, cycles, threads.size() + " distinct workers ran the cycles' tasks");
    }

    /** {@code looks} looks by idle worker 1 of an idle pool: bounded ({@code lookForWork}) or the re-check. */
    private static Run idleLook(PoolCore core, int looks, int workers, boolean recheck) throws Exception {
        ParkingLot parking = parking(core);
        awaitAllIdle(parking, workers);
        return looks(core.schedulerForTest(), 1, looks, recheck, "");
    }

    /**
     * Half the workers each run a task that submits a child into its own LIFO slot (HELD set) and returns; the
     * worker then takes the child from its slot and blocks in it, its bit still set with nothing to take: the
     * stale bits a bounded look must not read every worker for. Looks by an idle worker meanwhile.
     */
    private static Run idleLookBusy(PoolCore core, int looks, int workers) throws Exception {
        ParkingLot parking = parking(core);
        awaitAllIdle(parking, workers);
        int busy = workers / 2;
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch blocked = new CountDownLatch(busy);
        try {
            for (int t = 0; t < busy; t++) {
                core.submit(() -> core.submit(() -> {
                    blocked.countDown();
                    try {
                        release.await(WAIT_NANOS, TimeUnit.NANOSECONDS); // bounded: the finally below releases it
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }, 0, null, WaitMode.UNBOUNDED, Long.MAX_VALUE), 0, null, WaitMode.UNBOUNDED, Long.MAX_VALUE);
            }
            check(blocked.await(WAIT_NANOS, TimeUnit.NANOSECONDS), busy + " workers blocked in a child");
            long idle = 0;
            long deadline = System.nanoTime() + WAIT_NANOS;
            while (Long.bitCount(idle = parking.idleMask()) < workers - busy) { // the others parked again
                check(System.nanoTime() - deadline < 0, (workers - busy) + " workers idle");
                Thread.yield();
            }
            int looker = Long.numberOfTrailingZeros(idle);
            long stale = Long.bitCount(parking.work().mask(WorkSummary.HELD) & ~idle);
            return looks(core.schedulerForTest(), looker, looks, false, stale + " busy workers with HELD set, "
                    + "worker " + looker + " looking");
        } finally {
            release.countDown();
        }
    }

    private static Run looks(Scheduler s, int looker, int looks, boolean recheck, String note) {
        List<Recorder.Counts> counts = new ArrayList<>();
        boolean sawWork = false;
        for (int i = 0; i < looks; i++) {
            Recorder.start();
            sawWork |= recheck ? s.hasWork(looker) : s.lookForWork(looker);
            for (Recorder.Counts c : Recorder.stop()) {
                if (c.thread() == Thread.currentThread()) {
                    counts.add(c); // one entry per look: the lines one look reads
                }
            }
        }
        String seen = sawWork ? "a look saw work" : "";
        return new Run(counts, Set.of(Thread.currentThread()), looks,
                note.isEmpty() ? seen : seen.isEmpty() ? note : note + "; " + seen);
    }

    private static void check(boolean ok, String what) {
        if (!ok) {
            throw new IllegalStateException("timed out waiting until " + what);
        }
    }
}
