package dev.threadpool.examples;

import dev.threadpool.IdleStrategy;
import dev.threadpool.PoolConfig;
import dev.threadpool.SchedulerVariant;
import dev.threadpool.ThreadPool;
import dev.threadpool.WaitGroup;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinTask;
import java.util.concurrent.RecursiveAction;
import java.util.concurrent.TimeUnit;

/**
 * An order-book style fan-out, run on this pool and on a {@link ForkJoinPool} of the same parallelism: each
 * batch of incoming orders is partitioned by symbol shard; one task per shard matches its orders against its
 * own books (single writer per book, so no locks), and the batch ends when every shard task has. Each side
 * keeps its own books and draws the same orders (same seed, same batches); all are checked against a serial
 * replay, and the batch latencies (fan-out to last fill) are printed side by side.
 *
 * <p>Our side hands each shard task over in argument form (issue 44): {@code pool.submit(OrderBookFanout::match,
 * shards, s, batch)}, a static, non-capturing function, the side's shards as context and the shard's index as
 * the {@code long}: the pool allocates nothing for it and neither does the caller. The {@code form} argument
 * runs, beside it or instead, the lambda form a user writes without the argument form,
 * {@code pool.submit(() -> shard.matchAll(), batch)}: one capturing lambda per shard per batch. (The example
 * used to make one {@code Runnable} per shard up front, {@code shards[s]::matchAll}; that allocates nothing
 * either, but only works while the set of tasks is fixed, which an order stream's rarely is.) The table shows
 * each form's percentiles and ratio to ForkJoinPool, and the bytes the feeding thread allocated per batch
 * (com.sun.management's per-thread counter, where the JVM has it).
 *
 * <p>Our side runs {@link IdleStrategy#BUSY_SPIN} workers on {@code GLOBAL_QUEUE}: they never park, so a
 * batch never waits for a wake-up (give them dedicated cores; on a machine with fewer cores than workers
 * plus the feeding thread they take the feeder's core). ForkJoinPool has no such setting; its side is what a
 * user of it writes: one {@link RecursiveAction} per shard, made once and reinitialized every batch, under a
 * root action that {@code invokeAll}s them, run with {@link ForkJoinPool#invoke}.
 *
 * <p>How it is measured: the sides take turns in rounds of {@value #ROUND} recorded batches, the first side
 * rotating every round, so machine drift falls on all alike. Each turn starts that side's pool, runs
 * {@value #SETTLE} unrecorded batches (threads up and hot), then the recorded ones, then closes the pool:
 * busy-spinning workers would otherwise eat the other sides' cores during their turn. Before the rounds, one
 * unrecorded turn of {@code warmup} batches per side warms the JIT.
 *
 * <pre>mvn -q validate test-compile exec:exec@example -Dexample=OrderBookFanout -Dexample.args="2000 1024 500 both"</pre>
 * Arguments: recorded batches per side (2000), orders per batch (1024), warm-up batches per side (500), and
 * our form: {@code args} (the argument form), {@code lambda} (a capturing lambda per shard task) or {@code both}
 * (the default: both, side by side).
 */
public final class OrderBookFanout {
    private static final int SHARDS = 16;
    private static final int SYMBOLS_PER_SHARD = 8;
    private static final int LEVELS = 64;
    /** Recorded batches in one turn of one side. */
    static final int ROUND = 250;
    /** Unrecorded batches at the start of every turn, after the side's pool started. */
    static final int SETTLE = 20;

    private OrderBookFanout() {}

    /** One shard's books: per symbol, resting quantity per price level on each side. */
    static final class Shard {
        final long[] bids = new long[SYMBOLS_PER_SHARD * LEVELS];
        final long[] asks = new long[SYMBOLS_PER_SHARD * LEVELS];
        long filled;
        // this batch's orders for the shard, packed (symbol, side, level, qty); written before the fan-out
        final long[] orders;
        int count;

        Shard(int capacity) {
            orders = new long[capacity];
        }

        void matchAll() {
            for (int k = 0; k < count; k++) {
                long o = orders[k];
                match((int) (o >>> 48), (int) (o >>> 40) & 1, (int) (o >>> 32) & 0xFF, (int) o);
            }
        }

        /** A limit order: crosses the opposite side from the best level up to {@code level}, rests the rest. */
        void match(int symbol, int side, int level, long qty) {
            int base = symbol * LEVELS;
            long[] against = side == 0 ? asks : bids;
            long[] rest = side == 0 ? bids : asks;
            if (side == 0) {
                for (int p = 0; p <= level && qty > 0; p++) {
                    long take = Math.min(qty, against[base + p]);
                    against[base + p] -= take;
                    qty -= take;
                    filled += take;
                }
            } else {
                for (int p = LEVELS - 1; p >= level && qty > 0; p--) {
                    long take = Math.min(qty, against[base + p]);
                    against[base + p] -= take;
                    qty -= take;
                    filled += take;
                }
            }
            rest[base + level] += qty;
        }
    }

    /** The order stream: the same seed gives every side the same batches in the same order. */
    static final class Orders {
        private final SplittableRandom rnd = new SplittableRandom(42);
        private final int perBatch;

