package dev.threadpool.demo;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * A plain-text table with aligned columns: numbers right-aligned with thousands separators, everything else
 * left-aligned, two spaces between columns, a rule under the header.
 *
 * <pre>{@code
 * Table t = new Table("worker", "started", "completed");
 * t.row(0, 1_250_000L, 1_250_000L);
 * System.out.print(t.render("   "));
 * }</pre>
 * prints
 * <pre>
 *    worker    started  completed
 *    ------  ---------  ---------
 *         0  1,250,000  1,250,000
 * </pre>
 */
public final class Table {
    private static final String GAP = "  ";

    private final String[] headers;
    private final boolean[] numeric;
    private final List<String[]> rows = new ArrayList<>();

    /** @throws IllegalArgumentException if there are no columns */
    public Table(String... headers) {
        Objects.requireNonNull(headers, "headers must not be null");
        if (headers.length == 0) {
            throw new IllegalArgumentException("a table needs at least one column");
        }
        this.headers = headers.clone();
        this.numeric = new boolean[headers.length];
        Arrays.fill(numeric, true); // a column is right-aligned while every cell in it is a number
    }

    /**
     * Adds a row; {@code null} cells print empty. Integral numbers get thousands separators, floating-point
     * ones two decimals.
     *
     * @throws IllegalArgumentException if the row does not have one cell per column
     */
    public Table row(Object... cells) {
        Objects.requireNonNull(cells, "cells must not be null");
        if (cells.length != headers.length) {
            throw new IllegalArgumentException("row has " + cells.length + " cells, the table has "
                    + headers.length + " columns");
        }
        String[] text = new String[cells.length];
        for (int i = 0; i < cells.length; i++) {
            Object c = cells[i];
            if (c instanceof Double || c instanceof Float) {
                text[i] = String.format(Locale.ROOT, "%,.2f", ((Number) c).doubleValue());
            } else if (c instanceof Number n) {
                text[i] = String.format(Locale.ROOT, "%,d", n.longValue());
            } else {
                text[i] = c == null ? "" : c.toString();
                if (c != null) {
                    numeric[i] = false;
                }
            }
        }
        rows.add(text);
        return this;
    }

    public int rowCount() {
        return rows.size();
    }

    /** The table, each line prefixed by {@code indent} and ended by a newline. */
    public String render(String indent) {
        int[] width = new int[headers.length];
        for (int i = 0; i < headers.length; i++) {
            width[i] = headers[i].length();
        }
        for (String[] r : rows) {
            for (int i = 0; i < r.length; i++) {
                width[i] = Math.max(width[i], r[i].length());
            }
        }
        StringBuilder sb = new StringBuilder();
        line(sb, indent, headers, width);
        String[] rule = new String[headers.length];
        for (int i = 0; i < rule.length; i++) {
            rule[i] = "-".repeat(width[i]);
        }
        line(sb, indent, rule, width);
        for (String[] r : rows) {
            line(sb, indent, r, width);
        }
        return sb.toString();
    }

    @Override
    public String toString() {
        return render("");
    }

    private void line(StringBuilder sb, String indent, String[] cells, int[] width) {
        StringBuilder line = new StringBuilder(indent);
        for (int i = 0; i < cells.length; i++) {
            if (i > 0) {
                line.append(GAP);
            }
            String pad = " ".repeat(width[i] - cells[i].length());
            if (numeric[i]) {
                line.append(pad).append(cells[i]);
            } else {
                line.append(cells[i]).append(pad);
            }
        }
        sb.append(line.toString().stripTrailing()).append('\n');
    }
}
