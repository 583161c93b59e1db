package dev.threadpool.audit;

import dev.threadpool.PoolConfig;
import dev.threadpool.PoolStats;
import dev.threadpool.ThreadPool;
import dev.threadpool.WaitGroup;
import dev.threadpool.WorkerScratch;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Child-JVM main for NmtAuditTest, run with {@code -XX:NativeMemoryTracking=summary}. At each stage it prints
 * one line {@code STAGE <name> live=<pool liveBytes> other=<NMT "Other" malloc bytes> count=<#mallocs>}, reading
 * NMT with {@code jcmd <own pid> VM.native_memory summary} (the jcmd next to this JVM's {@code java}; the
 * DiagnosticCommand MBean would need {@code java.management}, which the pool module does not read). FFM's
 * {@code Arena.allocate} is {@code Unsafe.allocateMemory}, i.e. {@code os::malloc(..., mtOther)}: NMT's "Other".
 */
public final class NmtMain {
    static final int WORKERS = 4;
    public static final long SCRATCH_CAP = 1L << 20;
    private static final Pattern OTHER = Pattern.compile(
            "-\\s*Other \\(reserved=(\\d+)KB, committed=(\\d+)KB\\)\\s*\\n\\s*\\(malloc=(\\d+)KB(?: tag=Other)? #(\\d+)");

    public static void main(String[] args) throws Exception {
        stage("baseline", 0);
        ThreadPool pool = ThreadPool.create(PoolConfig.builder().maxThreads(WORKERS).queueCapacity(65536)
                .workerScratchCapBytes(SCRATCH_CAP).daemon(true).build());
        stage("created", quiet(pool).liveBytes());

        // every worker takes its scratch buffer: a barrier task per worker, so each runs on its own worker
        java.util.concurrent.CyclicBarrier barrier = new java.util.concurrent.CyclicBarrier(WORKERS);
        WaitGroup g = new WaitGroup();
        for (int i = 0; i < WORKERS; i++) {
            pool.submit(() -> {
                try {
                    barrier.await(30, java.util.concurrent.TimeUnit.SECONDS);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
                WorkerScratch s = pool.scratch();
                long m = s.begin();
                s.allocate(SCRATCH_CAP, 1).fill((byte) 1); // touch it all
                s.finish(m);
            }, g);
        }
        if (!g.await(Duration.ofSeconds(30))) {
            throw new IllegalStateException("scratch tasks did not finish");
        }
        PoolStats used = quiet(pool);
        System.out.println("scratchBytes=" + used.scratchBytes());
        stage("scratch", used.liveBytes());

        pool.purgeWorkerCaches();
        stage("purged", quiet(pool).liveBytes());

        pool.close();
        stage("closed", pool.statsSnapshot().liveBytes());
    }

    private static PoolStats quiet(ThreadPool pool) throws InterruptedException {
        for (int i = 0; i < 30_000; i++) {
            PoolStats s = pool.statsSnapshot();
            if (s.queuedTasks() == 0 && s.activeTasks() == 0 && s.taskDescLive() == 0) {
                return s;
            }
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000L); // bounded poll, as TestSupport.eventually
        }
        throw new IllegalStateException("pool did not become quiescent");
    }

    private static void stage(String name, long live) throws Exception {
        String javaCmd = ProcessHandle.current().info().command().orElseThrow();
        String jcmd = Path.of(javaCmd).resolveSibling("jcmd").toString();
        Process p = new ProcessBuilder(jcmd, Long.toString(ProcessHandle.current().pid()), "VM.native_memory",
                "summary", "scale=KB").redirectErrorStream(true).start();
        String summary = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(30, java.util.concurrent.TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException("jcmd failed: " + summary);
        }
        if (!summary.contains("Native Memory Tracking:")) {
            throw new IllegalStateException("NMT is not enabled: " + summary);
        }
        Matcher m = OTHER.matcher(summary);
        // NMT omits a category below 1 KB: then "Other" holds (almost) nothing
        long mallocKb = m.find() ? Long.parseLong(m.group(3)) : 0;
        String count = m.find(0) ? m.group(4) : "0";
        System.out.println("STAGE " + name + " live=" + live + " otherKB=" + mallocKb + " count=" + count);
    }
}
