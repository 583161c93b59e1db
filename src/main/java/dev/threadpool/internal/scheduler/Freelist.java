package dev.threadpool.internal.scheduler;

import dev.threadpool.internal.memory.CacheLine;
import dev.threadpool.internal.memory.Mem;
import dev.threadpool.internal.memory.PoolMemory;
import java.lang.foreign.MemorySegment;

/**
 * The descriptor freelist: a lock-free Treiber stack of slot indices, threaded through a link word inside
 * each descriptor ({@code DescriptorTable.Layout.NEXT_FREE_OFFSET}), with its head on a line of its own.
 *
 * <pre>
 *   head (own PAD line):  FREE_HEAD long = tag (32 bits) | top index (32 bits), index 0xFFFF_FFFF = empty
 *   links:                descriptor i's NEXT_FREE int = the index below i on the stack, -1 = bottom
 *
 *   pop:       read head (acquire) -> read top's link -> CAS head to (tag + 1, link)
 *   push:      read head -> write own link = top -> CAS head to (tag + 1, idx)
 *   popBatch:  walk up to max links from the top, then one CAS past them (halving the walk after a failure)
 *   pushBatch: link the batch privately, then one CAS splicing it on (only the bottom link is rewritten on
 *              a retry)
 * </pre>
 *
 * <h2>ABA</h2>
 * Every successful change of the head (single or batch) increments the tag, so a pop that read the link of
 * a slot that was popped and pushed back in between fails its CAS, and so does a batch walk through links
 * that changed under it. The tag would have to wrap 2^32 times inside one pop for ABA to return.
 *
 * <h2>Linearizability</h2>
 * {@link #pop}, {@link #push} and {@link #pushBatch} are each one atomic step, their CAS (a batch push pushes
 * its slots in order, the last one on top); {@link #popBatch} is {@code n} pops at the instant of its CAS.
 * {@code FreelistLincheck} checks this, beside a tagless mutant that fails.
 *
 * <p>The stack only moves indices: what a slot's state is while it is on the stack (always FREE) is
 * {@link DescriptorTable}'s business.
 */
final class Freelist {
    /** The empty stack's top, and the bottom slot's link. */
    static final int NONE = -1;

    /** The head block. */
    static final class Layout {
        static final long FREE_HEAD_OFFSET = 0;
        static final long HEADER_LENGTH = CacheLine.PAD;

        private Layout() {}
    }

    private final MemorySegment header;
    /** The descriptor table: slot {@code i}'s link is the int at {@code stride * i + linkOffset}. */
    private final MemorySegment links;
    private final long stride;
    private final long linkOffset;

    /**
     * A stack of every slot in {@code [0, capacity)}, 0 on top, its links written (plain) into {@code links}.
     * Plain stores are enough: the pool publishes the table to its threads (Thread.start, or the publication
     * of the pool object) before anyone pops.
     */
    Freelist(PoolMemory memory, MemorySegment links, long stride, long linkOffset, int capacity) {
        this.header = memory.allocate("descriptor freelist head", Layout.HEADER_LENGTH);
        this.links = links;
        this.stride = stride;
        this.linkOffset = linkOffset;
        for (int i = 0; i < capacity; i++) {
            Mem.setIntPlain(links, link(i), i + 1 < capacity ? i + 1 : NONE);
        }
        Mem.setLongPlain(header, Layout.FREE_HEAD_OFFSET, head(0, 0));
    }

    private long link(int idx) {
        return stride * idx + linkOffset;
    }

    private static long head(int tag, int idx) {
        return ((long) tag << 32) | (idx & 0xFFFF_FFFFL);
    }

    /** Pops the top slot; {@link #NONE} when the stack is empty. The caller owns the slot afterwards. */
    int pop() {
        final MemorySegment h = header;
        for (;;) {
            // acquire: pairs with the release CAS of push(), so the pushed slot's link is visible.
            long top = Mem.getLongAcquire(h, Layout.FREE_HEAD_OFFSET);
            int idx = (int) top;
            if (idx == NONE) {
                return NONE;
            }
            // May be stale if idx is popped concurrently; the tag makes our CAS fail in that case.
            int next = Mem.getIntOpaque(links, link(idx));
            if (Mem.casLong(h, Layout.FREE_HEAD_OFFSET, top, head((int) (top >>> 32) + 1, next))) {
                return idx;
            }
        }
    }

    /** Pushes a slot the caller owns. */
    void push(int idx) {
        final MemorySegment h = header;
        for (;;) {
            long top = Mem.getLongAcquire(h, Layout.FREE_HEAD_OFFSET);
            Mem.setIntOpaque(links, link(idx), (int) top);
            // CAS (volatile, so also a release): publishes the link and whatever the caller wrote to the slot
            // before (its FREE state) to the next pop, which reads them after its acquire load of the head.
            if (Mem.casLong(h, Layout.FREE_HEAD_OFFSET, top, head((int) (top >>> 32) + 1, idx))) {
                return;
            }
        }
    }

    /** True when the stack looks non-empty (a volatile read: the half of the space-wait handshake). */
    boolean hasFree() {
        return (int) Mem.getLongVolatile(header, Layout.FREE_HEAD_OFFSET) != NONE;
    }

