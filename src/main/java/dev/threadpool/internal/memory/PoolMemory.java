package dev.threadpool.internal.memory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * The one allocator of a pool: every pool-owned byte is allocated here, in the pool's own {@link Arena},
 * and counted.
 *
 * <h2>Accounting rule</h2>
 * A block of {@code n} usable bytes is obtained as one raw allocation of {@code n + PAD - 1} bytes with
 * byte alignment, which the JDK passes to {@code malloc} unchanged, and then sliced at the first
 * {@link CacheLine#PAD}-aligned address. The counted size is the raw size: exactly what was asked of the
 * native allocator, alignment slack included. So
 * <pre>
 *   totalAllocBytes = sum of raw sizes ever allocated
 *   totalFreeBytes  = sum of raw sizes released (individually, or all at once by close())
 *   liveBytes       = totalAllocBytes - totalFreeBytes
 *   peakLiveBytes   = max over time of liveBytes
 * </pre>
 * and after {@link #close()} {@code liveBytes == 0} and {@code totalAllocBytes == totalFreeBytes}.
 *
 * <h2>Two kinds of block</h2>
 * Permanent blocks (descriptor table, rings, counters) live in the pool arena until {@link #close()}.
 * Releasable blocks (buffers that must be given back before close: retired deque arrays, scratch) each
 * get a child arena owned by this allocator, closed by {@link #release(MemorySegment)} or at the latest by
 * {@link #close()}; their memory really returns to the native allocator when released.
 *
 * <p>Allocation is a cold path (pool start, growth, first use of scratch) and is serialised by a lock;
 * the counters are volatile so that a stats snapshot reads them without the lock. They live on-heap on
 * purpose: they must outlive the arena whose bytes they count.
 */
public final class PoolMemory implements AutoCloseable {

    /** One entry of the memory map: what a block is for and how many bytes it costs. */
    public record BlockInfo(String purpose, long usableBytes, long countedBytes, boolean releasable) {}

    private final boolean confinedToGc;
    private final Arena arena;
    private final Object lock = new Object();
    private final Map<MemorySegment, Block> releasable = new IdentityHashMap<>();
    private final List<Block> permanent = new ArrayList<>();

    private volatile long totalAllocBytes;
    private volatile long totalFreeBytes;
    private volatile long peakLiveBytes;
    private volatile boolean closed;
    /** Test seam ({@link #failAllocationsForTest}): purposes whose allocation fails; null in production. */
    private Predicate<String> failing; // guarded by lock

    private record Block(String purpose, long usable, long counted, Arena ownArena) {}

    private PoolMemory(boolean confinedToGc) {
        this.confinedToGc = confinedToGc;
        this.arena = confinedToGc ? Arena.ofAuto() : Arena.ofShared();
    }

    /** A pool allocator backed by one shared arena, closed explicitly by {@link #close()}. */
    public static PoolMemory create() {
        return new PoolMemory(false);
    }

    /**
     * An allocator whose memory the garbage collector reclaims. For stress harnesses (jcstress) that create
     * millions of tiny structures and never close them; the counts are kept exactly as in {@link #create()}.
     */
    public static PoolMemory createGcManaged() {
        return new PoolMemory(true);
    }

    /** Allocates a zeroed, {@link CacheLine#PAD}-aligned permanent block of {@code bytes} usable bytes. */
    public MemorySegment allocate(String purpose, long bytes) {
        return allocate(purpose, bytes, false);
    }

    /** Allocates a zeroed, aligned block that can be given back early with {@link #release(MemorySegment)}. */
    public MemorySegment allocateReleasable(String purpose, long bytes) {
        return allocate(purpose, bytes, true);
    }

    /** What a block of {@code bytes} usable bytes adds to {@code liveBytes}: the raw size, slack included. */
    public static long countedSize(long bytes) {
        return Math.addExact(bytes, CacheLine.PAD - 1);
    }

    private MemorySegment allocate(String purpose, long bytes, boolean canRelease) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("bytes must be > 0: bytes=" + bytes + " for " + purpose);
        }
        long raw = countedSize(bytes);
        synchronized (lock) {
            ensureOpen();
            Predicate<String> f = failing;
            if (f != null && f.test(purpose)) { // null in production: one field read on a cold path
                throw new OutOfMemoryError("injected allocation failure (test seam) of " + raw + " bytes for "
                        + purpose);
            }
            Arena owner = canRelease ? (confinedToGc ? Arena.ofAuto() : Arena.ofShared()) : arena;
            MemorySegment rawSeg = owner.allocate(raw, 1); // zero-filled by the JDK
            long skip = (-rawSeg.address()) & (CacheLine.PAD - 1);
            MemorySegment usable = rawSeg.asSlice(skip, bytes);
            Block b = new Block(purpose, bytes, rawSeg.byteSize(), canRelease ? owner : null);
            if (canRelease) {
                releasable.put(usable, b);
            } else {
                permanent.add(b);
            }
            long alloc = totalAllocBytes + b.counted;
            totalAllocBytes = alloc;
            long live = alloc - totalFreeBytes;
            if (live > peakLiveBytes) {
                peakLiveBytes = live;
            }
            return usable;
        }
    }

    /**
     * Gives a releasable block back. Its memory is freed at once; any later access to the segment fails with
     * {@link IllegalStateException} instead of touching freed memory.
     *
     * @throws IllegalArgumentException if the segment is not a live releasable block of this allocator
     */
    public void release(MemorySegment block) {
        synchronized (lock) {
            ensureOpen();
            Block b = releasable.remove(block);
            if (b == null) {
                throw new IllegalArgumentException("not a live releasable block of this pool: " + block);
            }
            freeLocked(b);
        }
    }

    private void freeLocked(Block b) {
        if (b.ownArena != null && !confinedToGc) {
            b.ownArena.close();
        }
        totalFreeBytes = totalFreeBytes + b.counted;
    }

    /**
     * Frees every block: releasable ones first, then the pool arena itself, which is closed explicitly.
     * Idempotent. Afterwards {@link #liveBytes()} is 0 and every segment handed out is inaccessible.
     */
    @Override
    public void close() {
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            for (Block b : releasable.values()) {
                freeLocked(b);
            }
            releasable.clear();
            for (Block b : permanent) {
                totalFreeBytes = totalFreeBytes + b.counted;
            }
            if (!confinedToGc) {
                arena.close();
            }
        }
    }

    /**
     * Fault-injection seam for tests: from now on every allocation whose purpose {@code fails} accepts throws
     * {@link OutOfMemoryError} before allocating anything, as a failing {@code malloc} does under FFM; null
     * stops it. Production code never calls it.
     */
    public void failAllocationsForTest(Predicate<String> fails) {
        synchronized (lock) {
            failing = fails;
        }
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("pool memory is closed");
        }
    }

    public boolean isClosed() { return closed; }

    public long totalAllocBytes() { return totalAllocBytes; }

    public long totalFreeBytes() { return totalFreeBytes; }

    /** {@code totalAllocBytes - totalFreeBytes}, read consistently under the allocator lock. */
    public long liveBytes() {
        synchronized (lock) {
            return totalAllocBytes - totalFreeBytes;
        }
    }

    public long peakLiveBytes() { return peakLiveBytes; }

    /** A consistent copy of the three totals: {@code [alloc, free, peak]}. */
    public long[] totals() {
        synchronized (lock) {
            return new long[] {totalAllocBytes, totalFreeBytes, peakLiveBytes};
        }
    }

    /** The blocks currently live, in allocation order (permanent first). */
    public List<BlockInfo> memoryMap() {
        synchronized (lock) {
            List<BlockInfo> out = new ArrayList<>();
            if (!closed) {
                for (Block b : permanent) {
                    out.add(new BlockInfo(b.purpose, b.usable, b.counted, false));
                }
            }
            for (Block b : releasable.values()) {
                out.add(new BlockInfo(b.purpose, b.usable, b.counted, true));
            }
            return out;
        }
    }
}
