package dev.threadpool.stress;

import dev.threadpool.PoolConfig;
import dev.threadpool.PoolStats;
import dev.threadpool.QueueKind;
import dev.threadpool.SchedulerVariant;
import dev.threadpool.ThreadPool;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.LongAdder;

/**
 * {@code ThreadPool.parallelFor} under counting stress, called from outside the pool: the caller shares a
 * cursor with the helper tasks it offered ({@code ParallelFor.Claims}), every participant claims guided chunks
 * and runs them as leaves, and the caller waits for the chunks still running elsewhere. The items are cut into
 * one range per variant (GLOBAL_QUEUE, WORK_STEALING/RING, WORK_STEALING/CHASE_LEV, LANE_EXTENSION); on each,
 * {@code threads} outside callers at once walk their part in random-sized sub-ranges (1 to 512 indices, mostly
 * small) with random grains (1..8), one {@code parallelFor} per sub-range. About a third of the calls nest: the
 * outer call runs over blocks of the sub-range and a block's body calls {@code parallelFor} over its indices
 * (again nested, two levels at most), so a nested call runs on a worker (its join path) or, where the block ran
 * on the caller's thread, from outside again. GLOBAL_QUEUE and LANE_EXTENSION run with {@code queueCapacity} 4
 * and WORK_STEALING/CHASE_LEV with 64, so helper submits are refused (NO_WAIT) and callers run more of the range
 * themselves; WORK_STEALING/RING runs with 4096. Each index records its item. Afterwards: every item exactly
 * once, and the accounting after close (no descriptor live, no bytes live, every helper task completed or
 * cancelled and none failed; how many helpers there were is up to the pool, so not checked).
 */
final class ParallelForSubject implements StressSubject {
    /** Largest grain a call picks. */
    private static final int MAX_GRAIN = 8;

    @Override
    public String name() {
        return "parallel-for";
    }

    @Override
    public String run(int items, int threads, Seen seen) throws Exception {
        PoolConfig.Builder[] configs = {
            PoolConfig.builder().schedulerVariant(SchedulerVariant.GLOBAL_QUEUE).queueCapacity(4),
            PoolConfig.builder().schedulerVariant(SchedulerVariant.WORK_STEALING).queueKind(QueueKind.RING)
                    .queueCapacity(4096),
            PoolConfig.builder().schedulerVariant(SchedulerVariant.WORK_STEALING).queueKind(QueueKind.CHASE_LEV)
                    .queueCapacity(64),
            PoolConfig.builder().schedulerVariant(SchedulerVariant.LANE_EXTENSION).queueCapacity(4),
        };
        long runSeed = System.nanoTime(); // the sub-ranges differ run to run; the summary names the seed
        StringBuilder out = new StringBuilder("seed ").append(runSeed).append(": ");
        long per = (items + configs.length - 1) / configs.length;
        int callers = Math.max(1, threads);
        for (int k = 0; k < configs.length; k++) {
            long lo = 1 + k * per;
            long hi = Math.min(items + 1L, lo + per);
            if (lo >= hi) {
                break;
            }
            ThreadPool pool = ThreadPool.create(configs[k].maxThreads(Math.max(2, threads)).daemon(true).build());
            LongAdder calls = new LongAdder();
            LongAdder nested = new LongAdder();
            OutsideCallers.Body[] bodies = new OutsideCallers.Body[callers];
            long part = (hi - lo + callers - 1) / callers;
            for (int c = 0; c < callers; c++) {
                long clo = lo + c * part;
                long chi = Math.min(hi, clo + part);
                if (clo >= chi) {
                    continue;
                }
                SplittableRandom rnd = new SplittableRandom(runSeed + 0x5DEECE66DL * (k + 1) + c);
                bodies[c] = new Caller(pool, seen, (int) clo, (int) chi, rnd, calls, nested)::run;
            }
            OutsideCallers.runAll("parallel-for-caller-", bodies, "a parallelFor");
            pool.close();
            PoolStats after = pool.statsSnapshot();
            if (after.taskDescLive() != 0 || after.liveBytes() != 0
                    || after.totalAllocBytes() != after.totalFreeBytes() || after.failed() != 0
                    || after.submitted() != after.completed() + after.cancelled()) {
                throw new IllegalStateException("accounting broken after close: " + after);
            }
            out.append(k == 0 ? "" : " / ").append(calls.sum()).append(" calls ").append(nested.sum())
                    .append(" nested ").append(after.submitted()).append(" helpers ").append(after.rejected())
                    .append(" refused");
        }
        return out.toString();
    }

    /** One outside caller: walks {@code [lo, hi)} in random sub-ranges, one parallelFor each. */
    private record Caller(ThreadPool pool, Seen seen, int lo, int hi, SplittableRandom rnd, LongAdder calls,
            LongAdder nested) {
        void run() throws InterruptedException {
            int at = lo;
            while (at < hi) {
                int size = switch (rnd.nextInt(4)) {
                    case 0 -> 1 + rnd.nextInt(8); // one or a few leaves: few or no helpers offered
                    case 1 -> 1 + rnd.nextInt(32);
                    case 2 -> 1 + rnd.nextInt(64);
                    default -> 1 + rnd.nextInt(512);
                };
                int end = (int) Math.min(hi, (long) at + size);
                int grain = 1 + rnd.nextInt(MAX_GRAIN);
                if (rnd.nextInt(16) == 0) {
                    pool.parallelFor(at, at, grain, v -> seen.hit(-1)); // empty: must run nothing
                }
                calls.increment();
                if (rnd.nextInt(3) == 0) {
                    cover(at, end, grain, 2);
                } else {
                    pool.parallelFor(at, end, grain, seen::hit);
                }
                at = end;
            }
        }

        /**
         * Hits every item of {@code [from, to)} once through parallelFor: {@code depth} 0 directly; else over
         * blocks, a block's body hitting its items itself or through a nested {@code cover(depth - 1)}, as a
         * hash of the block picks (bodies run on many threads: no shared random there).
         */
        void cover(int from, int to, int grain, int depth) throws InterruptedException {
            if (depth == 0 || to - from < 2) {
                pool.parallelFor(from, to, grain, seen::hit);
                return;
            }
            nested.increment();
            long h = mix(from, to);
            int block = 2 + (int) Math.floorMod(h, 63L); // 2..64 items per block
            int blocks = (int) (((long) to - from + block - 1) / block);
            pool.parallelFor(0, blocks, grain, j -> {
                int blo = from + j * block;
                int bhi = (int) Math.min(to, (long) blo + block);
                long hj = mix(blo, bhi ^ depth);
                if ((hj & 1) == 0) {
                    try {
                        cover(blo, bhi, 1 + (int) ((hj >>> 1) & (MAX_GRAIN - 1)), depth - 1);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new IllegalStateException("nested parallelFor interrupted", e);
                    }
                } else {
                    for (int v = blo; v < bhi; v++) {
                        seen.hit(v);
                    }
                }
            });
        }

        private static long mix(int a, int b) {
            long h = (a * 0x9E3779B97F4A7C15L) ^ (b * 0xC2B2AE3D27D4EB4FL);
            h ^= h >>> 29;
            h *= 0xBF58476D1CE4E5B9L;
            return h ^ (h >>> 32);
        }
    }
}
