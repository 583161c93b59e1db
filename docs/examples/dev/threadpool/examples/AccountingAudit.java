package dev.threadpool.examples;

import dev.threadpool.MemoryBlock;
import dev.threadpool.PoolConfig;
import dev.threadpool.PoolStats;
import dev.threadpool.SchedulerVariant;
import dev.threadpool.ThreadPool;
import dev.threadpool.WaitGroup;
import java.time.Duration;
import java.util.Locale;

/**
 * An accounting audit: prints the pool's off-heap accounting (liveBytes, peakLiveBytes, totalAllocBytes,
 * totalFreeBytes) and memory map at create, after a workload and after close, and checks the rules
 * (live = alloc - free, peak >= live, nothing grows under load for GLOBAL_QUEUE, live == 0 and alloc == free
 * after close, every task counted).
 *
 * <pre>mvn -q validate test-compile exec:exec@example -Dexample=AccountingAudit -Dexample.args="200000"</pre>
 * Arguments: tasks (200000).
 */
public final class AccountingAudit {
    private AccountingAudit() {}

    public static void main(String[] args) throws Exception {
        int tasks = Args.intArg(args, 0, "tasks", 200_000);
        ThreadPool pool = ThreadPool.create(PoolConfig.builder().maxThreads(2).queueCapacity(1024)
                .schedulerVariant(SchedulerVariant.GLOBAL_QUEUE).threadNamePrefix("audit-").build());
        PoolStats atCreate = pool.statsSnapshot();
        print("at create", atCreate);
        for (MemoryBlock b : pool.memoryMap()) {
            System.out.printf(Locale.ROOT, "    %-28s %,10d bytes counted%n", b.purpose(), b.countedBytes());
        }
        PoolStats afterWork;
        try {
            WaitGroup wg = new WaitGroup();
            for (int i = 0; i < tasks; i++) {
                pool.submit(() -> { }, wg);
            }
            Args.check(wg.await(Duration.ofSeconds(60)), "workload finished");
            afterWork = pool.statsSnapshot();
            print("after " + tasks + " tasks", afterWork);
            rules(afterWork);
            Args.check(afterWork.liveBytes() == atCreate.liveBytes(),
                    "GLOBAL_QUEUE preallocates everything: liveBytes unchanged by the workload");
        } finally {
            pool.close();
        }
        PoolStats fin = pool.statsSnapshot();
        print("after close", fin);
        rules(fin);
        Args.check(fin.liveBytes() == 0, "liveBytes == 0 after close");
        Args.check(fin.totalAllocBytes() == fin.totalFreeBytes(), "alloc == free after close");
        Args.check(fin.peakLiveBytes() >= atCreate.liveBytes(), "peak covers the arena's high point");
        Args.check(fin.completed() == tasks && fin.submitted() == tasks, "every task counted once");
        System.out.println("AccountingAudit: all checks passed");
    }

    private static void rules(PoolStats s) {
        Args.check(s.liveBytes() == s.totalAllocBytes() - s.totalFreeBytes(), "live = alloc - free: " + s);
        Args.check(s.peakLiveBytes() >= s.liveBytes(), "peak >= live: " + s);
        Args.check(!s.accountingSkewDetected(), "no accounting skew: " + s);
    }

    private static void print(String when, PoolStats s) {
        System.out.printf(Locale.ROOT, "%-22s liveBytes %,10d  peakLiveBytes %,10d  totalAllocBytes %,10d"
                + "  totalFreeBytes %,10d  completed %,d%n", when, s.liveBytes(), s.peakLiveBytes(),
                s.totalAllocBytes(), s.totalFreeBytes(), s.completed());
    }
}
