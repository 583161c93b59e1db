package dev.threadpool.jmh;

import com.lmax.disruptor.BusySpinWaitStrategy;
import com.lmax.disruptor.EventHandler;
import com.lmax.disruptor.RingBuffer;
import com.lmax.disruptor.dsl.Disruptor;
import com.lmax.disruptor.dsl.ProducerType;
import dev.threadpool.IdleStrategy;
import dev.threadpool.PoolConfig;
import dev.threadpool.SchedulerVariant;
import dev.threadpool.ThreadPool;
import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.BoundedRing;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.HdrHistogram.Histogram;

/**
 * Where a spinning hand-off's time goes: LatencyBench's {@code ping_pong} (submit one task, spin until it has
 * started, submit the next) in one JVM, against the pool's own floor and the Disruptor's, in blocks that take
 * turns, so that the box's slow and fast periods (its vCPUs now on one core's two hyperthreads, now on two
 * cores: PERFORMANCE_TRACKING 61) fall on every side alike. Not a JMH benchmark: a main.
 * <ul>
 *   <li>{@code DISRUPTOR}: a Disruptor ring of 1024 with one {@code BusySpinWaitStrategy} consumer, as
 *       LatencyBench's {@code DISRUPTOR_BUSY} (single producer).</li>
 *   <li>{@code DISRUPTOR_MULTI}: the same with {@code ProducerType.MULTI}, what a submit from any thread needs
 *       (LatencyBench's {@code DISRUPTOR_BUSY_MULTI}).</li>
 *   <li>{@code RING}: one carrying {@link BoundedRing} of 1024 cells and one thread spinning on
 *       {@code hasReadyEntry} and popping with {@code popManyCarried}: the pool's queue with nothing of the pool
 *       around it, the floor its BUSY_SPIN hand-off could reach.</li>
 *   <li>a variant name ({@code GLOBAL_QUEUE}, ...): that pool with {@code BUSY_SPIN} workers, {@code threads} of
 *       them (default 1).</li>
 * </ul>
 * Prints, per side, each block's p50 / p90 / p99 in ns, and for every side but {@code RING} the per-block
 * differences of its p50 and p99 from {@code RING}'s in the same block (sorted): what the pool's layers add.
 *
 * <pre>java -cp ... dev.threadpool.jmh.Handoff [blocks=7] [sides=DISRUPTOR,RING,GLOBAL_QUEUE] [threads=1]</pre>
 * With {@code -Dhandoff.who=true} each pool block also prints its workers' STARTED counts (which worker caught
 * the probes). Every side runs in one JVM, so the pool's calls into its scheduler see several classes: compare a
 * variant's own code across builds with JMH (LatencyBench), not here.
 */
public final class Handoff {
    private static final int PROBES = 200_000;
    private static final int RING_SIZE = 1024;
    private static final int SPINS_BEFORE_YIELD = 1 << 12;

    private static volatile long probeStart;
    private static final Runnable PROBE = () -> probeStart = System.nanoTime();

    private Handoff() {
    }

    /** One side: submits a task; closed after its block. */
    private interface Side extends AutoCloseable {
        void submit(Runnable task);
    }

