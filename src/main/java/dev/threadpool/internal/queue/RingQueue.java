package dev.threadpool.internal.queue;

import dev.threadpool.internal.memory.CacheLine;
import dev.threadpool.internal.memory.Capacity;
import dev.threadpool.internal.memory.Mem;
import dev.threadpool.internal.memory.PoolMemory;
import java.lang.foreign.MemorySegment;

/**
 * Bounded single-producer multi-consumer ring of queue entries: the local queue of one worker (and of one
 * registered submitter), after Go's {@code runq} ({@code runqput}, {@code runqget}, {@code runqgrab} in
 * {@code runtime/proc.go}) and Tokio's local run queue ({@code runtime/scheduler/multi_thread/queue.rs}).
 *
 * <h2>Who may call what</h2>
 * The owner (one thread for the lifetime of the queue) pushes at the tail and pops from the head; any thread
 * steals from the head. The methods are grouped into an OWNER section ({@link #tryPush},
 * {@link #pushOrOverflow}, {@link #pop}) and an ANY-THREAD section ({@link #steal}, {@link #stealHalf},
 * {@link #size}). {@link #stealHalf} is both: any thread for the victim ({@code this}), owner for {@code dst}.
 *
 * <h2>Protocol</h2>
 * Positions are 64-bit and only grow; position {@code p} lives in cell {@code p & mask}. The queue holds the
 * positions {@code [head, tail)}.
 * <pre>
 *   push (owner):   t = tail (plain, own)   h = head (acquire)   full if t - h == capacity
 *                   cell[t] = e (plain)     tail = t + 1 (release)
 *   pop  (owner):   h = head (acquire)      empty if h == tail
 *                   e = cell[h] (plain)     CAS head h -> h + 1   (retry on failure)
 *   steal (any):    h = head (acquire)      t = tail (acquire)    empty if h == t
 *                   e = cell[h] (plain)     CAS head h -> h + 1   (retry on failure)
 *   stealHalf:      as steal, but n = min((t - h + 1) / 2, max, free(dst) + 1) cells are copied, cell[h]
 *                   into a local and the rest into dst's free cells, then ONE CAS head h -> h + n; on
 *                   success dst.tail += n - 1 (release) and the local is returned.
 * </pre>
 * The CAS on {@code head} is the single linearization point of every removal: the owner's FIFO pop and every
 * thief's claim go through the same word, so an entry is removed by exactly one CAS. The owner never
 * takes from the tail (unlike Chase-Lev), so there is no owner/thief race on the last entry other than that
 * CAS. Only the owner writes {@code tail} and the cells.
 *
 * <h2>stealHalf: copy-then-CAS (Go {@code runqgrab}), not Tokio's two-phase claim</h2>
 * A thief reads {@code head}, copies the cells, and only then tries to swing {@code head}. If the CAS fails
 * the copy is thrown away and the thief starts again. The copied cells cannot be overwritten by a push
 * while the copy is still going to be kept:
 * <ol>
 *   <li>The owner overwrites the cell of position {@code q} only when it pushes position {@code q + capacity},
 *       and its full check lets it do so only after its acquire load of {@code head} returned a value
 *       {@code > q}. The full check therefore uses exactly the head value that the thief has not yet
 *       advanced: while the thief's CAS is pending, the cells it copies are in {@code [head, tail)}, still
 *       occupied as far as the owner can tell.</li>
 *   <li>If the owner saw {@code head > h} before the thief's CAS, then {@code head != h} at that CAS
 *       ({@code head} only grows and, being 64-bit, never wraps), so the CAS fails and the possibly torn
 *       copy is discarded.</li>
 *   <li>If the owner's {@code head > q} came from the thief's own successful CAS, the copy was read before
 *       that CAS, whose release half the owner's acquire load pairs with: the copy happens-before the
 *       overwrite and cannot have observed it.</li>
 * </ol>
 * Tokio cannot do this: in Rust a read of a cell racing with its write is undefined behaviour, so its thief
 * claims first and copies after, and must then keep the owner off the claimed cells, hence a head packed as
 * {@code {steal, real}} whose {@code steal} half the owner's full check uses until a second CAS releases it.
 * In Java a racy plain read is defined (it returns some written value; a long may tear, which we discard
 * anyway), and copy-then-CAS buys us: one word and one CAS per steal instead of two; lock-freedom for
 * thieves (in the two-phase scheme a thief preempted between its two CASes, e.g. at a GC safepoint, blocks
 * every other steal from that victim and keeps part of the owner's capacity unusable until it runs again).
 * The price is a wasted copy of at most {@code max} cells (stealBatchSize, 8 by default) when the CAS loses.
 *
 * <p>The copy into {@code dst} is speculative too: it writes dst cells at positions
 * {@code [dst.tail, dst.tail + n - 1)}, all below {@code dstHead + dst.capacity} for the {@code dstHead} the
 * thief read with acquire, so those cells hold positions dst's consumers have already claimed: the same
 * argument as point 1, with the thief as dst's owner. Nothing past {@code dst.tail} is visible until the
 * release store of {@code dst.tail}, which happens only after the CAS on the victim won.
 *
 * <h2>Invariants</h2>
 * [0 &lt;= tail - head &lt;= capacity] [every pushed entry is removed by exactly one successful CAS on head]
 * [a cell is written only while its position is outside [head, tail) as seen by the owner]
 * [{@code steal} / {@code pop} return EMPTY only if the queue was empty at some point during the call]
 * [{@code stealHalf} takes at most {@code (len + 1) / 2} of the {@code len} entries it saw, and never
 * more than {@code max} or than fit in dst plus the one it returns].
 *
 * <h2>Contract: linearizable</h2>
 * A bounded FIFO, each operation one atomic step: push fails exactly when full, pop and steal take the
 * oldest entry or return EMPTY exactly when empty, stealHalf takes {@code n} of the {@code len} entries as
 * above. stealHalf takes effect at its load of tail: there {@code len} is exact (it loaded head before,
 * and its successful CAS proves head did not move since), and the entries it copies are the ones it
 * claims. No weakness to document; {@code RingQueueLincheck} checks this (stress and model checking).
 *
 * <h2>Ordering summary</h2>
 * Tail: written by the owner with release, read by thieves with acquire (publishes the cells below it).
 * Head: every change is a CAS (volatile; its release half orders the claimer's cell reads before it); loads
 * are acquire, so a push that sees head past a cell happens after every read of that cell. See
 * {@code native-notes/MEMORY_ORDERING.md}, section "RingQueue".
 */
