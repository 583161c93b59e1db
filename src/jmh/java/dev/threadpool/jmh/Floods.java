package dev.threadpool.jmh;

import dev.threadpool.ThreadPool;
import dev.threadpool.WaitGroup;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RecursiveAction;

/**
 * The floods' submit loops, one per side, written once for {@link PoolFloodBench}, {@link BatchFloodBench},
 * {@link FloodCpu} and their fairness test, so every caller floods every pool the same way.
 *
 * <h2>Counting: the same public {@link WaitGroup} on every side</h2>
 * Ours: {@code submit(task, group)}; the pool adds one to the group per task and calls {@code done()} after it.
 * The JDK pools: the submitter adds the whole flood to the group once, then {@code execute}s a task whose body
 * is {@code group.done()} ({@link #doneTask}, one preallocated instance). Both sides pay one {@code done()} per
 * task on the calling worker's own stripe of the group, and the JDK side pays one add per flood where ours pays
 * one per task: if anything, in the JDK pools' favour. (Until 2026-12-06 the JDK pools counted on one shared
 * atomic, {@link Countdown}, while ours counted on its striped group: two workers writing one line per task on
 * one side only. That form is kept as the labelled extra row {@code flood_1m_shared_counter}, on every pool.)
 */
final class Floods {
    /** A flood that has not finished after this long lost a task: fail rather than hang. */
    static final long TIMEOUT_SECONDS = 120;

    private Floods() {
    }

    /** The JDK side's task: one {@code done()} on {@code group} per run, as our pool does after each task. */
    static Runnable doneTask(WaitGroup group) {
        return group::done;
    }

    /** Ours: {@code tasks} x {@code submit(task, group)}, then waits for the group. */
    static void ours(ThreadPool p, Runnable task, WaitGroup group, int tasks) throws InterruptedException {
        for (int i = 0; i < tasks; i++) {
            p.submit(task, group);
        }
        await(group);
    }

    /** A JDK pool: adds {@code tasks} to the group once, {@code execute}s {@code doneTask} that often, waits. */
    static void jdk(ExecutorService e, Runnable doneTask, WaitGroup group, int tasks) throws InterruptedException {
        group.add(tasks); // before the first hand-over, so no done() can find the count below zero
        for (int i = 0; i < tasks; i++) {
            e.execute(doneTask);
        }
        await(group);
    }

    /** Ours, batched: {@code submitBatch(tasks, 0, len, group)} per batch of {@code tasks.length}, then waits. */
    static void oursBatched(ThreadPool p, Runnable[] batch, WaitGroup group, int tasks) throws InterruptedException {
        int b = batch.length;
        for (int i = 0; i < tasks; i += b) {
            int len = Math.min(b, tasks - i); // the last batch may be short
            int submitted = p.submitBatch(batch, 0, len, group);
            if (submitted != len) {
                throw new IllegalStateException("submitBatch took " + submitted + " of " + len);
            }
        }
        await(group);
    }

    /** Waits for a flood's group; a flood that does not finish in time lost a task: fail rather than hang. */
    static void await(WaitGroup g) throws InterruptedException {
        if (!g.await(Duration.ofSeconds(TIMEOUT_SECONDS))) {
            throw new IllegalStateException("flood did not finish: " + g.pending() + " outstanding");
        }
    }

    /**
     * ForkJoinPool's batching idiom, allocation-free as ours' batch is: per batch, one external task that
     * forks its children inside the pool, where they go to the forking worker's own deque (no external
     * submission per child) and are stolen from there. The children and the batch tasks are built once and
     * reused the way FJP documents it, {@link RecursiveAction#reinitialize()} before each new fork; a
     * ForkJoinTask may be reinitialized only once it has completed, and a child's {@code done()} on the group
     * comes before FJP marks it completed, so each reuse first {@code quietlyJoin}s the task (a status read when
     * it is done, which after the group's await it all but always is). Those two calls are the user's price of
     * reusing tasks on FJP and are inside the timing, as they would be inside the user's loop.
     */
    static final class FjBatches {
        private final ForkJoinPool pool;
        private final Batch[] batches;
        private final WaitGroup group;
        /** Whether a flood ran before: only then are the batch tasks completed ones to reinitialize. */
        private boolean used;

        FjBatches(ForkJoinPool pool, WaitGroup group, int tasks, int batch) {
            if (batch < 1 || tasks < 1) {
                throw new IllegalArgumentException("tasks and batch must be >= 1, got " + tasks + ", " + batch);
            }
            this.pool = pool;
            this.group = group;
            this.batches = new Batch[(tasks + batch - 1) / batch];
            for (int k = 0; k < batches.length; k++) {
                int len = Math.min(batch, tasks - k * batch);
                Child[] children = new Child[len];
                for (int c = 0; c < len; c++) {
                    children[c] = new Child(group);
                }
                batches[k] = new Batch(children);
            }
        }

        /** One flood: every batch task executed from outside, each forking its children; waits for the group. */
        void flood(int tasks) throws InterruptedException {
            group.add(tasks); // every child counts one done, as ours' batch does
            for (Batch b : batches) {
                if (used) {
                    b.quietlyJoin(); // completed in the last flood (see the class comment); then reusable
                    b.reinitialize();
                }
                pool.execute(b);
            }
            used = true;
            await(group);
        }

        /** Tasks one flood runs. */
        int tasks() {
            int n = 0;
            for (Batch b : batches) {
                n += b.children.length;
            }
            return n;
        }
    }

    /** A batch: forks its children into the running worker's deque. */
    private static final class Batch extends RecursiveAction {
        private final Child[] children;
        /**
         * Whether these children were forked before. Plain: written by the worker that ran this batch, read by
         * the worker that runs it in the next flood, after the submitter's quietlyJoin saw this batch completed
         * and its execute handed it over again (both ForkJoinTask's own happens-before edges).
         */
        private boolean forkedBefore;

        Batch(Child[] children) {
            this.children = children;
        }

        @Override
        protected void compute() {
            boolean reuse = forkedBefore;
            forkedBefore = true;
            for (Child c : children) {
                if (reuse) {
                    c.quietlyJoin(); // completed in the last flood; reinitialize is defined only then
                    c.reinitialize();
                }
                c.fork();
            }
        }
    }

    /** A child: the no-op task, counted on the group (our pool calls the same done() after each task). */
    private static final class Child extends RecursiveAction {
        private final WaitGroup group;

        Child(WaitGroup group) {
            this.group = group;
        }

        @Override
        protected void compute() {
            group.done();
        }
    }
}
