package dev.threadpool.internal.stats;

import dev.threadpool.internal.memory.CacheLine;
import dev.threadpool.internal.memory.Mem;
import dev.threadpool.internal.memory.PoolMemory;
import java.lang.foreign.MemorySegment;

/**
 * The pool's lifecycle and activity counters, off-heap, laid out so that no two writers share a line.
 *
 * <h2>Who writes what</h2>
 * <ul>
 *   <li>{@code SUBMITTED} (with the admission bit, see {@code PoolCore}) is written by submitting threads with
 *       an atomic add: it is the acceptance point of every task.</li>
 *   <li>The cold counters ({@code CANCELLED}, {@code REJECTED}, {@code RELEASED_OTHER}) are written with
 *       atomic adds by whoever cancels, rejects or releases a waitable slot: rare events.</li>
 *   <li>Each worker owns one block and is its only writer: plain read of its own value and a release
 *       store ({@link Mem#incrementOwnedRelease}), no read-modify-write on the hot path.</li>
 * </ul>
 * Readers load with acquire. A snapshot reads the worker blocks <em>before</em> the global words, so the
 * monotonic relations {@code finished <= started <= submitted} hold in every snapshot even while the pool
 * runs (each counter is incremented only after the event it counts and after the counters it follows).
 *
 * <pre>
 *   global block:   SUBMITTED @0 | (PAD) CANCELLED @0, REJECTED @8, RELEASED_OTHER @16,
 *                   STALLS_SEEN @24, OVERFLOW_SPAWNED @32, OVERFLOW_RETIRED @40 (LANE_EXTENSION watchdog)
 *   worker block i at WORKER_BLOCKS_OFFSET + i * WORKER_BLOCK_LENGTH (one PAD line each):
 *     STARTED @0  COMPLETED @8  FAILED @16  RELEASED @24  INLINE_RUNS @32  PARKS @40  WAKEUPS @48
 *     SPURIOUS_WAKEUPS @56
 * </pre>
 */
public final class PoolCounters {

    public static final long SUBMITTED_OFFSET = 0;
    public static final long CANCELLED_OFFSET = CacheLine.PAD;
    public static final long REJECTED_OFFSET = CacheLine.PAD + 8;
    public static final long RELEASED_OTHER_OFFSET = CacheLine.PAD + 16;
    /** LANE_EXTENSION watchdog: long-running default-lane tasks seen, overflow workers spawned / retired. */
    public static final long STALLS_SEEN_OFFSET = CacheLine.PAD + 24;
    public static final long OVERFLOW_SPAWNED_OFFSET = CacheLine.PAD + 32;
    public static final long OVERFLOW_RETIRED_OFFSET = CacheLine.PAD + 40;
    public static final long WORKER_BLOCKS_OFFSET = 2L * CacheLine.PAD;

    public static final long STARTED = 0;
    public static final long COMPLETED = 8;
    public static final long FAILED = 16;
    public static final long RELEASED = 24;
    public static final long INLINE_RUNS = 32;
    public static final long PARKS = 40;
    public static final long WAKEUPS = 48;
    public static final long SPURIOUS_WAKEUPS = 56;
    /** WORK_STEALING: successful steals (peer local queue or LIFO slot) and victims tried in vain. */
    public static final long STEALS = 64;
    public static final long STEAL_FAILURES = 72;
    public static final long WORKER_BLOCK_LENGTH = CacheLine.PAD;

    /** The admission bit of the SUBMITTED word: set once shutdown begins; the low 63 bits count tasks. */
    public static final long CLOSED_BIT = Long.MIN_VALUE;

    private final MemorySegment seg;
    private final int workers;

    public PoolCounters(PoolMemory memory, int workers) {
        this.workers = workers;
        this.seg = memory.allocate("counters", WORKER_BLOCKS_OFFSET + WORKER_BLOCK_LENGTH * workers);
    }

    public int workers() {
        return workers;
    }

    // ---- admission + submitted -------------------------------------------------------------------------