public final class RingQueue {

    /**
     * Off-heap layout. Head and tail each own a {@link CacheLine#PAD}-byte line: head is CASed by every
     * consumer, tail is stored by the owner on every push, and neither should drag the other's line along.
     * Cells are bare 8-byte entries, packed.
     * <pre>
     *   0             HEAD   (long)  next position to remove; changed only by CAS
     *   PAD           TAIL   (long)  next position to push; written only by the owner
     *   2*PAD         CELLS  capacity x ENTRY (long), cell i at CELLS_OFFSET + 8 * i
     *   2*PAD+8*cap   trailing PAD, so the last cells share no line with the next block
     * </pre>
     */
    public static final class Layout {
        public static final long HEAD_OFFSET = 0;
        public static final long TAIL_OFFSET = CacheLine.PAD;
        public static final long CELLS_OFFSET = 2L * CacheLine.PAD;
        public static final long CELL_LENGTH = 8;
        public static final int MIN_CAPACITY = 2;
        public static final int MAX_CAPACITY = 1 << 16;

        private Layout() {}

        public static long byteSize(int capacity) {
            return CELLS_OFFSET + CELL_LENGTH * capacity + CacheLine.PAD;
        }

        public static int checkCapacity(String name, int capacity) {
            return Capacity.checkPowerOfTwo(name, capacity, MIN_CAPACITY, MAX_CAPACITY);
        }
    }

    private final MemorySegment seg;
    private final int capacity;
    private final long mask;
    /**
     * The block's address where the owner's {@link #tryPush} and {@link #pop} go by raw address (a worker's own
     * local queue, where {@link Mem#RAW}; native-notes/FFM.md, "Raw addresses"), else 0: through {@link #seg}.
     */
    private final long base;

    public RingQueue(PoolMemory memory, String purpose, int capacity) {
        this(memory, purpose, capacity, false);
    }

    /**
     * A queue whose owner's push and pop take raw addresses when {@code workerOwned}: only for a queue owned by
     * one of the pool's workers, whose block is freed after every worker has been joined.
     */
    public RingQueue(PoolMemory memory, String purpose, int capacity, boolean workerOwned) {
        this.capacity = Layout.checkCapacity("capacity", capacity);
        this.mask = capacity - 1;
        this.seg = memory.allocate(purpose, Layout.byteSize(capacity));
        this.base = workerOwned && Mem.RAW ? seg.address() : 0L;
        // head = tail = 0 from the zeroed block. The queue reaches other threads through whatever publishes
        // this object (a final field of the pool, written before its threads start).
    }

