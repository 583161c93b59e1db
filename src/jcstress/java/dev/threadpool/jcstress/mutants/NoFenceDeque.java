package dev.threadpool.jcstress.mutants;

import dev.threadpool.internal.memory.Mem;
import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.QueueEntry;
import dev.threadpool.internal.queue.WorkDeque;
import dev.threadpool.internal.queue.WorkDeque.Layout;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;

/**
 * MUTANT of {@link WorkDeque} (DELIBERATELY BROKEN, test code only): a copy whose {@link #take()} lacks the full
 * fence between the bottom store and the top load, seed 002 Case 3 in Java. {@link NoFenceDequeTest} (run by
 * {@link MutantsCaught} in CI, which fails the build if the mutant survives) and the {@code no-fence-deque}
 * stress subject show what that fence prevents. Never use it for anything else.
 *
 * <p>Everything else is the shipped algorithm with the same layout and access modes, minus growth: the array
 * has a fixed capacity and {@link #push} returns false when it is full, which keeps the copy short.
 */
public final class NoFenceDeque {
    private final MemorySegment ctl;
    private final MemorySegment array;
    private final long mask;

    public NoFenceDeque(PoolMemory memory, int capacity) {
        Layout.checkCapacity("capacity", capacity);
        this.mask = capacity - 1;
        this.ctl = memory.allocateReleasable("no-fence deque control", Layout.CONTROL_LENGTH);
        this.array = memory.allocateReleasable("no-fence deque array", Layout.arrayByteSize(capacity));
    }

    /** Owner only. As {@link WorkDeque#push}, but false instead of growing. */
    public boolean push(long value) {
        long b = Mem.getLongPlain(ctl, Layout.BOTTOM_OFFSET);
        long t = Mem.getLongAcquire(ctl, Layout.TOP_OFFSET); // pairs with the thieves' CAS, as in WorkDeque
        if (b - t > mask) {
            return false;
        }
        Mem.setLongOpaque(array, Layout.slotOffset(b, mask), value);
        VarHandle.releaseFence(); // publishes the slot before bottom, as in WorkDeque
        Mem.setLongOpaque(ctl, Layout.BOTTOM_OFFSET, b + 1);
        return true;
    }

    /** Owner only. {@link WorkDeque#take} WITHOUT the full fence: the top load may pass the bottom store. */
    public long take() {
        long b = Mem.getLongPlain(ctl, Layout.BOTTOM_OFFSET) - 1;
        Mem.setLongOpaque(ctl, Layout.BOTTOM_OFFSET, b);
        // MISSING: VarHandle.fullFence(). On x86 the store above can wait in the store buffer while the load
        // below reads a top that a thief is about to advance.
        long t = Mem.getLongOpaque(ctl, Layout.TOP_OFFSET);
        if (t > b) {
            Mem.setLongOpaque(ctl, Layout.BOTTOM_OFFSET, b + 1);
            return QueueEntry.EMPTY;
        }
        long x = Mem.getLongPlain(array, Layout.slotOffset(b, mask));
        if (t == b) {
            if (!Mem.casLong(ctl, Layout.TOP_OFFSET, t, t + 1)) {
                x = QueueEntry.EMPTY;
            }
            Mem.setLongOpaque(ctl, Layout.BOTTOM_OFFSET, b + 1);
        }
        return x;
    }

    /** Any thread. Identical to {@link WorkDeque#steal} (fence included), minus the generation lookup. */
    public long steal() {
        long t = Mem.getLongAcquire(ctl, Layout.TOP_OFFSET);
        VarHandle.fullFence();
        long b = Mem.getLongAcquire(ctl, Layout.BOTTOM_OFFSET);
        if (t >= b) {
            return QueueEntry.EMPTY;
        }
        long x = Mem.getLongOpaque(array, Layout.slotOffset(t, mask));
        if (!Mem.casLong(ctl, Layout.TOP_OFFSET, t, t + 1)) {
            return WorkDeque.ABORT;
        }
        return x;
    }
}
