package com.example;

import dev.threadpool.PoolConfig;
import dev.threadpool.PoolStats;
import dev.threadpool.ProcessMemory;
import dev.threadpool.SchedulerVariant;
import dev.threadpool.ThreadPool;
import dev.threadpool.WaitGroup;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A team's first program against the installed jar: a pool per variant, detached and waitable tasks, the
 * accounting after close, and processMemory() without jnr-posix (an optional dependency). Exits 1 on a failed
 * check. src/it/run.sh launches it with the README's launch line.
 */
public final class Main {
    private Main() {}

    public static void main(String[] args) throws Exception {
        int tasks = 10_000;
        for (SchedulerVariant variant : SchedulerVariant.values()) {
            AtomicInteger ran = new AtomicInteger();
            ThreadPool pool = ThreadPool.create(PoolConfig.builder()
                    .maxThreads(2).queueCapacity(256).schedulerVariant(variant).build());
            try {
                WaitGroup done = new WaitGroup();
                for (int i = 0; i < tasks; i++) {
                    pool.submit(ran::incrementAndGet, done);
                }
                check(done.await(Duration.ofSeconds(60)), variant + ": tasks finished");
                pool.await(pool.submitWaitable(ran::incrementAndGet));
            } finally {
                pool.close();
            }
            PoolStats s = pool.statsSnapshot();
            check(ran.get() == tasks + 1, variant + ": every task ran once: " + ran.get());
            check(s.submitted() == tasks + 1 && s.completed() == tasks + 1, variant + ": counted: " + s);
            check(s.liveBytes() == 0 && s.totalAllocBytes() == s.totalFreeBytes() && s.totalAllocBytes() > 0,
                    variant + ": accounting after close: " + s);
        }
        ProcessMemory m = ThreadPool.processMemory();
        check(m.residentBytes() == -1 && m.source().startsWith("jnr-posix not on the class path"),
                "without jnr-posix processMemory() says why: " + m);
        Module lib = ThreadPool.class.getModule();
        Module app = Main.class.getModule();
        System.out.println("consumer OK: library in " + (lib.isNamed() ? "named module " + lib.getName() : "the unnamed module")
                + ", app in " + (app.isNamed() ? "named module " + app.getName() : "the unnamed module")
                + ", " + SchedulerVariant.values().length + " variants x " + (tasks + 1) + " tasks, liveBytes 0");
    }

    private static void check(boolean ok, String what) {
        if (!ok) {
            System.err.println("consumer FAILED: " + what);
            System.exit(1);
        }
    }
}