    public int capacity() {
        return capacity;
    }

    private long cell(long pos) {
        return Layout.CELLS_OFFSET + (pos & mask) * Layout.CELL_LENGTH;
    }

    // =====================================================================================================
    // OWNER ONLY: the one thread that owns this queue
    // =====================================================================================================

    /** Pushes one entry at the tail; false when full (the caller spills elsewhere). Never blocks. */
    public boolean tryPush(long entry) {
        final MemorySegment s = seg;
        final long a = base;
        long t = Mem.getLongPlainAt(s, a, Layout.TAIL_OFFSET); // own word
        // acquire: pairs with the CAS that moved head past position t - capacity, so every read of that
        // cell (by a popper or a thief, taken before its CAS) happens-before our overwrite below.
        long h = Mem.getLongAcquireAt(s, a, Layout.HEAD_OFFSET);
        if (t - h >= capacity) {
            return false;
        }
        Mem.setLongPlainAt(s, a, cell(t), entry);
        // release: publishes the cell; pairs with the thieves' acquire load of tail.
        Mem.setLongReleaseAt(s, a, Layout.TAIL_OFFSET, t + 1);
        return true;
    }

    /**
     * Tokio's {@code push_overflow}: pushes {@code entry}, and if the queue is full first moves its oldest
     * {@code min(capacity / 2, scratch.length)} entries to {@code overflow} (one claim on our head, one
     * {@link BoundedRing#pushMany} claim), so the next pushes stay local. Returns false only when both this
     * queue and {@code overflow} are full.
     *
     * <p>If {@code overflow} takes only part of the batch, the rest is pushed back at our tail: nothing is
     * lost, but those entries now run after newer ones (order is a preference here, not a contract).
     * {@code scratch} is the caller's buffer, so this allocates nothing.
     */
    public boolean pushOrOverflow(long entry, BoundedRing overflow, long[] scratch) {
        if (scratch.length < 1) {
            throw new IllegalArgumentException("scratch.length must be >= 1: scratch.length=" + scratch.length);
        }
        final MemorySegment s = seg;
        for (;;) {
            if (tryPush(entry)) {
                return true;
            }
            long h = Mem.getLongAcquire(s, Layout.HEAD_OFFSET); // pairs with thieves' CAS, as in tryPush
            long t = Mem.getLongPlain(s, Layout.TAIL_OFFSET);
            if (t - h < capacity) {
                continue; // a thief made room since tryPush looked
            }
            int k = Math.min(capacity >>> 1, scratch.length);
            for (int i = 0; i < k; i++) {
                scratch[i] = Mem.getLongPlain(s, cell(h + i)); // our own writes; only we write cells
            }
            // CAS: claims the k oldest entries exactly like a thief would; loses only to a thief, which made
            // room, so retry the plain push.
            if (!Mem.casLong(s, Layout.HEAD_OFFSET, h, h + k)) {
                continue;
            }
            int moved = overflow.pushMany(scratch, 0, k);
            if (moved < k) {
                // overflow is (partly) full: put the remainder back; the claim freed k cells, so it fits.
                for (int i = moved; i < k; i++) {
                    Mem.setLongPlain(s, cell(t + (i - moved)), scratch[i]);
                }
                t += k - moved;
                // release: publishes the re-pushed cells; pairs with the thieves' acquire of tail.
                Mem.setLongRelease(s, Layout.TAIL_OFFSET, t);
            }
            return tryPush(entry); // fits unless overflow took nothing and no thief made room
        }
    }

    /** Pops the oldest entry (FIFO, from the head, like Tokio's {@code pop}), or {@link QueueEntry#EMPTY}. */
    public long pop() {
        final MemorySegment s = seg;
        final long a = base;
        final long t = Mem.getLongPlainAt(s, a, Layout.TAIL_OFFSET); // own word; nobody else moves it
        for (;;) {
            // acquire: a hint for the CAS; the cell is our own write, so nothing else needs publishing.
            long h = Mem.getLongAcquireAt(s, a, Layout.HEAD_OFFSET);
            if (h == t) {
                return QueueEntry.EMPTY;
            }
            long v = Mem.getLongPlainAt(s, a, cell(h));
            // CAS: the linearization point, the same word every thief claims through.
            if (Mem.casLongAt(s, a, Layout.HEAD_OFFSET, h, h + 1)) {
                return v;
            }
        }
    }

