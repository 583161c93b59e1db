package dev.threadpool.internal.jfr;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/** One phase of a pool's shutdown, with the counts known at that point (-1: not known yet). */
@Name(PoolEvents.PREFIX + "ShutdownPhase")
@Label("Shutdown Phase")
@Category({"Thread Pool"})
@Description("BEGIN, ADMISSION_CLOSED, TASKS_ENDED, WORKERS_JOINED, ARENA_CLOSED; each once per pool")
@StackTrace(false)
final class ShutdownPhaseEvent extends jdk.jfr.Event {
    @Label("Pool")
    String pool;
    @Label("Phase")
    String phase;
    @Label("Mode")
    String mode;
    @Label("Accepted")
    @Description("Tasks accepted before admission closed")
    long accepted;
    @Label("Finished")
    @Description("Tasks that completed or failed")
    long finished;
    @Label("Cancelled")
    long cancelled;
    @Label("Live Bytes")
    @DataAmount
    long liveBytes;
}
