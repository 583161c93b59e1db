package dev.threadpool.internal.jfr;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.Period;
import jdk.jfr.StackTrace;

/** A periodic copy of {@code PoolStats}: one per live pool per period, only while a recording runs. */
@Name(PoolEvents.PREFIX + "PoolStats")
@Label("Pool Statistics")
@Category({"Thread Pool"})
@Description("Counters and memory accounting of one pool (ThreadPool.statsSnapshot())")
@Period("1 s")
@StackTrace(false)
final class PoolStatsEvent extends jdk.jfr.Event {
    @Label("Pool")
    String pool;
    @Label("Submitted")
    long submitted;
    @Label("Started")
    long started;
    @Label("Completed")
    long completed;
    @Label("Failed")
    long failed;
    @Label("Cancelled")
    long cancelled;
    @Label("Rejected")
    long rejected;
    @Label("Queued")
    long queuedTasks;
    @Label("Active")
    long activeTasks;
    @Label("Live Descriptors")
    long taskDescLive;
    @Label("Live Bytes")
    @DataAmount
    long liveBytes;
    @Label("Peak Live Bytes")
    @DataAmount
    long peakLiveBytes;
    @Label("Parks")
    long parks;
    @Label("Wakeups")
    long wakeups;
    @Label("Steals")
    long steals;
    @Label("Inline Runs")
    long inlineRuns;
    @Label("Parked Workers")
    int parkedWorkers;
    @Label("Stalls Seen")
    long stallsSeen;
    @Label("Overflow Workers Live")
    long overflowLive;
}
