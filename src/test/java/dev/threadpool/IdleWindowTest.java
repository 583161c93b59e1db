package dev.threadpool;

import static dev.threadpool.TestSupport.awaitQuiescent;
import static dev.threadpool.TestSupport.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import dev.threadpool.TestSupport.PoolVariant;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * PARK's idle window (Idle, "The idle window"): a worker that has just run dry stays searching for up to
 * {@code idleWindow} before it announces and parks. Two properties, on every variant:
 * <ul>
 *   <li>the window ends: after work stops, every worker ends parked (a thread state and the pool's parked count,
 *       polled with a bound, never a timing), with the longest window allowed, so an idle pool costs no CPU;</li>
 *   <li>no submit is lost at its end: submits are paced so they land before, at and after the moment the window
 *       of the worker that ran the previous task runs out (the race between a submit and the end of the window:
 *       the submitter coalesces on the searcher, which must then see the entry on its re-check), and each task
 *       must start within the bound.</li>
 * </ul>
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class IdleWindowTest {
    private static final int ROUNDS = 4_000;
    /** The window of the race test: short, so the pacing below sweeps across its end many times. */
    private static final long WINDOW_NANOS = 20_000;

    static java.util.stream.Stream<PoolVariant> variants() {
        return TestSupport.poolVariants();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    void afterTheWindowEveryWorkerIsParked(PoolVariant v) throws InterruptedException {
        String prefix = "idle-window-" + v.variant().name().toLowerCase() + "-";
        PoolConfig config = v.builder().maxThreads(3).queueCapacity(64).daemon(true).threadNamePrefix(prefix)
                .idleWindow(Duration.ofMillis(1)).build(); // the longest window allowed
        try (ThreadPool pool = ThreadPool.create(config)) {
            pingPong(pool, 2_000, 0); // every worker that ran something has its window armed
            awaitQuiescent(pool);
            eventually("every worker parked after its window", () -> pool.statsSnapshot().parkedWorkers()
                    == config.maxThreads() && workersOf(prefix).stream().allMatch(IdleWindowTest::parked),
                    () -> pool.statsSnapshot().parkedWorkers() + " parked; " + states(prefix));
            assertEquals(config.maxThreads(), workersOf(prefix).size(), "one thread per worker: " + states(prefix));
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    void aSubmitRacingTheEndOfTheWindowIsNeverLost(PoolVariant v) throws InterruptedException {
        PoolConfig config = v.builder().maxThreads(3).queueCapacity(64).daemon(true)
                .idleWindow(Duration.ofNanos(WINDOW_NANOS)).build();
        try (ThreadPool pool = ThreadPool.create(config)) {
            // gaps from 0 to 2x the window in steps of 1/40 of it: before, across and after its end
            pingPong(pool, ROUNDS, WINDOW_NANOS / 20);
            PoolStats s = awaitQuiescent(pool);
            assertEquals(ROUNDS, s.completed(), "every task ran once: " + s);
        }
    }

    /**
     * {@code rounds} tasks, one in flight: submit, wait (bounded) until it has started, then wait a gap of
     * {@code (round % 41) * step} nanoseconds (a busy pacing loop, not synchronisation) before the next submit.
     */
    private static void pingPong(ThreadPool pool, int rounds, long step) {
        AtomicLong started = new AtomicLong();
        for (int round = 1; round <= rounds; round++) {
            pool.submit(started::incrementAndGet);
            long deadline = System.nanoTime() + TestSupport.WAIT.toNanos();
            while (started.get() != round) {
                if (System.nanoTime() - deadline > 0) {
                    fail("task " + round + " did not start within " + TestSupport.WAIT + " (a lost wake): "
                            + pool.statsSnapshot());
                }
                Thread.onSpinWait();
            }
            long gapEnd = System.nanoTime() + (round % 41) * step;
            while (System.nanoTime() - gapEnd < 0) {
                Thread.onSpinWait();
            }
        }
    }

    private static boolean parked(Thread t) {
        Thread.State s = t.getState();
        return s == Thread.State.WAITING || s == Thread.State.TIMED_WAITING;
    }

    private static List<Thread> workersOf(String prefix) {
        List<Thread> out = new ArrayList<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            String name = t.getName(); // the workers: prefix + index (not the LANE_EXTENSION watchdog)
            if (name.startsWith(prefix) && name.substring(prefix.length()).matches("\\d+") && t.isAlive()) {
                out.add(t);
            }
        }
        return out;
    }

    private static String states(String prefix) {
        StringBuilder b = new StringBuilder();
        for (Thread t : workersOf(prefix)) {
            b.append(t.getName()).append('=').append(t.getState()).append(' ');
        }
        return b.toString();
    }
}
