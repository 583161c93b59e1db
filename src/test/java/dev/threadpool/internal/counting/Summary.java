package dev.threadpool.internal.counting;

import dev.threadpool.internal.counting.LineClasses.LineClass;
import dev.threadpool.internal.counting.LineClasses.Verdict;
import dev.threadpool.internal.stats.PoolCounters;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * One path on one variant, reduced to the table's columns: per task, what the path's threads wrote, by class of
 * line; plus, over every thread of the window, the RMWs on the two words issue 48 budgets by name (SUBMITTED and
 * the freelist head) and on the outside admission stripes that took SUBMITTED's accepts (PoolCounters); and which
 * all-shared lines were written, by (purpose, what, offset).
 *
 * <p>Totals are kept as counts with their denominator ({@link #tasks}), so a fraction is exact (1/8 is 0.125).
 */
public record Summary(Path path, String variant, long tasks, long allStores, long allRmws, long fewWrites,
        long ownerWrites, long fullFences, long lightFences, long heapAtomics, long submittedRmws,
        long outsideStripeRmws, long freelistRmws, long wakeWrites, long linesRead, long allLinesRead,
        Map<String, Long> allSharedWrites, long unmappedWrites, String note) {

    /** Reduces a scenario's run. */
    public static Summary of(Path path, String variant, Scenarios.Run run) {
        long allStores = 0, allRmws = 0, few = 0, owner = 0, full = 0, light = 0, heap = 0;
        long submitted = 0, stripes = 0, freelist = 0, wake = 0, linesRead = 0, allLinesRead = 0, unmapped = 0;
        Map<String, Long> shared = new TreeMap<>();
        for (Recorder.Counts c : run.counts()) {
            boolean onPath = run.pathThreads().contains(c.thread());
            if (onPath) {
                full += c.fullFences();
                light += c.lightFences();
                heap += c.heapAtomics();
            }
            for (Map.Entry<Long, long[]> e : c.lines().entrySet()) {
                long[] k = e.getValue();
                Recorder.Block b = Recorder.blockOfLine(e.getKey());
                if (b == null) {
                    if (onPath) {
                        unmapped += k[Recorder.STORE] + k[Recorder.RMW];
                    }
                    continue;
                }
                long offset = (e.getKey() << Recorder.LINE_SHIFT) - b.start();
                Verdict v = LineClasses.classify(b.purpose(), offset);
                if (b.purpose().equals("counters") && offset == 0) {
                    submitted += k[Recorder.RMW];
                }
                if (b.purpose().equals("counters") && offset >= PoolCounters.Layout.OUTSIDE_STRIPES_OFFSET
                        && offset < PoolCounters.Layout.WORKER_BLOCKS_OFFSET) {
                    stripes += k[Recorder.RMW];
                }
                if (b.purpose().equals("descriptor freelist head")) {
                    freelist += k[Recorder.RMW];
                }
                if (!onPath) {
                    continue;
                }
                if (k[Recorder.READ] != 0) {
                    linesRead++;
                    if (v.lineClass() == LineClass.ALL) {
                        allLinesRead++;
                    }
                }
                long writes = k[Recorder.STORE] + k[Recorder.RMW];
                switch (v.lineClass()) {
                    case ALL -> {
                        allStores += k[Recorder.STORE];
                        allRmws += k[Recorder.RMW];
                        if (b.purpose().equals("idle mask") || b.purpose().equals("wake coalescer")) {
                            wake += writes;
                        }
                        if (writes != 0) {
                            shared.merge(b.purpose().replaceAll(" \\d+", " N") + " " + v.what() + " @"
                                    + offset, writes, Long::sum); // all-shared rows are single words: offset 0 or PAD
                        }
                    }
                    case FEW -> few += writes;
                    case OWNER -> owner += writes;
                }
            }
        }
        return new Summary(path, variant, run.tasks(), allStores, allRmws, few, owner, full, light, heap, submitted,
                stripes, freelist, wake, linesRead, allLinesRead, shared, unmapped, run.note());
    }

    /** All-shared stores and RMWs per task: the number issue 48's budgets bound. */
    public double allSharedWritesPerTask() {
        return (double) (allStores + allRmws) / tasks;
    }

    /** All-shared writes per task outside the park/wake protocol (idle mask, SEARCHING, SUBMITS): exact counts. */
    public double allSharedWritesOutsideWakesPerTask() {
        return (double) (allStores + allRmws - wakeWrites) / tasks;
    }

    /**
     * Writes per task to the WorkSummary line (purpose {@code workers_nonempty}): its owners' marks and clears,
     * once per run of work, not per task.
     */
    public double summaryWritesPerTask() {
        long n = 0;
        for (Map.Entry<String, Long> e : allSharedWrites.entrySet()) {
            if (e.getKey().startsWith("workers_nonempty ")) {
                n += e.getValue();
            }
        }
        return (double) n / tasks;
    }

    public double perTask(long n) {
        return (double) n / tasks;
    }

    /** {@code n / tasks} written exactly enough: 0, 1, 0.125, 2.0156. */
    public String fraction(long n) {
        return format((double) n / tasks);
    }

    public static String format(double d) {
        if (d == Math.rint(d)) {
            return Long.toString((long) d);
        }
        String s = String.format(java.util.Locale.ROOT, "%.4f", d);
        s = s.replaceAll("0+$", "");
        return s.endsWith(".") ? s.substring(0, s.length() - 1) : s;
    }

    /** Writer threads per line over runs, for the owner-only check: line -> writers. */
    public static Map<Long, Set<Thread>> writers(List<Recorder.Counts> counts) {
        Map<Long, Set<Thread>> w = new TreeMap<>();
        for (Recorder.Counts c : counts) {
            c.lines().forEach((line, k) -> {
                if (k[Recorder.STORE] + k[Recorder.RMW] != 0) {
                    w.computeIfAbsent(line, x -> new HashSet<>()).add(c.thread());
                }
            });
        }
        return w;
    }
}
