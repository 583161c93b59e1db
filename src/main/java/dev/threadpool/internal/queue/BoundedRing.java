package dev.threadpool.internal.queue;

import dev.threadpool.internal.memory.CacheLine;
import dev.threadpool.internal.memory.Capacity;
import dev.threadpool.internal.memory.Mem;
import dev.threadpool.internal.memory.PoolMemory;
import java.lang.foreign.MemorySegment;

/**
 * Bounded lock-free MPMC ring after Dmitry Vyukov ("Bounded MPMC queue", 1024cores.net, 2011): the inject
 * queue of every scheduler variant. Any thread may push, any thread may pop.
 *
 * <h2>Protocol</h2>
 * Positions are 64-bit and only grow ({@code head} for consumers, {@code tail} for producers); position
 * {@code p} lives in cell {@code p & mask}. Each cell has a sequence word that says whose turn it is:
 * <pre>
 *   seq == p          cell is free for the producer of position p
 *   seq == p + 1      cell holds the entry of position p, ready for its consumer
 *   seq == p + cap    consumer of p is done; cell is free for the producer of p + cap
 * </pre>
 * A producer claims position {@code p} by CAS on {@code tail} only after seeing {@code seq == p}; it then
 * writes the value and publishes it with a release store {@code seq = p + 1}. A consumer claims {@code p}
 * by CAS on {@code head} only after an acquire load sees {@code seq == p + 1}; it reads the value and frees
 * the cell with a release store {@code seq = p + cap}. The CAS on {@code head}/{@code tail} is the
 * linearization point; the sequence word carries the data between the two sides.
 *
 * <h2>Batches</h2>
 * {@link #popMany} and {@link #pushMany} scan ahead for up to {@code max} ready cells and claim them all with
 * one CAS. The scan is safe because a cell's readiness for position {@code p} can only be undone by whoever
 * claims {@code p}, and nobody has while {@code head} (resp. {@code tail}) still equals the scanned start.
 *
 * <h2>Invariants</h2>
 * [tail - head in [0, capacity]] [every pushed entry is popped at most once]
 * [a pop that returns EMPTY saw a cell not yet published: the ring may still report {@link #size()} &gt; 0
 * while a producer is between its claim and its publish; {@link #hasReadyEntry()} is false then].
 *
 * <h2>Contract: not a linearizable FIFO</h2>
 * Every operation takes effect in two steps: a push claims its position (the tail CAS fixes its place in
 * the order) and later publishes it (the release of {@code seq}); a pop claims (the head CAS fixes what it
 * returns) and later frees the cell. A caller may therefore see:
 * <ul>
 *   <li><b>EMPTY while a producer is between claim and publish</b>: {@code tryPop} returns EMPTY (and
 *       {@code popMany} 0) when the head position is claimed but unpublished, even if a push that claimed
 *       a later position has already returned; its entry comes out on a later pop, in claim order.</li>
 *   <li><b>Full while a consumer is mid-pop</b>: {@code tryPush} returns false (and {@code pushMany} 0)
 *       when the consumer of the position one lap back has claimed but not yet freed its cell, although the
 *       ring then holds fewer than {@code capacity} entries.</li>
 *   <li><b>Batches are not atomic</b>: {@code pushMany}/{@code popMany} claim their cells with one CAS but
 *       publish (free) them one at a time, so another thread may see part of a batch; and a batch may
 *       take fewer cells than are free (ready) at its claim when one became so during its scan. Never 0
 *       while the first cell is free (ready).</li>
 * </ul>
 * Never: an entry lost, popped twice, popped before its push began, or out of claim order; EMPTY or full
 * without a claim of the other side in progress. {@code BoundedRingLincheck} checks exactly this contract
 * (stress and model checking) and shows each weakness with the interleaving that produces it.
 *
 * <h2>Carried tasks</h2>
 * A ring built with {@code carriesTasks} also carries, per cell, two references on the heap ({@code carried},
 * two slots per cell): {@link #tryPushCarried} writes a task and its group there and the entry
 * {@link QueueEntry#CARRIED}, so a task needs no descriptor (GLOBAL_QUEUE's detached submits from outside the
 * pool: the descriptor's line crossed cores twice per task, PERFORMANCE_TRACKING entries 29, 35 and 37). The
 * references ride on the cell's own hand-over, nothing new: the producer writes them after its claim and
 * before its release of {@code seq = p + 1}; the consumer reads and clears them after its claim and before its
 * release of {@code seq = p + cap}, which the producer of {@code p + cap} acquires before it writes the cell's
 * references again. A carrying ring is popped only by {@link #tryPop(Object[], long[])} (which hands them over)
 * and {@link #popManyCarried}; the plain batch pop refuses it.
 *
 * <h2>Argument cells: a task as a function, a context and a long</h2>
 * A task submitted as {@code (fn, ctx, arg)} rides in a cell too ({@link #pushCarriedArg}), with no object of its
 * own: {@code fn} and its group in the cell's two references, its {@code ctx} in {@code ctxs} (one reference per
 * cell), and its {@code long} in the cell's {@code VALUE} word, where a task that is a {@code Runnable} has
 * {@link QueueEntry#CARRIED}. So the cell grows by nothing off-heap, and the argument rides the same hand-over as the
 * references: written plain after the claim and before the release of {@code seq = p + 1}, read and cleared after
 * the consumer's claim and before its release of {@code seq = p + cap}.
 * <pre>
 *   cell p             VALUE        carried[2c]   carried[2c + 1]   ctxs[c]
 *   plain entry        the entry    null          null              null
 *   Runnable task      CARRIED      the task      its group         null
 *   argument task      arg          fn            its group         ctx, or NULL_CTX for a null ctx
 * </pre>
 * What tells the kinds apart is {@code ctxs[c]}: non-null exactly for an argument cell, from its push until the
 * claim that takes it ({@link QueueEntry#NULL_CTX} stands for a {@code null} context, so the marker is never
 * null). {@code VALUE} cannot tell: an argument may be any long, {@code CARRIED} included. A pop of a
 * {@code Runnable} task therefore reads one reference more than before, {@code ctxs[c]}, which a {@code Runnable}
 * push never writes and which stays null, so its line is only ever read on that path; the scan of
 * {@link #popManyCarried} reads it only for a cell whose value is not {@code CARRIED}. An argument cell comes out of
 * {@link #tryPop(Object[], long[])} as {@code CARRIED} with the function, the group and the context marker in
 * {@code taken[0..2]} and the argument in {@code arg[0]}; a {@code Runnable} task leaves {@code taken[2]} as it
 * was (its consumer keeps it null between pops). A pop given no argument sink (the forms without one, for rings
 * that hold no argument cells) refuses an argument cell at the head with an {@link IllegalStateException} before
 * it claims anything.
 *
 * <p>Why the pool loses nothing by it. EMPTY mid-publish: the producer publishes next and then wakes a
 * worker (submit's signal follows the push). A worker's park re-check looks at published cells
 * ({@link #hasReadyEntry()}); one that finds only a claimed cell ({@link #isEmpty()} false: {@code tail - head}
 * counts it) parks for a bounded time ({@code Scheduler.PENDING_PARK_NANOS}) instead of spinning on it, so a
 * preempted producer is not starved and the entry is still found within that bound. Full
 * mid-pop: the inject ring has {@code queueCapacity} cells, one per descriptor, and an entry is pushed only
 * with a descriptor held, so it is full only of entries being drained right now (a carrying ring may also be
 * full of carried tasks, which the workers drain with nothing held), and every caller that
 * can meet it retries until the consumer frees the cell ({@code Submission.waitForRingRoom},
 * {@code closeSubmitter}, the popMany overflow path); none drops an entry. Partial batches: each cell is a
 * separate entry, so a partial view only delays its later entries.
 *
 * <h2>Closing to pushes: the carried ring is the admission counter of its tasks</h2>
 * A carried task is accepted by its push: its claim (the tail CAS) is the acceptance point, and
 * {@link #closeToPushes} is shutdown's close of that admission, with one {@code getAndOr} of {@link #CLOSED}
 * (bit 63) on {@code tail}. Both are read-modify-writes of the one word, so they are totally ordered: a claim
 * before the close advanced {@code tail} and is in the count the close returns (the tasks the shutdown waits for),
 * and a claim after it finds the bit (a negative {@code tail}) and fails, so its push returns false and
 * {@link #closedToPushes} tells its caller why; a CAS that read {@code tail} before the close fails on the bit and
 * reads it again. So no carried push needs an accept CAS of its own on a counter beside the ring: one locked
 * instruction per submit fewer, on the hand-off (PERFORMANCE_TRACKING 62). {@link #pushesClaimed} is the number of
 * carried tasks ever accepted. Only a ring that carries tasks is closed; nothing but an accepted task's push ever
 * claims one of its cells (the pool's drain and sweep only pop). Every other reader of {@code tail} masks the bit.
 *
 * <h2>Access: raw addresses for a carrying ring's publish and pop</h2>
 * A carrying ring's {@link #tryPushCarried} and {@link #pushCarriedArg} publish and its pops ({@link
 * #tryPop(Object[], long[])}, {@link #popManyCarried}) reach the block by raw address
 * ({@link Mem#getLongAcquireAt} and siblings, through one segment constant) where {@link Mem#RAW}, as
 * {@code WorkDeque} does: through the segment held in a field, each access reloads its address, size and session
 * and redoes the checks (a push and a pop of one thread, 22.5-25.4 ns a pair that way, 14.4-17.9 ns by address:
 * PERFORMANCE_TRACKING 44). Sound because neither can run once the block is freed: a carried push's claim (the
 * reads of {@code tail} and of the cell's {@code seq}, and the tail CAS) goes through the segment, checked, since
 * before it the task is not accepted and a shutdown and close may have run; once the claim has succeeded the task
 * is accepted, so the shutdown that precedes the arena's close waits for that task to end, which it cannot before
 * the publish. A pop runs on a worker (joined before the close) or in the lifecycle's sweep, inside its
 * arena-caller region (native-notes/FFM.md, "Raw addresses"). Every other method (the occupancy reads any thread
 * may make, a plain ring's operations) keeps the checked accesses.
 */
