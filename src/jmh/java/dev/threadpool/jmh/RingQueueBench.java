package dev.threadpool.jmh;

import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.QueueEntry;
import dev.threadpool.internal.queue.RingQueue;
import java.util.ArrayDeque;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.jctools.queues.MessagePassingQueue;
import org.jctools.queues.MpmcArrayQueue;
import org.jctools.queues.SpmcArrayQueue;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
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
 * {@link RingQueue} beside JCTools' {@code SpmcArrayQueue} / {@code MpmcArrayQueue}, {@code ArrayDeque}
 * (owner only, no thread safety) and {@code ConcurrentLinkedDeque}.
 *
 * <ul>
 *   <li>{@code owner*}: one thread, push then pop on a half-full queue (the owner's hot path).</li>
 *   <li>{@code steal*} groups: one owner pushing (popping when full) and one thief taking single entries.</li>
 *   <li>{@code stealHalf*} groups: the same owner; the thief moves a batch of up to 8 with one claim into its
 *       own queue and drains it (JCTools: {@code drain(consumer, 8)}).</li>
 * </ul>
 * In the groups, the primary score counts calls (a thief's empty polls included); the {@code taken} aux
 * counter is the rate of entries that really reached the thief, {@code pushed} / {@code ownerPopped} the
 * owner's. The JDK and JCTools queues carry one preallocated {@code Long}, so their numbers show the queue's own
 * allocation (a node per offer for ConcurrentLinkedDeque), not boxing. Run with {@code -prof gc}.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class RingQueueBench {
    static final Long BOXED = 42L;
    static final long ENTRY = QueueEntry.pack(1, 42);

    // ---- owner only -----------------------------------------------------------------------------------

    @State(Scope.Thread)
    public static class Owner {
        @Param("256")
        int capacity;

        PoolMemory mem;
        RingQueue ring;
        SpmcArrayQueue<Long> spmc;
        MpmcArrayQueue<Long> mpmc;
        ArrayDeque<Long> deque;
        ConcurrentLinkedDeque<Long> cld;

        @Setup(Level.Trial)
        public void setup() {
            mem = PoolMemory.create();
            ring = new RingQueue(mem, "bench ring", capacity);
            spmc = new SpmcArrayQueue<>(capacity);
            mpmc = new MpmcArrayQueue<>(capacity);
            deque = new ArrayDeque<>(capacity);
            cld = new ConcurrentLinkedDeque<>();
            for (int i = 0; i < capacity / 2; i++) {
                ring.tryPush(ENTRY);
                spmc.offer(BOXED);
                mpmc.offer(BOXED);
                deque.offerLast(BOXED);
                cld.offerLast(BOXED);
            }
        }

        @TearDown(Level.Trial)
        public void close() {
            mem.close();
        }
    }

    @Benchmark
    public long ownerRingQueue(Owner s) {
        s.ring.tryPush(ENTRY);
        return s.ring.pop();
    }

    @Benchmark
    public Long ownerSpmcArrayQueue(Owner s) {
        s.spmc.offer(BOXED);
        return s.spmc.poll();
    }

    @Benchmark
    public Long ownerMpmcArrayQueue(Owner s) {
        s.mpmc.offer(BOXED);
        return s.mpmc.poll();
    }

    @Benchmark
    public Long ownerArrayDeque(Owner s) {
        s.deque.offerLast(BOXED);
        return s.deque.pollFirst();
    }

    @Benchmark
    public Long ownerConcurrentLinkedDeque(Owner s) {
        s.cld.offerLast(BOXED);
        return s.cld.pollFirst();
    }

    // ---- owner + thief ----------------------------------------------------------------------------------

    @State(Scope.Group)
    public static class Shared {
        @Param("256")
        int capacity;

        PoolMemory mem;
        RingQueue ring;
        SpmcArrayQueue<Long> spmc;
        MpmcArrayQueue<Long> mpmc;
        ConcurrentLinkedDeque<Long> cld;
        long cldOffered;     // owner only
        long cldOwnerPolled; // owner only
        final AtomicLong cldThiefPolled = new AtomicLong(); // thief writes, owner reads (opaque)

        @Setup(Level.Trial)
        public void setup() {
            mem = PoolMemory.create();
            ring = new RingQueue(mem, "bench ring", capacity);
            spmc = new SpmcArrayQueue<>(capacity);
            mpmc = new MpmcArrayQueue<>(capacity);
            cld = new ConcurrentLinkedDeque<>();
        }

        @TearDown(Level.Trial)
        public void close() {
            mem.close();
        }
    }

    /**
     * Entries actually moved, per thread: a thief's op count alone includes its empty polls, which are cheap
     * and would flatter whichever queue is empty most often. {@code taken} (thief) is the number to compare.
     */
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    @State(Scope.Thread)
    public static class Moved {
        public long pushed;
        public long ownerPopped;
        public long taken;

        @Setup(Level.Iteration)
        public void reset() {
            pushed = 0;
            ownerPopped = 0;
            taken = 0;
        }
    }

    /** The thief's own queue (stealHalf's dst) and a JCTools drain sink; one per thief thread. */
    @State(Scope.Thread)
    public static class Thief implements MessagePassingQueue.Consumer<Long> {
        PoolMemory mem;
        RingQueue dst;
        long sink;

        @Setup(Level.Trial)
        public void setup() {
            mem = PoolMemory.create();
            dst = new RingQueue(mem, "bench thief queue", 256);
        }

        @TearDown(Level.Trial)
        public void close() {
            mem.close();
        }

        @Override
        public void accept(Long e) {
            sink += e;
        }
    }

    @Benchmark @Group("stealRingQueue") @GroupThreads(1)
    public long stealRingQueueOwner(Shared s, Moved m) {
        return ringOwner(s, m);
    }

    @Benchmark @Group("stealRingQueue") @GroupThreads(1)
    public long stealRingQueueThief(Shared s, Moved m) {
        long e = s.ring.steal();
        if (e != QueueEntry.EMPTY) {
            m.taken++;
        }
        return e;
    }

    @Benchmark @Group("stealSpmcArrayQueue") @GroupThreads(1)
    public Long stealSpmcOwner(Shared s, Moved m) {
        return jctoolsOwner(s.spmc, m);
    }

    @Benchmark @Group("stealSpmcArrayQueue") @GroupThreads(1)
    public Long stealSpmcThief(Shared s, Moved m) {
        return counted(s.spmc.poll(), m);
    }

    @Benchmark @Group("stealMpmcArrayQueue") @GroupThreads(1)
    public Long stealMpmcOwner(Shared s, Moved m) {
        return jctoolsOwner(s.mpmc, m);
    }

    @Benchmark @Group("stealMpmcArrayQueue") @GroupThreads(1)
    public Long stealMpmcThief(Shared s, Moved m) {
        return counted(s.mpmc.poll(), m);
    }

    @Benchmark @Group("stealConcurrentLinkedDeque") @GroupThreads(1)
    public Long stealCldOwner(Shared s, Moved m) {
        // Unbounded, and size() is O(n): bound it at capacity like the rings by counting (the thief's count
        // is read opaque and may be stale, which only overestimates the size), and pop when "full".
        if (s.cldOffered - s.cldOwnerPolled - s.cldThiefPolled.getOpaque() < s.capacity) {
            s.cld.offerLast(BOXED);
            s.cldOffered++;
            m.pushed++;
            return null;
        }
        Long e = s.cld.pollFirst();
        if (e != null) {
            s.cldOwnerPolled++;
            m.ownerPopped++;
        }
        return e;
    }

    @Benchmark @Group("stealConcurrentLinkedDeque") @GroupThreads(1)
    public Long stealCldThief(Shared s, Moved m) {
        Long e = s.cld.pollFirst();
        if (e != null) {
            s.cldThiefPolled.setOpaque(s.cldThiefPolled.getPlain() + 1);
            m.taken++;
        }
        return e;
    }

    @Benchmark @Group("stealHalfRingQueue") @GroupThreads(1)
    public long stealHalfRingQueueOwner(Shared s, Moved m) {
        return ringOwner(s, m);
    }

    @Benchmark @Group("stealHalfRingQueue") @GroupThreads(1)
    public long stealHalfRingQueueThief(Shared s, Thief t, Moved m) {
        long first = s.ring.stealHalf(t.dst, 8);
        if (first == QueueEntry.EMPTY) {
            return first;
        }
        long n = 1;
        for (long e; (e = t.dst.pop()) != QueueEntry.EMPTY; ) {
            first += e;
            n++;
        }
        m.taken += n;
        return first;
    }

    @Benchmark @Group("stealHalfSpmcArrayQueue") @GroupThreads(1)
    public Long stealHalfSpmcOwner(Shared s, Moved m) {
        return jctoolsOwner(s.spmc, m);
    }

    @Benchmark @Group("stealHalfSpmcArrayQueue") @GroupThreads(1)
    public int stealHalfSpmcThief(Shared s, Thief t, Moved m) {
        int n = s.spmc.drain(t, 8);
        m.taken += n;
        return n;
    }

    @Benchmark @Group("stealHalfMpmcArrayQueue") @GroupThreads(1)
    public Long stealHalfMpmcOwner(Shared s, Moved m) {
        return jctoolsOwner(s.mpmc, m);
    }

    @Benchmark @Group("stealHalfMpmcArrayQueue") @GroupThreads(1)
    public int stealHalfMpmcThief(Shared s, Thief t, Moved m) {
        int n = s.mpmc.drain(t, 8);
        m.taken += n;
        return n;
    }

    /** The owner of the steal groups: push; when full, pop one (what a worker does before spilling). */
    private static long ringOwner(Shared s, Moved m) {
        if (s.ring.tryPush(ENTRY)) {
            m.pushed++;
            return 0;
        }
        long e = s.ring.pop();
        if (e != QueueEntry.EMPTY) {
            m.ownerPopped++;
        }
        return e;
    }

    private static Long jctoolsOwner(MessagePassingQueue<Long> q, Moved m) {
        if (q.offer(BOXED)) {
            m.pushed++;
            return null;
        }
        return counted(q.poll(), m, true);
    }

    private static Long counted(Long e, Moved m) {
        return counted(e, m, false);
    }

    private static Long counted(Long e, Moved m, boolean owner) {
        if (e != null) {
            if (owner) {
                m.ownerPopped++;
            } else {
                m.taken++;
            }
        }
        return e;
    }
}