    // =====================================================================================================
    // ANY THREAD
    // =====================================================================================================

    /** Steals the oldest entry, or {@link QueueEntry#EMPTY}. Lock-free: retries only if another remover won. */
    public long steal() {
        final MemorySegment s = seg;
        for (;;) {
            // acquire: orders the tail load after it, so t >= h (tail only grows and head <= tail).
            long h = Mem.getLongAcquire(s, Layout.HEAD_OFFSET);
            // acquire: pairs with the owner's release store of tail; cells below t are visible.
            long t = Mem.getLongAcquire(s, Layout.TAIL_OFFSET);
            if (t - h <= 0) {
                return QueueEntry.EMPTY;
            }
            long v = Mem.getLongPlain(s, cell(h)); // racy if h is stale: then the CAS below fails
            // CAS: claims position h; its release half orders the read above before any later overwrite.
            if (Mem.casLong(s, Layout.HEAD_OFFSET, h, h + 1)) {
                return v;
            }
        }
    }

    /**
     * Moves up to half of this queue into {@code dst}, the calling thief's own queue, with one CAS on this
     * queue's head. Of the {@code len} entries seen it takes {@code n = min((len + 1) / 2, max, free + 1)},
     * where {@code free} is dst's free space: the oldest is returned, the other {@code n - 1} are pushed
     * into {@code dst} in order. Returns {@link QueueEntry#EMPTY} (and leaves dst unchanged) when this queue
     * is empty.
     *
     * <p>Any thread for {@code this}; the caller must be the owner of {@code dst}.
     *
     * @param max the steal batch size, at least 1
     */
    public long stealHalf(RingQueue dst, int max) {
        if (dst == this) {
            throw new IllegalArgumentException("dst must be the thief's own queue, not the victim");
        }
        if (max < 1) {
            throw new IllegalArgumentException("max must be >= 1: max=" + max);
        }
        final MemorySegment s = seg;
        final MemorySegment d = dst.seg;
        final long dt = Mem.getLongPlain(d, Layout.TAIL_OFFSET); // dst is ours
        // acquire: pairs with the CAS that moved dst's head past the cells we may overwrite (tryPush's
        // argument, for dst). dst's head only grows, so this bound on its free space stays valid.
        final long dstFree = dst.capacity - (dt - Mem.getLongAcquire(d, Layout.HEAD_OFFSET));
        for (;;) {
            long h = Mem.getLongAcquire(s, Layout.HEAD_OFFSET); // as in steal: orders the tail load after
            long t = Mem.getLongAcquire(s, Layout.TAIL_OFFSET); // pairs with the owner's release of tail
            long len = t - h;
            if (len <= 0) {
                return QueueEntry.EMPTY;
            }
            if (len > capacity) {
                continue; // head moved between the two loads (owner popped and pushed): the CAS would fail
            }
            long n = Math.min(Math.min(len - (len >>> 1), max), dstFree + 1);
            long first = Mem.getLongPlain(s, cell(h));
            for (long i = 1; i < n; i++) {
                // plain, racy if h is stale (then the CAS fails and the copy is discarded); the dst cells are
                // beyond dst's tail, invisible to dst's consumers until the release below.
                Mem.setLongPlain(d, dst.cell(dt + i - 1), Mem.getLongPlain(s, cell(h + i)));
            }
            // CAS: one claim for all n positions; its release half orders the copy before the owner's next
            // acquire of head, hence before any overwrite of the copied cells.
            if (Mem.casLong(s, Layout.HEAD_OFFSET, h, h + n)) {
                if (n > 1) {
                    // release: publishes the n - 1 copied cells of dst; pairs with dst thieves' acquire of tail.
                    Mem.setLongRelease(d, Layout.TAIL_OFFSET, dt + n - 1);
                }
                return first;
            }
        }
    }

    /**
     * {@code tail - head} from two volatile loads (head first, so never negative; clamped to capacity when
     * a pop and a push slip between the loads). Exact only when the queue is quiescent. Volatile, not
     * acquire, so it can serve as the seq_cst re-check of a park handshake, like {@link BoundedRing#size()}.
     */
    public int size() {
        long h = Mem.getLongVolatile(seg, Layout.HEAD_OFFSET);
        long t = Mem.getLongVolatile(seg, Layout.TAIL_OFFSET);
        return (int) Math.max(0, Math.min(capacity, t - h));
    }

    /** {@code size() == 0}. */
    public boolean isEmpty() {
        return size() == 0;
    }
}