        Orders(int perBatch) {
            this.perBatch = perBatch;
        }

        /** Writes the next batch into the shards' order arrays, each order to its symbol's shard. */
        void next(Shard[] shards) {
            for (Shard s : shards) {
                s.count = 0;
            }
            for (int i = 0; i < perBatch; i++) {
                int shard = rnd.nextInt(SHARDS);
                long order = ((long) rnd.nextInt(SYMBOLS_PER_SHARD) << 48) | ((long) rnd.nextInt(2) << 40)
                        | ((long) rnd.nextInt(LEVELS) << 32) | (1 + rnd.nextInt(100));
                shards[shard].orders[shards[shard].count++] = order;
            }
        }
    }

    /** One side: its books, its order stream, and a pool that is started for each turn. */
    abstract static class Side {
        final Shard[] shards = new Shard[SHARDS];
        final Orders orders;
        final int threads;
        int batchNo;

        Side(int threads, int perBatch) {
            this.threads = threads;
            this.orders = new Orders(perBatch);
            for (int s = 0; s < SHARDS; s++) {
                shards[s] = new Shard(perBatch);
            }
        }

        abstract void open();

        /** Matches the current batch on every shard; returns when all shards are done. */
        abstract void match() throws InterruptedException;

        abstract void close() throws InterruptedException;

        /** Bytes the feeding thread allocated in recorded batches (fan-out and wait), and those batches. */
        long allocated;
        int recorded;

        /** A turn: open, {@code settle} unrecorded batches, {@code n} batches recorded from {@code at}, close. */
        void turn(int settle, int n, long[] nanos, int at) throws InterruptedException {
            open();
            try {
                for (int b = 0; b < settle + n; b++) {
                    orders.next(shards); // outside the timed region
                    long a0 = Allocation.current();
                    long t0 = System.nanoTime();
                    match();
                    long t = System.nanoTime() - t0;
                    long a = Allocation.current() - a0;
                    batchNo++;
                    if (b >= settle && nanos != null) {
                        nanos[at + b - settle] = t;
                        allocated += a;
                        recorded++;
                    }
                }
            } finally {
                close();
            }
        }
    }

    /** Matches shard {@code s} of {@code shards}: our task in argument form ({@code OrderBookFanout::match}). */
    static void match(Shard[] shards, long s) {
        shards[(int) s].matchAll();
    }

    /** Our side, in one of its two forms. */
    static final class Ours extends Side {
        /** The await's limit, made once (a Duration per batch would be the caller's allocation). */
        private static final Duration BATCH_TIMEOUT = Duration.ofSeconds(30);
        final boolean argumentForm;
        final WaitGroup batch = new WaitGroup();
        ThreadPool pool;
        long completed;

        Ours(boolean argumentForm, int threads, int perBatch) {
            super(threads, perBatch);
            this.argumentForm = argumentForm;
        }

        @Override
        void open() {
            pool = ThreadPool.create(PoolConfig.builder().maxThreads(threads).queueCapacity(64)
                    .schedulerVariant(SchedulerVariant.GLOBAL_QUEUE).idleStrategy(IdleStrategy.BUSY_SPIN)
                    .threadNamePrefix("book-").build());
        }

        @Override
        void match() throws InterruptedException {
            // submit happens-before the task reads the shard's orders
            if (argumentForm) {
                for (int s = 0; s < SHARDS; s++) {
                    pool.submit(OrderBookFanout::match, shards, s, batch); // nothing allocated
                }
            } else {
                for (Shard shard : shards) {
                    pool.submit(() -> shard.matchAll(), batch); // a capturing lambda per task
                }
            }
            if (!batch.await(BATCH_TIMEOUT)) { // the message only on failure: no string per batch
                throw new IllegalStateException("batch " + batchNo + " did not match within " + BATCH_TIMEOUT);
            }
        }

        @Override
        void close() {
            pool.close();
            completed += pool.statsSnapshot().completed();
        }
    }

    static final class Fjp extends Side {
        final ShardTask[] tasks = new ShardTask[SHARDS];
        final Batch root = new Batch(tasks);
        ForkJoinPool pool;

        static final class ShardTask extends RecursiveAction {
            private static final long serialVersionUID = 1L;
            final transient Shard shard;

            ShardTask(Shard shard) {
                this.shard = shard;
            }

            @Override
            protected void compute() {
                shard.matchAll();
            }
        }

        static final class Batch extends RecursiveAction {
            private static final long serialVersionUID = 1L;
            final ShardTask[] tasks;

            Batch(ShardTask[] tasks) {
                this.tasks = tasks;
            }

            @Override
            protected void compute() {
                invokeAll(tasks);
            }
        }

        Fjp(int threads, int perBatch) {
            super(threads, perBatch);
            for (int s = 0; s < SHARDS; s++) {
                tasks[s] = new ShardTask(shards[s]);
            }
        }

        @Override
        void open() {
            pool = new ForkJoinPool(threads);
        }

