package dev.threadpool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * With no {@code errorHandler}, a detached task's failure is printed to System.err, at most one stack trace per
 * second per pool, the failures left out counted in the next report; a user-installed handler (or an awaited,
 * waitable task) prints nothing. System.err is swapped for a buffer around each test.
 */
@Isolated // System.err is global
class DefaultErrorReportTest {
    private static final String HEADER = ": a detached task failed on ";
    private PrintStream saved;
    private ByteArrayOutputStream captured;

    @BeforeEach
    void captureStderr() {
        saved = System.err;
        captured = new ByteArrayOutputStream();
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
    }

    @AfterEach
    void restoreStderr() {
        System.setErr(saved);
    }

    private String err() {
        return captured.toString(StandardCharsets.UTF_8);
    }

    private static int count(String text, String what) {
        int n = 0;
        for (int i = text.indexOf(what); i >= 0; i = text.indexOf(what, i + 1)) {
            n++;
        }
        return n;
    }

    private static void runDetached(ThreadPool pool, int n, Runnable task) throws InterruptedException {
        WaitGroup wg = new WaitGroup();
        for (int i = 0; i < n; i++) {
            pool.submit(task, wg);
        }
        wg.await();
        TestSupport.awaitQuiescent(pool);
    }

    @Test
    @Timeout(60)
    void aFailingDetachedTaskIsReportedOnce() throws Exception {
        try (ThreadPool pool = ThreadPool.create(PoolConfig.builder().maxThreads(2).threadNamePrefix("report-one-")
                .build())) {
            runDetached(pool, 1, () -> { throw new IllegalStateException("boom-one"); });
        }
        String text = err();
        assertEquals(1, count(text, HEADER), text);
        assertTrue(text.contains("thread-pool report-one-" + HEADER + "report-one-"), text);
        assertTrue(text.contains("java.lang.IllegalStateException: boom-one"), text);
        assertTrue(text.contains("\tat "), "a full stack trace: " + text);
    }

    @Test
    @Timeout(60)
    void aStormPrintsABoundedNumberOfTracesAndTheSuppressedCount() throws Exception {
        int failures = 10_000;
        long start = System.nanoTime();
        try (ThreadPool pool = ThreadPool.create(PoolConfig.builder().maxThreads(2).threadNamePrefix("storm-")
                .build())) {
            runDetached(pool, failures, () -> { throw new IllegalStateException("storm"); });
            Thread.sleep(1100); // past the interval: the next failure prints, with the count of the left-out ones
            runDetached(pool, 1, () -> { throw new IllegalStateException("after the storm"); });
        }
        long seconds = (System.nanoTime() - start) / 1_000_000_000L;
        String text = err();
        int traces = count(text, HEADER);
        assertTrue(traces >= 2 && traces <= seconds + 2, traces + " traces in " + seconds + " s");
        Matcher m = Pattern.compile("\\((\\d+) more failures? not printed since the last report\\)").matcher(text);
        long suppressed = 0;
        while (m.find()) {
            suppressed += Long.parseLong(m.group(1));
        }
        assertEquals(failures + 1 - traces, suppressed, "every failure is printed or counted: " + traces
                + " printed");
        assertTrue(text.contains("after the storm"), "the report after the interval is printed");
    }

    @Test
    @Timeout(60)
    void aUserHandlerOrAnAwaitedTaskPrintsNothing() throws Exception {
        AtomicInteger handled = new AtomicInteger();
        try (ThreadPool pool = ThreadPool.create(PoolConfig.builder().maxThreads(2)
                .errorHandler((task, error) -> handled.incrementAndGet()).build())) {
            runDetached(pool, 100, () -> { throw new IllegalStateException("handled"); });
        }
        assertEquals(100, handled.get());
        try (ThreadPool pool = ThreadPool.create(PoolConfig.builder().maxThreads(2).build())) {
            long h = pool.submitWaitable(() -> { throw new IllegalStateException("awaited"); });
            try {
                pool.await(h);
            } catch (TaskFailedException expected) {
                // the awaiter has it: no report
            }
            TestSupport.awaitQuiescent(pool);
        }
        assertEquals("", err());
    }
}
