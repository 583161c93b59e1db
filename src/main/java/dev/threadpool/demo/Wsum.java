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
 * a {@link RecursiveTask} with the same split (fork the right half, compute the left, join).
 *
 * <pre>java --enable-native-access=ALL-UNNAMED -cp target/classes dev.threadpool.demo.Wsum [threads]</pre>
 */
public final class Wsum {
    static final long ELEMENTS = 1L << 24;
    static final long LEAF = 4096;
    private static final int ROUNDS = 3;

    private Wsum() {}

    public static void main(String[] args) throws InterruptedException {
        int threads = args.length > 0 ? Integer.parseInt(args[0])
                : Math.max(2, Math.min(Runtime.getRuntime().availableProcessors(), 8));
        System.exit(run(threads) ? 0 : 1);
    }

    /** Runs wsum on WORK_STEALING and on ForkJoinPool with {@code threads} workers; true when both sums match. */
    public static boolean run(int threads) throws InterruptedException {
        System.out.println();
        System.out.printf(Locale.ROOT, "wsum: sum of mix(i) over 2^%d elements, leaves of %d, %d workers,"
                + " WORK_STEALING vs ForkJoinPool (best of %d)%n", Long.numberOfTrailingZeros(ELEMENTS), LEAF,
                threads, ROUNDS);
        long t0 = System.nanoTime();
        long expect = 0;
        for (long i = 0; i < ELEMENTS; i++) {
            expect += Demo.mix(i);
        }
        System.out.printf(Locale.ROOT, "   serial loop     %8.1f ms%n", (System.nanoTime() - t0) / 1e6);

        boolean ok = true;
        ThreadPool pool = ThreadPool.create(PoolConfig.builder().maxThreads(threads).queueCapacity(4096)
                .schedulerVariant(SchedulerVariant.WORK_STEALING).build());
        try {
            double best = Double.MAX_VALUE;
            AtomicLongArray leaves = null;
            AtomicLongArray stolen = null;
            long stealsBefore = pool.statsSnapshot().steals();
            long steals = 0;
            for (int r = 0; r < ROUNDS; r++) {
                AtomicLong total = new AtomicLong();
                leaves = new AtomicLongArray(threads);
                stolen = new AtomicLongArray(threads);
                WaitGroup wg = new WaitGroup();
                long s = System.nanoTime();
                pool.submit(new Node(pool, wg, total, leaves, stolen, -1, 0, ELEMENTS), wg);
                if (!wg.await(Duration.ofMinutes(2))) {
                    System.out.println("   WORK_STEALING did not finish within 2 minutes");
                    return false;
                }
                best = Math.min(best, (System.nanoTime() - s) / 1e6);
                if (total.get() != expect) {
                    System.out.println("   WORK_STEALING sum WRONG: " + total.get() + " != " + expect);
                    ok = false;
                }
                long now = pool.statsSnapshot().steals();
                steals = now - stealsBefore;
                stealsBefore = now;
            }
            System.out.printf(Locale.ROOT, "   WORK_STEALING   %8.1f ms; sum %s; pool steals (last round) %d%n",
                    best, ok ? "matches serial" : "WRONG", steals);
            long leafSum = 0;
            for (int w = 0; w < threads; w++) {
                System.out.printf(Locale.ROOT, "     w%-2d leaves %6d  stolen nodes %5d%n", w, leaves.get(w),
                        stolen.get(w));
                leafSum += leaves.get(w);
            }
            if (leafSum != ELEMENTS / LEAF) {
                System.out.println("   leaf count WRONG: " + leafSum + " != " + ELEMENTS / LEAF);
                ok = false;
            }
            PoolStats st = pool.statsSnapshot();
            System.out.printf(Locale.ROOT, "     tasks %,d  inline runs %,d  parks %,d%n", st.submitted(),
                    st.inlineRuns(), st.parks());
        } finally {
            pool.close();
        }

        ForkJoinPool fj = new ForkJoinPool(threads);
        try {
            double best = Double.MAX_VALUE;
            boolean fjOk = true;
            long stealsBefore = fj.getStealCount();
            long steals = 0;
            for (int r = 0; r < ROUNDS; r++) {
                long s = System.nanoTime();
                long sum = fj.invoke(new FjSum(0, ELEMENTS));
                best = Math.min(best, (System.nanoTime() - s) / 1e6);
                fjOk &= sum == expect;
                steals = fj.getStealCount() - stealsBefore;
                stealsBefore = fj.getStealCount();
            }
            System.out.printf(Locale.ROOT, "   ForkJoinPool    %8.1f ms; sum %s; steals (last round) %d%n", best,
                    fjOk ? "matches serial" : "WRONG", steals);
            ok &= fjOk;
        } finally {
            fj.shutdown();
        }
        return ok;
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
    private static final class FjSum extends RecursiveTask<Long> {
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
