package dev.threadpool.stress;

import dev.threadpool.PoolConfig;
import dev.threadpool.PoolStats;
import dev.threadpool.SchedulerVariant;
import dev.threadpool.ThreadPool;
import dev.threadpool.WaitGroup;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code waitgroup}: {@link WaitGroup}'s split counters under the pool. Each of {@code threads} submitters owns
 * one group, reused round after round: a round submits up to 32 items with {@code submit(task, group)} (the
 * pool adds on the submitter's thread and calls {@code done} on the workers, several stripes) and awaits the
 * group. Every task records its item and counts itself in the round's counter before it returns; an await
 * that returns while the round's counter is short saw a zero that never was, and breaks the run. A shared
 * group across all submitters is awaited at the end the same way.
 */
final class WaitGroupSubject implements StressSubject {
    private static final int ROUND = 32;

    @Override
    public String name() {
        return "waitgroup";
    }

    @Override
    public String run(int items, int threads, Seen seen) throws Exception {
        ThreadPool pool = ThreadPool.create(PoolConfig.builder().maxThreads(3).queueCapacity(256)
                .schedulerVariant(SchedulerVariant.WORK_STEALING).build());
        WaitGroup shared = new WaitGroup();
        AtomicLong sharedRan = new AtomicLong();
        int submitters = Math.max(1, threads);
        Thread[] ts = new Thread[submitters];
        AtomicLong next = new AtomicLong(1);
        AtomicLong rounds = new AtomicLong();
        Throwable[] failure = new Throwable[1];
        for (int s = 0; s < submitters; s++) {
            ts[s] = new Thread(() -> {
                WaitGroup mine = new WaitGroup();
                AtomicInteger ran = new AtomicInteger();
                try {
                    for (;;) {
                        long first = next.getAndAdd(ROUND);
                        if (first > items) {
                            return;
                        }
                        int n = (int) Math.min(ROUND, items - first + 1);
                        ran.set(0);
                        for (int k = 0; k < n; k++) {
                            final long v = first + k;
                            shared.add(1);
                            pool.submit(() -> {
                                seen.hit(v);
                                ran.incrementAndGet();
                                sharedRan.incrementAndGet();
                                shared.done();
                            }, mine);
                        }
                        if (!mine.await(Duration.ofSeconds(60))) {
                            throw new IllegalStateException("round did not finish: pending=" + mine.pending());
                        }
                        if (ran.get() != n) {
                            throw new IllegalStateException("await returned with " + ran.get() + " of " + n
                                    + " tasks run: a zero that never was");
                        }
                        rounds.incrementAndGet();
                    }
                } catch (Throwable t) {
                    synchronized (failure) {
                        failure[0] = t;
                    }
                }
            }, "submitter-" + s);
        }
        for (Thread t : ts) t.start();
        for (Thread t : ts) t.join();
        synchronized (failure) {
            if (failure[0] != null) {
                throw new IllegalStateException("a submitter failed", failure[0]);
            }
        }
        if (!shared.await(Duration.ofSeconds(60))) {
            throw new IllegalStateException("shared group did not reach zero: pending=" + shared.pending());
        }
        if (sharedRan.get() != items) {
            throw new IllegalStateException("shared await returned with " + sharedRan.get() + " of " + items);
        }
        pool.close();
        PoolStats after = pool.statsSnapshot();
        if (after.taskDescLive() != 0 || after.liveBytes() != 0 || after.completed() != items) {
            throw new IllegalStateException("accounting broken after close: " + after);
        }
        return "submitters " + submitters + "  rounds " + rounds.get() + "  completed " + after.completed();
    }
}
