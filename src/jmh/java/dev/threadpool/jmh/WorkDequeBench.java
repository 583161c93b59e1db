package dev.threadpool.jmh;

import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.QueueEntry;
import dev.threadpool.internal.queue.WorkDeque;
import java.util.ArrayDeque;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.TimeUnit;
import org.jctools.queues.SpmcArrayQueue;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Group;
import org.openjdk.jmh.annotations.GroupThreads;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * {@link WorkDeque} beside JDK and JCTools baselines.
 *
 * <ul>
 *   <li>{@code owner*}: one thread, push then take (a LIFO round trip; {@code SpmcArrayQueue} polls FIFO).
 *       {@code prefill} entries sit in the structure first: with 0 every WorkDeque take is the last entry and
 *       goes through the CAS on top; with 32 it is the CAS-free fast path.</li>
 *   <li>{@code steal*} groups: the owner does push + take while thieves steal from the other end, so every
 *       entry is contended (the worst case: a near-empty deque). The {@code stolen}, {@code empty} and
 *       {@code aborted} counters say what the thieves' calls returned. {@code -tg 1,N} changes the thieves.</li>
 * </ul>
 * The boxed baselines enqueue one preallocated {@link Long}, so their allocation is the structure's own.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED"})
public class WorkDequeBench {
    static final long VALUE = 12_345L;
    static final Long BOXED = VALUE;

    // ---- owner only --------------------------------------------------------------------------------------

    @State(Scope.Thread)
    public static class Owner {
        @Param({"0", "32"})
        int prefill;

        PoolMemory memory;
        WorkDeque deque;
        ArrayDeque<Long> arrayDeque;
        ConcurrentLinkedDeque<Long> linkedDeque;
        SpmcArrayQueue<Long> spmc;

        @Setup(Level.Trial)
        public void setUp() {
            memory = PoolMemory.create();
            deque = new WorkDeque(memory, "bench deque", 1024);
            arrayDeque = new ArrayDeque<>(1024);
            linkedDeque = new ConcurrentLinkedDeque<>();
            spmc = new SpmcArrayQueue<>(1024);
            for (int i = 0; i < prefill; i++) {
                deque.push(VALUE);
                arrayDeque.addLast(BOXED);
                linkedDeque.offerLast(BOXED);
                spmc.offer(BOXED);
            }
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            deque.close();
            memory.close();
        }
    }

    @Benchmark
    public long ownerWorkDeque(Owner s) {
        s.deque.push(VALUE);
        return s.deque.take();
    }

    @Benchmark
    public Long ownerArrayDeque(Owner s) {
        s.arrayDeque.addLast(BOXED);
        return s.arrayDeque.pollLast();
    }

    @Benchmark
    public Long ownerConcurrentLinkedDeque(Owner s) {
        s.linkedDeque.offerLast(BOXED);
        return s.linkedDeque.pollLast();
    }

    @Benchmark
    public Long ownerSpmcArrayQueue(Owner s) {
        s.spmc.offer(BOXED);
        return s.spmc.poll();
    }

    // ---- owner + thieves ---------------------------------------------------------------------------------

    @State(Scope.Group)
    public static class Shared {
        PoolMemory memory;
        WorkDeque deque;
        ConcurrentLinkedDeque<Long> linkedDeque;
        SpmcArrayQueue<Long> spmc;

        @Setup(Level.Trial)
        public void setUp() {
            memory = PoolMemory.create();
            deque = new WorkDeque(memory, "bench deque", 1024);
            linkedDeque = new ConcurrentLinkedDeque<>();
            spmc = new SpmcArrayQueue<>(1024);
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            deque.close();
            memory.close();
        }
    }

    /** What the thieves' calls returned, per second (JMH sums the thieves). */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class ThiefCounters {
        public long stolen;
        public long empty;
        public long aborted;

        @Setup(Level.Iteration)
        public void reset() {
            stolen = 0;
            empty = 0;
            aborted = 0;
        }
    }

    @Benchmark
    @Group("stealWorkDeque")
    @GroupThreads(1)
    public long stealWorkDequeOwner(Shared s) {
        s.deque.push(VALUE);
        return s.deque.take();
    }

    @Benchmark
    @Group("stealWorkDeque")
    @GroupThreads(1)
    public long stealWorkDequeThief(Shared s, ThiefCounters c) {
        long v = s.deque.steal();
        if (v == QueueEntry.EMPTY) {
            c.empty++;
        } else if (v == WorkDeque.ABORT) {
            c.aborted++;
        } else {
            c.stolen++;
        }
        return v;
    }

    @Benchmark
    @Group("stealConcurrentLinkedDeque")
    @GroupThreads(1)
    public Long stealConcurrentLinkedDequeOwner(Shared s) {
        s.linkedDeque.offerLast(BOXED);
        return s.linkedDeque.pollLast();
    }

    @Benchmark
    @Group("stealConcurrentLinkedDeque")
    @GroupThreads(1)
    public Long stealConcurrentLinkedDequeThief(Shared s, ThiefCounters c) {
        Long v = s.linkedDeque.pollFirst();
        if (v == null) {
            c.empty++;
        } else {
            c.stolen++;
        }
        return v;
    }

    @Benchmark
    @Group("stealSpmcArrayQueue")
    @GroupThreads(1)
    public Long stealSpmcArrayQueueOwner(Shared s) {
        s.spmc.offer(BOXED);
        return s.spmc.poll();
    }

    @Benchmark
    @Group("stealSpmcArrayQueue")
    @GroupThreads(1)
    public Long stealSpmcArrayQueueThief(Shared s, ThiefCounters c) {
        Long v = s.spmc.poll();
        if (v == null) {
            c.empty++;
        } else {
            c.stolen++;
        }
        return v;
    }
}