    /**
     * Accepts {@code n} tasks unless shutdown has begun. A CAS loop rather than an add-then-undo, so the
     * count is never inflated by a rejected submitter, even for an instant.
     */
    public boolean tryAccept(long n) {
        final MemorySegment s = seg;
        for (;;) {
            long v = Mem.getLongVolatile(s, SUBMITTED_OFFSET);
            if ((v & CLOSED_BIT) != 0) {
                return false;
            }
            // CAS (volatile): the acceptance point, totally ordered with shutdown's getAndOr of CLOSED_BIT:
            // every task is either counted in the value shutdown saw, or sees the bit and is rejected.
            if (Mem.casLong(s, SUBMITTED_OFFSET, v, v + n)) {
                return true;
            }
        }
    }

    /** Sets the admission bit; returns the number of tasks accepted before it (stable from now on). */
    public long closeAdmission() {
        // getAndOr (volatile): pairs with tryAccept's CAS; see there.
        return Mem.getAndOrLong(seg, SUBMITTED_OFFSET, CLOSED_BIT) & ~CLOSED_BIT;
    }

    public boolean admissionClosed() {
        return (Mem.getLongVolatile(seg, SUBMITTED_OFFSET) & CLOSED_BIT) != 0;
    }

    /** Tasks accepted so far. A task whose accept is being undone may be counted for an instant. */
    public long submitted() {
        return Mem.getLongAcquire(seg, SUBMITTED_OFFSET) & ~CLOSED_BIT;
    }

    // ---- cold shared counters ---------------------------------------------------------------------------
    public void addCancelled(long n) { Mem.getAndAddLong(seg, CANCELLED_OFFSET, n); }
    public void addRejected(long n) { Mem.getAndAddLong(seg, REJECTED_OFFSET, n); }
    public void addReleasedOther(long n) { Mem.getAndAddLong(seg, RELEASED_OTHER_OFFSET, n); }
    public long cancelled() { return Mem.getLongAcquire(seg, CANCELLED_OFFSET); }
    public long rejected() { return Mem.getLongAcquire(seg, REJECTED_OFFSET); }
    public long releasedOther() { return Mem.getLongAcquire(seg, RELEASED_OTHER_OFFSET); }
    public void addStallsSeen(long n) { Mem.getAndAddLong(seg, STALLS_SEEN_OFFSET, n); }
    public void addOverflowSpawned(long n) { Mem.getAndAddLong(seg, OVERFLOW_SPAWNED_OFFSET, n); }
    public void addOverflowRetired(long n) { Mem.getAndAddLong(seg, OVERFLOW_RETIRED_OFFSET, n); }
    public long stallsSeen() { return Mem.getLongAcquire(seg, STALLS_SEEN_OFFSET); }
    public long overflowSpawned() { return Mem.getLongAcquire(seg, OVERFLOW_SPAWNED_OFFSET); }
    public long overflowRetired() { return Mem.getLongAcquire(seg, OVERFLOW_RETIRED_OFFSET); }

    // ---- per-worker, single writer ----------------------------------------------------------------------

    /** Owner-only increment of {@code field} in worker {@code w}'s block: plain read, release store. */
    public void increment(int w, long field) {
        Mem.incrementOwnedRelease(seg, WORKER_BLOCKS_OFFSET + WORKER_BLOCK_LENGTH * w + field);
    }

    /** Owner-only add of {@code n} (plain read, release store, as {@link #increment}). */
    public void add(int w, long field, long n) {
        long off = WORKER_BLOCKS_OFFSET + WORKER_BLOCK_LENGTH * w + field;
        // plain read of our own word, release store: pairs with get()'s acquire.
        Mem.setLongRelease(seg, off, Mem.getLongPlain(seg, off) + n);
    }

    public long get(int w, long field) {
        // acquire: pairs with the owner's release store, so what it counted happened-before our read.
        return Mem.getLongAcquire(seg, WORKER_BLOCKS_OFFSET + WORKER_BLOCK_LENGTH * w + field);
    }

    public long sum(long field) {
        long s = 0;
        for (int w = 0; w < workers; w++) {
            s += get(w, field);
        }
        return s;
    }
}
