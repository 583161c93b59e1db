package dev.threadpool.internal.jfr;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/** An overflow worker was started or retired (LANE_EXTENSION). */
@Name(PoolEvents.PREFIX + "OverflowWorker")
@Label("Overflow Worker")
@Category({"Thread Pool"})
@Description("LANE_EXTENSION started (SPAWNED) or retired (RETIRED) an overflow worker")
@StackTrace(false)
final class OverflowWorkerEvent extends jdk.jfr.Event {
    @Label("Pool")
    String pool;
    @Label("Worker")
    int worker;
    @Label("Action")
    String action;
}
