package dev.threadpool.internal.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.PoolConfig;
import dev.threadpool.PoolStats;
import dev.threadpool.WorkerScratch;
import dev.threadpool.internal.memory.PoolMemory;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * White-box: a purger hammering {@code purge()} while the owner opens marks, allocates and writes. The handshake
 * must never free the buffer under an open mark (the owner's write would then fail on a closed segment), and
 * the accounting must come out exact.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class WorkerScratchRaceTest {

    @Test
    void purgeNeverFreesABufferUnderAnOpenMark() throws Exception {
        final int rounds = 20_000;
        PoolCore core = new PoolCore(PoolConfig.builder().maxThreads(1).daemon(true).workerScratchCapBytes(4096)
                .build());
        try {
            WorkerScratchBuffer buf = core.scratchBufferForTest(0);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            CountDownLatch done = new CountDownLatch(1);
            AtomicLong purges = new AtomicLong();
            AtomicLong refused = new AtomicLong();
            core.submit(() -> {
                try {
                    WorkerScratch s = core.scratch();
                    for (int i = 0; i < rounds; i++) {
                        long m = s.begin();
                        MemorySegment seg = s.allocate(256, 8);
                        seg.set(ValueLayout.JAVA_LONG, 0, i);
                        if (seg.get(ValueLayout.JAVA_LONG, 0) != i) {
                            throw new AssertionError("scratch lost a write in round " + i);
                        }
                        s.finish(m);
                    }
                } catch (Throwable t) {
                    failure.set(t);
                } finally {
                    done.countDown();
                }
            }, 0, null, WaitMode.UNBOUNDED, 0L);
            while (done.getCount() > 0) {
                if (buf.purge()) {
                    purges.incrementAndGet();
                } else {
                    refused.incrementAndGet();
                }
            }
            assertTrue(done.await(30, TimeUnit.SECONDS));
            assertEquals(null, failure.get(), "the owner never saw its buffer freed under a mark");
            assertTrue(buf.purge(), "no mark open any more");
            dev.threadpool.TestSupport.eventually("quiescent", () -> core.statsSnapshot().activeTasks() == 0);
            PoolStats s = core.statsSnapshot();
            assertEquals(0, s.scratchBytes(), "purged at the end: " + s);
            assertEquals(s.totalAllocBytes() - s.totalFreeBytes(), s.liveBytes());
            long scratchAllocs = core.memoryMap().stream().filter(b -> b.purpose().startsWith("worker scratch")).count();
            assertEquals(0, scratchAllocs, "no scratch block left");
            System.out.println("purges " + purges + ", refused (mark open) " + refused + ", scratch block "
                    + PoolMemory.countedSize(4096) + " bytes each time");
        } finally {
            core.close();
        }
        assertEquals(0, core.statsSnapshot().liveBytes());
    }
}
