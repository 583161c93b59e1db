package dev.threadpool.internal.jfr;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;

/** The watchdog saw a task running for longer than its stall threshold. */
@Name(PoolEvents.PREFIX + "TaskStall")
@Label("Task Stall")
@Category({"Thread Pool"})
@Description("The pool's watchdog saw a task running past the stall threshold (blockingPromotionTimeout)")
@StackTrace(false)
final class StallEvent extends jdk.jfr.Event {
    @Label("Pool")
    String pool;
    @Label("Worker")
    int worker;
    @Label("Running For")
    @Description("At least this long: timed from the first watchdog tick that saw the task")
    @Timespan(Timespan.NANOSECONDS)
    long runningNanos;
}
