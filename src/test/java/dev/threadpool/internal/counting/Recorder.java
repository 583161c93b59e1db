package dev.threadpool.internal.counting;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * What the pool, run inside a {@link CountingLoader}, did to its off-heap memory: per thread and per line, the
 * loads, stores and read-modify-writes, and per thread the fences; plus every block {@code PoolMemory} handed out
 * (purpose and address range), so that each line maps back to (purpose, offset in block).
 *
 * <p>Shared by the counting loader and its parent (this package is never loaded child-first), so the pool's
 * rewritten classes record here and the test reads the same state. Recording is off until {@link #start}; a
 * thread records into its own {@link Tally} (its lock is uncontended except against {@link #stop}'s copy), so
 * the counting changes how fast the pool runs but not what it does.
 *
 * <p>A line is {@link #LINE} = 128 bytes, the pool's padding unit ({@code CacheLine.PAD}): the adjacent-line
 * prefetcher moves 128-byte pairs, so two words in one pair are treated as one line, as the pool's layouts do.
 */
public final class Recorder {
    /** Bytes of one line as counted here: {@code CacheLine.PAD}. */
    public static final int LINE = 128;
    static final int LINE_SHIFT = 7;

    static final int READ = 0;
    static final int STORE = 1;
    static final int RMW = 2;
    static final int KINDS = 3;

    /** One block of pool memory: purpose and address range. */
    public record Block(String purpose, long start, long length) {
        boolean contains(long address) {
            return address >= start && address < start + length;
        }
    }

    /** One thread's counts: per line (address >>> 7) the loads, stores and RMWs; fences per thread. */
    static final class Tally {
        final Thread thread;
        final HashMap<Long, long[]> lines = new HashMap<>();
        long fullFences;
        long lightFences;
        long heapAtomics;

        Tally(Thread thread) {
            this.thread = thread;
        }

        synchronized void access(long address, int kind) {
            lines.computeIfAbsent(address >>> LINE_SHIFT, k -> new long[KINDS])[kind]++;
        }

        synchronized void fence(boolean full) {
            if (full) {
                fullFences++;
            } else {
                lightFences++;
            }
        }

        synchronized void heapAtomic() {
            heapAtomics++;
        }

        synchronized Counts copyAndClear() {
            Map<Long, long[]> copy = new HashMap<>(lines.size() * 2);
            lines.forEach((k, v) -> copy.put(k, v.clone()));
            Counts c = new Counts(thread, copy, fullFences, lightFences, heapAtomics);
            lines.clear();
            fullFences = 0;
            lightFences = 0;
            heapAtomics = 0;
            return c;
        }
    }

    /** A thread's counts over one window, frozen. {@code lines}: line number -> [reads, stores, RMWs]. */
    public record Counts(Thread thread, Map<Long, long[]> lines, long fullFences, long lightFences,
            long heapAtomics) {}

    private static volatile boolean on;
    private static final ConcurrentHashMap<Thread, Tally> TALLIES = new ConcurrentHashMap<>();
    private static final ThreadLocal<Tally> MINE = ThreadLocal.withInitial(() -> {
        Tally t = new Tally(Thread.currentThread());
        TALLIES.put(t.thread, t);
        return t;
    });
    /** Live blocks by start address. A new block replaces any it overlaps (a released block's memory reused). */
    private static final ConcurrentSkipListMap<Long, Block> BLOCKS = new ConcurrentSkipListMap<>();

    private Recorder() {}

    // ---- called by CountingMem, on the pool's threads ------------------------------------------------------

    static void access(long address, int kind) {
        if (on) {
            MINE.get().access(address, kind);
        }
    }

    static void fence(boolean full) {
        if (on) {
            MINE.get().fence(full);
        }
    }

    static void heapAtomic() {
        if (on) {
            MINE.get().heapAtomic();
        }
    }

    static void allocated(String purpose, long start, long length) {
        Long lo = BLOCKS.lowerKey(start + length);
        while (lo != null) { // drop every block the new one overlaps: their memory was given back and reused
            Block b = BLOCKS.get(lo);
            if (b == null || b.start + b.length <= start) {
                break;
            }
            BLOCKS.remove(lo);
            lo = BLOCKS.lowerKey(start + length);
        }
        BLOCKS.put(start, new Block(purpose, start, length));
    }

    // ---- the test's side -----------------------------------------------------------------------------------

    /** Forgets every block: call before a new pool is built, whose blocks then replace the last pool's. */
    public static void forgetBlocks() {
        BLOCKS.clear();
    }

    /** Starts a window: clears every thread's counts and records from now on. */
    public static void start() {
        on = false;
        for (Tally t : TALLIES.values()) {
            t.copyAndClear();
        }
        on = true;
    }

    /**
     * Ends the window and returns each thread's counts over it. A thread inside a record call when recording
     * stops may add its one access after the copy; it lands in the next window's clear.
     */
    public static List<Counts> stop() {
        on = false;
        List<Counts> out = new ArrayList<>();
        for (Tally t : TALLIES.values()) {
            Counts c = t.copyAndClear();
            if (!c.lines.isEmpty() || c.fullFences + c.lightFences + c.heapAtomics != 0) {
                out.add(c);
            }
        }
        TALLIES.entrySet().removeIf(e -> !e.getKey().isAlive());
        return out;
    }

    /** Whether a window is open. */
    public static boolean recording() {
        return on;
    }

    /** The block that holds line {@code line} (its first byte), or null: memory the pool did not allocate. */
    public static Block blockOfLine(long line) {
        long address = line << LINE_SHIFT;
        Map.Entry<Long, Block> e = BLOCKS.floorEntry(address);
        return e != null && e.getValue().contains(address) ? e.getValue() : null;
    }

    /** Every live block, by address. */
    public static NavigableMap<Long, Block> blocks() {
        return new ConcurrentSkipListMap<>(BLOCKS);
    }
}
