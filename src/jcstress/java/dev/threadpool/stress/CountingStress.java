package dev.threadpool.stress;

import dev.threadpool.QueueKind;
import dev.threadpool.SchedulerVariant;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One counting stress run, like seed 002's stress.c: items 1..N go through a structure, every item that comes
 * out is counted, and the run prints {@code lost L  duplicated D  -> OK} (exit 0) or {@code -> BROKEN}
 * (exit 1). {@link StressLauncher} runs this many times under several JIT modes.
 *
 * <pre>
 *   java -cp ... dev.threadpool.stress.CountingStress &lt;subject&gt; [items] [threads]
 * </pre>
 */
public final class CountingStress {
    static final Map<String, StressSubject> SUBJECTS = new LinkedHashMap<>();

    /**
     * The 64-worker subjects (issue 48). {@link StressLauncher} leaves them out of its default list: CI runs them
     * in an execution of their own ({@code stress-64} in pom.xml), with fewer runs and items, since 64 workers on
     * a 2-core box make each run slower; {@code --subjects} names them for a run by hand.
     */
    static final List<String> WIDE = List.of("pool-64", "pool-ws-64", "pool-ws-cl-64", "pool-lanes-64",
            "pool-ws-64-q4096", "pool-outside-full-64");

    static {
        register(new BoundedRingSubject());
        register(new CarriedRingSubject());
        register(new CarriedCloseSubject());
        register(new CarriedCloseSubject("carried-close-16", 16)); // issue 48: stripes past 8, spreading
        register(new CarriedBatchesSubject());
        register(new PoolSubject());
        register(new PoolSubject("pool-ws", SchedulerVariant.WORK_STEALING));
        register(new PoolSubmitterSubject());
        register(new LanePoolSubject());
        register(new RingQueueSubject());
        register(new DescCacheSubject());
        register(new LifoSlotSubject());
        register(new WorkDequeSubject());
        register(new WaitGroupSubject());
        register(new JoinTreeSubject(false));
        register(new JoinTreeSubject(true));
        // issue 49: fork handles (fork/join, forks left open, forkLong sums checked at every node)
        register(new ForkTreeSubject(false));
        register(new ForkTreeSubject(true));
        register(new ParallelForSubject());
        // issue 44: tasks in argument form, each (ctx, arg) pair counted once, on every path a task can take
        register(new ArgsPoolSubject("pool-args", SchedulerVariant.GLOBAL_QUEUE, ArgsPoolSubject.Kind.OUTSIDE));
        register(new ArgsPoolSubject("pool-ws-args", SchedulerVariant.WORK_STEALING, ArgsPoolSubject.Kind.WORKERS));
        register(new ArgsPoolSubject("pool-lanes-args", SchedulerVariant.LANE_EXTENSION,
                ArgsPoolSubject.Kind.OUTSIDE));
        register(new ArgsPoolSubject("pool-args-waitable", SchedulerVariant.WORK_STEALING,
                ArgsPoolSubject.Kind.WAITABLE));
        // issue 44: batches in argument form (submitBatch(fn, ctx, args, from, to)), from outside and from workers
        register(new BatchArgsPoolSubject("pool-batch-args", SchedulerVariant.GLOBAL_QUEUE, QueueKind.RING));
        register(new BatchArgsPoolSubject("pool-ws-batch-args", SchedulerVariant.WORK_STEALING, QueueKind.RING));
        register(new BatchArgsPoolSubject("pool-ws-cl-batch-args", SchedulerVariant.WORK_STEALING,
                QueueKind.CHASE_LEV));
        register(new BatchArgsPoolSubject("pool-lanes-batch-args", SchedulerVariant.LANE_EXTENSION, QueueKind.RING));
        // issue 48: the whole pool at 64 workers (PoolConfig.MAX_THREADS) on every variant
        register(new PoolSubject("pool-64", SchedulerVariant.GLOBAL_QUEUE, QueueKind.RING, 64));
        register(new PoolSubject("pool-ws-64", SchedulerVariant.WORK_STEALING, QueueKind.RING, 64));
        register(new PoolSubject("pool-ws-cl-64", SchedulerVariant.WORK_STEALING, QueueKind.CHASE_LEV, 64));
        register(new LanePoolSubject("pool-lanes-64", 64, 16, 0));
        // issue 48: 64 workers over the default capacity, so carried tasks spread over 16 stripes
        register(new PoolSubject("pool-ws-64-q4096", SchedulerVariant.WORK_STEALING, QueueKind.RING, 64, 4096));
        // issue 48: many outside threads on FULL timestamps through the outside stripes' descriptor caches: a small
        // table that fills (drains of other stripes, space waiters), and 64 workers with the default capacity
        register(new OutsideFullSubject());
        register(new OutsideFullSubject("pool-outside-full-64", SchedulerVariant.GLOBAL_QUEUE, 64, 0));
    }

    static void register(StressSubject s) {
        SUBJECTS.put(s.name(), s);
    }

    private CountingStress() {}

    public static void main(String[] args) throws Exception {
        if (args.length < 1 || !SUBJECTS.containsKey(args[0])) {
            System.err.println("usage: CountingStress <subject> [items] [threads]; subjects: " + SUBJECTS.keySet());
            System.exit(2);
        }
        StressSubject subject = SUBJECTS.get(args[0]);
        int items = args.length > 1 ? Integer.parseInt(args[1]) : 1_000_000;
        int threads = args.length > 2 ? Integer.parseInt(args[2]) : 4;
        Seen seen = new Seen(items);
        long t0 = System.nanoTime();
        String detail = subject.run(items, threads, seen);
        long ms = (System.nanoTime() - t0) / 1_000_000;
        long lost = seen.lost();
        long dup = seen.duplicated();
        boolean ok = lost == 0 && dup == 0;
        System.out.printf("%-14s items %d  %s  %d ms%n", subject.name(), items, detail, ms);
        System.out.printf("%-14s lost %d  duplicated %d  -> %s%n", subject.name(), lost, dup, ok ? "OK" : "BROKEN");
        System.exit(ok ? 0 : 1);
    }
}
