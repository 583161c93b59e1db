package dev.threadpool.internal.counting;

import dev.threadpool.internal.counting.LineClasses.Row;
import dev.threadpool.internal.counting.LineClasses.Verdict;
import java.util.LinkedHashSet;
import java.util.Set;

/** The classification table as markdown rows, sampled at the offsets where the rows change. */
final class LineClassesDoc {
    private LineClassesDoc() {}

    static String rows() {
        StringBuilder sb = new StringBuilder();
        for (Row r : LineClasses.TABLE) {
            Set<String> parts = new LinkedHashSet<>();
            for (long off : new long[] {0, Recorder.LINE, 2L * Recorder.LINE, 3L * Recorder.LINE}) {
                Verdict v = r.byOffset().apply(off);
                parts.add(v.what() + ": " + v.lineClass() + " (" + v.reason() + ")");
            }
            sb.append("| `").append(r.purpose().pattern()).append("` | ").append(String.join("; ", parts))
                    .append(" |\n");
        }
        return sb.toString();
    }
}
