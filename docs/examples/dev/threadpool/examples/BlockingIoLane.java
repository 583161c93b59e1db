package dev.threadpool.examples;

import dev.threadpool.PoolConfig;
import dev.threadpool.SchedulerVariant;
import dev.threadpool.SubmitOptions;
import dev.threadpool.ThreadPool;
import dev.threadpool.WaitGroup;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A blocking-I/O lane: LANE_EXTENSION keeps workers apart for tasks submitted with
 * {@link SubmitOptions#BLOCKING} (here: simulated disk or network calls that block for a few milliseconds),
 * so the CPU tasks on the default lane keep flowing.
 *
 * <pre>mvn -q validate test-compile exec:exec@example -Dexample=BlockingIoLane -Dexample.args="200 20000"</pre>
 * Arguments: blocking calls (200), CPU tasks (20000).
 */
public final class BlockingIoLane {
    private BlockingIoLane() {}

    public static void main(String[] args) throws Exception {
        int ioCalls = Args.intArg(args, 0, "ioCalls", 200);
        int cpuTasks = Args.intArg(args, 1, "cpuTasks", 20_000);
        PoolConfig.Builder b = PoolConfig.builder().maxThreads(4).queueCapacity(1024).blockingWorkers(2)
                .threadNamePrefix("lane-");
        ThreadPool pool = ThreadPool.create(b.schedulerVariant(SchedulerVariant.LANE_EXTENSION).build());
        String variant = "LANE_EXTENSION (2 blocking-lane workers)";
        AtomicLong cpuDone = new AtomicLong();
        AtomicLong ioDone = new AtomicLong();
        long t0 = System.nanoTime();
        long cpuNanos;
        try (ThreadPool p = pool) {
            WaitGroup io = new WaitGroup();
            WaitGroup cpu = new WaitGroup();
            for (int i = 0; i < ioCalls; i++) {
                io.add(1);
                p.submit(() -> {
                    try {
                        blockingCall();
                        ioDone.incrementAndGet();
                    } finally {
                        io.done();
                    }
                }, SubmitOptions.BLOCKING);
            }
            for (int i = 0; i < cpuTasks; i++) {
                p.submit(() -> cpuDone.addAndGet(work()), cpu);
            }
            Args.check(cpu.await(Duration.ofSeconds(60)), "CPU tasks finished");
            cpuNanos = System.nanoTime() - t0;
            Args.check(io.await(Duration.ofSeconds(60)), "blocking calls finished");
        }
        long totalNanos = System.nanoTime() - t0;
        Args.check(ioDone.get() == ioCalls, "every blocking call ran: " + ioDone.get());
        Args.check(cpuDone.get() == (long) cpuTasks * work(), "every CPU task ran");
        Args.check(pool.statsSnapshot().liveBytes() == 0, "closed clean");
        System.out.printf(Locale.ROOT, "BlockingIoLane on %s: %d blocking calls, %d CPU tasks%n", variant,
                ioCalls, cpuTasks);
        System.out.printf(Locale.ROOT, "  CPU tasks done after %.1f ms; everything after %.1f ms%n",
                cpuNanos / 1e6, totalNanos / 1e6);
    }

    /** Stands in for a blocking read: the thread is parked for about 2 ms. */
    private static void blockingCall() {
        try {
            Thread.sleep(2); // the workload itself: a blocking call, not synchronisation
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static long work() {
        long h = 1;
        for (int i = 0; i < 200; i++) {
            h = h * 31 + i;
        }
        return h & 0xFF;
    }
}