public final class BoundedRing {

    /**
     * Off-heap layout. Head and tail each own a {@link CacheLine#PAD}-byte line so producers and consumers
     * do not false-share; cells are 16 bytes and packed.
     * <pre>
     *   0            HEAD  (long)  consumers' claim position
     *   PAD          TAIL  (long)  producers' claim position | CLOSED (bit 63; a carrying ring, closeToPushes)
     *   2*PAD        CELLS: capacity x { SEQ (long) @0, VALUE (long) @8 }
     *   2*PAD+16*cap trailing PAD, so the last cells share no line with the next block
     * </pre>
     */
    public static final class Layout {
        public static final long HEAD_OFFSET = 0;
        public static final long TAIL_OFFSET = CacheLine.PAD;
        public static final long CELLS_OFFSET = 2L * CacheLine.PAD;
        public static final long CELL_SEQ_OFFSET = 0;
        public static final long CELL_VALUE_OFFSET = 8;
        public static final long CELL_LENGTH = 16;
        public static final int MIN_CAPACITY = 2;
        public static final int MAX_CAPACITY = 1 << 24;

        private Layout() {}

        public static long byteSize(int capacity) {
            return CELLS_OFFSET + CELL_LENGTH * capacity + CacheLine.PAD;
        }

        public static int checkCapacity(String name, int capacity) {
            return Capacity.checkPowerOfTwo(name, capacity, MIN_CAPACITY, MAX_CAPACITY);
        }
    }

