package dev.threadpool.internal.jfr;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Enabled;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;

/**
 * Queue wait and run time of one task in {@value PoolEvents#LATENCY_SAMPLE_EVERY} (per worker), only with
 * {@code TimestampMode.FULL}. Off unless a recording enables it.
 */
@Name(PoolEvents.PREFIX + "TaskLatency")
@Label("Task Latency (sampled)")
@Category({"Thread Pool"})
@Description("One task in 1024 per worker, with TimestampMode.FULL: time queued and time running")
@Enabled(false)
@StackTrace(false)
final class TaskLatencyEvent extends jdk.jfr.Event {
    @Label("Pool")
    String pool;
    @Label("Worker")
    int worker;
    @Label("Queued")
    @Timespan(Timespan.NANOSECONDS)
    long queuedNanos;
    @Label("Running")
    @Timespan(Timespan.NANOSECONDS)
    long runNanos;
}
