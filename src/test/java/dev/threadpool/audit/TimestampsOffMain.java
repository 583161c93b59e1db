package dev.threadpool.audit;

import dev.threadpool.PoolConfig;
import dev.threadpool.PoolStats;
import dev.threadpool.ThreadPool;
import dev.threadpool.TimestampMode;
import dev.threadpool.WaitGroup;
import java.time.Duration;

/**
 * Child-JVM main for ObservabilityTest: a FULL pool in a JVM started with {@code -Ddev.threadpool.timestamps=false}.
 * Prints {@code enabled=<latency.enabled> samples=<queue-wait count> histogramBlocks=<n>}.
 */
public final class TimestampsOffMain {
    public static void main(String[] args) throws Exception {
        try (ThreadPool pool = ThreadPool.create(PoolConfig.builder().maxThreads(2).daemon(true)
                .timestampMode(TimestampMode.FULL).build())) {
            WaitGroup g = new WaitGroup();
            for (int i = 0; i < 1000; i++) {
                pool.submit(() -> { }, g);
            }
            if (!g.await(Duration.ofSeconds(30))) {
                throw new IllegalStateException("tasks did not finish");
            }
            PoolStats s = pool.statsSnapshot();
            long blocks = pool.memoryMap().stream().filter(b -> b.purpose().contains("histogram")).count();
            System.out.println("enabled=" + s.latency().enabled() + " samples=" + s.latency().queueWait().count()
                    + " histogramBlocks=" + blocks);
        }
    }
}