    /** {@code tail}'s bit set by {@link #closeToPushes}: no position is claimed from then on. */
    public static final long CLOSED = Long.MIN_VALUE;

    private final MemorySegment seg;
    private final int capacity;
    private final long mask;
    /**
     * Carried tasks (see "Carried tasks"): cell {@code c}'s task at {@code 2c}, its group at {@code 2c + 1}; null
     * unless the ring carries tasks. Plain accesses, ordered by the cell's sequence word.
     */
    private final Object[] carried;
    /**
     * Argument cells (see "Argument cells"): cell {@code c}'s context marker at {@code c}, non-null only while the
     * cell holds an argument task; null unless the ring carries tasks. Plain accesses, ordered as {@link #carried}.
     */
    private final Object[] ctxs;
    /**
     * The block's address where a carrying ring takes its push and pop by raw address ({@link Mem#RAW}; "Access"
     * in the class comment), else 0: every access then goes through {@link #seg}.
     */
    private final long base;

    public BoundedRing(PoolMemory memory, String purpose, int capacity) {
        this(memory, purpose, capacity, false);
    }

    /** A ring that also carries tasks' references in its cells when {@code carriesTasks} (see "Carried tasks"). */
    public BoundedRing(PoolMemory memory, String purpose, int capacity, boolean carriesTasks) {
        this.capacity = Layout.checkCapacity("capacity", capacity);
        this.mask = capacity - 1;
        this.carried = carriesTasks ? new Object[2 * capacity] : null;
        this.ctxs = carriesTasks ? new Object[capacity] : null;
        this.seg = memory.allocate(purpose, Layout.byteSize(capacity));
        this.base = carriesTasks && Mem.RAW ? seg.address() : 0L;
        for (long p = 0; p < capacity; p++) {
            Mem.setLongPlain(seg, cell(p) + Layout.CELL_SEQ_OFFSET, p);
        }
        // Publication of the initialised cells to other threads happens through whatever publishes this
        // object (a final field of the pool, written before its worker threads start).
    }

