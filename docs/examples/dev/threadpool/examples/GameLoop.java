package dev.threadpool.examples;

import dev.threadpool.PoolConfig;
import dev.threadpool.SchedulerVariant;
import dev.threadpool.ThreadPool;
import dev.threadpool.WaitGroup;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinTask;
import java.util.concurrent.RecursiveAction;
import java.util.function.IntConsumer;

/**
 * A game-loop frame job system, run on this pool and on a {@link ForkJoinPool} of the same parallelism.
 * Every frame fans the entity update out into jobs (one slice of the entity arrays each), waits for all of
 * them, then runs the "render" step on the main thread. Each side simulates its own copy of the same world
 * (same entities, same jobs, same frames); both are checked against a serial run, and the frame-time
 * percentiles of the two are printed side by side.
 *
 * <p>How it is measured: first {@code warmup} frames per side (not recorded: JIT, thread start-up, caches),
 * then {@code frames} recorded frames per side. Both phases alternate between the sides in blocks of
 * {@value #BLOCK} frames, the first side swapped every block, so machine drift (other processes, frequency)
 * falls on both sides alike. Both pools stay up the whole time, as a game's would.
 *
 * <p>Our side: one {@link ThreadPool#parallelFor parallelFor(0, jobs, 1, ...)} per frame on
 * {@code GLOBAL_QUEUE}. Called from outside the pool, parallelFor lets the frame thread take part (on the FJP
 * side it does not: {@code ForkJoinPool.invoke}'s caller parks until the root completes, since JDK 25's external
 * join helps only in the common pool): it offers the range to one helper task per worker and starts on the jobs
 * itself at once, so the frame's first job does not wait for a parked worker's wake, and the frame thread, busy
 * until the last job is claimed, waits only for jobs already running elsewhere. Measured against the earlier
 * form (one {@link ThreadPool#submitBatch} and a {@link WaitGroup} the jobs count themselves out of, the frame
 * thread parked until the last job's {@code done}), ten runs each on a 2-core machine: frame p50 0.87x-1.03x of
 * FJP's became 0.63x-0.79x and p90 1.28x-1.67x became 0.92x-1.23x; p99 stayed within this machine's noise on
 * both sides (docs/PERFORMANCE_TRACKING.md, entry 49). Over 32 later runs the p99 was no worse than FJP's in 27
 * (0.18x-2.38x; entry 53): the 20 slowest of 2,000 frames, which a lost scheduling slice decides on either side.
 *
 * <p>The ForkJoinPool side is what a user of it would write: one {@link RecursiveAction} per job, made once and
 * {@link ForkJoinTask#reinitialize() reinitialized} every frame, and a root action whose {@code compute} is
 * {@link ForkJoinTask#invokeAll(ForkJoinTask[]) invokeAll(jobs)}, run with {@link ForkJoinPool#invoke}.
 *
 * <pre>mvn -q validate test-compile exec:exec@example -Dexample=GameLoop -Dexample.args="2000 64 100000 200"</pre>
 * Arguments: recorded frames per side (2000), jobs per frame (64), entities (100000), warm-up frames per
 * side (200).
 */
public final class GameLoop {
    /** Frames one side runs before the other side takes over. */
    static final int BLOCK = 20;

    private GameLoop() {}

    /** The simulated entities: position and velocity per entity. */
    static final class World {
        final float[] x;
        final float[] v;

        World(int entities) {
            x = new float[entities];
            v = new float[entities];
            for (int i = 0; i < entities; i++) {
                v[i] = (i % 17) * 0.25f - 2f;
            }
        }

        /** One 1/60 s step of the entities in {@code [from, to)}. */
        void update(int from, int to) {
            float[] xs = x;
            float[] vs = v;
            for (int i = from; i < to; i++) {
                float nv = vs[i] * 0.999f - 0.0098f; // drag and gravity
                vs[i] = xs[i] + nv < 0 ? -nv : nv;   // bounce off the floor at 0
                xs[i] += vs[i];
            }
        }
    }

    /** One side of the comparison: runs one whole frame (fan-out, barrier) per call. */
    interface FrameRunner extends AutoCloseable {
        void frame(int f) throws Exception;
    }

    /**
     * This pool: each frame is one {@link ThreadPool#parallelFor} over the job indices, in which the frame thread
     * runs jobs too. The jobs and the body are made once, so the frame loop allocates nothing per job (the call
     * itself allocates three small objects per frame).
     */
    static final class Ours implements FrameRunner {
        final ThreadPool pool;
        final Runnable[] jobs;
        final IntConsumer body;
        /** Runs of each job; plain: one frame's parallelFor returns after its jobs, which orders the frames. */
        final int[] runs;

        Ours(int threads, World w, int jobCount) {
            // GLOBAL_QUEUE: the frame thread is the only submitter and the jobs do not fork, so one shared
            // ring is all the frame needs (it carries one helper task per worker).
            pool = ThreadPool.create(PoolConfig.builder().maxThreads(threads)
                    .queueCapacity(Math.max(2, Integer.highestOneBit(threads) << 1))
                    .schedulerVariant(SchedulerVariant.GLOBAL_QUEUE).threadNamePrefix("frame-job-").build());
            jobs = new Runnable[jobCount];
            runs = new int[jobCount];
            int entities = w.x.length;
            int slice = (entities + jobCount - 1) / jobCount;
            for (int j = 0; j < jobCount; j++) {
                int from = Math.min(entities, j * slice);
                int to = Math.min(entities, from + slice);
                int job = j;
                jobs[j] = () -> {
                    w.update(from, to);
                    runs[job]++;
                };
            }
            Runnable[] js = jobs;
            body = i -> js[i].run();
        }

