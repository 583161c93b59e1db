package dev.threadpool.internal.scheduler;

import dev.threadpool.ScratchExhaustedException;
import dev.threadpool.WorkerScratch;
import dev.threadpool.internal.memory.PoolMemory;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * One worker's scratch buffer: a bump allocator with LIFO marks over a releasable block of the pool arena.
 *
 * <h2>Purge handshake</h2>
 * {@code state} is FREE, IN_USE (a mark is open on the owner) or PURGING. The owner's outermost {@link #begin}
 * CASes FREE to IN_USE and its outermost {@link #finish} stores FREE (release); a purger ({@link #purge}, from a
 * quiescent-pool maintenance call or from the owner while idle) CASes FREE to PURGING, frees the block and
 * stores FREE. So the block is never freed while a task of the owner holds a mark, and an owner that finds
 * PURGING spins for the few microseconds the release takes. The block reference and the counted size are only
 * written while holding IN_USE (owner, lazy allocation) or PURGING (purger), and read after the CAS that
 * acquired it: the CAS / release-store pair orders them, so plain fields suffice for {@code block}.
 */
final class WorkerScratchBuffer implements WorkerScratch {
    static final int FREE = 0;
    static final int IN_USE = 1;
    static final int PURGING = 2;
    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(WorkerScratchBuffer.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final PoolCore core;
    private final PoolMemory memory;
    private final int index;
    private final long cap;
    private final long[] marks = new long[MAX_NESTING]; // owner-only

    @SuppressWarnings("unused") // accessed through STATE
    private volatile int state;
    private MemorySegment block;          // see the class comment for why plain is enough
    private volatile long countedBytes;   // read by snapshots without the handshake
    private int depth;                    // owner-only
    private long top;                     // owner-only: bytes in use

    WorkerScratchBuffer(PoolCore core, PoolMemory memory, int index, long cap) {
        this.core = core;
        this.memory = memory;
        this.index = index;
        this.cap = cap;
    }

    private void checkOwner() {
        WorkerThread w = core.currentWorker();
        if (w == null || w.index != index) {
            throw new IllegalStateException("worker " + index + "'s scratch used from " + Thread.currentThread()
                    + ": a scratch buffer belongs to one worker; call ThreadPool.scratch() on that worker");
        }
    }

    @Override
    public long begin() {
        checkOwner();
        if (depth == MAX_NESTING) {
            throw new IllegalStateException("more than " + MAX_NESTING + " scratch marks open at once on worker "
                    + index + ": finish one first");
        }
        if (depth == 0) {
            // CAS (volatile): takes the buffer from a purge; pairs with purge()'s CAS and release store.
            while (!STATE.compareAndSet(this, FREE, IN_USE)) {
                Thread.onSpinWait(); // a purge is freeing the block: it takes microseconds
            }
        }
        marks[depth++] = top;
        return top;
    }

    @Override
    public MemorySegment allocate(long bytes, long alignment) {
        checkOwner();
        if (depth == 0) {
            throw new IllegalStateException("WorkerScratch.allocate needs an open mark: call begin() first");
        }
        if (bytes < 0) {
            throw new IllegalArgumentException("bytes must be >= 0: bytes=" + bytes);
        }
        if (alignment < 1 || alignment > MAX_ALIGNMENT || Long.bitCount(alignment) != 1) {
            throw new IllegalArgumentException("alignment must be a power of two in [1, " + MAX_ALIGNMENT
                    + "]: alignment=" + alignment);
        }
        if (cap == 0) {
            throw new ScratchExhaustedException("worker scratch is disabled (workerScratchCapBytes=0)");
        }
        MemorySegment b = block;
        if (b == null) {
            b = memory.allocateReleasable("worker scratch " + index, cap); // first use: cold, counted
            block = b;
            countedBytes = PoolMemory.countedSize(cap);
        }
        long addr = b.address() + top;
        long start = top + ((-addr) & (alignment - 1));
        if (bytes > cap - start) {
            throw new ScratchExhaustedException("worker " + index + " scratch exhausted: " + bytes + " bytes (align "
                    + alignment + ") requested, " + Math.max(0, cap - start) + " of workerScratchCapBytes=" + cap
                    + " left");
        }
        top = start + bytes;
        return b.asSlice(start, bytes);
    }

    @Override
    public void finish(long mark) {
        checkOwner();
        if (depth == 0 || marks[depth - 1] != mark) {
            throw new IllegalStateException("scratch marks must be finished in LIFO order: finish(" + mark
                    + ") but the innermost open mark is " + (depth == 0 ? "none" : String.valueOf(marks[depth - 1])));
        }
        top = mark;
        if (--depth == 0) {
            STATE.setRelease(this, FREE); // release: pairs with a purger's CAS
        }
    }

    @Override
    public long capacity() {
        return cap;
    }

    @Override
    public long used() {
        checkOwner();
        return top;
    }

    int index() {
        return index;
    }

    /** Counted bytes of the block (0 when not allocated); any thread. */
    long countedBytes() {
        return countedBytes;
    }

    boolean allocated() {
        return countedBytes != 0;
    }

    /**
     * Frees the block if it is allocated and no mark is open; any thread. Returns false when the owner holds a
     * mark (nothing freed); true otherwise, also when a concurrent purge (the owner's idle purge and
     * {@code purgeWorkerCaches}) freed it first.
     */
    boolean purge() {
        if (countedBytes == 0) {
            return true;
        }
        for (;;) {
            int st = (int) STATE.getVolatile(this);
            if (st == IN_USE) {
                return false;
            }
            // CAS (volatile): excludes the owner's begin(); pairs with its CAS and with finish()'s release store.
            if (st == FREE && STATE.compareAndSet(this, FREE, PURGING)) {
                break;
            }
            Thread.onSpinWait(); // another purger (the owner's idle purge) is freeing it: wait, then re-check
        }
        try {
            MemorySegment b = block;
            if (b != null) {
                block = null;
                memory.release(b); // the counted size leaves liveBytes; old slices now fail on access
                countedBytes = 0;
            }
        } finally {
            STATE.setRelease(this, FREE); // release: the owner's next begin() sees block == null
        }
        return true;
    }
}
