package dev.threadpool.stress;

import dev.threadpool.PoolConfig;
import dev.threadpool.PoolStats;
import dev.threadpool.QueueKind;
import dev.threadpool.SchedulerVariant;
import dev.threadpool.ThreadPool;

/**
 * {@code ThreadPool.join} under counting stress: random binary join trees whose leaves are the items. The items
 * are cut into one range per variant (GLOBAL_QUEUE, WORK_STEALING/RING, WORK_STEALING/CHASE_LEV,
 * LANE_EXTENSION); on GLOBAL_QUEUE and WORK_STEALING/CHASE_LEV {@code threads} outside callers join random
 * trees over their part at once, on the other two one caller does, so idle workers steal and owners wait for
 * thieves.
 * Every split point is random (a hash of the range), so trees are lopsided and deep as often as balanced;
 * GLOBAL_QUEUE and WORK_STEALING/CHASE_LEV run with {@code queueCapacity} 64 (no descriptor caches, a short
 * table: offered halves, popped back or stolen and helped with, mix with joins that find no descriptor and run
 * both halves inline), the other two with 4096 (worker descriptor caches on, nearly every join offers). Each
 * leaf records its item. Afterwards: every item exactly once, and the accounting after close (no descriptor
 * live, no bytes live, only the outside pairs counted as tasks).
 *
 * <p>{@code join-tree-args} runs the same trees with {@code join(fn, ctx, left, right)}: no node objects, a
 * range packed into each half's {@code long} ({@code lo << 32 | hi}), one context per tree, so each leaf's items
 * come only from the argument the pool carried (a half run with another's argument shows up as a duplicate and
 * a loss).
 */
final class JoinTreeSubject implements StressSubject {
    private static final int LEAF = 4;

    /** Whether the trees join in argument form ({@code join-tree-args}). */
    private final boolean args;

    JoinTreeSubject(boolean args) {
        this.args = args;
    }

    @Override
    public String name() {
        return args ? "join-tree-args" : "join-tree";
    }

    @Override
    public String run(int items, int threads, Seen seen) throws Exception {
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
            // WORK_STEALING/RING and LANE_EXTENSION: one outside caller, so the other workers idle and steal
            // (helping, leapfrogging and parking owners); the other two: one caller per thread, all workers busy
            int callers = k % 2 == 0 ? Math.max(1, threads) : 1;
            ThreadPool pool = ThreadPool.create(configs[k].maxThreads(Math.max(2, threads)).queueCapacity(capacity)
                    .daemon(true).build());
            OutsideCallers.Body[] bodies = new OutsideCallers.Body[callers];
            long part = (hi - lo + callers - 1) / callers;
            int pairs = 0;
            for (int c = 0; c < callers; c++) {
                long clo = lo + c * part;
                long chi = Math.min(hi, clo + part);
                if (clo >= chi) {
                    continue;
                }
                pairs += chi - clo > LEAF ? 1 : 0;
                // the root join from outside, the rest on workers
                if (args) {
                    if (chi > Integer.MAX_VALUE) {
                        throw new IllegalArgumentException("items must be < 2^31 for " + name() + ": items=" + items);
                    }
                    Tree tree = new Tree(pool, seen);
                    bodies[c] = () -> Tree.visit(tree, clo << 32 | chi);
                } else {
                    bodies[c] = () -> new Node(pool, seen, clo, chi).run();
                }
            }
            OutsideCallers.runAll("join-caller-", bodies, "a join");
            pool.close();
            PoolStats after = pool.statsSnapshot();
            if (after.taskDescLive() != 0 || after.liveBytes() != 0 || after.submitted() != pairs
                    || after.completed() != pairs || after.totalAllocBytes() != after.totalFreeBytes()) {
                throw new IllegalStateException("accounting broken after close (" + pairs + " outside pairs): "
                        + after);
            }
            out.append(k == 0 ? "" : "/").append(after.steals());
        }
        return "steals " + out;
    }

    /** A node over items [lo, hi): a leaf of at most LEAF items, or a join at a random split. */
    private record Node(ThreadPool pool, Seen seen, long lo, long hi) implements Runnable {
        @Override
        public void run() {
            long n = hi - lo;
            if (n <= LEAF) {
                for (long v = lo; v < hi; v++) {
                    seen.hit(v);
                }
                return;
            }
            long mid = split(lo, hi);
            try {
                pool.join(new Node(pool, seen, lo, mid), new Node(pool, seen, mid, hi));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    /** Random split point in [lo + 1, hi - 1] (a hash of the range), the same for both forms. */
    static long split(long lo, long hi) {
        long n = hi - lo;
        long h = (lo * 0x9E3779B97F4A7C15L) ^ (hi * 0xC2B2AE3D27D4EB4FL);
        h ^= h >>> 29;
        return lo + 1 + Math.floorMod(h, n - 1);
    }

    /** The context of a tree in argument form; its function is {@link #visit}. */
    private record Tree(ThreadPool pool, Seen seen) {
        /** The node over items {@code [range >>> 32, (int) range)}: a leaf, or a join of fn, ctx and two ranges. */
        static void visit(Tree t, long range) {
            long lo = range >>> 32;
            long hi = range & 0xFFFF_FFFFL;
            if (hi - lo <= LEAF) {
                for (long v = lo; v < hi; v++) {
                    t.seen.hit(v);
                }
                return;
            }
            long mid = split(lo, hi);
            try {
                t.pool.join(Tree::visit, t, lo << 32 | mid, mid << 32 | hi);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }
    }
}