    public int capacity() {
        return capacity;
    }

    /**
     * Whether at most half of the cells are claimed and not yet taken (volatile loads of head, then tail): the
     * low-water mark where a submitter that found the ring full resumes, so that one wake buys it half a
     * ring of pushes instead of one. Room appears with a consumer's head CAS, so a waiter that checks this after
     * registering and a consumer that checks it after that CAS form the {@code SpaceWaiters} handshake. Reading
     * tail after head may see the ring fuller than it ever was, never emptier than at the load of tail.
     */
    public boolean atMostHalfFull() {
        long h = Mem.getLongVolatile(seg, Layout.HEAD_OFFSET);
        return (Mem.getLongVolatile(seg, Layout.TAIL_OFFSET) & ~CLOSED) - h <= capacity >>> 1;
    }

    /** Whether this ring carries tasks' references in its cells ({@link #tryPushCarried}). */
    public boolean carriesTasks() {
        return carried != null;
    }

    private long cell(long pos) {
        return Layout.CELLS_OFFSET + (pos & mask) * Layout.CELL_LENGTH;
    }

    /**
     * Pushes one entry; false when full. Never blocks.
     *
     * @throws IllegalArgumentException if {@code value} is {@link QueueEntry#CARRIED} (see {@link #tryPushCarried})
     */
    public boolean tryPush(long value) {
        if (value == QueueEntry.CARRIED) {
            throw new IllegalArgumentException("value must not be CARRIED: push a carried task with tryPushCarried");
        }
        long pos = claimPush();
        if (pos < 0) {
            return false;
        }
        publish(pos, value);
        return true;
    }

    /**
     * Pushes the entry {@link QueueEntry#CARRIED} with {@code task} and {@code group} in its cell; false when
     * full or closed to pushes ({@link #closedToPushes} says which: "Closing to pushes"). Never blocks. Only on a
     * ring that carries tasks.
     *
     * @throws IllegalStateException if this ring does not carry tasks, or its memory was freed before the claim
     */
    public boolean tryPushCarried(Object task, Object group) {
        return pushCarried(task, group) >= 0;
    }

    /**
     * {@link #tryPushCarried} that returns the position its claim took (0, 1, 2... in claim order: the pushes this
     * ring had accepted before it), or -1 where {@link #tryPushCarried} returns false. {@code CarriedRings} spreads
     * a submitter's pushes over its stripes by these positions ("Where a push goes").
     *
     * @throws IllegalStateException if this ring does not carry tasks, or its memory was freed before the claim
     */
    public long pushCarried(Object task, Object group) {
        return pushCell(task, group, null, QueueEntry.CARRIED);
    }

    /**
     * {@link #pushCarried} of a task in argument form ("Argument cells"): {@code fn} and {@code group} in the cell's
     * references, {@code ctx} (or {@link QueueEntry#NULL_CTX} for null) in its context slot, {@code arg} in its
     * value. Returns the position its claim took, or -1 when full or closed to pushes.
     *
     * @throws IllegalStateException if this ring does not carry tasks, or its memory was freed before the claim
     */
    public long pushCarriedArg(Object fn, Object group, Object ctx, long arg) {
        return pushCell(fn, group, ctx != null ? ctx : QueueEntry.NULL_CTX, arg);
    }

    /**
     * The push of both: the cell's two references, its context marker where {@code marker} is not null (an
     * argument cell; a {@code Runnable}'s push passes null, a constant once inlined, and never writes
     * {@code ctxs}), then {@code value}. The position, or -1.
     */
    private long pushCell(Object task, Object group, Object marker, long value) {
        final Object[] refs = carried;
        if (refs == null) {
            throw new IllegalStateException("this ring does not carry tasks");
        }
        long pos = claimPush();
        if (pos < 0) {
            return -1;
        }
        int c = (int) (pos & mask);
        // plain, like the value: published by the release in publish(); the claim's acquire of seq == pos
        // ordered the previous lap consumer's reads and clears of these slots before these writes
        refs[c << 1] = task;
        refs[(c << 1) + 1] = group;
        if (marker != null) {
            ctxs[c] = marker;
        }
        publish(pos, value);
        return pos;
    }

