package dev.threadpool.internal.jmx;

import dev.threadpool.LatencySummary;
import dev.threadpool.PoolStats;
import dev.threadpool.ThreadPoolMXBean;
import java.lang.management.ManagementFactory;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;
import javax.management.AttributeList;
import javax.management.InstanceAlreadyExistsException;
import javax.management.InstanceNotFoundException;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import javax.management.StandardMBean;

/**
 * The {@link ThreadPoolMXBean} of one pool: every attribute reads {@code source} (the pool's
 * {@code statsSnapshot}), the same snapshot JFR's periodic {@code PoolStats} event reads; no counter of its
 * own. A {@code getAttributes} call (JConsole asks for every attribute at once) takes one snapshot and
 * answers all of them from it.
 */
public final class PoolMXBean extends StandardMBean implements ThreadPoolMXBean {
    private final Supplier<PoolStats> source;
    private final int configuredWorkers;
    /** The snapshot of the {@code getAttributes} call in progress on this thread, if any. */
    private final ThreadLocal<PoolStats> batch = new ThreadLocal<>();

    private PoolMXBean(Supplier<PoolStats> source, int configuredWorkers) {
        super(ThreadPoolMXBean.class, true);
        this.source = source;
        this.configuredWorkers = configuredWorkers;
    }

    /**
     * Registers a pool's MXBean under {@code name} (validated by {@code PoolConfig.Builder.build}) in the
     * platform MBean server; closing the handle unregisters it.
     *
     * @throws IllegalStateException if {@code name} is already registered, or registration fails
     */
    public static AutoCloseable register(String name, Supplier<PoolStats> source, int configuredWorkers) {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        ObjectName objectName;
        try {
            objectName = new ObjectName(name);
            server.registerMBean(new PoolMXBean(source, configuredWorkers), objectName);
        } catch (InstanceAlreadyExistsException e) {
            throw new IllegalStateException("jmxName " + name + " is already registered in the platform MBean"
                    + " server (another pool, or a pool not closed yet): give each pool its own name", e);
        } catch (JMException e) {
            throw new IllegalStateException("jmxName " + name + ": cannot register the pool's MXBean: " + e, e);
        }
        return () -> {
            try {
                server.unregisterMBean(objectName);
            } catch (InstanceNotFoundException alreadyGone) {
                // someone unregistered it by hand: nothing left to do
            }
        };
    }

    @Override
    public AttributeList getAttributes(String[] attributes) {
        batch.set(source.get());
        try {
            return super.getAttributes(attributes);
        } finally {
            batch.remove();
        }
    }

    private PoolStats s() {
        PoolStats s = batch.get();
        return s != null ? s : source.get();
    }

    private long latency(ToLongFunction<PoolStats> f) {
        PoolStats s = s();
        return s.latency().enabled() ? f.applyAsLong(s) : -1;
    }

    private static LatencySummary q(PoolStats s) {
        return s.latency().queueWait();
    }

    private static LatencySummary x(PoolStats s) {
        return s.latency().execution();
    }

    @Override public long getSubmitted() { return s().submitted(); }
    @Override public long getStarted() { return s().started(); }
    @Override public long getCompleted() { return s().completed(); }
    @Override public long getFailed() { return s().failed(); }
    @Override public long getCancelled() { return s().cancelled(); }
    @Override public long getRejected() { return s().rejected(); }
    @Override public long getQueuedTasks() { return s().queuedTasks(); }
    @Override public long getActiveTasks() { return s().activeTasks(); }
    @Override public long getTaskDescLive() { return s().taskDescLive(); }
    @Override public long getQueueDepth() { return s().queueDepth(); }
    @Override public long getPeakQueueDepth() { return s().peakQueueDepth(); }
    @Override public long getParks() { return s().parks(); }
    @Override public long getWakeups() { return s().wakeups(); }
    @Override public long getSteals() { return s().steals(); }
    @Override public long getStealFailures() { return s().stealFailures(); }
    @Override public long getInlineRuns() { return s().inlineRuns(); }
    @Override public int getParkedWorkers() { return s().parkedWorkers(); }
    @Override public long getBusyNanos() { return s().busyNanos(); }
    @Override public long getIdleNanos() { return s().idleNanos(); }
    @Override public int getWorkerCount() { return configuredWorkers + (int) s().overflowLive(); }
    @Override public long getOverflowLive() { return s().overflowLive(); }
    @Override public long getOverflowSpawned() { return s().overflowSpawned(); }
    @Override public long getOverflowRetired() { return s().overflowRetired(); }
    @Override public long getStallsSeen() { return s().stallsSeen(); }
    @Override public long getLiveBytes() { return s().liveBytes(); }
    @Override public long getPeakLiveBytes() { return s().peakLiveBytes(); }
    @Override public long getTotalAllocBytes() { return s().totalAllocBytes(); }
    @Override public long getTotalFreeBytes() { return s().totalFreeBytes(); }
    @Override public long getScratchBytes() { return s().scratchBytes(); }
    @Override public boolean isAccountingSkewDetected() { return s().accountingSkewDetected(); }
    @Override public boolean isLatencyEnabled() { return s().latency().enabled(); }
    @Override public long getQueueWaitCount() { return latency(s -> q(s).count()); }
    @Override public long getQueueWaitP50Nanos() { return latency(s -> q(s).p50()); }
    @Override public long getQueueWaitP99Nanos() { return latency(s -> q(s).p99()); }
    @Override public long getQueueWaitP999Nanos() { return latency(s -> q(s).p999()); }
    @Override public long getQueueWaitMaxNanos() { return latency(s -> q(s).max()); }
    @Override public long getExecutionP50Nanos() { return latency(s -> x(s).p50()); }
    @Override public long getExecutionP99Nanos() { return latency(s -> x(s).p99()); }
    @Override public long getExecutionP999Nanos() { return latency(s -> x(s).p999()); }
    @Override public long getExecutionMaxNanos() { return latency(s -> x(s).max()); }
    @Override public long getWakeP50Nanos() { return latency(s -> s.latency().wake().p50()); }
    @Override public long getWakeP99Nanos() { return latency(s -> s.latency().wake().p99()); }
}
