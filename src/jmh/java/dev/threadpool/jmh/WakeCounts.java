package dev.threadpool.jmh;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;

/**
 * How the kernel handled {@code LatencyBench.wake_latency}'s wakes, counted per fork when the forked JVM runs
 * with {@code -Dbench.wakeCounts=true} (Linux; PERFORMANCE_TRACKING 73). Two counts, which the box's noise moves
 * far less than it moves a p99:
 * <ul>
 *   <li>where each probe ran: on the CPU its submitter was on just before the submit, or another one
 *       ({@code sched_getcpu}), with the submit-to-start p50 and p99 of each group. On two vCPUs a wake sent
 *       to the other, halted vCPU takes 25-250 us, and where such wakes pass 1 % of a fork they are its p99;</li>
 *   <li>how often the submitting JMH thread lost its CPU against its will ({@code nonvoluntary_ctxt_switches} of
 *       {@code /proc/thread-self/status}), per probe: the share of wakes in which the kernel preempted the
 *       submitter for the worker it woke, at the exit of the wake's syscall (other preemptions of that thread
 *       count too; the switches {@code perf sched} showed were almost all these). The worker then runs about
 *       1 us after the wake; otherwise it waits until the submitter has looked its 64 times and parked, about
 *       2.7 us. That share sets the wake's p50 (FJP 4-8 %, TPE_ABQ 62-70 %, ours 30-40 % when entry 73 was
 *       written).</li>
 * </ul>
 * The probe reads its CPU after its stamp, so the read is not in the latency, but it is one downcall more on
 * the worker before it goes idle. Counts cover the measurement iterations only. The line goes to the JMH log.
 */
final class WakeCounts {
    static final boolean ENABLED = Boolean.getBoolean("bench.wakeCounts");
    private static final MethodHandle SCHED_GETCPU = ENABLED ? schedGetCpu() : null;
    private static final Path STATUS = Path.of("/proc/thread-self/status");

    private final Histogram same = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
    private final Histogram other = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
    /** The JMH thread's switch counts at the start of the current iteration. */
    private long lastVoluntary;
    private long lastInvoluntary;
    /** Summed over the measurement iterations. */
    private long voluntary;
    private long involuntary;

    private static MethodHandle schedGetCpu() {
        Linker linker = Linker.nativeLinker();
        return linker.downcallHandle(linker.defaultLookup().find("sched_getcpu").orElseThrow(
                        () -> new IllegalStateException("-Dbench.wakeCounts=true needs sched_getcpu (Linux)")),
                FunctionDescriptor.of(ValueLayout.JAVA_INT), Linker.Option.critical(false));
    }

    /** The calling thread's CPU now. */
    static int cpu() {
        try {
            return (int) SCHED_GETCPU.invokeExact();
        } catch (Throwable t) {
            throw new IllegalStateException("sched_getcpu failed", t);
        }
    }

    /** One probe: the submitter's CPU before its submit, the probe's CPU, and the probe's submit-to-start. */
    void record(int submitCpu, int probeCpu, long latencyNanos) {
        LatencyBench.recordClamped(submitCpu == probeCpu ? same : other, latencyNanos);
    }

    /** At the start of each iteration, on the JMH thread: its switch counts so far. */
    void iterationStart() {
        long[] counts = switches();
        lastVoluntary = counts[0];
        lastInvoluntary = counts[1];
    }

    /** At the end of each iteration, on the JMH thread: a measured one adds its switches, a warm-up's probes go. */
    void iterationEnd(boolean measured) {
        if (!measured) {
            same.reset();
            other.reset();
            return;
        }
        long[] counts = switches();
        voluntary += counts[0] - lastVoluntary;
        involuntary += counts[1] - lastInvoluntary;
    }

    /** The calling thread's voluntary and involuntary context switches so far. */
    private static long[] switches() {
        long[] counts = new long[2];
        try {
            for (String line : Files.readAllLines(STATUS)) {
                if (line.startsWith("voluntary_ctxt_switches:")) {
                    counts[0] = Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
                } else if (line.startsWith("nonvoluntary_ctxt_switches:")) {
                    counts[1] = Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + STATUS, e);
        }
        return counts;
    }

    /** One line for the fork's log. */
    String summary(String pool) {
        long n = same.getTotalCount() + other.getTotalCount();
        double per = n == 0 ? 0 : 100.0 / n;
        return String.format(Locale.ROOT, "wake counts, %s, %d probes: on the submitter's CPU %d (%.2f %%), p50 %.2f"
                        + " us, p99 %.2f us; on another %d (%.2f %%), p50 %.2f us, p99 %.2f us; submitter preempted %d"
                        + " times (%.1f %% of probes), parked or blocked %d times",
                pool, n, same.getTotalCount(), same.getTotalCount() * per, us(same, 50), us(same, 99),
                other.getTotalCount(), other.getTotalCount() * per, us(other, 50), us(other, 99),
                involuntary, involuntary * per, voluntary);
    }

    private static double us(Histogram h, double percentile) {
        return h.getTotalCount() == 0 ? 0 : h.getValueAtPercentile(percentile) / 1000.0;
    }
}