    /**
     * Claims the next position for one push (its cell free): the position, or -1 when the ring is full or closed
     * to pushes. Checked accesses, also on a carrying ring: before its claim a carried task is not accepted, so
     * the pool may have been shut down and its memory freed meanwhile ("Access").
     */
    private long claimPush() {
        final MemorySegment s = seg;
        long pos = Mem.getLongOpaque(s, Layout.TAIL_OFFSET); // a hint; the CAS below validates it
        for (;;) {
            if (pos < 0) {
                return -1; // CLOSED: closeToPushes counted every claim before it, and refuses this one
            }
            // acquire: pairs with the consumer's release of seq = pos (freeing the cell one lap ago), so its
            // read of the old value (and of a carried cell's references) happens-before our overwrite.
            long dif = Mem.getLongAcquire(s, cell(pos) + Layout.CELL_SEQ_OFFSET) - pos;
            if (dif == 0) {
                // claim: the linearization point, and a carried task's acceptance. Seq_cst; it fails on a tail the
                // close has marked since our read (the word differs), and we read the mark next.
                if (Mem.casLong(s, Layout.TAIL_OFFSET, pos, pos + 1)) {
                    return pos;
                }
                pos = Mem.getLongOpaque(s, Layout.TAIL_OFFSET);
            } else if (dif < 0) {
                return -1; // the cell still holds the entry of pos - capacity: full
            } else {
                pos = Mem.getLongOpaque(s, Layout.TAIL_OFFSET); // another producer claimed pos
            }
        }
    }

    /**
     * Closes a carrying ring to pushes ("Closing to pushes"): from now on every claim fails. Returns the number
     * of positions ever claimed, i.e. the carried tasks accepted, stable from now on. Idempotent.
     *
     * @throws IllegalStateException if this ring does not carry tasks
     */
    public long closeToPushes() {
        if (carried == null) {
            throw new IllegalStateException("only a ring that carries tasks is closed to pushes");
        }
        // getAndOr (seq_cst): totally ordered with every claim's tail CAS; see "Closing to pushes"
        return Mem.getAndOrLong(seg, Layout.TAIL_OFFSET, CLOSED) & ~CLOSED;
    }

    /** Whether {@link #closeToPushes} has run: why a push just returned false. */
    public boolean closedToPushes() {
        // volatile load: pairs with closeToPushes's getAndOr; the bit never clears, so once seen it stays true
        return Mem.getLongVolatile(seg, Layout.TAIL_OFFSET) < 0;
    }

    /** Positions ever claimed: a carrying ring's accepted carried tasks so far. */
    public long pushesClaimed() {
        // acquire: pairs with the claims' tail CAS, so a snapshot that read a worker's STARTED first counts every
        // claim that worker's pops followed (Snapshot: started <= submitted)
        return Mem.getLongAcquire(seg, Layout.TAIL_OFFSET) & ~CLOSED;
    }

    /** Writes claimed position {@code pos}'s value and publishes it (and anything written before). */
    private void publish(long pos, long value) {
        long c = cell(pos);
        Mem.setLongPlainAt(seg, base, c + Layout.CELL_VALUE_OFFSET, value);
        // release: publishes the value (and a carried cell's references); pairs with the consumer's acquire of
        // seq == pos + 1.
        Mem.setLongReleaseAt(seg, base, c + Layout.CELL_SEQ_OFFSET, pos + 1);
    }

    /**
     * Pushes up to {@code count} entries from {@code src[from..]} with one claim; returns how many were
     * pushed (0 when full, or closed to pushes). Entries keep their order.
     */
    public int pushMany(long[] src, int from, int count) {
        if (count <= 0) {
            return 0;
        }
        final MemorySegment s = seg;
        long pos = Mem.getLongOpaque(s, Layout.TAIL_OFFSET);
        for (;;) {
            if (pos < 0) {
                return 0; // closed to pushes (a carrying ring only): as claimPush
            }
            int n = 0;
            long firstDif = 0;
            while (n < count) {
                // acquire: as in tryPush, for every cell we are about to claim.
                long dif = Mem.getLongAcquire(s, cell(pos + n) + Layout.CELL_SEQ_OFFSET) - (pos + n);
                if (dif != 0) {
                    if (n == 0) {
                        firstDif = dif;
                    }
                    break;
                }
                n++;
            }
            if (n == 0) {
                if (firstDif < 0) {
                    return 0; // full
                }
                pos = Mem.getLongOpaque(s, Layout.TAIL_OFFSET);
                continue;
            }
            if (Mem.casLong(s, Layout.TAIL_OFFSET, pos, pos + n)) { // one claim for n cells
                for (int i = 0; i < n; i++) {
                    long c = cell(pos + i);
                    Mem.setLongPlain(s, c + Layout.CELL_VALUE_OFFSET, src[from + i]);
                    // release: publishes entry i; pairs with the consumer's acquire of seq.
                    Mem.setLongRelease(s, c + Layout.CELL_SEQ_OFFSET, pos + i + 1);
                }
                return n;
            }
            pos = Mem.getLongOpaque(s, Layout.TAIL_OFFSET);
        }
    }

