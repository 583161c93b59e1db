package dev.threadpool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.TestSupport.PoolVariant;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code workerStackSize}, {@code threadPriority} and {@code uncaughtExceptionHandler}: validated with the
 * parameter's name, and applied to every thread the pool starts (read from inside a task, and for LANE_EXTENSION's
 * watchdog and overflow workers from the live threads).
 */
class WorkerThreadSettingsTest {
    private static final Thread.UncaughtExceptionHandler HANDLER = (t, e) -> { };

    static Stream<PoolVariant> variants() {
        return TestSupport.poolVariants();
    }

    private static IllegalArgumentException refused(PoolConfig.Builder b) {
        return assertThrows(IllegalArgumentException.class, b::build);
    }

    @Test
    void invalidValuesAreRefusedWithTheParameterName() {
        for (long bad : new long[] {-1, 1, 64 * 1024 - 1, (1L << 30) + 1, Long.MAX_VALUE}) {
            String m = refused(PoolConfig.builder().workerStackSize(bad)).getMessage();
            assertTrue(m.contains("workerStackSize") && m.contains("[65536, 1073741824]")
                    && m.contains("workerStackSize=" + bad), m);
        }
        for (int bad : new int[] {0, 11, -5}) {
            String m = refused(PoolConfig.builder().threadPriority(bad)).getMessage();
            assertEquals("threadPriority must be in [1, 10]: threadPriority=" + bad, m);
        }
        PoolConfig ok = PoolConfig.builder().workerStackSize(64 * 1024).threadPriority(Thread.MIN_PRIORITY).build();
        assertEquals(64 * 1024, ok.workerStackSize());
        assertEquals(1 << 30, PoolConfig.builder().workerStackSize(1 << 30).build().workerStackSize());
        PoolConfig d = PoolConfig.defaults();
        assertEquals(0, d.workerStackSize(), "0: the JVM's default");
        assertEquals(Thread.NORM_PRIORITY, d.threadPriority());
        assertEquals(null, d.uncaughtExceptionHandler());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    @Timeout(60)
    void workersHaveThePriorityAndTheHandler(PoolVariant v) throws Exception {
        try (ThreadPool pool = ThreadPool.create(v.builder().maxThreads(2).threadPriority(Thread.MIN_PRIORITY + 1)
                .uncaughtExceptionHandler(HANDLER).workerStackSize(512 << 10).build())) {
            AtomicReference<Thread> seen = new AtomicReference<>();
            long h = pool.submitWaitable(() -> seen.set(Thread.currentThread()));
            assertTrue(pool.await(h, TestSupport.WAIT));
            Thread t = seen.get();
            assertEquals(Thread.MIN_PRIORITY + 1, t.getPriority(), t.getName());
            assertSame(HANDLER, t.getUncaughtExceptionHandler(), t.getName());
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    @Timeout(60)
    void byDefaultWorkersKeepTheJvmDefaults(PoolVariant v) throws Exception {
        try (ThreadPool pool = ThreadPool.create(v.builder().maxThreads(2).build())) {
            AtomicReference<Thread> seen = new AtomicReference<>();
            long h = pool.submitWaitable(() -> seen.set(Thread.currentThread()));
            assertTrue(pool.await(h, TestSupport.WAIT));
            Thread t = seen.get();
            assertEquals(Thread.NORM_PRIORITY, t.getPriority());
            // no handler of its own: getUncaughtExceptionHandler answers the thread group
            assertSame(t.getThreadGroup(), t.getUncaughtExceptionHandler());
        }
    }

    /**
     * LANE_EXTENSION: the watchdog has them too (overflow workers are built by the same WorkerThread constructor
     * from the same PoolConfig as the base workers).
     */
    @Test
    @Timeout(60)
    void theWatchdogHasThemToo() throws Exception {
        String prefix = "settings-lane-";
        try (ThreadPool pool = ThreadPool.create(PoolConfig.builder().schedulerVariant(SchedulerVariant.LANE_EXTENSION)
                .maxThreads(2).blockingWorkers(1).threadNamePrefix(prefix)
                .threadPriority(Thread.MIN_PRIORITY + 2).uncaughtExceptionHandler(HANDLER)
                .workerStackSize(512 << 10).build())) {
            List<Thread> watchdog = threads(prefix + "watchdog");
            assertEquals(1, watchdog.size(), "the watchdog runs");
            List<Thread> all = threads(prefix);
            assertEquals(3, all.size(), all::toString); // two workers and the watchdog
            for (Thread t : all) {
                assertEquals(Thread.MIN_PRIORITY + 2, t.getPriority(), t.getName());
                assertSame(HANDLER, t.getUncaughtExceptionHandler(), t.getName());
            }
        }
    }

    private static List<Thread> threads(String namePrefix) {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith(namePrefix))
                .toList();
    }
}
