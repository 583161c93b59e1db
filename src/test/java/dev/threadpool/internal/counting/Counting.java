package dev.threadpool.internal.counting;

import java.util.ArrayList;
import java.util.List;

/** Runs the scenarios inside one {@link CountingLoader}, variant by variant: what the test and the table share. */
public final class Counting {
    /** The variants, as (SchedulerVariant, QueueKind) constant names: the contract suite's four. */
    public static final List<String[]> VARIANTS = List.of(
            new String[] {"GLOBAL_QUEUE", "RING"},
            new String[] {"WORK_STEALING", "RING"},
            new String[] {"WORK_STEALING", "CHASE_LEV"},
            new String[] {"LANE_EXTENSION", "RING"});
    /** Issue 48 budgets at 64 workers. */
    public static final int WORKERS = 64;

    private final CountingLoader loader = new CountingLoader();
    private final Scenarios scenarios;

    public Counting() {
        try {
            Class<?> c = loader.loadClass("dev.threadpool.internal.scheduler.CountingScenarios");
            scenarios = (Scenarios) c.getConstructor().newInstance();
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot load the counting scenarios", e);
        }
    }

    public CountingLoader loader() {
        return loader;
    }

    /** A variant's display name: "WORK_STEALING CHASE_LEV", "GLOBAL_QUEUE". */
    public static String name(String[] v) {
        return v[0].equals("GLOBAL_QUEUE") || v[0].equals("LANE_EXTENSION") && v[1].equals("RING") ? v[0]
                : v[0] + " " + v[1];
    }

    /** Runs one path on one variant; null where the variant has no such path. */
    public Scenarios.Run run(Path path, String[] variant, int tasks) throws Exception {
        return scenarios.run(path, variant[0], variant[1], WORKERS, tasks);
    }

    /** The mixed flood of {@link Scenarios#flood} on one variant. */
    public Scenarios.Run flood(String[] variant, int tasks) throws Exception {
        return scenarios.flood(variant[0], variant[1], WORKERS, tasks);
    }

    /** The work each path counts over: enough tasks that the batched and coalesced parts average out. */
    public static int tasksFor(Path path) {
        return switch (path) {
            case OUTSIDE_DETACHED, OUTSIDE_DESCRIPTOR, OUTSIDE_GROUP -> 2048;
            case OUTSIDE_DETACHED_BUSY, OUTSIDE_DESCRIPTOR_BUSY -> 2048;
            case WORKER_SUBMIT, WORKER_GROUP, JOIN_OFFERED, JOIN_DEEP -> 4096;
            case WORKER_SUBMIT_BUSY, WORKER_GROUP_BUSY -> 4096;
            case STEAL -> 512;
            case JOIN_STOLEN -> 32;
            case PARK_WAKE -> 32;
            case IDLE_LOOK, IDLE_LOOK_BUSY, PARK_RECHECK -> 8;
        };
    }

    /** Every path on every variant that has it, reduced. */
    public List<Summary> measureAll() throws Exception {
        return measure(List.of(Path.values()));
    }

    /** The given paths on every variant that has them, reduced. */
    public List<Summary> measure(List<Path> paths) throws Exception {
        List<Summary> out = new ArrayList<>();
        for (Path p : paths) {
            for (String[] v : VARIANTS) {
                Scenarios.Run r = run(p, v, tasksFor(p));
                if (r != null) {
                    out.add(Summary.of(p, name(v), r));
                }
            }
        }
        return out;
    }

    /**
     * Prints every path's counts (or only those of the {@link Path} names given as arguments), line by line, with
     * the all-shared lines written: for exploring a change.
     */
    public static void main(String[] args) throws Exception {
        Counting c = new Counting();
        List<Path> paths = args.length == 0 ? List.of(Path.values())
                : java.util.Arrays.stream(args).map(Path::valueOf).toList();
        for (Summary s : c.measure(paths)) {
            System.out.println(s.path() + " | " + s.variant() + " | allStores " + s.fraction(s.allStores()) + " allRmw "
                    + s.fraction(s.allRmws()) + " few " + s.fraction(s.fewWrites()) + " owner "
                    + s.fraction(s.ownerWrites()) + " full " + s.fraction(s.fullFences()) + " light "
                    + s.fraction(s.lightFences()) + " heap " + s.fraction(s.heapAtomics()) + " SUBMITTED "
                    + s.fraction(s.submittedRmws()) + " freelist " + s.fraction(s.freelistRmws()) + " linesRead "
                    + s.fraction(s.linesRead()) + " allLinesRead " + s.fraction(s.allLinesRead()) + " unmapped "
                    + s.unmappedWrites() + " outsideWakes " + Summary.format(s.allSharedWritesOutsideWakesPerTask()) + " | " + s.note());
            s.allSharedWrites().forEach((k, n) -> System.out.println("      " + k + " : " + s.fraction(n)));
        }
    }
}
