package dev.threadpool.jmh;

import dev.threadpool.PoolStats;
import dev.threadpool.ThreadPool;
import dev.threadpool.WaitGroup;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;

/**
 * CPU time per task of {@code flood_1m} (one external submitter, {@code submit(task, group)} on ours,
 * {@code execute(group::done)} after one {@code group.add} on the JDK pools: the same counting, {@link Floods}),
 * next to its throughput: on a box where the flood's threads
 * outnumber the CPUs, the CPU a task costs (submit, run, spinning, wakes) is what sets throughput, and it is
 * much steadier than the throughput itself when other processes share the box. Not a JMH benchmark: a main
 * that runs {@code rounds} floods of every pool in turn, in one JVM, after {@code warmup} rounds each, and
 * prints per pool the median over the rounds of: M tasks/s, process CPU ns per task, and (ours) parks and
 * wakeups per 1000 tasks, and the submitting thread's own CPU per task over its submit loop (the flood's
 * bottleneck: the submitter, entry 6 of PERFORMANCE_TRACKING). A second table says where each thread's wall
 * time went ({@link ThreadTimes}: on a CPU, runnable but waiting for one, blocked; context switches), and a line
 * what the whole box did meanwhile (this JVM, other processes, idle, steal): entry 28 of PERFORMANCE_TRACKING.
 *
 * <p>With {@code batch} above 0, ours submits with {@code submitBatch(tasks, 0, batch, group)} and FJP runs its
 * batching idiom ({@link Floods.FjBatches}), as {@code flood_1m_batched} does; the TPEs, which have no batch
 * API, flood one by one, and their rows then compare nothing.
 *
 * <pre>java -cp ... dev.threadpool.jmh.FloodCpu [rounds=7] [warmup=3] [pools=GLOBAL_QUEUE,WORK_STEALING,FJP,TPE_ABQ] [idleWindowMicros|-] [threads|-] [batch=0]</pre>
 */
public final class FloodCpu {
    private static final int TASKS = 1_000_000;
    private static final String SUBMITTER = "flood-submit";

    private FloodCpu() {
    }

    public static void main(String[] args) throws Exception {
        // The floods run on a thread of their own so that /proc names it (the launcher's main thread has no
        // name there): its comm is "flood-submit", the pools' threads "bench-..." or "ForkJoinPool-...".
        Exception[] failure = new Exception[1];
        Thread submitter = new Thread(() -> {
            try {
                run(args);
            } catch (Exception e) {
                failure[0] = e;
            }
        }, SUBMITTER);
        submitter.start();
        submitter.join();
        if (failure[0] != null) {
            throw failure[0];
        }
    }