    /**
     * Pops up to {@code max} slots with one CAS on the head and writes their indices as ints to {@code dst} at
     * {@code dstOffset}, {@code dstOffset + 4}, ... in pop order (the same order {@code max} calls of
     * {@link #pop()} would return them). Returns how many (0 when the stack is empty).
     *
     * <p>Walk-then-CAS: from the observed top, follow the links for up to {@code max} slots (O(max) loads),
     * then swing the head past them, tag + 1. If anything pushed or popped meanwhile the tag moved and the CAS
     * fails, so a walk through links that changed under it is never kept. After a failed CAS the walk is
     * halved (down to 1), so a batch under contention degrades to {@link #pop()}'s window instead of starving
     * behind single pops.
     */
    int popBatch(MemorySegment dst, long dstOffset, int max) {
        if (max < 1) {
            throw new IllegalArgumentException("max must be >= 1: max=" + max);
        }
        final MemorySegment h = header;
        int want = max;
        for (;;) {
            // acquire: every change of the head is a volatile CAS (acquire and release at once), so each push
            // below the top synchronizes with the next change of the head and, by transitivity, happens-before
            // this load: the links of the whole chain are visible. (No release sequence is needed; see
            // native-notes/MEMORY_ORDERING.md, "Release sequences".)
            long top = Mem.getLongAcquire(h, Layout.FREE_HEAD_OFFSET);
            int cur = (int) top;
            if (cur == NONE) {
                return 0;
            }
            int n = 0;
            while (n < want && cur != NONE) {
                Mem.setIntPlain(dst, dstOffset + 4L * n, cur); // caller-owned buffer
                n++;
                // opaque, as in pop(): stale if the slot was popped meanwhile; the tag fails our CAS then.
                cur = Mem.getIntOpaque(links, link(cur));
            }
            // CAS: the single claim of all n slots; fails iff any push or pop changed the head (tag).
            if (Mem.casLong(h, Layout.FREE_HEAD_OFFSET, top, head((int) (top >>> 32) + 1, cur))) {
                return n;
            }
            want = Math.max(1, want >>> 1);
        }
    }

    /**
     * {@link #popBatch(MemorySegment, long, int)} into an on-heap {@code long[]}: pops up to {@code max} slots with
     * one CAS and writes their indices to {@code dst[0..n)} in pop order; returns {@code n} (0 when the stack is
     * empty). The same walk-then-CAS, halving the walk after a lost CAS; kept separate rather than shared
     * through a sink so that neither copy pays an indirect call per link.
     */
    int popBatch(long[] dst, int max) {
        if (max < 1 || max > dst.length) {
            throw new IllegalArgumentException("max must be in [1, " + dst.length + "]: max=" + max);
        }
        final MemorySegment h = header;
        int want = max;
        for (;;) {
            // acquire: as in popBatch(MemorySegment, ...): the links of the whole chain are visible
            long top = Mem.getLongAcquire(h, Layout.FREE_HEAD_OFFSET);
            int cur = (int) top;
            if (cur == NONE) {
                return 0;
            }
            int n = 0;
            while (n < want && cur != NONE) {
                dst[n++] = cur; // caller-owned buffer
                // opaque, as in pop(): stale if the slot was popped meanwhile; the tag fails our CAS then.
                cur = Mem.getIntOpaque(links, link(cur));
            }
            // CAS: the single claim of all n slots; fails iff any push or pop changed the head (tag).
            if (Mem.casLong(h, Layout.FREE_HEAD_OFFSET, top, head((int) (top >>> 32) + 1, cur))) {
                return n;
            }
            want = Math.max(1, want >>> 1);
        }
    }

    /**
     * Pushes {@code n} slots owned by the caller, read as ints from {@code src} at {@code srcOffset},
     * {@code srcOffset + 4}, ..., with one CAS: the result is the same as {@code push(src[0])}, ...,
     * {@code push(src[n - 1])} (so {@code src[n - 1]} ends on top). The links between the batch are written
     * once, O(n); only the bottom link to the old top is rewritten on a CAS retry.
     */
    void pushBatch(MemorySegment src, long srcOffset, int n) {
        if (n < 0) {
            throw new IllegalArgumentException("n must be >= 0: n=" + n);
        }
        if (n == 0) {
            return;
        }
        final MemorySegment h = header;
        int below = Mem.getIntPlain(src, srcOffset);
        final int bottom = below;
        for (int i = 1; i < n; i++) {
            int idx = Mem.getIntPlain(src, srcOffset + 4L * i);
            Mem.setIntOpaque(links, link(idx), below); // published by the CAS below
            below = idx;
        }
        final int top = below;
        for (;;) {
            long old = Mem.getLongAcquire(h, Layout.FREE_HEAD_OFFSET);
            Mem.setIntOpaque(links, link(bottom), (int) old);
            // CAS (volatile, so also a release): publishes every link written above and the slots' FREE
            // state to the next pop() / popBatch(), which read them after their acquire of the head.
            if (Mem.casLong(h, Layout.FREE_HEAD_OFFSET, old, head((int) (old >>> 32) + 1, top))) {
                return;
            }
        }
    }
}
