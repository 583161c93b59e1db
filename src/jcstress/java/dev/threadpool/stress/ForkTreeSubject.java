package dev.threadpool.stress;

import dev.threadpool.PoolConfig;
import dev.threadpool.PoolStats;
import dev.threadpool.QueueKind;
import dev.threadpool.SchedulerVariant;
import dev.threadpool.ThreadPool;

/**
 * Fork handles under counting stress: random binary trees over the items, split as {@link JoinTreeSubject} splits
 * them (a hash of the range), on the same four variants with the same callers and capacities, each caller's tree
 * started from outside with {@code invokeLong} (one task per caller: the only tasks counted).
 *
 * <ul>
 *   <li>{@code fork-tree}: each split picks, by a hash of its range, one of three shapes: {@code fork(fn, ctx, arg)}
 *       of the right half, the left in place, {@code join(h)} (half the splits); {@code join(fn, ctx, l, r)} (a
 *       quarter); or a join whose two halves each fork their subtree and return without joining it (a quarter),
 *       so the fork is left open and the pool must join it (the join of an older fork above, the end of a stolen
 *       half, the end of the task). Each leaf records its items.</li>
 *   <li>{@code fork-tree-long}: {@code forkLong} of the right half, the left in place, {@code joinLong}: each leaf
 *       records its items and returns their sum, and every node checks that the sum it got is the sum of its range
 *       (a result lost, doubled or read before its thief wrote it breaks the run, besides the count).</li>
 * </ul>
 * Afterwards: every item exactly once, and the accounting after close (no descriptor live, no bytes live, only
 * the outside calls counted as tasks).
 */
final class ForkTreeSubject implements StressSubject {
    private static final int LEAF = 4;

    /** Whether the trees are {@code forkLong} sums ({@code fork-tree-long}). */
    private final boolean sums;

    ForkTreeSubject(boolean sums) {
        this.sums = sums;
    }

    @Override
    public String name() {
        return sums ? "fork-tree-long" : "fork-tree";
    }

    @Override
    public String run(int items, int threads, Seen seen) throws Exception {
        if (items >= Integer.MAX_VALUE) {
            throw new IllegalArgumentException("items must be < 2^31 for " + name() + ": items=" + items);
        }
        PoolConfig.Builder[] configs = {
            PoolConfig.builder().schedulerVariant(SchedulerVariant.GLOBAL_QUEUE),
            PoolConfig.builder().schedulerVariant(SchedulerVariant.WORK_STEALING).queueKind(QueueKind.RING),
            PoolConfig.builder().schedulerVariant(SchedulerVariant.WORK_STEALING).queueKind(QueueKind.CHASE_LEV),
            PoolConfig.builder().schedulerVariant(SchedulerVariant.LANE_EXTENSION),
        };
        StringBuilder out = new StringBuilder();
        long per = (items + configs.length - 1) / configs.length;
        for (int k = 0; k < configs.length; k++) {
            long lo = 1 + k * per;
            long hi = Math.min(items + 1L, lo + per);
            if (lo >= hi) {
                break;
            }
            int capacity = k % 2 == 0 ? 64 : 4096;
            // as join-tree: one outside caller on WORK_STEALING/RING and LANE_EXTENSION (the other workers idle and
            // steal), one per thread on the other two (every worker busy)
            int callers = k % 2 == 0 ? Math.max(1, threads) : 1;
            ThreadPool pool = ThreadPool.create(configs[k].maxThreads(Math.max(2, threads)).queueCapacity(capacity)
                    .daemon(true).build());
            Tree tree = new Tree(pool, seen);
            OutsideCallers.Body[] bodies = new OutsideCallers.Body[callers];
            long part = (hi - lo + callers - 1) / callers;
            int calls = 0;
            for (int c = 0; c < callers; c++) {
                long clo = lo + c * part;
                long chi = Math.min(hi, clo + part);
                if (clo >= chi) {
                    continue;
                }
                calls++;
                long range = clo << 32 | chi;
                if (sums) {
                    bodies[c] = () -> {
                        long got = pool.invokeLong(Tree::sum, tree, range);
                        if (got != sumOf(clo, chi)) {
                            throw new IllegalStateException("the tree over [" + clo + ", " + chi + ") summed to "
                                    + got + ", not " + sumOf(clo, chi));
                        }
                    };
                } else {
                    bodies[c] = () -> pool.invokeLong(Tree::visitAll, tree, range);
                }
            }
            OutsideCallers.runAll("fork-caller-", bodies, "a fork tree");
            pool.close();
            PoolStats after = pool.statsSnapshot();
            if (after.taskDescLive() != 0 || after.liveBytes() != 0 || after.submitted() != calls
                    || after.completed() != calls || after.totalAllocBytes() != after.totalFreeBytes()) {
                throw new IllegalStateException("accounting broken after close (" + calls + " outside calls): "
                        + after);
            }
            out.append(k == 0 ? "" : "/").append(after.steals());
        }
        return "steals " + out;
    }

    /** The sum of the items in {@code [lo, hi)}. */
    static long sumOf(long lo, long hi) {
        return (lo + hi - 1) * (hi - lo) / 2;
    }

    /** The context of every tree of one pool; the functions are static and non-capturing. */
    private record Tree(ThreadPool pool, Seen seen) {
        static long lo(long range) {
            return range >>> 32;
        }

        static long hi(long range) {
            return range & 0xFFFF_FFFFL;
        }

        /** {@link #visit} as the outside caller's function. */
        static long visitAll(Tree t, long range) {
            visit(t, range);
            return 0;
        }

        /** A node of {@code fork-tree}: a leaf, or a split in one of three shapes (class comment). */
        static void visit(Tree t, long range) {
            long lo = lo(range);
            long hi = hi(range);
            if (hi - lo <= LEAF) {
                for (long v = lo; v < hi; v++) {
                    t.seen.hit(v);
                }
                return;
            }
            long mid = JoinTreeSubject.split(lo, hi);
            long left = lo << 32 | mid;
            long right = mid << 32 | hi;
            try {
                switch ((int) ((lo * 31 + hi) >>> 3 & 3)) {
                    case 0, 1 -> {
                        long h = t.pool.fork(Tree::visit, t, right);
                        visit(t, left);
                        t.pool.join(h);
                    }
                    case 2 -> t.pool.join(Tree::visit, t, left, right);
                    default -> t.pool.join(Tree::forkAndLeave, t, left, right);
                }
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }

        /** A join's half that forks its whole subtree and returns without joining it: the pool must. */
        static void forkAndLeave(Tree t, long range) {
            t.pool.fork(Tree::visit, t, range);
        }

        /** A node of {@code fork-tree-long}: the sum of its items, the right half forked, checked at every node. */
        static long sum(Tree t, long range) {
            long lo = lo(range);
            long hi = hi(range);
            if (hi - lo <= LEAF) {
                long s = 0;
                for (long v = lo; v < hi; v++) {
                    t.seen.hit(v);
                    s += v;
                }
                return s;
            }
            long mid = JoinTreeSubject.split(lo, hi);
            long h = t.pool.forkLong(Tree::sum, t, mid << 32 | hi);
            long left = sum(t, lo << 32 | mid);
            long right = t.pool.joinLong(h);
            if (left != sumOf(lo, mid) || right != sumOf(mid, hi)) {
                throw new IllegalStateException("node [" + lo + ", " + hi + "): left " + left + " (expected "
                        + sumOf(lo, mid) + "), right " + right + " (expected " + sumOf(mid, hi) + ")");
            }
            return left + right;
        }
    }
}
