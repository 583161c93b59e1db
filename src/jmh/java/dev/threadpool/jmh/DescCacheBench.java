package dev.threadpool.jmh;

import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.scheduler.DescCache;
import dev.threadpool.internal.scheduler.DescriptorTable;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;

/**
 * A descriptor acquire + release through a {@link DescCache} against the same through the global tagged
 * freelist ({@link DescriptorTable#acquire()} / {@code unreserve}).
 *
 * <ul>
 *   <li>{@code *PopPush}: acquire one, release it (the steady state of a worker running tasks one by one).</li>
 *   <li>{@code *Burst64}: acquire 64, then release 64 (crosses two refills and two spills per burst); one
 *       op = one acquire or one release.</li>
 *   <li>{@code *Contended}: the burst with two threads on one table, each with its own cache.</li>
 * </ul>
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class DescCacheBench {
    static final int BURST = 64;

    @State(Scope.Benchmark)
    public static class Table {
        PoolMemory mem;
        DescriptorTable table;

        @Setup(Level.Trial)
        public void setup() {
            mem = PoolMemory.create();
            table = new DescriptorTable(mem, 4096);
        }

        @TearDown(Level.Trial)
        public void close() {
            mem.close();
        }
    }

    @State(Scope.Thread)
    public static class Owner {
        DescriptorTable table;
        DescCache cache;
        final int[] held = new int[BURST];

        @Setup(Level.Trial)
        public void setup(Table t) {
            table = t.table;
            cache = new DescCache(t.mem, "bench cache", table);
        }
    }

    @Benchmark
    public int cachePopPush(Owner o) {
        int i = o.cache.pop();
        o.table.freeReserved(i);
        o.cache.push(i);
        return i;
    }

    @Benchmark
    public int freelistAcquireRelease(Owner o) {
        int i = o.table.acquire();
        o.table.unreserve(i);
        return i;
    }

    @Benchmark
    @OperationsPerInvocation(2 * BURST)
    public int cacheBurst64(Owner o) {
        return cacheBurst(o);
    }

    @Benchmark
    @OperationsPerInvocation(2 * BURST)
    public int freelistBurst64(Owner o) {
        return freelistBurst(o);
    }

    @Benchmark
    @Threads(2)
    @OperationsPerInvocation(2 * BURST)
    public int cacheBurst64Contended(Owner o) {
        return cacheBurst(o);
    }

    @Benchmark
    @Threads(2)
    @OperationsPerInvocation(2 * BURST)
    public int freelistBurst64Contended(Owner o) {
        return freelistBurst(o);
    }

    private static int cacheBurst(Owner o) {
        int[] h = o.held;
        int sum = 0;
        for (int k = 0; k < BURST; k++) {
            h[k] = o.cache.pop();
        }
        for (int k = BURST - 1; k >= 0; k--) {
            int i = h[k];
            sum += i;
            o.table.freeReserved(i);
            o.cache.push(i);
        }
        return sum;
    }

    private static int freelistBurst(Owner o) {
        int[] h = o.held;
        int sum = 0;
        for (int k = 0; k < BURST; k++) {
            h[k] = o.table.acquire();
        }
        for (int k = BURST - 1; k >= 0; k--) {
            sum += h[k];
            o.table.unreserve(h[k]);
        }
        return sum;
    }
}
