package dev.threadpool.stress;

import dev.threadpool.PoolConfig;
import dev.threadpool.PoolStats;
import dev.threadpool.SchedulerVariant;
import dev.threadpool.Submitter;
import dev.threadpool.ThreadPool;
import dev.threadpool.WaitGroup;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code pool-submitter}: the whole WORK_STEALING pool fed through registered {@link Submitter}s. Each of
 * {@code threads} parties registers a submitter and pushes 16-item chunks with submit, trySubmit or
 * submitBatch (its own SPMC queue, overflowing to the inject ring: localQueueCapacity is 16), and closes and
 * re-registers its submitter every 64 chunks, so close's hand-over of queued entries and cached descriptors
 * races the workers' steals. The table (512) is large enough for worker and submitter descriptor caches.
 * Every item must be taken exactly once; after close the accounting must be exact.
 */
final class PoolSubmitterSubject implements StressSubject {

    @Override
    public String name() {
        return "pool-submitter";
    }

    @Override
    public String run(int items, int threads, Seen seen) throws Exception {
        ThreadPool pool = ThreadPool.create(PoolConfig.builder().maxThreads(2).queueCapacity(512)
                .localQueueCapacity(16).schedulerVariant(SchedulerVariant.WORK_STEALING).build());
        WaitGroup group = new WaitGroup();
        int parties = Math.max(1, threads);
        Thread[] ts = new Thread[parties];
        AtomicLong next = new AtomicLong(1);
        AtomicLong registrations = new AtomicLong();
        for (int p = 0; p < parties; p++) {
            ts[p] = new Thread(() -> {
                Runnable[] batch = new Runnable[16];
                Submitter sub = pool.registerSubmitter();
                registrations.incrementAndGet();
                int chunks = 0;
                try {
                    for (;;) {
                        long first = next.getAndAdd(16);
                        if (first > items) {
                            return;
                        }
                        int n = (int) Math.min(16, items - first + 1);
                        for (int k = 0; k < n; k++) {
                            final long v = first + k;
                            group.add(1);
                            batch[k] = () -> { seen.hit(v); group.done(); };
                        }
                        switch ((int) ((first >>> 4) % 3)) {
                            case 0 -> {
                                int done = 0;
                                while (done < n) {
                                    done += sub.submitBatch(batch, done, n);
                                }
                            }
                            case 1 -> {
                                for (int k = 0; k < n; k++) sub.submit(batch[k]);
                            }
                            default -> {
                                for (int k = 0; k < n; k++) {
                                    while (!sub.trySubmit(batch[k])) Thread.onSpinWait();
                                }
                            }
                        }
                        if (++chunks % 64 == 0) { // hand the queue and cache back while workers steal from it
                            sub.close();
                            sub = pool.registerSubmitter();
                            registrations.incrementAndGet();
                        }
                    }
                } finally {
                    sub.close();
                }
            }, "submitter-" + p);
        }
        for (Thread t : ts) t.start();
        for (Thread t : ts) t.join();
        if (!group.await(Duration.ofSeconds(120))) {
            throw new IllegalStateException("tasks did not finish within 120 s: pending=" + group.pending());
        }
        pool.close();
        PoolStats after = pool.statsSnapshot();
        if (after.taskDescLive() != 0 || after.liveBytes() != 0 || after.completed() != items
                || after.submitted() != items || after.totalAllocBytes() != after.totalFreeBytes()) {
            throw new IllegalStateException("accounting broken after close: " + after);
        }
        return "submitters " + parties + "  registrations " + registrations.get() + "  steals " + after.steals()
                + "  parks " + after.parks();
    }
}
