package dev.threadpool.internal.stats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.LatencySummary;
import dev.threadpool.internal.memory.PoolMemory;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class LogHistogramTest {

    @Test
    void bucketsTileTheWholeRange() {
        assertEquals(0, LogHistogram.lowestOf(0));
        for (int k = 0; k < LogHistogram.BUCKETS; k++) {
            long lo = LogHistogram.lowestOf(k);
            long hi = LogHistogram.highestOf(k);
            assertTrue(lo <= hi, "bucket " + k);
            assertEquals(k, LogHistogram.bucketOf(lo), "lowest of " + k);
            assertEquals(k, LogHistogram.bucketOf(hi), "highest of " + k);
            if (k + 1 < LogHistogram.BUCKETS) {
                assertEquals(hi + 1, LogHistogram.lowestOf(k + 1), "buckets " + k + " and " + (k + 1) + " touch");
            }
            if (lo >= 8) {
                assertTrue(hi - lo + 1 <= lo / 8, "width of bucket " + k + " at most 1/8 of its lower bound");
            }
        }
        assertEquals(LogHistogram.BUCKETS - 1, LogHistogram.bucketOf(Long.MAX_VALUE));
        assertEquals(0, LogHistogram.bucketOf(-5), "a negative value counts as 0");
        assertEquals(7, LogHistogram.bucketOf(7));
        assertEquals(8, LogHistogram.bucketOf(8));
        assertEquals(16, LogHistogram.bucketOf(16));
        assertTrue(LogHistogram.BLOCK_LENGTH % 128 == 0, "blocks are PAD aligned");
    }

    @Test
    void percentilesAgreeWithASortedArray() {
        SplittableRandom rnd = new SplittableRandom(42);
        try (PoolMemory mem = PoolMemory.create()) {
            LogHistogram h = new LogHistogram(mem, "test", 3);
            int n = 20_000;
            long[] values = new long[n];
            long sum = 0;
            for (int i = 0; i < n; i++) {
                // log-uniform over 1 ns .. ~17 s, plus some exact small values
                long v = i % 10 == 0 ? rnd.nextLong(8) : (long) Math.exp(rnd.nextDouble() * Math.log(1.7e10));
                values[i] = v;
                sum += v;
                h.record(i % 3, v);
            }
            long[] sorted = values.clone();
            Arrays.sort(sorted);
            LogHistogram.Snapshot s = h.merge();
            assertEquals(n, s.count());
            assertEquals(sorted[n - 1], s.max());
            assertEquals(sum, s.sum());
            for (double q : new double[] {0, 0.001, 0.1, 0.5, 0.9, 0.99, 0.999, 1}) {
                long ref = sorted[(int) Math.max(0, Math.ceil(q * n) - 1)];
                long got = s.valueAt(q);
                assertEquals(LogHistogram.bucketOf(ref), LogHistogram.bucketOf(got), "q=" + q + " ref=" + ref + " got=" + got);
                assertTrue(got >= ref, "never below the true value: q=" + q);
                assertTrue(got <= ref + Math.max(1, ref / 8), "at most 12.5% above: q=" + q + " ref=" + ref + " got=" + got);
            }
            LatencySummary sum2 = s.summary();
            assertEquals(s.valueAt(0.5), sum2.p50());
            assertEquals(s.valueAt(0.999), sum2.p999());
            assertEquals(sum / n, sum2.mean());
            // one writer alone
            LogHistogram.Snapshot one = h.merge(1, 2);
            assertEquals(n / 3 + (n % 3 > 1 ? 1 : 0), one.count());
            assertThrows(IllegalArgumentException.class, () -> s.valueAt(1.5));
        }
    }

    @Test
    void emptyHistogramReportsZeros() {
        try (PoolMemory mem = PoolMemory.create()) {
            LogHistogram h = new LogHistogram(mem, "test", 1);
            assertEquals(LatencySummary.EMPTY, h.merge().summary());
            assertEquals(LogHistogram.BLOCK_LENGTH + 127, mem.liveBytes(), "one counted block");
        }
    }

    @Test
    void concurrentWritersAndAReaderNeverSeeACountGoBack() throws Exception {
        final int writers = 4;
        final int perWriter = 200_000;
        try (PoolMemory mem = PoolMemory.create()) {
            LogHistogram h = new LogHistogram(mem, "test", writers);
            CountDownLatch start = new CountDownLatch(1);
            CountDownLatch done = new CountDownLatch(writers);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            for (int w = 0; w < writers; w++) {
                final int id = w;
                Thread t = new Thread(() -> {
                    try {
                        start.await();
                        for (int i = 1; i <= perWriter; i++) {
                            h.record(id, i * (id + 1L));
                        }
                    } catch (Throwable e) {
                        failure.set(e);
                    } finally {
                        done.countDown();
                    }
                });
                t.start();
            }
            start.countDown();
            long lastCount = 0;
            while (done.getCount() > 0) {
                LogHistogram.Snapshot s = h.merge();
                assertTrue(s.count() >= lastCount, "count is monotonic: " + s.count() + " after " + lastCount);
                assertTrue(s.valueAt(0.5) <= s.max(), "p50 <= max");
                lastCount = s.count();
            }
            assertTrue(done.await(30, TimeUnit.SECONDS));
            assertEquals(null, failure.get());
            LogHistogram.Snapshot s = h.merge();
            assertEquals((long) writers * perWriter, s.count());
            assertEquals(perWriter * (long) writers, s.max());
            long expectedSum = 0;
            for (int w = 0; w < writers; w++) {
                expectedSum += (w + 1L) * perWriter * (perWriter + 1L) / 2;
            }
            assertEquals(expectedSum, s.sum());
        }
    }
}
