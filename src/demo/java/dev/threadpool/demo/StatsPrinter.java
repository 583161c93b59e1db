package dev.threadpool.demo;

import dev.threadpool.LaneStats;
import dev.threadpool.LatencyStats;
import dev.threadpool.LatencySummary;
import dev.threadpool.PoolConfig;
import dev.threadpool.PoolStats;
import dev.threadpool.ProcessMemory;
import dev.threadpool.ThreadPool;
import dev.threadpool.TimestampMode;
import dev.threadpool.WaitGroup;
import dev.threadpool.WorkerScratch;
import dev.threadpool.WorkerStats;
import java.time.Duration;
import java.util.Locale;

/**
 * Renders a {@link PoolStats} snapshot as a readable table (the sample in docs/OBSERVABILITY.md comes from
 * {@link #main}: a small FULL-timestamp workload that also uses worker scratch).
 */
public final class StatsPrinter {
    private StatsPrinter() {}

    /** Prints {@link #render(PoolStats)} to standard output. */
    public static void print(PoolStats s) {
        System.out.print(render(s));
    }

    /** Prints the snapshot, then the process memory line. */
    public static void print(PoolStats s, ProcessMemory pm) {
        System.out.print(render(s) + render(pm));
    }

    /** One line: resident, peak resident, virtual, and where they came from. */
    public static String render(ProcessMemory pm) {
        return String.format(Locale.ROOT, " process memory: resident %,d  peak resident %,d  virtual %,d  (%s)%n",
                pm.residentBytes(), pm.peakResidentBytes(), pm.virtualBytes(), pm.source());
    }

    /** The whole snapshot: lifecycle, queues, memory, latency, watchdog, then one row per worker. */
    public static String render(PoolStats s) {
        StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, "%nsnapshot%n"));
        section(b, "lifecycle");
        row(b, "submitted", s.submitted(), "started", s.started());
        row(b, "completed", s.completed(), "failed", s.failed());
        row(b, "cancelled", s.cancelled(), "rejected", s.rejected());
        row(b, "queuedTasks", s.queuedTasks(), "activeTasks", s.activeTasks());
        row(b, "taskDescLive", s.taskDescLive(), "inlineRuns", s.inlineRuns());
        section(b, "queues");
        for (LaneStats l : s.lanes()) {
            row(b, l.lane().name().toLowerCase(Locale.ROOT) + " depth", l.depth(), "peak", l.peakDepth());
        }
        section(b, "scheduling");
        row(b, "parks", s.parks(), "wakeups", s.wakeups());
        row(b, "steals", s.steals(), "stealFailures", s.stealFailures());
        row(b, "parkedWorkers", s.parkedWorkers(), "busy ms", s.busyNanos() / 1_000_000);
        row(b, "idle ms", s.idleNanos() / 1_000_000, "", Long.MIN_VALUE);
        section(b, "memory (bytes)");
        row(b, "liveBytes", s.liveBytes(), "peakLiveBytes", s.peakLiveBytes());
        row(b, "totalAlloc", s.totalAllocBytes(), "totalFree", s.totalFreeBytes());
        row(b, "scratchBytes", s.scratchBytes(), "", Long.MIN_VALUE);
        section(b, "watchdog");
        row(b, "stallsSeen", s.stallsSeen(), "overflowLive", s.overflowLive());
        row(b, "overflowSpawned", s.overflowSpawned(), "overflowRetired", s.overflowRetired());
        b.append(String.format(Locale.ROOT, "   accountingSkewDetected %s%n", s.accountingSkewDetected()));
        LatencyStats lat = s.latency();
        section(b, "latency (ns)" + (lat.enabled() ? "" : ": disabled (TimestampMode.DISABLED)"));
        if (lat.enabled()) {
            b.append(String.format(Locale.ROOT, "   %-11s %10s %10s %10s %10s %10s %12s %10s%n", "", "count", "p50",
                    "p90", "p99", "p99.9", "max", "mean"));
            latency(b, "queue wait", lat.queueWait());
            latency(b, "execution", lat.execution());
            latency(b, "wake", lat.wake());
        }
        section(b, "workers");
        b.append(String.format(Locale.ROOT, "   %-3s %10s %8s %7s %7s %9s %9s %7s %7s %7s %6s %9s %9s%n", "#",
                "tasksRun", "failed", "parks", "wakeups", "busy ms", "idle ms", "steals", "stealF", "yields", "localQ",
                "scratch", "wake p50"));
        for (WorkerStats w : s.workers()) {
            b.append(String.format(Locale.ROOT,
                    "   %-3d %,10d %,8d %,7d %,7d %,9d %,9d %,7d %,7d %,7d %,6d %,9d %,9d%n",
                    w.index(), w.tasksRun(), w.failed(), w.parks(), w.wakeups(), w.busyNanos() / 1_000_000,
                    w.idleNanos() / 1_000_000, w.steals(), w.stealFailures(), w.yields(), w.localQueueLength(),
                    w.scratchBytes(), w.wakeLatency().p50()));
        }
        return b.toString();
    }

    private static void section(StringBuilder b, String name) {
        b.append(String.format(Locale.ROOT, " %s%n", name));
    }

    private static void row(StringBuilder b, String k1, long v1, String k2, long v2) {
        if (v2 == Long.MIN_VALUE) {
            b.append(String.format(Locale.ROOT, "   %-16s %,16d%n", k1, v1));
        } else {
            b.append(String.format(Locale.ROOT, "   %-16s %,16d   %-16s %,16d%n", k1, v1, k2, v2));
        }
    }

    private static void latency(StringBuilder b, String name, LatencySummary l) {
        b.append(String.format(Locale.ROOT, "   %-11s %,10d %,10d %,10d %,10d %,10d %,12d %,10d%n", name, l.count(),
                l.p50(), l.p90(), l.p99(), l.p999(), l.max(), l.mean()));
    }

    /** A sample: 100,000 small tasks on a FULL-timestamp pool, some using scratch, then process memory. */
    public static void main(String[] args) throws Exception {
        try (ThreadPool pool = ThreadPool.create(PoolConfig.builder().maxThreads(4).queueCapacity(4096)
                .timestampMode(TimestampMode.FULL).build())) {
            WaitGroup g = new WaitGroup();
            for (int i = 0; i < 100_000; i++) {
                if (i % 1000 == 0) {
                    pool.submit(() -> {
                        WorkerScratch sc = pool.scratch();
                        long m = sc.begin();
                        sc.allocate(4096, 64).fill((byte) 0);
                        sc.finish(m);
                    }, g);
                } else {
                    pool.submit(() -> { }, g);
                }
            }
            if (!g.await(Duration.ofSeconds(60))) {
                throw new IllegalStateException("sample workload did not finish");
            }
            print(pool.statsSnapshot(), ThreadPool.processMemory());
        }
    }
}
