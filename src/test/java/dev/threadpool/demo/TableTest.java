package dev.threadpool.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class TableTest {

    @Test
    void alignsNumbersRightAndTextLeft() {
        Table t = new Table("worker", "state", "completed", "ratio");
        t.row(0, "running", 1_250_000L, 0.5);
        t.row(12, "parked", 7, 12.25);
        assertEquals("""
                  worker  state    completed  ratio
                  ------  -------  ---------  -----
                       0  running  1,250,000   0.50
                      12  parked           7  12.25
                """, t.render("  "));
        assertEquals(2, t.rowCount());
    }

    @Test
    void headersWiderThanCellsAndEmptyTables() {
        assertEquals("""
                a-long-header
                -------------
                """, new Table("a-long-header").toString());
        Table t = new Table("n", "note");
        t.row(1, null);
        assertEquals("""
                n  note
                -  ----
                1
                """, t.toString(), "a null cell prints empty and trailing blanks are stripped");
    }

    @Test
    void aTextCellMakesTheColumnLeftAligned() {
        Table t = new Table("id");
        t.row(5);
        t.row("n/a");
        assertEquals("id\n---\n5\nn/a\n", t.toString());
    }

    @Test
    void rejectsBadShapes() {
        assertThrows(IllegalArgumentException.class, Table::new);
        Table t = new Table("a", "b");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> t.row(1));
        assertTrue(e.getMessage().contains("1 cells") && e.getMessage().contains("2 columns"), e.getMessage());
        assertThrows(NullPointerException.class, () -> t.row((Object[]) null));
    }

    @Test
    void progressPrintsTheFinalStatusAndStops() throws Exception {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(buf, true, StandardCharsets.UTF_8);
        AtomicInteger n = new AtomicInteger();
        Progress p = Progress.start("phase", () -> n.get() + " done", out, false);
        n.set(42);
        p.close();
        p.close(); // idempotent
        String text = buf.toString(StandardCharsets.UTF_8);
        assertTrue(text.strip().endsWith("42 done"), text);
        assertTrue(text.contains("[phase "), text);
        Progress q = Progress.start("inplace", () -> "x", out, true);
        q.close();
        assertTrue(buf.toString(StandardCharsets.UTF_8).contains("\r   [inplace "));
    }
}
