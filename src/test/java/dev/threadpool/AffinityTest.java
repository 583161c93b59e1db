package dev.threadpool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.internal.os.Affinity;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** workerCpus: validation, and on Linux a pinned worker reads its own affinity back. */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class AffinityTest {

    @Test
    void configValidatesIdsAndDefaultsToOff() {
        assertEquals(0, PoolConfig.defaults().workerCpus().length, "off by default");
        IllegalArgumentException neg = assertThrows(IllegalArgumentException.class,
                () -> PoolConfig.builder().workerCpus(0, -1).build());
        assertTrue(neg.getMessage().contains("workerCpus[1]") && neg.getMessage().contains("[0, 1023]"),
                neg.getMessage());
        assertThrows(IllegalArgumentException.class, () -> PoolConfig.builder().workerCpus(1024).build());
        assertThrows(NullPointerException.class, () -> PoolConfig.builder().workerCpus((int[]) null));
        int[] given = {0};
        PoolConfig c = PoolConfig.builder().workerCpus(given).build();
        given[0] = 5;
        assertEquals(0, c.workerCpus()[0], "the config copies the array");
    }

    @Test
    void unsupportedPlatformsRefuseClearly() {
        Assumptions.assumeFalse(Affinity.isSupported(), "pinning is supported here");
        UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class,
                () -> ThreadPool.create(PoolConfig.builder().workerCpus(0).build()));
        assertTrue(e.getMessage().contains("Linux"), e.getMessage());
    }

    @Test
    void aCpuTheProcessMayNotUseIsRefusedAtCreate() {
        Assumptions.assumeTrue(Affinity.isSupported(), "Linux only");
        List<Integer> allowed = Affinity.currentThreadCpus();
        int notAllowed = -1;
        for (int c = 0; c < Affinity.CPU_SET_BITS; c++) {
            if (!allowed.contains(c)) {
                notAllowed = c;
                break;
            }
        }
        int bad = notAllowed;
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ThreadPool.create(PoolConfig.builder().maxThreads(1).workerCpus(allowed.get(0), bad).build()));
        assertTrue(e.getMessage().contains("workerCpus[1]=" + bad) && e.getMessage().contains("allowed CPUs"),
                e.getMessage());
    }

    @Test
    void eachWorkerRunsOnExactlyItsCpu() throws Exception {
        Assumptions.assumeTrue(Affinity.isSupported(), "Linux only");
        List<Integer> allowed = Affinity.currentThreadCpus();
        int workers = Math.min(2, allowed.size());
        int[] cpus = new int[workers];
        for (int i = 0; i < workers; i++) {
            cpus[i] = allowed.get(allowed.size() - 1 - i); // the last allowed CPUs, in reverse: not the default
        }
        String[] seenProc = new String[workers];
        List<List<Integer>> seenSyscall = new ArrayList<>();
        for (int i = 0; i < workers; i++) {
            seenSyscall.add(null);
        }
        try (ThreadPool pool = ThreadPool.create(PoolConfig.builder().maxThreads(workers).queueCapacity(16)
                .daemon(true).workerCpus(cpus).build())) {
            CyclicBarrier both = new CyclicBarrier(workers); // one task per worker, at the same time
            CountDownLatch done = new CountDownLatch(workers);
            for (int t = 0; t < workers; t++) {
                pool.submit(() -> {
                    try {
                        both.await(30, TimeUnit.SECONDS);
                        int w = pool.currentWorkerIndex();
                        seenSyscall.set(w, Affinity.currentThreadCpus());
                        seenProc[w] = cpusAllowedList();
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    } finally {
                        done.countDown();
                    }
                });
            }
            assertTrue(done.await(30, TimeUnit.SECONDS));
            assertTrue(pool.recentErrors().isEmpty(), "no pinning failure: " + pool.recentErrors());
        }
        for (int w = 0; w < workers; w++) {
            assertEquals(List.of(cpus[w]), seenSyscall.get(w), "worker " + w + " via sched_getaffinity");
            assertEquals(String.valueOf(cpus[w]), seenProc[w], "worker " + w + " via /proc Cpus_allowed_list");
        }
    }

    private static String cpusAllowedList() throws Exception {
        for (String line : Files.readAllLines(Path.of("/proc/thread-self/status"))) {
            if (line.startsWith("Cpus_allowed_list:")) {
                return line.substring(line.indexOf(':') + 1).trim();
            }
        }
        throw new AssertionError("no Cpus_allowed_list in /proc/thread-self/status");
    }
}
