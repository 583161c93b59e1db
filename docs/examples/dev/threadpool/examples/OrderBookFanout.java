package dev.threadpool.examples;

import dev.threadpool.IdleStrategy;
import dev.threadpool.PoolConfig;
import dev.threadpool.SchedulerVariant;
import dev.threadpool.ThreadPool;
import dev.threadpool.WaitGroup;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * An order-book style fan-out on busy-spinning workers: each batch of incoming orders is partitioned by
 * symbol shard; one task per shard matches its orders against its own books (single writer per book, so no
 * locks), and a WaitGroup barrier ends the batch. {@link IdleStrategy#BUSY_SPIN} keeps the workers hot
 * between batches (they never park: give them dedicated cores). Checks the fills against a serial replay.
 *
 * <pre>mvn -q validate test-compile exec:exec@example -Dexample=OrderBookFanout -Dexample.args="2000 1024"</pre>
 * Arguments: batches (2000), orders per batch (1024).
 */
public final class OrderBookFanout {
    private static final int SHARDS = 16;
    private static final int SYMBOLS_PER_SHARD = 8;
    private static final int LEVELS = 64;

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

    public static void main(String[] args) throws Exception {
        int batches = Args.intArg(args, 0, "batches", 2000);
        int perBatch = Args.intArg(args, 1, "ordersPerBatch", 1024);
        int threads = Math.max(2, Math.min(Runtime.getRuntime().availableProcessors() - 1, 4));

        Shard[] shards = new Shard[SHARDS];
        Shard[] replay = new Shard[SHARDS];
        for (int s = 0; s < SHARDS; s++) {
            shards[s] = new Shard(perBatch);
            replay[s] = new Shard(perBatch);
        }
        Runnable[] tasks = new Runnable[SHARDS];
        for (int s = 0; s < SHARDS; s++) {
            Shard shard = shards[s];
            tasks[s] = shard::matchAll;
        }
        SplittableRandom rnd = new SplittableRandom(42);
        long[] batchNanos = new long[batches];
        try (ThreadPool pool = ThreadPool.create(PoolConfig.builder().maxThreads(threads).queueCapacity(64)
                .schedulerVariant(SchedulerVariant.GLOBAL_QUEUE).idleStrategy(IdleStrategy.BUSY_SPIN)
                .threadNamePrefix("book-").build())) {
            WaitGroup batch = new WaitGroup();
            for (int b = 0; b < batches; b++) {
                for (Shard s : shards) {
                    s.count = 0;
                }
                for (int i = 0; i < perBatch; i++) {
                    int shard = rnd.nextInt(SHARDS);
                    long order = ((long) rnd.nextInt(SYMBOLS_PER_SHARD) << 48) | ((long) rnd.nextInt(2) << 40)
                            | ((long) rnd.nextInt(LEVELS) << 32) | (1 + rnd.nextInt(100));
                    shards[shard].orders[shards[shard].count++] = order;
                }
                long t0 = System.nanoTime();
                for (Runnable t : tasks) {
                    pool.submit(t, batch); // submit happens-before the task reads the shard's orders
                }
                Args.check(batch.await(Duration.ofSeconds(30)), "batch " + b + " matched");
                batchNanos[b] = System.nanoTime() - t0;
                for (int s = 0; s < SHARDS; s++) { // the serial replay, for the check
                    System.arraycopy(shards[s].orders, 0, replay[s].orders, 0, shards[s].count);
                    replay[s].count = shards[s].count;
                    replay[s].matchAll();
                }
            }
        }
        long filled = 0;
        for (int s = 0; s < SHARDS; s++) {
            Args.check(shards[s].filled == replay[s].filled && Arrays.equals(shards[s].bids, replay[s].bids)
                    && Arrays.equals(shards[s].asks, replay[s].asks), "shard " + s + " equals the serial replay");
            filled += shards[s].filled;
        }
        long[] sorted = batchNanos.clone();
        Arrays.sort(sorted);
        System.out.printf(Locale.ROOT, "OrderBookFanout: %d batches x %d orders, %d shards, %d BUSY_SPIN workers%n",
                batches, perBatch, SHARDS, threads);
        System.out.printf(Locale.ROOT, "  batch latency us: p50 %.1f  p99 %.1f  max %.1f; filled %,d lots%n",
                Args.percentileMicros(sorted, 0.5), Args.percentileMicros(sorted, 0.99),
                sorted[sorted.length - 1] / 1_000.0, filled);
        System.out.println("  books equal the serial replay: OK");
    }
}
