package dev.threadpool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.management.Attribute;
import javax.management.JMX;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The opt-in MXBean (PoolConfig.Builder.jmxName), through the platform MBean server. */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ThreadPoolMXBeanTest {
    private static final MBeanServer SERVER = ManagementFactory.getPlatformMBeanServer();

    private static PoolConfig.Builder config(String name) {
        return PoolConfig.builder().maxThreads(2).queueCapacity(64).threadNamePrefix("jmx-" + name + "-")
                .jmxName("dev.threadpool:type=ThreadPool,name=" + name);
    }

    /** Runs 100 tasks, 7 of which throw, and waits until every one has ended. */
    private static PoolStats workload(ThreadPool pool) {
        for (int i = 0; i < 100; i++) {
            int n = i;
            pool.submit(() -> {
                if (n % 15 == 0) {
                    throw new IllegalStateException("task " + n);
                }
            });
        }
        return TestSupport.awaitQuiescent(pool);
    }

    @Test
    void attributesMatchStatsSnapshotAfterAWorkload() throws Exception {
        ObjectName name = new ObjectName("dev.threadpool:type=ThreadPool,name=attrs");
        try (ThreadPool pool = ThreadPool.create(config("attrs").build())) {
            assertTrue(SERVER.isRegistered(name));
            assertTrue(SERVER.isInstanceOf(name, ThreadPoolMXBean.class.getName()));
            PoolStats s = workload(pool);
            assertEquals(100, s.submitted());
            assertEquals(7, s.failed());

            // One attribute at a time, through a proxy (each read takes a snapshot).
            ThreadPoolMXBean bean = JMX.newMXBeanProxy(SERVER, name, ThreadPoolMXBean.class);
            assertEquals(s.submitted(), bean.getSubmitted());
            assertEquals(s.started(), bean.getStarted());
            assertEquals(s.completed(), bean.getCompleted());
            assertEquals(s.failed(), bean.getFailed());
            assertEquals(s.cancelled(), bean.getCancelled());
            assertEquals(s.rejected(), bean.getRejected());
            assertEquals(0, bean.getQueuedTasks());
            assertEquals(0, bean.getActiveTasks());
            assertEquals(s.queueDepth(), bean.getQueueDepth());
            assertEquals(s.peakQueueDepth(), bean.getPeakQueueDepth());
            assertEquals(s.steals(), bean.getSteals());
            assertTrue(bean.getParks() >= s.parks(), "parks only grow");
            assertEquals(s.liveBytes(), bean.getLiveBytes());
            assertEquals(s.peakLiveBytes(), bean.getPeakLiveBytes());
            assertEquals(s.totalAllocBytes(), bean.getTotalAllocBytes());
            assertEquals(s.totalFreeBytes(), bean.getTotalFreeBytes());
            assertEquals(s.overflowLive(), bean.getOverflowLive());
            assertEquals(2, bean.getWorkerCount());
            assertFalse(bean.isAccountingSkewDetected());
            assertFalse(bean.isLatencyEnabled());
            assertEquals(-1, bean.getQueueWaitP99Nanos(), "latency attributes read -1 when not recorded");
            assertEquals(-1, bean.getExecutionMaxNanos());

            // Every attribute at once (what JConsole does): one snapshot, consistent figures.
            String[] names = SERVER.getMBeanInfo(name).getAttributes().length > 0
                    ? java.util.Arrays.stream(SERVER.getMBeanInfo(name).getAttributes())
                            .map(javax.management.MBeanAttributeInfo::getName).toArray(String[]::new)
                    : new String[0];
            Map<String, Object> all = new HashMap<>();
            for (Attribute a : SERVER.getAttributes(name, names).asList()) {
                all.put(a.getName(), a.getValue());
            }
            assertEquals(names.length, all.size(), "every attribute readable: " + all.keySet());
            assertEquals(s.submitted(), all.get("Submitted"));
            assertEquals(s.completed(), all.get("Completed"));
            assertEquals(s.failed(), all.get("Failed"));
            assertEquals(s.liveBytes(), all.get("LiveBytes"));
            assertEquals((Long) all.get("TotalAllocBytes") - (Long) all.get("TotalFreeBytes"), all.get("LiveBytes"));
            assertEquals(-1L, all.get("QueueWaitP50Nanos"));
        }
        assertFalse(SERVER.isRegistered(name), "unregistered by close");
    }

    @Test
    void latencyAttributesWhenRecorded() throws Exception {
        ObjectName name = new ObjectName("dev.threadpool:type=ThreadPool,name=latency");
        try (ThreadPool pool = ThreadPool.create(config("latency").timestampMode(TimestampMode.FULL).build())) {
            PoolStats s = workload(pool);
            ThreadPoolMXBean bean = JMX.newMXBeanProxy(SERVER, name, ThreadPoolMXBean.class);
            assertEquals(s.latency().enabled(), bean.isLatencyEnabled());
            if (s.latency().enabled()) { // not with -Ddev.threadpool.timestamps=false
                assertEquals(s.latency().queueWait().count(), bean.getQueueWaitCount());
                assertEquals(s.latency().queueWait().p99(), bean.getQueueWaitP99Nanos());
                assertEquals(s.latency().execution().max(), bean.getExecutionMaxNanos());
                assertTrue(bean.getQueueWaitCount() > 0);
            }
        }
    }

    @Test
    void duplicateNameFailsCreateAndLeavesTheFirstRegistered() throws Exception {
        ObjectName name = new ObjectName("dev.threadpool:type=ThreadPool,name=dup");
        try (ThreadPool first = ThreadPool.create(config("dup").build())) {
            IllegalStateException e = assertThrows(IllegalStateException.class,
                    () -> ThreadPool.create(config("dup").threadNamePrefix("jmx-dup2-").build()));
            assertTrue(e.getMessage().contains("jmxName") && e.getMessage().contains("already registered"),
                    e.getMessage());
            assertTrue(SERVER.isRegistered(name), "the first pool's MXBean stays");
            assertTrue(Thread.getAllStackTraces().keySet().stream()
                    .noneMatch(t -> t.getName().startsWith("jmx-dup2-")), "the failed pool left no thread");
            first.submit(() -> {});
            assertEquals(1, JMX.newMXBeanProxy(SERVER, name, ThreadPoolMXBean.class).getSubmitted());
        }
        assertFalse(SERVER.isRegistered(name));
        // The name is free again.
        try (ThreadPool again = ThreadPool.create(config("dup").build())) {
            assertTrue(SERVER.isRegistered(name));
        }
    }

    @Test
    void invalidNameIsRefusedByBuild() {
        for (String bad : new String[] {"no-colon", "dev.threadpool:", "dev.threadpool:type=ThreadPool,name=*"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> PoolConfig.builder().jmxName(bad).build(), bad);
            assertTrue(e.getMessage().startsWith("jmxName "), e.getMessage());
            assertTrue(e.getMessage().contains(bad), e.getMessage());
        }
    }

    @Test
    void noNameNoMXBean() throws Exception {
        int before = SERVER.queryNames(new ObjectName("dev.threadpool:*"), null).size();
        try (ThreadPool pool = ThreadPool.create(PoolConfig.builder().maxThreads(1).build())) {
            assertEquals(null, pool.config().jmxName());
            assertEquals(before, SERVER.queryNames(new ObjectName("dev.threadpool:*"), null).size());
        }
    }
}
