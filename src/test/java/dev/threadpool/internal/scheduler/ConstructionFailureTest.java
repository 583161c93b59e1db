package dev.threadpool.internal.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.PoolConfig;
import dev.threadpool.QueueKind;
import dev.threadpool.SchedulerVariant;
import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.scheduler.ConstructionHook.Stage;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A failure at any stage of {@link PoolCore}'s construction leaves nothing behind: the constructor rethrows the
 * very failure, every thread it had started (workers, watchdog) has ended by then, and the arena is closed with
 * every byte given back ({@link PoolMemory} totals: {@code liveBytes == 0}, {@code alloc == free}). Failures are
 * injected through {@link ConstructionHook} (each named stage, every worker start) and through
 * {@link PoolMemory#failAllocationsForTest} (each single allocation the constructor makes, in turn). Runs on
 * every variant.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ConstructionFailureTest {
    private static final int WORKERS = 3;
    private static final AtomicInteger POOLS = new AtomicInteger();

    record Variant(SchedulerVariant scheduler, QueueKind queueKind) {}

    static Stream<Variant> variants() {
        return Stream.of(new Variant(SchedulerVariant.GLOBAL_QUEUE, QueueKind.RING),
                new Variant(SchedulerVariant.WORK_STEALING, QueueKind.RING),
                new Variant(SchedulerVariant.WORK_STEALING, QueueKind.CHASE_LEV),
                new Variant(SchedulerVariant.LANE_EXTENSION, QueueKind.RING));
    }

    /** A config whose threads all carry a prefix of their own, so a leftover thread is found by name. */
    private static PoolConfig config(Variant v, String prefix) {
        PoolConfig.Builder b = PoolConfig.builder().schedulerVariant(v.scheduler()).queueKind(v.queueKind())
                .maxThreads(WORKERS).queueCapacity(256).daemon(true).threadNamePrefix(prefix);
        if (v.scheduler() == SchedulerVariant.LANE_EXTENSION) {
            b.blockingWorkers(1).maxOverflowWorkers(2).watchdogInterval(Duration.ofMillis(1));
        }
        return b.build();
    }

    private static final class Injected extends RuntimeException {
        Injected(String where) {
            super("injected construction failure at " + where);
        }
    }

    /** Threads still alive whose name starts with {@code prefix}. */
    private static List<Thread> alive(String prefix) {
        List<Thread> out = new ArrayList<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith(prefix) && t.isAlive()) {
                out.add(t);
            }
        }
        return out;
    }

    /**
     * Builds a pool with {@code hook}, expects the constructor to throw {@code expected} (the same instance)
     * and checks that nothing was left: no live thread of the pool, the arena closed, every byte freed.
     */
    private static void assertNothingLeft(String prefix, Throwable thrown, Throwable expected, PoolMemory memory,
            String where) {
        assertSame(expected, thrown, where + ": the constructor rethrows the failure itself");
        // Immediately, not eventually: the constructor joins what it started before it rethrows.
        assertEquals(List.of(), alive(prefix), where + ": threads of the failed pool still alive");
        assertNotNull(memory, where + ": the hook saw the pool's memory");
        assertTrue(memory.isClosed(), where + ": the arena is closed");
        assertEquals(0, memory.liveBytes(), where + ": liveBytes after a failed construction");
        assertEquals(memory.totalAllocBytes(), memory.totalFreeBytes(), where + ": alloc == free");
    }

    /** One case per stage (and per worker start); each throws at that stage only. Every case runs; all are reported. */
    @ParameterizedTest
    @MethodSource("variants")
    void aFailureAtAnyStageStopsEveryThreadAndClosesTheArena(Variant v) {
        List<String> broken = new ArrayList<>();
        List<Stage> stages = new ArrayList<>(List.of(Stage.values()));
        if (v.scheduler() != SchedulerVariant.LANE_EXTENSION) {
            stages.remove(Stage.WATCHDOG_START); // no watchdog outside LANE_EXTENSION
        }
        for (Stage stage : stages) {
            int[] indices = stage == Stage.WORKER_START ? new int[] {0, 1, WORKERS - 1} : new int[] {-1};
            for (int index : indices) {
                String prefix = "cf-" + POOLS.incrementAndGet() + "-";
                String where = v + " " + stage + (index >= 0 ? " " + index : "");
                // an Error for the heap arrays (what a real OutOfMemoryError there would be), else a runtime failure
                Throwable failure = stage == Stage.HEAP_STATE ? new OutOfMemoryError("injected: " + where)
                        : new Injected(where);
                AtomicReference<PoolMemory> mem = new AtomicReference<>();
                AtomicInteger reached = new AtomicInteger();
                ConstructionHook hook = (s, i, m) -> {
                    mem.set(m);
                    if (s == stage && i == index) {
                        reached.incrementAndGet();
                        if (failure instanceof Error e) {
                            throw e;
                        }
                        throw (RuntimeException) failure;
                    }
                };
                try {
                    Throwable thrown = assertThrows(Throwable.class, () -> new PoolCore(config(v, prefix), hook), where);
                    assertEquals(1, reached.get(), where + ": the stage was reached once");
                    assertNothingLeft(prefix, thrown, failure, mem.get(), where);
                } catch (AssertionError e) {
                    broken.add(e.getMessage());
                }
            }
        }
        assertEquals(List.of(), broken, v + ": stages whose failure left something behind");
    }

    /**
     * The MXBean is registered after the JFR hook and before the watchdog starts: a failure after it
     * (LANE_EXTENSION's watchdog start) unregisters it, and a duplicate name fails construction like any other
     * stage, leaving nothing behind and the first registration in place.
     */
    @org.junit.jupiter.api.Test
    void theMXBeanIsUnregisteredWhenConstructionFailsAfterIt() throws Exception {
        javax.management.MBeanServer server = java.lang.management.ManagementFactory.getPlatformMBeanServer();
        String jmx = "dev.threadpool:type=ThreadPool,name=construction-failure";
        javax.management.ObjectName name = new javax.management.ObjectName(jmx);
        Variant v = new Variant(SchedulerVariant.LANE_EXTENSION, QueueKind.RING);

        String prefix = "cf-" + POOLS.incrementAndGet() + "-";
        PoolConfig config = PoolConfig.builder().schedulerVariant(v.scheduler()).maxThreads(WORKERS).queueCapacity(256)
                .daemon(true).threadNamePrefix(prefix).blockingWorkers(1).jmxName(jmx).build();
        Injected failure = new Injected("WATCHDOG_START with an MXBean");
        AtomicReference<PoolMemory> mem = new AtomicReference<>();
        AtomicInteger registeredAtWatchdog = new AtomicInteger();
        ConstructionHook hook = (s, i, m) -> {
            mem.set(m);
            if (s == Stage.WATCHDOG_START) {
                registeredAtWatchdog.set(server.isRegistered(name) ? 1 : 0);
                throw failure;
            }
        };
        Throwable thrown = assertThrows(Throwable.class, () -> new PoolCore(config, hook));
        assertEquals(1, registeredAtWatchdog.get(), "registered before the watchdog starts");
        assertNothingLeft(prefix, thrown, failure, mem.get(), "WATCHDOG_START with an MXBean");
        assertTrue(!server.isRegistered(name), "the failed construction unregistered its MXBean");

        PoolCore first = new PoolCore(config);
        try {
            String prefix2 = "cf-" + POOLS.incrementAndGet() + "-";
            AtomicReference<PoolMemory> mem2 = new AtomicReference<>();
            IllegalStateException dup = assertThrows(IllegalStateException.class, () -> new PoolCore(
                    PoolConfig.builder().maxThreads(WORKERS).daemon(true).threadNamePrefix(prefix2).jmxName(jmx).build(),
                    (s, i, m) -> mem2.set(m)));
            assertTrue(dup.getMessage().contains("already registered"), dup.getMessage());
            assertEquals(List.of(), alive(prefix2), "threads of the refused pool");
            assertTrue(mem2.get().isClosed() && mem2.get().liveBytes() == 0, "the refused pool's arena");
            assertTrue(server.isRegistered(name), "the first pool keeps its name");
        } finally {
            first.close();
        }
        assertTrue(!server.isRegistered(name), "close unregistered it");
    }

    /**
     * One case per allocation the constructor makes: allocation k fails (as a failing malloc: OutOfMemoryError)
     * for every k, so every structure's constructor fails once, at its first and at its later allocations.
     */
    @ParameterizedTest
    @MethodSource("variants")
    void aFailedAllocationAnywhereInConstructionLeavesNothing(Variant v) throws Exception {
        int allocations = countConstructionAllocations(v);
        assertTrue(allocations > 5, v + ": the constructor allocates its structures: " + allocations);
        for (int k = 0; k < allocations; k++) {
            String prefix = "cf-" + POOLS.incrementAndGet() + "-";
            final int failAt = k;
            String where = v + " allocation " + k + " of " + allocations;
            AtomicReference<PoolMemory> mem = new AtomicReference<>();
            AtomicInteger seen = new AtomicInteger();
            AtomicReference<String> failedPurpose = new AtomicReference<>();
            ConstructionHook hook = (s, i, m) -> {
                if (s == Stage.ARENA_CREATED) {
                    mem.set(m);
                    m.failAllocationsForTest(purpose -> {
                        if (seen.getAndIncrement() == failAt) {
                            failedPurpose.set(purpose);
                            return true;
                        }
                        return false;
                    });
                }
            };
            Throwable thrown = assertThrows(Throwable.class, () -> new PoolCore(config(v, prefix), hook), where);
            assertTrue(thrown instanceof OutOfMemoryError && thrown.getMessage().contains("injected"),
                    where + " (" + failedPurpose.get() + "): the allocation failure itself is rethrown: " + thrown);
            assertNothingLeft(prefix, thrown, thrown, mem.get(), where + " (" + failedPurpose.get() + ")");
        }
    }

    /** How many allocations a successful construction of {@code v} makes (then the pool is closed again). */
    private static int countConstructionAllocations(Variant v) throws InterruptedException {
        AtomicInteger count = new AtomicInteger();
        ConstructionHook hook = (s, i, m) -> {
            if (s == Stage.ARENA_CREATED) {
                m.failAllocationsForTest(purpose -> {
                    count.incrementAndGet();
                    return false;
                });
            } else if (s == Stage.WORKER_START && i == 0) {
                m.failAllocationsForTest(null); // from here on the workers may allocate (scratch, growth)
            }
        };
        String prefix = "cf-" + POOLS.incrementAndGet() + "-";
        PoolCore core = new PoolCore(config(v, prefix), hook);
        core.close();
        assertEquals(List.of(), alive(prefix), v + ": a closed pool leaves no thread");
        return count.get();
    }
}
