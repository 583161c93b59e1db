package dev.threadpool.internal.counting;

import dev.threadpool.internal.counting.LineClasses.Row;
import dev.threadpool.internal.counting.LineClasses.Verdict;
import dev.threadpool.internal.stats.PoolCounters;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * The classification table as markdown rows, sampled at every line up to past the furthest offset where a row
 * changes: the counters' worker blocks, after the cold block and up to 64 outside stripes.
 */
final class LineClassesDoc {
    private LineClassesDoc() {}

    static String rows() {
        StringBuilder sb = new StringBuilder();
        for (Row r : LineClasses.TABLE) {
            Set<String> parts = new LinkedHashSet<>();
            for (long off = 0; off <= PoolCounters.Layout.WORKER_BLOCKS_OFFSET + Recorder.LINE; off += Recorder.LINE) {
                Verdict v = r.byOffset().apply(off);
                parts.add(v.what() + ": " + v.lineClass() + " (" + v.reason() + ")");
            }
            sb.append("| `").append(r.purpose().pattern()).append("` | ").append(String.join("; ", parts))
                    .append(" |\n");
        }
        return sb.toString();
    }
}