        @Override
        void match() {
            for (ShardTask t : tasks) {
                t.reinitialize(); // a ForkJoinTask runs once per initialisation; reuse instead of allocating
            }
            root.reinitialize();
            pool.invoke(root); // invoke happens-before the tasks read the shards' orders
        }

        @Override
        void close() throws InterruptedException {
            pool.shutdown();
            Args.check(pool.awaitTermination(30, TimeUnit.SECONDS), "ForkJoinPool terminated");
        }
    }

    /** The calling thread's allocated bytes (com.sun.management), or -1 where the JVM does not count them. */
    static final class Allocation {
        private static final com.sun.management.ThreadMXBean MX = bean();

        private Allocation() {}

        private static com.sun.management.ThreadMXBean bean() {
            if (ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean mx
                    && mx.isThreadAllocatedMemorySupported() && mx.isThreadAllocatedMemoryEnabled()) {
                return mx;
            }
            return null;
        }

        static long current() {
            return MX != null ? MX.getCurrentThreadAllocatedBytes() : -1;
        }
    }

    public static void main(String[] args) throws Exception {
        int batches = Args.intArg(args, 0, "batches", 2000);
        int perBatch = Args.intArg(args, 1, "ordersPerBatch", 1024);
        int warmup = Args.intArg(args, 2, "warmup", 500);
        String form = Args.choiceArg(args, 3, "form", "both", "args", "lambda", "both");
        int threads = Math.max(2, Math.min(Runtime.getRuntime().availableProcessors() - 1, 4));

        List<Side> sides = new ArrayList<>();
        List<String> names = new ArrayList<>();
        List<String> ratioNames = new ArrayList<>();
        if (!form.equals("lambda")) {
            sides.add(new Ours(true, threads, perBatch));
            names.add(SideBySide.OURS + " (fn, ctx, arg)");
            ratioNames.add("fn, ctx, arg / FJP");
        }
        if (!form.equals("args")) {
            sides.add(new Ours(false, threads, perBatch));
            names.add(SideBySide.OURS + " (lambda)");
            ratioNames.add("lambda / FJP");
        }
        Fjp fjp = new Fjp(threads, perBatch);
        sides.add(fjp);
        long[][] nanos = new long[sides.size()][batches];
        for (Side side : sides) {
            side.turn(0, warmup, null, 0);
        }
        int rounds = 0;
        for (int at = 0; at < batches; at += ROUND, rounds++) {
            int n = Math.min(ROUND, batches - at);
            for (int k = 0; k < sides.size(); k++) {
                int i = (rounds + k) % sides.size(); // the first side rotates every round
                sides.get(i).turn(SETTLE, n, nanos[i], at);
            }
        }
        int batchNo = sides.get(0).batchNo;
        for (Side side : sides) {
            Args.check(side.batchNo == batchNo, "every side matched the same batches");
            if (side instanceof Ours ours) {
                Args.check(ours.completed == (long) ours.batchNo * SHARDS, "every shard task ran once: "
                        + ours.completed);
            }
        }

        Shard[] replay = new Shard[SHARDS];
        for (int s = 0; s < SHARDS; s++) {
            replay[s] = new Shard(perBatch);
        }
        Orders replayOrders = new Orders(perBatch);
        for (int b = 0; b < batchNo; b++) {
            replayOrders.next(replay);
            for (Shard s : replay) {
                s.matchAll();
            }
        }
        for (int i = 0; i < sides.size(); i++) {
            String name = i < names.size() ? names.get(i) : SideBySide.FJP;
            for (int s = 0; s < SHARDS; s++) {
                Shard a = sides.get(i).shards[s];
                Shard r = replay[s];
                Args.check(a.filled == r.filled && Arrays.equals(a.bids, r.bids) && Arrays.equals(a.asks, r.asks),
                        name + " shard " + s + " equals the serial replay");
            }
        }
        long filled = 0;
        for (Shard s : replay) {
            filled += s.filled;
        }
        System.out.printf(Locale.ROOT, "OrderBookFanout: %,d orders per batch, %d shards, %d workers on each side"
                + " (ours BUSY_SPIN; form: %s)%n", perBatch, SHARDS, threads, form);
        System.out.printf(Locale.ROOT, "  %d warm-up batches per side, then %d recorded batches per side in %d"
                + " rotating turns (%d unrecorded batches at each turn's start)%n", warmup, batches, rounds,
                SETTLE);
        System.out.print(SideBySide.table("batch latency (us)", names.toArray(new String[0]),
                ratioNames.toArray(new String[0]), Arrays.copyOf(nanos, names.size()), nanos[sides.size() - 1]));
        if (Allocation.current() >= 0) {
            StringBuilder sb = new StringBuilder("  feeding thread, bytes allocated per batch:");
            for (int i = 0; i < sides.size(); i++) {
                Side side = sides.get(i);
                sb.append(String.format(Locale.ROOT, " %s %,.0f;", i < names.size() ? names.get(i) : SideBySide.FJP,
                        (double) side.allocated / side.recorded));
            }
            System.out.println(sb.substring(0, sb.length() - 1));
        }
        System.out.printf(Locale.ROOT, "  filled %,d lots per side; books equal the serial replay on every side: OK%n",
                filled);
    }
}
