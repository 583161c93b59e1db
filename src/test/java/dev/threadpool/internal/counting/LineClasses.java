package dev.threadpool.internal.counting;

import dev.threadpool.internal.queue.BoundedRing;
import dev.threadpool.internal.queue.RingQueue;
import dev.threadpool.internal.queue.WorkDeque;
import dev.threadpool.internal.stats.PoolCounters;
import java.util.List;
import java.util.function.LongFunction;
import java.util.regex.Pattern;

/**
 * Who may write each off-heap line of a pool, by the purpose of its block (the string given to
 * {@code PoolMemory.allocate}) and, where a block mixes per-worker rows and pool-wide words, the line's offset
 * in the block. The reason of each row is the layout class's own "who writes what".
 *
 * <ul>
 *   <li>{@link LineClass#OWNER}: one thread writes the line (a worker's own counters, a local queue's tail and
 *       cells, a descriptor cache). Checked empirically: {@code SharedWriteBudgetTest} fails when a flood shows a
 *       second writer.</li>
 *   <li>{@link LineClass#FEW}: a bounded party per line: a worker and the thieves of its queue, a descriptor's
 *       submitter and its runner, a carried stripe's submitters, an outside admission stripe's threads (its admission word, its descriptor
 *       cache).</li>
 *   <li>{@link LineClass#ALL}: any worker of the pool may write it on a hot path: pool-wide counters, the idle
 *       mask, SEARCHING, the freelist head, the inject ring. A write here per task is what stops a pool scaling.</li>
 * </ul>
 * A purpose with no row fails the classification ({@link #classify}): a new block must say who writes it.
 */
public final class LineClasses {

    /** The classes of line, by who may write them. */
    public enum LineClass { OWNER, FEW, ALL }

    /** The class of one line, and the layout's reason. */
    public record Verdict(LineClass lineClass, String what, String reason) {}

    /** A row of the table: purposes matching {@code purpose}, and the verdict for a line at a block offset. */
    public record Row(Pattern purpose, LongFunction<Verdict> byOffset) {}

    private static final long PAD = Recorder.LINE;

    private static Row row(String purposeRegex, LineClass c, String what, String reason) {
        Verdict v = new Verdict(c, what, reason);
        return new Row(Pattern.compile(purposeRegex), off -> v);
    }

    private static Verdict v(LineClass c, String what, String reason) {
        return new Verdict(c, what, reason);
    }