        @Override
        public void frame(int f) throws InterruptedException {
            pool.parallelFor(0, jobs.length, 1, body); // grain 1: a job is the smallest piece claimed
        }

        @Override
        public void close() {
            pool.close();
        }
    }

    /** ForkJoinPool: a root action that invokeAll's the (reinitialized) job actions. */
    static final class Fjp implements FrameRunner {
        final ForkJoinPool pool;
        final Job[] jobs;
        final Frame root;

        static final class Job extends RecursiveAction {
            private static final long serialVersionUID = 1L;
            final transient World w;
            final int from;
            final int to;

            Job(World w, int from, int to) {
                this.w = w;
                this.from = from;
                this.to = to;
            }

            @Override
            protected void compute() {
                w.update(from, to);
            }
        }

        static final class Frame extends RecursiveAction {
            private static final long serialVersionUID = 1L;
            final Job[] jobs;

            Frame(Job[] jobs) {
                this.jobs = jobs;
            }

            @Override
            protected void compute() {
                invokeAll(jobs); // forks all but the first, runs the first here, joins the rest
            }
        }

        Fjp(int threads, World w, int jobCount) {
            pool = new ForkJoinPool(threads);
            jobs = new Job[jobCount];
            int entities = w.x.length;
            int slice = (entities + jobCount - 1) / jobCount;
            for (int j = 0; j < jobCount; j++) {
                int from = Math.min(entities, j * slice);
                jobs[j] = new Job(w, from, Math.min(entities, from + slice));
            }
            root = new Frame(jobs);
        }

        @Override
        public void frame(int f) {
            for (Job j : jobs) {
                j.reinitialize(); // a ForkJoinTask runs once per initialisation; reuse instead of allocating
            }
            root.reinitialize();
            pool.invoke(root);
        }

        @Override
        public void close() throws InterruptedException {
            pool.shutdown();
            Args.check(pool.awaitTermination(30, java.util.concurrent.TimeUnit.SECONDS), "ForkJoinPool terminated");
        }
    }

    public static void main(String[] args) throws Exception {
        int frames = Args.intArg(args, 0, "frames", 2000);
        int jobs = Args.intArg(args, 1, "jobs", 64);
        int entities = Args.intArg(args, 2, "entities", 100_000);
        int warmup = Args.intArg(args, 3, "warmup", 200);
        int threads = Math.max(2, Math.min(Runtime.getRuntime().availableProcessors(), 8));

        World oursWorld = new World(entities);
        World fjpWorld = new World(entities);
        long[] oursNanos = new long[frames];
        long[] fjpNanos = new long[frames];
        int[] oursRuns;
        try (Ours ours = new Ours(threads, oursWorld, jobs); Fjp fjp = new Fjp(threads, fjpWorld, jobs)) {
            run(ours, fjp, warmup, null, null);
            run(ours, fjp, frames, oursNanos, fjpNanos);
            oursRuns = ours.runs;
        }
        for (int j = 0; j < jobs; j++) {
            Args.check(oursRuns[j] == warmup + frames, "job " + j + " ran once per frame: " + oursRuns[j]);
        }
        float[] expect = serial(warmup + frames, entities);
        Args.check(Arrays.equals(oursWorld.x, expect), "our frames equal the serial simulation");
        Args.check(Arrays.equals(fjpWorld.x, expect), "ForkJoinPool frames equal the serial simulation");

        System.out.printf(Locale.ROOT, "GameLoop: %d jobs per frame over %,d entities, %d workers on each side%n",
                jobs, entities, threads);
        System.out.printf(Locale.ROOT, "  %d warm-up frames per side, then %d recorded frames per side; the sides"
                + " alternate in blocks of %d frames%n", warmup, frames, BLOCK);
        System.out.print(SideBySide.table("frame time (us)", oursNanos, fjpNanos));
        System.out.println("  simulation matches the serial run on both sides: OK");
    }

    /**
     * Runs {@code frames} frames on each side, in alternating blocks of {@link #BLOCK}, the first side swapped
     * every block; records each frame's time (fan-out to render) when the arrays are given.
     */
    private static void run(FrameRunner ours, FrameRunner fjp, int frames, long[] oursNanos, long[] fjpNanos)
            throws Exception {
        for (int start = 0, block = 0; start < frames; start += BLOCK, block++) {
            int end = Math.min(frames, start + BLOCK);
            boolean oursFirst = (block & 1) == 0;
            runBlock(oursFirst ? ours : fjp, start, end, oursFirst ? oursNanos : fjpNanos);
            runBlock(oursFirst ? fjp : ours, start, end, oursFirst ? fjpNanos : oursNanos);
        }
    }

    private static void runBlock(FrameRunner side, int start, int end, long[] nanos) throws Exception {
        for (int f = start; f < end; f++) {
            long t0 = System.nanoTime();
            side.frame(f);
            render();
            long t = System.nanoTime() - t0;
            if (nanos != null) {
                nanos[f] = t;
            }
        }
    }

    private static volatile int sink;

    private static void render() {
        sink++; // stands in for the main thread's render step
    }

    private static float[] serial(int frames, int entities) {
        World w = new World(entities);
        for (int f = 0; f < frames; f++) {
            w.update(0, entities);
        }
        return w.x;
    }
}
