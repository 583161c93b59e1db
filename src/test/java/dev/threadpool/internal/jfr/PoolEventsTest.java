package dev.threadpool.internal.jfr;

import static dev.threadpool.TestSupport.WAIT;
import static dev.threadpool.TestSupport.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.PoolConfig;
import dev.threadpool.ShutdownMode;
import dev.threadpool.ThreadPool;
import dev.threadpool.TimestampMode;
import dev.threadpool.WaitGroup;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import jdk.jfr.FlightRecorder;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import jdk.jfr.consumer.RecordingStream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The JFR events: each one read back from a live {@link RecordingStream} or a dumped {@link Recording}, and
 * the no-recording path checked to allocate nothing. Every wait is bounded.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class PoolEventsTest {

    private static RecordingStream stream(ConcurrentLinkedQueue<RecordedEvent> into, String... events) {
        RecordingStream rs = new RecordingStream();
        for (String e : events) {
            rs.enable(e);
            rs.onEvent(e, into::add);
        }
        return rs;
    }

    /** Starts {@code rs} and returns once it delivers events (a marker stall event has come back). */
    private static void startAndSync(RecordingStream rs, ConcurrentLinkedQueue<RecordedEvent> seen) {
        rs.enable("dev.threadpool.TaskStall");
        rs.onEvent("dev.threadpool.TaskStall", seen::add);
        rs.startAsync();
        eventually("the stream delivers", () -> {
            PoolEvents.stall("sync-marker", -1, 0);
            return seen.stream().anyMatch(e -> "sync-marker".equals(e.getString("pool")));
        });
    }

    private static List<RecordedEvent> of(ConcurrentLinkedQueue<RecordedEvent> q, String type, String pool) {
        return q.stream().filter(e -> e.getEventType().getName().equals(type))
                .filter(e -> pool.equals(e.getString("pool"))).collect(Collectors.toList());
    }

    @Test
    void watchdogEventsCarryTheirFields() throws Exception {
        Path file = Files.createTempFile("pool-events", ".jfr");
        try (Recording r = new Recording()) {
            r.enable("dev.threadpool.TaskStall");
            r.enable("dev.threadpool.OverflowWorker");
            r.start();
            PoolEvents.stall("wd-pool-", 3, 5_000_000L);
            PoolEvents.overflowSpawned("wd-pool-", 7);
            PoolEvents.overflowRetired("wd-pool-", 7);
            r.stop();
            r.dump(file);
        }
        List<RecordedEvent> events = RecordingFile.readAllEvents(file);
        Files.deleteIfExists(file);
        List<RecordedEvent> stalls = events.stream()
                .filter(e -> e.getEventType().getName().equals("dev.threadpool.TaskStall")).toList();
        assertEquals(1, stalls.size(), "one stall: " + events);
        assertEquals("wd-pool-", stalls.get(0).getString("pool"));
        assertEquals(3, stalls.get(0).getInt("worker"));
        assertEquals(Duration.ofMillis(5), stalls.get(0).getDuration("runningNanos"));
        List<String> overflow = events.stream()
                .filter(e -> e.getEventType().getName().equals("dev.threadpool.OverflowWorker"))
                .map(e -> e.getString("action") + "@" + e.getInt("worker")).toList();
        assertEquals(List.of("SPAWNED@7", "RETIRED@7"), overflow);
    }

    /** A real LANE_EXTENSION watchdog: a stalled default-lane task yields TaskStall, then SPAWNED and RETIRED. */
    @Test
    void theWatchdogEmitsStallAndOverflowEvents() throws Exception {
        ConcurrentLinkedQueue<RecordedEvent> seen = new ConcurrentLinkedQueue<>();
        try (RecordingStream rs = stream(seen, "dev.threadpool.OverflowWorker")) {
            startAndSync(rs, seen);
            String name = "jfr-watchdog-";
            ThreadPool pool = ThreadPool.create(PoolConfig.builder()
                    .schedulerVariant(dev.threadpool.SchedulerVariant.LANE_EXTENSION).maxThreads(2)
                    .blockingWorkers(1).maxOverflowWorkers(1).blockingPromotionTimeout(Duration.ofMillis(5))
                    .watchdogInterval(Duration.ofMillis(2)).queueCapacity(64).daemon(true).threadNamePrefix(name)
                    .build());
            CountDownLatch release = new CountDownLatch(1);
            try {
                // Pin the blocking worker, then stall the only default worker: the watchdog must step in.
                CountDownLatch blockingRunning = new CountDownLatch(1);
                pool.submit(() -> { blockingRunning.countDown(); awaitQuietly(release); },
                        dev.threadpool.SubmitOptions.BLOCKING);
                assertTrue(blockingRunning.await(WAIT.toSeconds(), TimeUnit.SECONDS));
                pool.submit(() -> awaitQuietly(release));
                eventually("a TaskStall and an overflow SPAWNED event",
                        () -> !of(seen, "dev.threadpool.TaskStall", name).isEmpty()
                                && of(seen, "dev.threadpool.OverflowWorker", name).stream()
                                        .anyMatch(e -> "SPAWNED".equals(e.getString("action"))));
                RecordedEvent stall = of(seen, "dev.threadpool.TaskStall", name).get(0);
                assertEquals(1, stall.getInt("worker"), "the default-lane worker stalled");
                assertTrue(stall.getDuration("runningNanos").compareTo(Duration.ofMillis(5)) >= 0,
                        "reported only past blockingPromotionTimeout: " + stall);
            } finally {
                release.countDown();
            }
            eventually("the idle overflow worker retires and says so",
                    () -> of(seen, "dev.threadpool.OverflowWorker", name).stream()
                            .anyMatch(e -> "RETIRED".equals(e.getString("action"))));
            pool.close();
            assertEquals(pool.statsSnapshot().overflowSpawned(), pool.statsSnapshot().overflowRetired());
        }
    }

    private static void awaitQuietly(CountDownLatch l) {
        try {
            l.await(WAIT.toSeconds(), TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void shutdownPhasesAreEmittedOnceEachInOrderWithCounts() throws Exception {
        ConcurrentLinkedQueue<RecordedEvent> seen = new ConcurrentLinkedQueue<>();
        try (RecordingStream rs = stream(seen, "dev.threadpool.ShutdownPhase")) {
            startAndSync(rs, seen);
            String name = "jfr-drain-";
            ThreadPool pool = ThreadPool.create(PoolConfig.builder().maxThreads(2).queueCapacity(64).daemon(true)
                    .threadNamePrefix(name).build());
            WaitGroup wg = new WaitGroup();
            for (int i = 0; i < 100; i++) {
                pool.submit(() -> { }, wg);
            }
            assertTrue(wg.await(WAIT));
            // two shutdown callers and a close: still each phase once
            Thread other = Thread.ofPlatform().start(() -> {
                try {
                    pool.shutdown(ShutdownMode.DRAIN, WAIT);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            assertTrue(pool.shutdown(ShutdownMode.DRAIN, WAIT));
            other.join(WAIT.toMillis());
            pool.close();
            eventually("five phases", () -> of(seen, "dev.threadpool.ShutdownPhase", name).size() >= 5);
            List<RecordedEvent> phases = of(seen, "dev.threadpool.ShutdownPhase", name);
            assertEquals(List.of("BEGIN", "ADMISSION_CLOSED", "TASKS_ENDED", "WORKERS_JOINED", "ARENA_CLOSED"),
                    phases.stream().map(e -> e.getString("phase")).toList());
            RecordedEvent ended = phases.get(2);
            assertEquals(100, ended.getLong("accepted"));
            assertEquals(100, ended.getLong("finished"));
            assertEquals(0, ended.getLong("cancelled"));
            assertEquals("DRAIN", ended.getString("mode"));
            assertEquals(-1, phases.get(0).getLong("accepted"), "not known at BEGIN");
            assertEquals(0, phases.get(4).getLong("liveBytes"), "a clean close leaves nothing live");
        }
    }

    @Test
    void cancelPendingPhasesCountTheCancelledTasks() throws Exception {
        ConcurrentLinkedQueue<RecordedEvent> seen = new ConcurrentLinkedQueue<>();
        try (RecordingStream rs = stream(seen, "dev.threadpool.ShutdownPhase")) {
            startAndSync(rs, seen);
            String name = "jfr-cancel-";
            ThreadPool pool = ThreadPool.create(PoolConfig.builder().maxThreads(1).queueCapacity(64).daemon(true)
                    .threadNamePrefix(name).build());
            CountDownLatch inside = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            pool.submit(() -> {
                inside.countDown();
                try {
                    release.await(WAIT.toSeconds(), TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            assertTrue(inside.await(WAIT.toSeconds(), TimeUnit.SECONDS));
            for (int i = 0; i < 10; i++) {
                pool.submit(() -> { });
            }
            Thread releaser = Thread.ofPlatform().start(() -> {
                eventually("swept", () -> pool.statsSnapshot().cancelled() == 10);
                release.countDown();
            });
            assertTrue(pool.shutdown(ShutdownMode.CANCEL_PENDING, WAIT));
            releaser.join(WAIT.toMillis());
            pool.close();
            eventually("five phases", () -> of(seen, "dev.threadpool.ShutdownPhase", name).size() >= 5);
            RecordedEvent ended = of(seen, "dev.threadpool.ShutdownPhase", name).get(2);
            assertEquals("TASKS_ENDED", ended.getString("phase"));
            assertEquals("CANCEL_PENDING", ended.getString("mode"));
            assertEquals(11, ended.getLong("accepted"));
            assertEquals(1, ended.getLong("finished"));
            assertEquals(10, ended.getLong("cancelled"));
        }
    }

    @Test
    void periodicStatsCarryThePoolsCounters() throws Exception {
        ConcurrentLinkedQueue<RecordedEvent> seen = new ConcurrentLinkedQueue<>();
        try (RecordingStream rs = new RecordingStream()) {
            rs.enable("dev.threadpool.PoolStats").withPeriod(Duration.ofMillis(50));
            rs.onEvent("dev.threadpool.PoolStats", seen::add);
            startAndSync(rs, seen);
            String name = "jfr-stats-";
            try (ThreadPool pool = ThreadPool.create(PoolConfig.builder().maxThreads(2).queueCapacity(64)
                    .daemon(true).threadNamePrefix(name).build())) {
                WaitGroup wg = new WaitGroup();
                for (int i = 0; i < 200; i++) {
                    pool.submit(() -> { }, wg);
                }
                assertTrue(wg.await(WAIT));
                eventually("a periodic event with every task", () -> of(seen, "dev.threadpool.PoolStats", name)
                        .stream().anyMatch(e -> e.getLong("completed") == 200));
                RecordedEvent last = of(seen, "dev.threadpool.PoolStats", name).stream()
                        .filter(e -> e.getLong("completed") == 200).findFirst().orElseThrow();
                assertEquals(200, last.getLong("submitted"));
                assertTrue(last.getLong("liveBytes") > 0, "a live pool holds its arena");
                assertTrue(last.getLong("peakLiveBytes") >= last.getLong("liveBytes"));
            }
        }
    }

    @Test
    void sampledTaskLatencyNeedsFullTimestampsAndARecordingThatAsks() throws Exception {
        ConcurrentLinkedQueue<RecordedEvent> seen = new ConcurrentLinkedQueue<>();
        try (RecordingStream rs = stream(seen, "dev.threadpool.TaskLatency")) {
            startAndSync(rs, seen);
            String name = "jfr-latency-";
            try (ThreadPool pool = ThreadPool.create(PoolConfig.builder().maxThreads(1).queueCapacity(64)
                    .daemon(true).timestampMode(TimestampMode.FULL).threadNamePrefix(name).build())) {
                int n = PoolEvents.LATENCY_SAMPLE_EVERY + 1; // the first task and the 1025th are sampled
                WaitGroup wg = new WaitGroup();
                for (int i = 0; i < n; i++) {
                    pool.submit(() -> { }, wg);
                }
                assertTrue(wg.await(WAIT));
                eventually("two samples", () -> of(seen, "dev.threadpool.TaskLatency", name).size() >= 2);
                for (RecordedEvent e : of(seen, "dev.threadpool.TaskLatency", name)) {
                    assertEquals(0, e.getInt("worker"));
                    assertTrue(!e.getDuration("queuedNanos").isNegative() && !e.getDuration("runNanos").isNegative(),
                            e.toString());
                }
                assertEquals(2, of(seen, "dev.threadpool.TaskLatency", name).size(), "1 in 1024 sampled");
            }
        }
    }

    @Test
    void withoutARecordingTheEventMethodsAllocateNothing() {
        Assumptions.assumeTrue(FlightRecorder.getFlightRecorder().getRecordings().stream()
                .noneMatch(r -> r.getState() == jdk.jfr.RecordingState.RUNNING), "another recording is running");
        var mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        Assumptions.assumeTrue(mx.isThreadAllocatedMemorySupported() && mx.isThreadAllocatedMemoryEnabled());
        long tid = Thread.currentThread().threadId();
        int calls = 100_000;
        for (int warm = 0; warm < 2; warm++) {
            long before = mx.getThreadAllocatedBytes(tid);
            for (int i = 0; i < calls; i++) {
                PoolEvents.stall("p", i, i);
                PoolEvents.overflowSpawned("p", i);
                PoolEvents.overflowRetired("p", i);
                PoolEvents.taskLatency("p", i, i, i);
                PoolEvents.shutdownPhase("p", PoolEvents.Phase.BEGIN, "DRAIN", i, i, i, i);
            }
            long allocated = mx.getThreadAllocatedBytes(tid) - before;
            // one event object per call would be millions of bytes; allow a few stray ones (JIT, MXBean)
            assertTrue(allocated < calls, "allocated " + allocated + " bytes over " + calls * 5 + " calls");
        }
        assertTrue(!PoolEvents.taskLatencyEnabled());
        AutoCloseable hook = PoolEvents.registerPeriodicStats("x", () -> {
            throw new AssertionError("JFR calls the hook only while a recording enables PoolStats");
        });
        try {
            hook.close();
            hook.close(); // twice is fine
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