    /**
     * Pops one entry, or {@link QueueEntry#EMPTY}. Never blocks. Not on a ring that carries tasks.
     *
     * @throws IllegalStateException if this ring carries tasks: use {@link #tryPop(Object[])}
     */
    public long tryPop() {
        if (carried != null) {
            throw new IllegalStateException("this ring carries tasks: pop with tryPop(Object[])");
        }
        return tryPop(null, null);
    }

    /**
     * Pops one entry, or {@link QueueEntry#EMPTY}; for {@link QueueEntry#CARRIED}, the task and group carried in
     * its cell go to {@code taken[0]} and {@code taken[1]} (the cell's references are cleared). Never blocks.
     * {@code taken} (two slots at least) is needed only on a ring that carries tasks. {@link #tryPop(Object[],
     * long[])} without an argument sink: for a ring that holds no argument cells.
     *
     * @throws IllegalStateException if the head cell is an argument cell ("Argument cells"; nothing is claimed)
     */
    public long tryPop(Object[] taken) {
        return tryPop(taken, null);
    }

    /**
     * Pops one entry, or {@link QueueEntry#EMPTY}; for {@link QueueEntry#CARRIED}, the task and group carried in
     * its cell go to {@code taken[0]} and {@code taken[1]} (the cell's references are cleared), and for an argument
     * cell ("Argument cells") also its context marker to {@code taken[2]} and its argument to {@code arg[0]}.
     * Never blocks. {@code taken} (three slots) and {@code arg} (one) are needed only on a ring that carries tasks;
     * with {@code arg} null, an argument cell at the head is refused before it is claimed.
     *
     * @throws IllegalStateException if {@code arg} is null and the head cell is an argument cell
     */
    public long tryPop(Object[] taken, long[] arg) {
        long pos = Mem.getLongOpaqueAt(seg, base, Layout.HEAD_OFFSET);
        for (;;) {
            long c = cell(pos);
            // acquire: pairs with the producer's release of seq = pos + 1, making its value visible.
            long seq = Mem.getLongAcquireAt(seg, base, c + Layout.CELL_SEQ_OFFSET);
            long dif = seq - (pos + 1);
            if (dif == 0) {
                if (arg == null && ctxs != null && ctxs[(int) (pos & mask)] != null) {
                    // plain, published by the acquire above (a later claim of pos by another consumer only clears it)
                    throw new IllegalStateException("an argument cell: pop it with tryPop(Object[], long[])");
                }
                if (Mem.casLongAt(seg, base, Layout.HEAD_OFFSET, pos, pos + 1)) { // claim: linearization point
                    long v = Mem.getLongPlainAt(seg, base, c + Layout.CELL_VALUE_OFFSET);
                    final Object[] cs = ctxs;
                    if (cs != null) {
                        // plain, every slot: published with the value by the producer's release of seq = pos + 1;
                        // read and cleared before our release below, which the producer of pos + capacity acquires.
                        final Object[] refs = carried;
                        int i = (int) (pos & mask);
                        int k = i << 1;
                        Object x = cs[i]; // the argument cell's marker; null for a Runnable task and a plain entry
                        if (x != null) {
                            taken[0] = refs[k];
                            taken[1] = refs[k + 1];
                            taken[2] = x;
                            arg[0] = v;
                            refs[k] = null;
                            refs[k + 1] = null;
                            cs[i] = null;
                            v = QueueEntry.CARRIED;
                        } else if (v == QueueEntry.CARRIED) {
                            taken[0] = refs[k];
                            taken[1] = refs[k + 1];
                            refs[k] = null;
                            refs[k + 1] = null;
                        }
                    }
                    // release: frees the cell for the producer of pos + capacity; pairs with its acquire.
                    Mem.setLongReleaseAt(seg, base, c + Layout.CELL_SEQ_OFFSET, pos + capacity);
                    return v;
                }
                pos = Mem.getLongOpaqueAt(seg, base, Layout.HEAD_OFFSET);
            } else if (dif < 0) {
                return QueueEntry.EMPTY; // not yet published for pos: empty (or a producer mid-publish)
            } else {
                pos = Mem.getLongOpaqueAt(seg, base, Layout.HEAD_OFFSET); // another consumer took pos
            }
        }
    }

