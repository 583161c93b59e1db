package dev.threadpool.demo;

import dev.threadpool.PoolConfig;
import dev.threadpool.PoolStats;
import dev.threadpool.SchedulerVariant;
import dev.threadpool.ThreadPool;
import dev.threadpool.WaitGroup;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RecursiveTask;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Seed 002's wsum on the WORK_STEALING pool, and the same on {@link ForkJoinPool} for comparison.
 *
 * <pre>
 *   node(lo, hi):  while hi - lo > 4096: mid = (lo + hi) / 2; submit node(mid, hi); hi = mid
 *                  sum mix(i) for i in [lo, hi) serially; add it to the total; count a leaf for this worker
 * </pre>
 * A node submitted from a worker goes to that worker's LIFO slot (the displaced one to its local queue), so
 * the submitting worker keeps going depth-first on the left halves while idle workers steal the older, bigger
 * right halves. The total is checked against the serial loop. Printed per worker: the leaves it summed and
 * the nodes it ran that another worker had submitted (that is, stole: from a peer's queue or LIFO slot, or
 * from the inject ring for the root). The pool's own steal counter is printed too. The ForkJoinPool run uses
 * a {@link RecursiveTask} with the same split (fork the right half, compute the left, join). Both run warm
 * ({@link Compare}: a cold round, warm-up rounds, then the best of N, the sides alternating).
 *
 * <pre>java --enable-native-access=ALL-UNNAMED -cp target/classes:target/test-classes dev.threadpool.demo.Wsum [threads]</pre>
 */
public final class Wsum {
    static final long ELEMENTS = 1L << 24;
    static final long LEAF = 4096;

    private Wsum() {}

    public static void main(String[] args) throws Exception {
        int threads = args.length > 0 ? Integer.parseInt(args[0])
                : Math.max(2, Math.min(Runtime.getRuntime().availableProcessors(), 8));
        System.exit(run(threads) ? 0 : 1);
    }

    /**
     * Runs wsum on WORK_STEALING and on ForkJoinPool with {@code threads} workers, warm ({@link Compare});
     * true when every round's sum and leaf count match.
     */
    public static boolean run(int threads) throws Exception {
        System.out.println();
        System.out.printf(Locale.ROOT, "wsum: sum of mix(i) over 2^%d elements, leaves of %d, %d workers,"
                + " WORK_STEALING vs ForkJoinPool%n", Long.numberOfTrailingZeros(ELEMENTS), LEAF, threads);
        long expected = Compare.serialSum("   ", ELEMENTS);

        ThreadPool pool = ThreadPool.create(PoolConfig.builder().maxThreads(threads).queueCapacity(4096)
                .schedulerVariant(SchedulerVariant.WORK_STEALING).build());
        ForkJoinPool fj = new ForkJoinPool(threads);
        try {
            AtomicLongArray[] last = new AtomicLongArray[2]; // leaves, stolen nodes: the last round's
            long[] steals = new long[2]; // ours, FJP: the last round's
            boolean ok = Compare.run("   ", () -> {
                AtomicLong total = new AtomicLong();
                AtomicLongArray leaves = new AtomicLongArray(threads);
                AtomicLongArray stolen = new AtomicLongArray(threads);
                WaitGroup wg = new WaitGroup();
                long before = pool.statsSnapshot().steals();
                pool.submit(new Node(pool, wg, total, leaves, stolen, -1, 0, ELEMENTS), wg);
                if (!wg.await(Duration.ofMinutes(2))) {
                    System.out.println("   WORK_STEALING did not finish within 2 minutes");
                    return false;
                }
                steals[0] = pool.statsSnapshot().steals() - before;
                last[0] = leaves;
                last[1] = stolen;
                long leafSum = 0;
                for (int w = 0; w < threads; w++) {
                    leafSum += leaves.get(w);
                }
                boolean good = total.get() == expected && leafSum == ELEMENTS / LEAF;
                if (!good) {
                    System.out.println("   WORK_STEALING WRONG: sum " + total.get() + " (expected " + expected
                            + "), leaves " + leafSum + " (expected " + ELEMENTS / LEAF + ")");
                }
                return good;
            }, () -> {
                long before = fj.getStealCount();
                long sum = fj.invoke(new FjSum(0, ELEMENTS));
                steals[1] = fj.getStealCount() - before;
                if (sum != expected) {
                    System.out.println("   ForkJoinPool sum WRONG: " + sum + " != " + expected);
                }
                return sum == expected;
            }).ok();
            System.out.printf(Locale.ROOT, "   sums %s; last round: pool steals %d, ForkJoinPool steals %d%n",
                    ok ? "match serial in every round on both sides" : "WRONG", steals[0], steals[1]);
            for (int w = 0; w < threads; w++) {
                System.out.printf(Locale.ROOT, "     w%-2d leaves %6d  stolen nodes %5d%n", w, last[0].get(w),
                        last[1].get(w));
            }
            PoolStats st = pool.statsSnapshot();
            System.out.printf(Locale.ROOT, "     all rounds: tasks %,d  inline runs %,d  parks %,d%n", st.submitted(),
                    st.inlineRuns(), st.parks());
            return ok;
        } finally {
            fj.shutdown();
            pool.close();
        }
    }

    /** One node of the split; {@code parent} is the worker that submitted it (-1: an outside thread). */
    private record Node(ThreadPool pool, WaitGroup wg, AtomicLong total, AtomicLongArray leaves,
            AtomicLongArray stolen, int parent, long lo, long hi) implements Runnable {
        @Override
        public void run() {
            int me = pool.currentWorkerIndex();
            if (me != parent) {
                stolen.incrementAndGet(me);
            }
            long l = lo;
            long h = hi;
            while (h - l > LEAF) {
                long mid = (l + h) >>> 1;
                pool.submit(new Node(pool, wg, total, leaves, stolen, me, mid, h), wg); // the right half
                h = mid; // keep the left
            }
            long s = 0;
            for (long i = l; i < h; i++) {
                s += Demo.mix(i);
            }
            total.addAndGet(s);
            leaves.incrementAndGet(me);
        }
    }

    /** The same split as a ForkJoin task. */
    static final class FjSum extends RecursiveTask<Long> {
        private final long lo;
        private final long hi;

        FjSum(long lo, long hi) {
            this.lo = lo;
            this.hi = hi;
        }

        @Override
        protected Long compute() {
            if (hi - lo <= LEAF) {
                long s = 0;
                for (long i = lo; i < hi; i++) {
                    s += Demo.mix(i);
                }
                return s;
            }
            long mid = (lo + hi) >>> 1;
            FjSum right = new FjSum(mid, hi);
            right.fork();
            long left = new FjSum(lo, mid).compute();
            return left + right.join();
        }
    }
}
