package dev.threadpool.examples;

import dev.threadpool.PoolConfig;
import dev.threadpool.PoolStats;
import dev.threadpool.SchedulerVariant;
import dev.threadpool.ThreadPool;
import dev.threadpool.WaitGroup;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;

/**
 * A game-loop frame job system: every frame fans the entity update out into jobs (one slice of the entity
 * arrays each), waits for all of them at a {@link WaitGroup} barrier, then runs the "render" step on the main
 * thread. Prints the frame-time percentiles and checks the simulation against a serial run.
 *
 * <pre>mvn -q validate test-compile exec:exec@example -Dexample=GameLoop -Dexample.args="600 64 100000"</pre>
 * Arguments: frames (600), jobs per frame (64), entities (100000).
 */
public final class GameLoop {
    private GameLoop() {}

    public static void main(String[] args) throws Exception {
        int frames = Args.intArg(args, 0, "frames", 600);
        int jobs = Args.intArg(args, 1, "jobs", 64);
        int entities = Args.intArg(args, 2, "entities", 100_000);
        int threads = Math.max(2, Math.min(Runtime.getRuntime().availableProcessors(), 8));

        float[] x = new float[entities], v = new float[entities];
        for (int i = 0; i < entities; i++) {
            v[i] = (i % 17) * 0.25f - 2f;
        }
        long[] frameNanos = new long[frames];
        // Work stealing suits fork/join-shaped frames; capacity only needs one frame's jobs.
        try (ThreadPool pool = ThreadPool.create(PoolConfig.builder().maxThreads(threads)
                .queueCapacity(Math.max(2, Integer.highestOneBit(jobs) << 1))
                .schedulerVariant(SchedulerVariant.WORK_STEALING).threadNamePrefix("frame-job-").build())) {
            Runnable[] update = new Runnable[jobs]; // made once: the frame loop itself allocates nothing per job
            int slice = (entities + jobs - 1) / jobs;
            for (int j = 0; j < jobs; j++) {
                int from = Math.min(entities, j * slice), to = Math.min(entities, from + slice);
                update[j] = () -> {
                    for (int i = from; i < to; i++) {
                        float nv = v[i] * 0.999f - 0.0098f; // drag and gravity, 1/60 s steps
                        v[i] = x[i] + nv < 0 ? -nv : nv;   // bounce off the floor at 0
                        x[i] += v[i];
                    }
                };
            }
            WaitGroup frame = new WaitGroup();
            for (int f = 0; f < frames; f++) {
                long t0 = System.nanoTime();
                for (Runnable job : update) {
                    pool.submit(job, frame);
                }
                Args.check(frame.await(Duration.ofSeconds(30)), "frame " + f + " finished");
                render(x);
                frameNanos[f] = System.nanoTime() - t0;
            }
            PoolStats s = pool.statsSnapshot();
            Args.check(s.completed() == (long) frames * jobs, "every job ran: " + s);
        }
        Args.check(Arrays.equals(x, serial(frames, entities)), "parallel frames equal the serial simulation");

        long[] sorted = frameNanos.clone();
        Arrays.sort(sorted);
        System.out.printf(Locale.ROOT, "GameLoop: %d frames x %d jobs over %d entities on %d workers%n",
                frames, jobs, entities, threads);
        System.out.printf(Locale.ROOT, "  frame time us: p50 %.1f  p90 %.1f  p99 %.1f  max %.1f%n",
                Args.percentileMicros(sorted, 0.50), Args.percentileMicros(sorted, 0.90),
                Args.percentileMicros(sorted, 0.99), sorted[sorted.length - 1] / 1_000.0);
        System.out.println("  simulation matches the serial run: OK");
    }

    private static volatile float sink;

    private static void render(float[] x) {
        sink = x[0]; // stands in for the main thread's render step
    }

    private static float[] serial(int frames, int entities) {
        float[] x = new float[entities], v = new float[entities];
        for (int i = 0; i < entities; i++) {
            v[i] = (i % 17) * 0.25f - 2f;
        }
        for (int f = 0; f < frames; f++) {
            for (int i = 0; i < entities; i++) {
                float nv = v[i] * 0.999f - 0.0098f;
                v[i] = x[i] + nv < 0 ? -nv : nv;
                x[i] += v[i];
            }
        }
        return x;
    }
}