    /** The table. First matching row wins. */
    public static final List<Row> TABLE = List.of(
            new Row(Pattern.compile("counters"), off -> off < PoolCounters.Layout.COLD_BLOCK_OFFSET
                    ? v(LineClass.ALL, "SUBMITTED", "PoolCounters: the admission bit, set by the shutdown's getAndOr;"
                            + " no task is accepted on it (the SUBMITTED RMW column would show one that is)")
                    : off < PoolCounters.Layout.OUTSIDE_STRIPES_OFFSET
                    ? v(LineClass.ALL, "cold counters", "PoolCounters: rare atomic adds by any thread (rejected,"
                            + " cancelled, released by others)")
                    : off < PoolCounters.Layout.WORKER_BLOCKS_OFFSET
                    ? v(LineClass.FEW, "outside stripe", "PoolCounters: the admission CAS of the outside threads"
                            + " (neither workers nor registered submitters) whose thread id hashes to this stripe;"
                            + " the shutdown's one getAndOr")
                    : v(LineClass.OWNER, "worker block, submitter word", "PoolCounters: each worker owns its block"
                            + " (plain + release; its ADMITTED word by CAS), each registered submitter slot its"
                            + " ADMITTED word (CAS); the shutdown's one getAndOr on each is not a hot path")),
            row("idle mask", LineClass.ALL, "IDLE_MASK, WAKE_HINT",
                    "ParkingLot: every worker announces and retracts its bit; any waker clears one"),
            row("workers_nonempty", LineClass.ALL, "NONEMPTY, HELD, JOINS",
                    "WorkSummary: one line of three bitmaps; every worker sets and clears its own bits (NONEMPTY as"
                            + " its local queue fills and empties, HELD and JOINS once per run of work)"),
            new Row(Pattern.compile("wake coalescer"), off -> off < PAD
                    ? v(LineClass.ALL, "SEARCHING", "WakeCoalescer: every searching worker, getAndAdd +1/-1")
                    : v(LineClass.ALL, "SUBMITS", "WakeCoalescer: every coalesced submit, getAndAdd")),
            row("descriptor freelist head", LineClass.ALL, "FREE_HEAD",
                    "Freelist: every pop and push of a descriptor, by any submitter or worker"),
            row("task descriptors", LineClass.FEW, "descriptor pair",
                    "DescriptorTable: a descriptor is written by its submitter, then its runner (64-byte stride:"
                            + " two descriptors per 128-byte pair)"),
            new Row(Pattern.compile("(blocking )?inject ring"), off -> off < BoundedRing.Layout.TAIL_OFFSET
                    ? v(LineClass.ALL, "head", "BoundedRing (inject): every consumer's claim CAS")
                    : off < BoundedRing.Layout.CELLS_OFFSET
                    ? v(LineClass.ALL, "tail", "BoundedRing (inject): every producer's claim CAS")
                    : v(LineClass.FEW, "cells", "BoundedRing: a cell is written by the producer and the consumer of"
                            + " its position (8 cells a line: a handful of neighbouring tasks' parties)")),
            new Row(Pattern.compile("carried-task ring( \\d+)?"), off -> off < BoundedRing.Layout.TAIL_OFFSET
                    ? v(LineClass.ALL, "head", "BoundedRing (carried stripe): any worker claims a batch at the head")
                    : off < BoundedRing.Layout.CELLS_OFFSET
                    ? v(LineClass.FEW, "tail", "BoundedRing (carried stripe): the outside submitters whose"
                            + " home it is, or whose run of CarriedRings.SPREAD it takes")
                    : v(LineClass.FEW, "cells", "BoundedRing (carried stripe): a cell is written by its submitter"
                            + " and freed by the worker that claimed it")),
            row("carried batches", LineClass.FEW, "STATE(w)",
                    "CarriedBatches: the owner refills, any thread takes an entry (CAS on next)"),
            row("(carried-ring waiters|space waiters)", LineClass.ALL, "CLAIMED, WAITING",
                    "SpaceWaiters: any waiting submitter registers, any worker signals"),
            row("lifo slots", LineClass.FEW, "slot(w)", "LifoSlot: the owner's push and pop, thieves' getAndSet"),
            new Row(Pattern.compile("(local|submitter) queue \\d+"), off -> off < RingQueue.Layout.TAIL_OFFSET
                    ? v(LineClass.FEW, "head", "RingQueue: the owner's pop CAS and its thieves' steal CAS")
                    : v(LineClass.OWNER, "tail, cells", "RingQueue: only the owner pushes")),
            new Row(Pattern.compile("(local|join) deque \\d+ control"), off -> off < WorkDeque.Layout.BOTTOM_OFFSET
                    ? v(LineClass.FEW, "top", "WorkDeque: thieves' CAS, the owner's CAS on the last entry")
                    : v(LineClass.OWNER, "bottom, array", "WorkDeque: only the owner pushes, takes and grows")),
            row("(local|join) deque \\d+ array \\d+", LineClass.OWNER, "slots", "WorkDeque: only the owner writes slots"),
            new Row(Pattern.compile("join frame words"), off -> off < PAD
                    ? v(LineClass.ALL, "WAITERS", "JoinDeques: every owner waiting with nothing to help, getAndAdd")
                    : v(LineClass.FEW, "frame words", "JoinDeques: the owner offers, the thief of the half completes")),
            row("(worker|submitter) descriptor caches", LineClass.OWNER, "cache",
                    "DescCache: one stride per worker or submitter (384 bytes for 64 slots, less for smaller limits),"
                            + " touched by its owner only"),
            row("outside descriptor caches", LineClass.FEW, "stripe cache",
                    "OutsideDescCaches: the outside threads (neither workers nor registered submitters) whose thread id"
                            + " hashes to the stripe take its try-lock (CAS) and pop under it; a thread whose acquire"
                            + " found no slot, a space waiter's poll and the shutdown drain it (rare)"),
            row("submitter mask", LineClass.ALL, "SUBMITTER_MASK", "SubmitterRegistry: any registering thread"),
            row("queue depth peaks", LineClass.ALL, "PEAK", "QueueDepthGauge: any sampling producer"),
            row("worker times", LineClass.FEW, "worker block",
                    "WorkerTimes: the owner's idle clock, and WAKE_STAMP by the worker's waker"),
            new Row(Pattern.compile("watchdog run words"), off -> off < PAD
                    ? v(LineClass.FEW, "OVERFLOW_MASK", "Watchdog: the watchdog and exiting overflow workers")
                    : v(LineClass.OWNER, "run word", "Watchdog: each worker's own run word")),
            row(".* histograms", LineClass.OWNER, "writer block", "LogHistogram: one block per writer"),
            row("worker scratch \\d+", LineClass.OWNER, "scratch", "WorkerScratchBuffer: its worker's own buffer"));

    private LineClasses() {}

    /**
     * The verdict for the line at {@code offset} in a block of {@code purpose}.
     *
     * @throws IllegalArgumentException for a purpose no row names: classify it in {@link #TABLE}
     */
    public static Verdict classify(String purpose, long offset) {
        for (Row r : TABLE) {
            if (r.purpose().matcher(purpose).matches()) {
                return r.byOffset().apply(offset);
            }
        }
        throw new IllegalArgumentException("off-heap block \"" + purpose + "\" has no row in LineClasses.TABLE: say who"
                + " writes its lines (owner only, a few threads, or any worker) and why");
    }
}