    /**
     * Claims carried entries at the head with one CAS: {@code max} of them when at least {@code 2 * max} ready
     * carried cells follow one another from the head, else one. Entry {@code i}'s task and group go to
     * {@code dst[dstOff + 2i]} and {@code dst[dstOff + 2i + 1]}; every claimed cell is cleared and freed before
     * this returns, so no producer waits on it. Returns the count: 0 when the head cell is not published, or holds
     * a plain entry (pop that with {@link #tryPop(Object[])}). Only on a ring that carries tasks.
     *
     * <p>A batch only from a deep queue, and then half of what was seen: the rest stays in the ring for the other
     * consumers, and a shallow queue (a ping-pong, a small ring) is popped one entry at a time as by
     * {@link #tryPop(Object[])} ({@code CarriedBatches}, where the claimed entries stay stealable). Sound as
     * {@link #popMany}'s scan: a cell's readiness for position {@code p} can only be undone by whoever claims
     * {@code p}, and nobody has while {@code head} still equals the scanned start; the value and references read
     * during the scan are the ones the producer published (the acquire of seq).
     *
     * <p>This form takes no argument cells: it stops at one as at a plain entry (for rings that hold none); see
     * {@link #popManyCarried(Object[], int, Object[], long[], int, int)}.
     */
    public int popManyCarried(Object[] dst, int dstOff, int max) {
        return popManyCarried(dst, dstOff, null, null, 0, max);
    }

    /**
     * {@link #popManyCarried(Object[], int, int)} that also claims argument cells ("Argument cells"): entry
     * {@code i}'s context marker goes to {@code ctxDst[argOff + i]} (null for a {@code Runnable} task: written for
     * every entry) and, for an argument cell, its argument to {@code argDst[argOff + i]}; function and group to
     * {@code dst} as a task and its group. With {@code ctxDst} null, argument cells are not taken (the form above).
     */
    public int popManyCarried(Object[] dst, int dstOff, Object[] ctxDst, long[] argDst, int argOff, int max) {
        final Object[] refs = carried;
        if (refs == null) {
            throw new IllegalStateException("this ring does not carry tasks");
        }
        if (max <= 0) {
            return 0;
        }
        final Object[] cs = ctxs;
        final boolean withArgs = ctxDst != null;
        final int look = max << 1;
        long pos = Mem.getLongOpaqueAt(seg, base, Layout.HEAD_OFFSET); // a hint; the CAS below validates it
        for (;;) {
            int ready = 0;
            long firstDif = 0;
            while (ready < look) {
                long p = pos + ready;
                long c = cell(p);
                // acquire: pairs with the producer's release of seq = p + 1 (its value and references)
                long dif = Mem.getLongAcquireAt(seg, base, c + Layout.CELL_SEQ_OFFSET) - (p + 1);
                if (dif != 0 || !takes(Mem.getLongPlainAt(seg, base, c + Layout.CELL_VALUE_OFFSET), cs,
                        (int) (p & mask), withArgs)) {
                    if (ready == 0) {
                        firstDif = dif;
                    }
                    break;
                }
                ready++;
            }
            if (ready == 0) {
                if (firstDif <= 0) {
                    return 0; // not yet published for pos (empty, or a producer mid-publish), or a plain entry
                }
                pos = Mem.getLongOpaqueAt(seg, base, Layout.HEAD_OFFSET); // another consumer took pos
                continue;
            }
            int n = ready == look ? max : 1;
            if (Mem.casLongAt(seg, base, Layout.HEAD_OFFSET, pos, pos + n)) { // one claim for n cells
                for (int i = 0; i < n; i++) {
                    long p = pos + i;
                    int ci = (int) (p & mask);
                    int k = ci << 1;
                    // plain, every slot: published by the producer's release of seq = p + 1 (acquired in the scan);
                    // read and cleared before our release below, which the producer of p + capacity acquires
                    dst[dstOff + 2 * i] = refs[k];
                    dst[dstOff + 2 * i + 1] = refs[k + 1];
                    refs[k] = null;
                    refs[k + 1] = null;
                    if (withArgs) {
                        Object x = cs[ci];
                        ctxDst[argOff + i] = x;
                        if (x != null) { // an argument cell: its marker out and cleared, its value is the argument
                            cs[ci] = null;
                            argDst[argOff + i] = Mem.getLongPlainAt(seg, base, cell(p) + Layout.CELL_VALUE_OFFSET);
                        }
                    }
                    // release: frees the cell for the producer of p + capacity; pairs with its acquire
                    Mem.setLongReleaseAt(seg, base, cell(p) + Layout.CELL_SEQ_OFFSET, p + capacity);
                }
                return n;
            }
            pos = Mem.getLongOpaqueAt(seg, base, Layout.HEAD_OFFSET);
        }
    }

