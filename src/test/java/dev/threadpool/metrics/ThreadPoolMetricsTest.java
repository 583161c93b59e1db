package dev.threadpool.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.PoolConfig;
import dev.threadpool.PoolStats;
import dev.threadpool.TestSupport;
import dev.threadpool.ThreadPool;
import dev.threadpool.TimestampMode;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ThreadPoolMetricsTest {

    private static PoolStats workload(ThreadPool pool) {
        for (int i = 0; i < 100; i++) {
            int n = i;
            pool.submit(() -> {
                if (n % 10 == 0) {
                    throw new IllegalStateException("task " + n);
                }
            });
        }
        return TestSupport.awaitQuiescent(pool);
    }

    private static double counter(MeterRegistry r, String name, String pool) {
        FunctionCounter c = r.find(name).tag("pool", pool).functionCounter();
        assertNotNull(c, name);
        return c.count();
    }

    private static double gauge(MeterRegistry r, String name, String pool) {
        Gauge g = r.find(name).tag("pool", pool).gauge();
        assertNotNull(g, name);
        return g.value();
    }

    @Test
    void metersReadTheSnapshotAfterAWorkload() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (ThreadPool pool = ThreadPool.create(PoolConfig.builder().maxThreads(3).queueCapacity(64).build())) {
            new ThreadPoolMetrics(pool, Tags.of("pool", "a")).bindTo(registry);
            PoolStats s = workload(pool);
            assertEquals(100, s.submitted());
            assertEquals(10, s.failed());

            assertEquals(s.completed() + s.failed(), counter(registry, "executor.completed", "a"));
            assertEquals(0, gauge(registry, "executor.active", "a"));
            assertEquals(0, gauge(registry, "executor.queued", "a"));
            assertEquals(3, gauge(registry, "executor.pool.size", "a"));
            assertEquals(3, gauge(registry, "executor.pool.core", "a"));
            assertEquals(pool.workerSlots(), gauge(registry, "executor.pool.max", "a"));
            assertEquals(s.steals(), counter(registry, "executor.steals", "a"));
            assertEquals(s.submitted(), counter(registry, "threadpool.tasks.submitted", "a"));
            assertEquals(s.failed(), counter(registry, "threadpool.tasks.failed", "a"));
            assertEquals(s.cancelled(), counter(registry, "threadpool.tasks.cancelled", "a"));
            assertEquals(s.rejected(), counter(registry, "threadpool.tasks.rejected", "a"));
            assertTrue(counter(registry, "threadpool.parks", "a") >= s.parks());
            assertEquals(s.liveBytes(), gauge(registry, "threadpool.memory.live", "a"));
            assertEquals(s.peakLiveBytes(), gauge(registry, "threadpool.memory.peak", "a"));
            assertEquals(s.totalAllocBytes(), counter(registry, "threadpool.memory.allocated", "a"));
            assertEquals(s.totalFreeBytes(), counter(registry, "threadpool.memory.freed", "a"));
            assertEquals("tasks", registry.find("executor.completed").functionCounter().getId().getBaseUnit());
            assertEquals("threads", registry.find("executor.active").gauge().getId().getBaseUnit());
            assertEquals("bytes", registry.find("threadpool.memory.live").gauge().getId().getBaseUnit());
            assertNull(registry.find("threadpool.latency.queue.wait").gauge(), "no latency gauges without FULL");

            pool.close();
            PoolStats fin = pool.statsSnapshot();
            assertEquals(0, gauge(registry, "threadpool.memory.live", "a"), "the final snapshot after close");
            assertEquals(fin.submitted(), counter(registry, "threadpool.tasks.submitted", "a"));
        }
    }

    @Test
    void twoPoolsTwoTagsOneRegistry() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (ThreadPool a = ThreadPool.create(PoolConfig.builder().maxThreads(1).build());
                ThreadPool b = ThreadPool.create(PoolConfig.builder().maxThreads(2)
                        .timestampMode(TimestampMode.FULL).build())) {
            new ThreadPoolMetrics(a, Tags.of("pool", "a")).bindTo(registry);
            new ThreadPoolMetrics(b, Tags.of("pool", "b")).bindTo(registry);
            workload(a);
            PoolStats sb = workload(b);
            workload(b);
            assertEquals(100, counter(registry, "threadpool.tasks.submitted", "a"));
            assertEquals(200, counter(registry, "threadpool.tasks.submitted", "b"));
            assertEquals(1, gauge(registry, "executor.pool.core", "a"));
            assertEquals(2, gauge(registry, "executor.pool.core", "b"));
            if (sb.latency().enabled()) {
                Gauge p99 = registry.find("threadpool.latency.execution").tags("pool", "b", "quantile", "0.99")
                        .gauge();
                assertNotNull(p99);
                assertTrue(p99.value() > 0);
                assertEquals("seconds", p99.getId().getBaseUnit());
                PoolStats now = b.statsSnapshot();
                assertEquals(now.latency().execution().max() / 1e9,
                        registry.find("threadpool.latency.execution").tags("pool", "b", "quantile", "1.0")
                                .gauge().value());
            }
        }
    }
}
