package dev.threadpool.audit;

import dev.threadpool.PoolConfig;
import dev.threadpool.ProcessMemory;
import dev.threadpool.ThreadPool;
import dev.threadpool.WaitGroup;
import java.time.Duration;

/**
 * Child-JVM main for ProcessMemoryTest: uses a pool and its statsSnapshot, prints a marker, then reads process
 * memory. Run with {@code -Xlog:class+load} the test checks that no jnr / jffi class loads before the marker.
 */
public final class ProcessMemoryMain {
    public static final String MARKER = "@@ before processMemory @@";

    public static void main(String[] args) throws Exception {
        try (ThreadPool pool = ThreadPool.create(PoolConfig.builder().maxThreads(2).daemon(true).build())) {
            WaitGroup g = new WaitGroup();
            for (int i = 0; i < 100; i++) {
                pool.submit(() -> { }, g);
            }
            g.await(Duration.ofSeconds(30));
            System.out.println("snapshot " + pool.statsSnapshot().submitted());
        }
        System.out.println(MARKER);
        System.out.flush();
        ProcessMemory m = ThreadPool.processMemory();
        System.out.println("process memory " + m);
    }
}