    /**
     * Whether a published cell of value {@code v} at index {@code i} is one {@link #popManyCarried} claims: a
     * {@code Runnable} task (value CARRIED, no marker) always, an argument cell (a marker in {@code cs[i]}) only
     * {@code withArgs}, a plain entry never. The marker is read only when it decides: a cell whose value is CARRIED
     * is a carried task either way when argument cells are taken (plain: published with the value).
     */
    private static boolean takes(long v, Object[] cs, int i, boolean withArgs) {
        if (v == QueueEntry.CARRIED) {
            return withArgs || cs[i] == null;
        }
        return withArgs && cs[i] != null;
    }

    /**
     * Pops up to {@code max} entries into {@code dst[0..]} with one head CAS; returns the count (0 when
     * empty). Entries come out in FIFO order.
     */
    public int popMany(long[] dst, int max) {
        if (carried != null) {
            throw new IllegalStateException("this ring carries tasks: pop with tryPop(Object[])");
        }
        if (max <= 0) {
            return 0;
        }
        final MemorySegment s = seg;
        long pos = Mem.getLongOpaque(s, Layout.HEAD_OFFSET);
        for (;;) {
            int n = 0;
            long firstDif = 0;
            while (n < max) {
                // acquire: as in tryPop, for every cell we are about to claim.
                long dif = Mem.getLongAcquire(s, cell(pos + n) + Layout.CELL_SEQ_OFFSET) - (pos + n + 1);
                if (dif != 0) {
                    if (n == 0) {
                        firstDif = dif;
                    }
                    break;
                }
                n++;
            }
            if (n == 0) {
                if (firstDif < 0) {
                    return 0; // empty
                }
                pos = Mem.getLongOpaque(s, Layout.HEAD_OFFSET);
                continue;
            }
            if (Mem.casLong(s, Layout.HEAD_OFFSET, pos, pos + n)) { // one claim for n cells
                for (int i = 0; i < n; i++) {
                    long c = cell(pos + i);
                    dst[i] = Mem.getLongPlain(s, c + Layout.CELL_VALUE_OFFSET);
                    // release: frees cell i for the producer one lap ahead; pairs with its acquire.
                    Mem.setLongRelease(s, c + Layout.CELL_SEQ_OFFSET, pos + i + capacity);
                }
                return n;
            }
            pos = Mem.getLongOpaque(s, Layout.HEAD_OFFSET);
        }
    }

    /**
     * {@code tail - head}, from two volatile loads (head first, so the result is never negative). Counts
     * claimed-but-unpublished cells; exact only when the ring is quiescent.
     */
    public long size() {
        long head = Mem.getLongVolatile(seg, Layout.HEAD_OFFSET);
        long tail = Mem.getLongVolatile(seg, Layout.TAIL_OFFSET) & ~CLOSED;
        return Math.max(0, tail - head);
    }

    /**
     * True when no producer has claimed a position past {@code head}. Both loads are volatile: this is the
     * worker's half of the park handshake (see {@code ParkingLot}), which needs a seq_cst read of
     * {@code tail} after the worker's seq_cst announcement that it is parking.
     */
    public boolean isEmpty() {
        return size() == 0;
    }

    /**
     * True when the cell at {@code head} holds a published entry, so a pop now would take it (unless another
     * consumer takes it first). Unlike {@code !isEmpty()} this is false while the head cell is claimed but not
     * yet published: a producer preempted between its tail CAS and its {@code seq} release would otherwise keep
     * idle workers spinning on "not empty" while every pop fails. Volatile loads of {@code HEAD} and
     * of the head cell's {@code SEQ}: the park re-check's look at published cells, after the worker's seq_cst
     * announcement; it pairs with the producer's release of {@code seq = p + 1} followed by whatever orders that
     * store before the producer's idle-mask load (see {@code Scheduler#pendingPush}).
     */
    public boolean hasReadyEntry() {
        final MemorySegment s = seg;
        long pos = Mem.getLongVolatile(s, Layout.HEAD_OFFSET);
        for (;;) {
            long dif = Mem.getLongVolatile(s, cell(pos) + Layout.CELL_SEQ_OFFSET) - (pos + 1);
            if (dif == 0) {
                return true; // published for pos
            }
            if (dif < 0) {
                return false; // not published for pos yet: empty, or claimed by a producer mid-push
            }
            pos = Mem.getLongVolatile(s, Layout.HEAD_OFFSET); // a consumer took pos meanwhile: look at the new head
        }
    }
}
