package dev.threadpool.internal.stats;

import dev.threadpool.internal.memory.CacheLine;
import dev.threadpool.internal.memory.Mem;
import dev.threadpool.internal.memory.PoolMemory;
import java.lang.foreign.MemorySegment;

/**
 * Per-worker busy / idle time, measured at the idle boundaries only (none per task: a span begins at a clock
 * read and ends at the idle clock's estimate, with no read on the hand-off, see {@code Idle}, "The idle clock"),
 * and the wake stamp a waker leaves for the wake-latency histogram.
 *
 * <h2>Layout (one PAD block per worker, worker {@code i} at {@code i * BLOCK_LENGTH})</h2>
 * <pre>
 *   BORN_NANOS @0   when the worker started (written once, before anything else)
 *   IDLE_NANOS @8   idle time of finished idle spans, owner-only
 *   IDLE_SINCE @16  start of the idle span in progress, 0 while busy, owner-only
 *   DIED_NANOS @24  when the worker exited, 0 while alive
 *   WAKE_STAMP @32  nanoTime of the last deliberate unpark (written by the waker, read by the worker)
 * </pre>
 * Busy time is derived: {@code (now or died) - born - idle}. A reader takes {@code IDLE_SINCE}, then
 * {@code IDLE_NANOS}, then {@code IDLE_SINCE} again, and retries when the two disagree: the owner ends a span by
 * adding it to {@code IDLE_NANOS} before clearing {@code IDLE_SINCE}, so an unchanged {@code IDLE_SINCE}
 * means the {@code IDLE_NANOS} read belongs to it.
 */
public final class WorkerTimes {
    public static final long BORN_NANOS = 0;
    public static final long IDLE_NANOS = 8;
    public static final long IDLE_SINCE = 16;
    public static final long DIED_NANOS = 24;
    public static final long WAKE_STAMP = 32;
    public static final long BLOCK_LENGTH = CacheLine.PAD;
    /** Reader retries before it settles for a possibly stale pair (only under a storm of idle visits). */
    private static final int READ_RETRIES = 8;

    private final MemorySegment seg;
    private final int workers;

    public WorkerTimes(PoolMemory memory, int workers) {
        this.workers = workers;
        this.seg = memory.allocate("worker times", BLOCK_LENGTH * workers);
    }

    public int workers() {
        return workers;
    }

    private static long off(int w, long field) {
        return BLOCK_LENGTH * w + field;
    }

    /** Owner: the worker starts. Release: pairs with the reader's acquire. */
    public void born(int w, long now) {
        Mem.setLongRelease(seg, off(w, BORN_NANOS), now);
    }

    /** Owner: the worker exits. */
    public void died(int w, long now) {
        endIdle(w, now);
        Mem.setLongRelease(seg, off(w, DIED_NANOS), now);
    }

    /** Owner: an idle span begins (release: a reader that sees it sees the IDLE_NANOS before it). */
    public void beginIdle(int w, long now) {
        Mem.setLongRelease(seg, off(w, IDLE_SINCE), now == 0 ? 1 : now);
    }

    /** Owner: the idle span in progress (if any) ends: IDLE_NANOS first, then IDLE_SINCE cleared (release). */
    public void endIdle(int w, long now) {
        long since = Mem.getLongPlain(seg, off(w, IDLE_SINCE));
        if (since != 0) {
            long idle = Mem.getLongPlain(seg, off(w, IDLE_NANOS));
            Mem.setLongRelease(seg, off(w, IDLE_NANOS), idle + Math.max(0, now - since));
            Mem.setLongRelease(seg, off(w, IDLE_SINCE), 0);
        }
    }

    /** Waker: stamps the unpark it is about to make (release: pairs with {@link #takeWakeStamp}). */
    public void stampWake(int w, long now) {
        Mem.setLongRelease(seg, off(w, WAKE_STAMP), now);
    }

    /** Owner, after park returned because it was woken: the stamp, cleared, or 0 when there was none. */
    public long takeWakeStamp(int w) {
        return Mem.getAndSetLong(seg, off(w, WAKE_STAMP), 0);
    }

    /** {@code [busyNanos, idleNanos]} of worker {@code w} as of {@code now}; zeros if it never started. */
    public long[] busyIdle(int w, long now) {
        long born = Mem.getLongAcquire(seg, off(w, BORN_NANOS));
        if (born == 0) {
            return new long[2];
        }
        long idle = 0;
        for (int attempt = 0; attempt < READ_RETRIES; attempt++) {
            // acquire loads: pair with the owner's release stores in endIdle / beginIdle.
            long s1 = Mem.getLongAcquire(seg, off(w, IDLE_SINCE));
            long done = Mem.getLongAcquire(seg, off(w, IDLE_NANOS));
            long s2 = Mem.getLongAcquire(seg, off(w, IDLE_SINCE));
            idle = done + (s2 != 0 ? Math.max(0, now - s2) : 0);
            if (s1 == s2) {
                break;
            }
        }
        long died = Mem.getLongAcquire(seg, off(w, DIED_NANOS));
        long end = died != 0 ? died : now;
        long life = Math.max(0, end - born);
        idle = Math.min(idle, life);
        return new long[] {life - idle, idle};
    }
}
