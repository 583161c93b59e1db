package dev.threadpool.jmh;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Per-thread scheduler accounting of this JVM from Linux's {@code /proc/self/task/<tid>/schedstat} (ns on a CPU,
 * ns runnable but waiting for one) and {@code status} (voluntary and involuntary context switches), summed into
 * three groups by the thread's name ({@code comm}, 15 characters): the flood's submitter ({@code flood-submit}),
 * the flooded pool's threads ({@link #workerPrefix}) and every other thread (JIT, GC, the other pools of a JVM
 * that floods several). Counters the
 * box's noise cannot move: a voluntary switch is a block (a park that did not find its permit), an involuntary one
 * a preemption. Linux only; elsewhere every figure reads 0.
 */
final class ThreadTimes {
    /** Per group: on-CPU ns, runnable ns, voluntary switches, involuntary switches. */
    private static final int RAW = 4;
    /** Per group in {@link Split#perTask}: on cpu, runnable, off (blocked), vol/1k, invol/1k. */
    static final int FIELDS = 5;

    private ThreadTimes() {
    }

    /**
     * The whole box from the first line of {@code /proc/stat}, in ns (from clock ticks of 10 ms): busy (user,
     * nice, system, irq, softirq), idle (idle, iowait) and steal (time the hypervisor gave our vCPUs to others).
     */
    static long[] box() {
        try {
            String[] f = Files.readAllLines(Path.of("/proc/stat")).get(0).strip().split("\\s+");
            long tick = 10_000_000L; // USER_HZ = 100 on Linux
            long busy = Long.parseLong(f[1]) + Long.parseLong(f[2]) + Long.parseLong(f[3]) + Long.parseLong(f[6])
                    + Long.parseLong(f[7]);
            long idle = Long.parseLong(f[4]) + Long.parseLong(f[5]);
            return new long[] {busy * tick, idle * tick, Long.parseLong(f[8]) * tick};
        } catch (IOException | RuntimeException e) {
            return new long[3];
        }
    }

    /** A reading: per tid, the raw counters, and the tid's group. */
    record Split(Map<String, long[]> byTid) {
        /** The counters accumulated since {@code before}, per thread (threads born since count from 0). */
        Split minus(Split before) {
            Map<String, long[]> d = new HashMap<>();
            byTid.forEach((tid, v) -> {
                long[] b = before.byTid.get(tid);
                long[] r = v.clone();
                if (b != null && b[RAW] == v[RAW]) {
                    for (int i = 0; i < RAW; i++) {
                        r[i] -= b[i];
                    }
                }
                d.put(tid, r);
            });
            return new Split(d);
        }

        /**
         * Per group (submitter, workers, other), {@link #FIELDS} figures per task: on-CPU ns, runnable ns, off ns
         * (the threads' wall time, {@code wall} each, less the two), voluntary and involuntary switches per 1000.
         */
        double[] perTask(long wall, int tasks) {
            double[] out = new double[3 * FIELDS];
            int[] threads = new int[3];
            byTid.values().forEach(v -> {
                int g = (int) v[RAW];
                threads[g]++;
                out[g * FIELDS] += v[0];
                out[g * FIELDS + 1] += v[1];
                out[g * FIELDS + 3] += v[2];
                out[g * FIELDS + 4] += v[3];
            });
            for (int g = 0; g < 3; g++) {
                int b = g * FIELDS;
                // off is meaningful for the submitter and the workers (alive for the whole flood); for "other"
                // it sums short-lived and idle JVM threads and is left out
                out[b + 2] = g == 2 ? 0 : (double) threads[g] * wall - out[b] - out[b + 1];
                out[b] /= tasks;
                out[b + 1] /= tasks;
                out[b + 2] /= tasks;
                out[b + 3] *= 1000.0 / tasks;
                out[b + 4] *= 1000.0 / tasks;
            }
            return out;
        }
    }

    /**
     * The {@code comm} prefix of {@code pool}'s threads as {@link Pools} names them (Linux keeps 15 characters of
     * a thread's name): ours {@code bench-<pool>-}, {@code ForkJoinPool-}, {@code bench-tpe} (both TPEs).
     */
    static String workerPrefix(String pool) {
        String p = switch (pool) {
            case "FJP" -> "ForkJoinPool-";
            case "TPE_ABQ", "TPE_LBQ" -> "bench-tpe";
            default -> "bench-" + pool.toLowerCase() + "-";
        };
        return p.length() > 15 ? p.substring(0, 15) : p;
    }

    /** Reads every thread of this process; the pool's threads are those whose name starts with {@code workers}. */
    static Split read(String workers) {
        Map<String, long[]> m = new HashMap<>();
        try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
            tasks.forEach(t -> {
                try {
                    String comm = Files.readString(t.resolve("comm")).strip();
                    String[] sched = Files.readString(t.resolve("schedstat")).strip().split("\\s+");
                    long vol = 0;
                    long invol = 0;
                    for (String line : Files.readAllLines(t.resolve("status"))) {
                        if (line.startsWith("voluntary_ctxt_switches:")) {
                            vol = Long.parseLong(line.substring(line.indexOf(':') + 1).strip());
                        } else if (line.startsWith("nonvoluntary_ctxt_switches:")) {
                            invol = Long.parseLong(line.substring(line.indexOf(':') + 1).strip());
                        }
                    }
                    int group = comm.equals("flood-submit") ? 0
                            : comm.startsWith(workers) ? 1 : 2;
                    m.put(t.getFileName().toString(),
                            new long[] {Long.parseLong(sched[0]), Long.parseLong(sched[1]), vol, invol, group});
                } catch (IOException | RuntimeException e) {
                    // the thread ended while we read it: leave it out
                }
            });
        } catch (IOException e) {
            // not Linux: no figures
        }
        return new Split(m);
    }
}
