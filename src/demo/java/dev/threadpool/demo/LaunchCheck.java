package dev.threadpool.demo;

import dev.threadpool.PoolConfig;
import dev.threadpool.PoolStats;
import dev.threadpool.ThreadPool;
import dev.threadpool.WaitGroup;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import jdk.jfr.FlightRecorder;
import jdk.jfr.consumer.RecordingStream;

/**
 * A tiny program that proves a launch form works: creates a pool, runs tasks (detached, waitable, through the
 * ExecutorService view, a tree of joins), checks the accounting after close and prints which module it ran in
 * and whether the workers' deques use raw addresses (native access granted to the library's module) or not.
 * The demo is not part of the library: it runs in the unnamed module, with the library on the module path
 * (named module dev.threadpool) or on the class path, and uses the exported API only.
 * Exits 1 on any failed check. Used by {@code LaunchFormsTest} on the module path and on the class path:
 *
 * <pre>
 * java --enable-native-access=dev.threadpool -p target/classes --add-modules dev.threadpool -cp target/test-classes dev.threadpool.demo.LaunchCheck
 * java --enable-native-access=ALL-UNNAMED -cp target/classes:target/test-classes dev.threadpool.demo.LaunchCheck
 * </pre>
 */
public final class LaunchCheck {
    private LaunchCheck() {}

    /** A binary tree of joins with 2^depth leaves, each counting itself. */
    private record Tree(ThreadPool pool, AtomicInteger leaves, int depth) implements Runnable {
        @Override
        public void run() {
            if (depth == 0) {
                leaves.incrementAndGet();
                return;
            }
            try {
                pool.join(new Tree(pool, leaves, depth - 1), new Tree(pool, leaves, depth - 1));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    public static void main(String[] args) throws Exception {
        int tasks = args.length > 0 ? Integer.parseInt(args[0]) : 10_000;
        boolean jfr = args.length > 1 && args[1].equals("--jfr");
        check(!jfr || !FlightRecorder.isInitialized(), "JFR not initialised before the pool");
        Module module = ThreadPool.class.getModule(); // the library's module, not the demo's (unnamed)
        String where = module.isNamed() ? "named module " + module.getName() : "class path (unnamed module)";
        AtomicInteger ran = new AtomicInteger();
        ThreadPool pool = ThreadPool.create(PoolConfig.builder().maxThreads(2).queueCapacity(256).build());
        try {
            WaitGroup wg = new WaitGroup();
            for (int i = 0; i < tasks; i++) {
                pool.submit(ran::incrementAndGet, wg);
            }
            check(wg.await(Duration.ofSeconds(60)), "detached tasks finished");
            long h = pool.submitWaitable(ran::incrementAndGet);
            pool.await(h);
            ExecutorService es = pool.asExecutorService();
            check(es.submit(() -> 41).get(60, TimeUnit.SECONDS) + 1 == 42, "ExecutorService future");
            CompletableFuture.runAsync(ran::incrementAndGet, pool.asExecutor()).get(60, TimeUnit.SECONDS);
            AtomicInteger leaves = new AtomicInteger();
            pool.join(new Tree(pool, leaves, 12), new Tree(pool, leaves, 12)); // the workers' join deques
            check(leaves.get() == 2 << 12, "every join leaf ran once: " + leaves.get());
            if (jfr) {
                checkPeriodicStatsAfterLateJfrStart();
            }
        } finally {
            pool.close();
        }
        PoolStats s = pool.statsSnapshot();
        check(ran.get() == tasks + 2, "every task ran once: " + ran.get());
        // tasks + 3 submits, and the outside join's hand-over of its pair (one task)
        check(s.submitted() == tasks + 4 && s.completed() == tasks + 4, "counted: " + s);
        check(s.liveBytes() == 0 && s.totalAllocBytes() == s.totalFreeBytes() && s.totalAllocBytes() > 0,
                "accounting after close: " + s);
        System.out.println("LaunchCheck OK: " + where + ", " + s.completed() + " tasks, liveBytes "
                + s.liveBytes() + " after close");
        // The deques use raw addresses when native access is enabled for the library's module (Mem.RAW inside
        // the library; LaunchFormsTest checks the two agree), else checked segment accesses.
        System.out.println("LaunchCheck deque access: "
                + (module.isNativeAccessEnabled() ? "raw addresses" : "segment and offset"));
    }

    /**
     * Creating the pool must not have initialised JFR; a recording started afterwards must still get the
     * pool's periodic PoolStats events (the pool registered a listener, not the event).
     */
    private static void checkPeriodicStatsAfterLateJfrStart() throws InterruptedException {
        check(!FlightRecorder.isInitialized(), "creating a pool does not initialise JFR");
        CountDownLatch seen = new CountDownLatch(1);
        try (RecordingStream rs = new RecordingStream()) {
            rs.enable("dev.threadpool.PoolStats").withPeriod(Duration.ofMillis(50));
            rs.onEvent("dev.threadpool.PoolStats", e -> seen.countDown());
            rs.startAsync();
            check(seen.await(60, TimeUnit.SECONDS), "a PoolStats event after JFR started late");
        }
        System.out.println("LaunchCheck JFR: PoolStats seen after a late JFR start");
    }

    private static void check(boolean ok, String what) {
        if (!ok) {
            System.err.println("LaunchCheck FAILED: " + what);
            System.exit(1);
        }
    }
}