    public static void main(String[] args) throws Exception {
        int blocks = args.length > 0 ? Integer.parseInt(args[0]) : 7;
        String[] sides = (args.length > 1 ? args[1] : "DISRUPTOR,RING,GLOBAL_QUEUE").split(",");
        int threads = args.length > 2 ? Integer.parseInt(args[2]) : 1;
        Map<String, List<long[]>> results = new LinkedHashMap<>();
        for (int b = 0; b <= blocks; b++) { // block 0 warms every side up and is not reported
            for (String name : sides) {
                long[] p = block(name, threads);
                if (b > 0) {
                    results.computeIfAbsent(name, k -> new ArrayList<>()).add(p);
                }
            }
        }
        List<long[]> ring = results.get("RING");
        for (Map.Entry<String, List<long[]>> e : results.entrySet()) {
            StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "%-16s", e.getKey()));
            for (long[] p : e.getValue()) {
                line.append(String.format(Locale.ROOT, " %d/%d/%d", p[0], p[1], p[2]));
            }
            if (ring != null && !e.getKey().equals("RING")) {
                line.append("   vs RING p50 ").append(diffs(e.getValue(), ring, 0)).append(" p99 ")
                        .append(diffs(e.getValue(), ring, 2));
            }
            System.out.println(line);
        }
    }

    private static String diffs(List<long[]> side, List<long[]> ring, int k) {
        long[] d = new long[side.size()];
        for (int i = 0; i < d.length; i++) {
            d[i] = side.get(i)[k] - ring.get(i)[k];
        }
        java.util.Arrays.sort(d);
        return java.util.Arrays.toString(d);
    }

    /** One block: 2 x PROBES ping-pongs on a fresh side, the second half recorded; returns p50, p90, p99. */
    private static long[] block(String name, int threads) throws Exception {
        Histogram h = new Histogram(3_600_000_000_000L, 3);
        try (Side side = open(name, threads)) {
            for (int i = 0; i < 2 * PROBES; i++) {
                probeStart = 0;
                long t0 = System.nanoTime();
                side.submit(PROBE);
                long start;
                int spins = 0;
                while ((start = probeStart) == 0) {
                    if (++spins < SPINS_BEFORE_YIELD) {
                        Thread.onSpinWait();
                    } else {
                        Thread.yield(); // two CPUs: let the thread we wait for run
                    }
                }
                if (i >= PROBES) {
                    h.recordValue(Math.max(0, start - t0));
                }
            }
        }
        return new long[] {h.getValueAtPercentile(50), h.getValueAtPercentile(90), h.getValueAtPercentile(99)};
    }

    private static Side open(String name, int threads) {
        return switch (name) {
            case "DISRUPTOR" -> disruptor(ProducerType.SINGLE);
            case "DISRUPTOR_MULTI" -> disruptor(ProducerType.MULTI);
            case "RING" -> ring();
            default -> pool(SchedulerVariant.valueOf(name), threads);
        };
    }

    private static final class Slot {
        Runnable task;
    }

    private static Side disruptor(ProducerType producers) {
        Disruptor<Slot> d = new Disruptor<>(Slot::new, RING_SIZE, r -> {
            Thread t = new Thread(r, "handoff-disruptor");
            t.setDaemon(true);
            return t;
        }, producers, new BusySpinWaitStrategy());
        d.handleEventsWith((EventHandler<Slot>) (slot, seq, endOfBatch) -> {
            Runnable t = slot.task;
            slot.task = null;
            t.run();
        });
        RingBuffer<Slot> rb = d.start();
        return new Side() {
            @Override public void submit(Runnable task) {
                long seq = rb.next();
                rb.get(seq).task = task;
                rb.publish(seq);
            }

            @Override public void close() {
                d.halt();
            }
        };
    }

    private static Side ring() {
        PoolMemory memory = PoolMemory.create();
        BoundedRing ring = new BoundedRing(memory, "handoff ring", RING_SIZE, true);
        AtomicBoolean stop = new AtomicBoolean();
        Thread consumer = new Thread(() -> {
            Object[] taken = new Object[2];
            while (!stop.get()) { // a volatile load per look, as the pool's stop check
                if (ring.hasReadyEntry() && ring.popManyCarried(taken, 0, 1) == 1) {
                    Runnable t = (Runnable) taken[0];
                    taken[0] = null;
                    t.run();
                } else {
                    Thread.onSpinWait();
                }
            }
        }, "handoff-ring");
        consumer.setDaemon(true);
        consumer.start();
        return new Side() {
            @Override public void submit(Runnable task) {
                while (!ring.tryPushCarried(task, null)) {
                    Thread.onSpinWait();
                }
            }

            @Override public void close() throws InterruptedException {
                stop.set(true);
                consumer.join();
                memory.close();
            }
        };
    }

    private static Side pool(SchedulerVariant variant, int threads) {
        ThreadPool p = ThreadPool.create(PoolConfig.builder().schedulerVariant(variant).maxThreads(threads)
                .queueCapacity(RING_SIZE).idleStrategy(IdleStrategy.BUSY_SPIN).threadNamePrefix("handoff-")
                .daemon(true).build());
        return new Side() {
            @Override public void submit(Runnable task) {
                p.submit(task);
            }

            @Override public void close() {
                if (Boolean.getBoolean("handoff.who")) {
                    StringBuilder sb = new StringBuilder(variant + " started:");
                    for (dev.threadpool.WorkerStats w : p.statsSnapshot().workers()) {
                        sb.append(' ').append(w.started());
                    }
                    System.out.println(sb);
                }
                p.close();
            }
        };
    }
}
