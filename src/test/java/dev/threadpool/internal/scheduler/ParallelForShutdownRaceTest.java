package dev.threadpool.internal.scheduler;

import static dev.threadpool.TestSupport.WAIT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.PoolConfig;
import dev.threadpool.PoolStats;
import dev.threadpool.ShutdownMode;
import dev.threadpool.TestSupport;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * White-box: an outside {@code parallelFor} whose helper submits meet a shutdown that began after
 * {@code ThreadPool.parallelFor}'s own check (admission closed, or the pool closed outright). The refusal only
 * stops the helpers: the caller runs every index itself and returns normally (found in review: the refusal, a
 * {@code PoolShutdownException}, used to escape before the caller had run anything).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ParallelForShutdownRaceTest {

    static Stream<TestSupport.PoolVariant> variants() {
        return TestSupport.poolVariants();
    }

    private static PoolCore core(TestSupport.PoolVariant v) {
        return new PoolCore(v.builder().maxThreads(2).queueCapacity(64).daemon(true).build());
    }

    private static void runAllOnTheCaller(PoolCore core) throws InterruptedException {
        final int n = 1000;
        AtomicIntegerArray seen = new AtomicIntegerArray(n);
        AtomicInteger elsewhere = new AtomicInteger();
        Thread caller = Thread.currentThread();
        long submittedBefore = core.statsSnapshot().submitted();
        ParallelFor.run(core, 0, n, 7, i -> {
            seen.incrementAndGet(i);
            if (Thread.currentThread() != caller) {
                elsewhere.incrementAndGet();
            }
        });
        for (int i = 0; i < n; i++) {
            assertEquals(1, seen.get(i), "index " + i + " ran once");
        }
        assertEquals(0, elsewhere.get(), "no helper was accepted, so the caller ran every index");
        assertEquals(submittedBefore, core.statsSnapshot().submitted(), "no helper task was accepted");
    }

    @ParameterizedTest
    @MethodSource("variants")
    void helpersRefusedByAShutdownLeaveTheWholeRangeToTheCaller(TestSupport.PoolVariant v) throws Exception {
        PoolCore core = core(v);
        core.closeAdmission(ShutdownMode.DRAIN); // shutdown began after the public method's isShutdown check
        runAllOnTheCaller(core);
        assertTrue(core.shutdown(ShutdownMode.DRAIN, WAIT.toNanos()), "shutdown completes");
        core.close();
        PoolStats s = core.statsSnapshot();
        assertEquals(0, s.liveBytes(), "liveBytes after close: " + s);
    }

    @ParameterizedTest
    @MethodSource("variants")
    void helpersRefusedByAClosedPoolLeaveTheWholeRangeToTheCaller(TestSupport.PoolVariant v) throws Exception {
        PoolCore core = core(v);
        assertTrue(core.shutdown(ShutdownMode.DRAIN, WAIT.toNanos()), "shutdown completes");
        core.close();
        runAllOnTheCaller(core);
        assertEquals(0, core.statsSnapshot().liveBytes(), "nothing allocated by the refused helpers");
    }
}