    private static void run(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 7;
        int warmup = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        String[] pools = (args.length > 2 ? args[2] : "GLOBAL_QUEUE,WORK_STEALING,FJP,TPE_ABQ").split(",");
        // optional: PARK's idle window in microseconds ("-" or absent: the pool's default)
        Duration window = args.length > 3 && !args[3].equals("-") ? Duration.ofNanos(Long.parseLong(args[3]) * 1000) : null;
        int cpus = Runtime.getRuntime().availableProcessors();
        // optional: worker threads of every pool (absent: one per CPU, as the benchmarks)
        int threads = args.length > 4 && !args[4].equals("-") ? Integer.parseInt(args[4]) : cpus;
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be >= 1, got " + threads);
        }
        // optional: tasks per submitBatch call on ours (0 or absent: one submit per task, as flood_1m)
        int batch = args.length > 5 ? Integer.parseInt(args[5]) : 0;
        if (batch < 0 || batch > TASKS) {
            throw new IllegalArgumentException("batch must be 0 or in [1, " + TASKS + "], got " + batch);
        }
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        List<double[]>[] samples = new List[pools.length];
        List<double[]>[] where = new List[pools.length];
        ThreadPool[] ours = new ThreadPool[pools.length];
        ExecutorService[] jdk = new ExecutorService[pools.length];
        for (int p = 0; p < pools.length; p++) {
            samples[p] = new ArrayList<>();
            where[p] = new ArrayList<>();
            ours[p] = Pools.ours(pools[p], threads, Pools.FLOOD_QUEUE, window);
            jdk[p] = ours[p] == null ? Pools.jdk(pools[p], threads, Fairness.boundFor(Pools.FLOOD_QUEUE, threads))
                    : null;
        }
        java.lang.management.ThreadMXBean threadCpu = ManagementFactory.getThreadMXBean();
        WaitGroup group = new WaitGroup();
        Runnable noop = () -> { };
        Runnable doneTask = Floods.doneTask(group);
        Floods.FjBatches[] fjBatches = new Floods.FjBatches[pools.length];
        for (int p = 0; p < pools.length; p++) {
            if (batch > 0 && jdk[p] instanceof java.util.concurrent.ForkJoinPool fj) {
                fjBatches[p] = new Floods.FjBatches(fj, group, TASKS, batch);
            }
        }
        Runnable[] batchTasks = new Runnable[Math.max(batch, 1)];
        Arrays.fill(batchTasks, noop);
        for (int r = 0; r < warmup + rounds; r++) {
            for (int p = 0; p < pools.length; p++) {
                PoolStats before = ours[p] != null ? ours[p].statsSnapshot() : null;
                ThreadTimes.Split sched0 = ThreadTimes.read(ThreadTimes.workerPrefix(pools[p]));
                long[] box0 = ThreadTimes.box();
                long cpu0 = os.getProcessCpuTime();
                long sub0 = threadCpu.getCurrentThreadCpuTime();
                long t0 = System.nanoTime();
                long subCpu;
                if (ours[p] != null) {
                    ThreadPool pool = ours[p];
                    if (batch == 0) {
                        for (int i = 0; i < TASKS; i++) {
                            pool.submit(noop, group);
                        }
                    } else {
                        for (int i = 0; i < TASKS; i += batch) {
                            int len = Math.min(batch, TASKS - i); // the last batch may be short
                            if (pool.submitBatch(batchTasks, 0, len, group) != len) {
                                throw new IllegalStateException("submitBatch took fewer than " + len);
                            }
                        }
                    }
                    subCpu = threadCpu.getCurrentThreadCpuTime() - sub0;
                    Floods.await(group);
                } else if (fjBatches[p] != null) {
                    fjBatches[p].flood(TASKS); // the submitter's CPU then includes its wait (a park)
                    subCpu = threadCpu.getCurrentThreadCpuTime() - sub0;
                } else {
                    group.add(TASKS);
                    for (int i = 0; i < TASKS; i++) {
                        jdk[p].execute(doneTask);
                    }
                    subCpu = threadCpu.getCurrentThreadCpuTime() - sub0;
                    Floods.await(group);
                }
                long wall = System.nanoTime() - t0;
                long cpu = os.getProcessCpuTime() - cpu0;
                ThreadTimes.Split sched = ThreadTimes.read(ThreadTimes.workerPrefix(pools[p])).minus(sched0);
                long[] box = ThreadTimes.box();
                double parks = 0;
                double wakes = 0;
                if (before != null) {
                    PoolStats after = ours[p].statsSnapshot();
                    parks = (after.parks() - before.parks()) * 1000.0 / TASKS;
                    wakes = (after.wakeups() - before.wakeups()) * 1000.0 / TASKS;
                }
                if (r >= warmup) {
                    samples[p].add(new double[] {TASKS * 1e3 / wall, (double) cpu / TASKS, parks, wakes,
                            (double) subCpu / TASKS});
                    double[] w = sched.perTask(wall, TASKS);
                    double jvm = w[0] + w[ThreadTimes.FIELDS] + w[2 * ThreadTimes.FIELDS];
                    double[] all = Arrays.copyOf(w, w.length + 4);
                    // the box per task: our process on a CPU, other processes, idle, steal (both vCPUs)
                    all[w.length] = jvm;
                    all[w.length + 1] = (double) (box[0] - box0[0]) / TASKS - jvm;
                    all[w.length + 2] = (double) (box[1] - box0[1]) / TASKS;
                    all[w.length + 3] = (double) (box[2] - box0[2]) / TASKS;
                    where[p].add(all);
                }
            }
        }
        System.out.printf("%-16s %10s %14s %16s %12s %12s   (medians of %d rounds)%n", "pool", "Mtasks/s",
                "cpu ns/task", "submitter ns/task", "parks/1k", "wakeups/1k", rounds);
        for (int p = 0; p < pools.length; p++) {
            System.out.printf("%-16s %10.2f %14.0f %16.0f %12.2f %12.2f   submitter ns/task per round: %s%n", pools[p],
                    median(samples[p], 0), median(samples[p], 1), median(samples[p], 4), median(samples[p], 2),
                    median(samples[p], 3),
                    Arrays.toString(samples[p].stream().mapToLong(s -> Math.round(s[4])).toArray()));
        }
        System.out.printf("%nWhere each thread's wall time goes, ns per task (median of %d rounds; /proc/self/task/*/schedstat"
                + " and status; workers summed over the pool's threads; 'off' = wall - on CPU - runnable = blocked)%n",
                rounds);
        System.out.printf("%-16s %-9s %8s %9s %8s %12s %12s%n", "pool", "thread", "on cpu", "runnable", "off",
                "vol cs/1k", "invol cs/1k");
        for (int p = 0; p < pools.length; p++) {
            String[] who = {"submitter", "workers", "other"};
            for (int g = 0; g < 3; g++) {
                int b = g * ThreadTimes.FIELDS;
                System.out.printf("%-16s %-9s %8.0f %9.0f %8.0f %12.2f %12.2f%n", pools[p], who[g],
                        median(where[p], b), median(where[p], b + 1), median(where[p], b + 2),
                        median(where[p], b + 3), median(where[p], b + 4));
            }
            int b = 3 * ThreadTimes.FIELDS;
            System.out.printf("%-16s box (%d CPUs x wall = %.0f ns/task): this JVM %.0f, other processes %.0f, idle %.0f,"
                    + " steal %.0f (/proc/stat, 10 ms ticks)%n", pools[p], cpus, cpus * 1e3 / median(samples[p], 0),
                    median(where[p], b), median(where[p], b + 1), median(where[p], b + 2), median(where[p], b + 3));
            Pools.close(ours[p], jdk[p]);
        }
    }

    private static double median(List<double[]> xs, int k) {
        double[] v = xs.stream().mapToDouble(s -> s[k]).sorted().toArray();
        return v.length == 0 ? Double.NaN : v[v.length / 2];
    }
}
