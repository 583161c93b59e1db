package dev.threadpool.internal.scheduler;

import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The report of a failed detached task when the user installed no {@code errorHandler}: like ThreadPoolExecutor
 * and ForkJoinPool, which print such a failure through the thread's uncaught handler, it prints the stack trace
 * to {@code System.err}, but at most one per {@link #INTERVAL_NANOS} per pool; the failures it left out are
 * counted and the count is printed with the next report. Runs only on the failure path (a task that did not
 * throw never gets here); no lock: one CAS on the time of the last report decides which failure prints.
 */
final class StderrErrorReporter {
    /** At most one report per second. */
    static final long INTERVAL_NANOS = 1_000_000_000L;

    private final String poolName;
    /** {@code System.nanoTime()} of the last report; starts one interval back so the first failure prints. */
    private final AtomicLong lastReport;
    /** Failures not printed since the last report. */
    private final AtomicLong suppressed = new AtomicLong();

    StderrErrorReporter(String poolName) {
        this.poolName = poolName;
        this.lastReport = new AtomicLong(System.nanoTime() - INTERVAL_NANOS);
    }

    /** Prints {@code error}, or counts it when a report went out less than an interval ago. Never throws. */
    void report(Throwable error) {
        long last = lastReport.get();
        long now = System.nanoTime();
        if (now - last < INTERVAL_NANOS || !lastReport.compareAndSet(last, now)) {
            suppressed.incrementAndGet();
            return;
        }
        try {
            long left = suppressed.getAndSet(0);
            StringWriter text = new StringWriter();
            PrintWriter out = new PrintWriter(text);
            out.print("thread-pool " + poolName + ": a detached task failed on " + Thread.currentThread().getName());
            if (left > 0) {
                out.print(" (" + left + " more failure" + (left == 1 ? "" : "s")
                        + " not printed since the last report)");
            }
            out.println("; install PoolConfig.Builder.errorHandler to handle failures yourself:");
            error.printStackTrace(out);
            out.flush();
            PrintStream err = System.err; // read now: whatever stream System.err is at the time of the report
            err.print(text);
            err.flush();
        } catch (Throwable reportFailed) {
            // dropped: reporting must never fail the task's outcome (WorkerLoop.onFailure)
        }
    }
}
