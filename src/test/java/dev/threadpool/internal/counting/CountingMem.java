package dev.threadpool.internal.counting;

import dev.threadpool.internal.memory.Mem;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;

/**
 * The counting twin of {@link Mem}: one public static method per method of {@code Mem}, with the same name and
 * descriptor. {@link CountingLoader} rewrites every {@code invokestatic Mem.*} of the pool's classes to the method
 * of the same name here, which records the access ({@link Recorder}) and then performs it through the real
 * {@code Mem} (the parent loader's: the same memory, the same access mode). The {@code VarHandle} fences,
 * {@code MemorySegment.copy} and {@code PoolMemory}'s allocations come here too.
 *
 * <p>Each access is recorded at its absolute address: {@code segment.address() + offset} for the segment forms,
 * the address itself for the raw forms, and for the {@code (segment, base, offset)} forms whichever of the two
 * {@code Mem} would use. Kinds: any load is a read; plain, opaque, release and volatile stores are stores (a
 * volatile store also counts as a full fence: it is a locked instruction, or a store and a full fence, on
 * x86 and ARM alike); CAS and every getAnd* are read-modify-writes.
 */
public final class CountingMem {
    private CountingMem() {}

    private static long at(MemorySegment s, long off) {
        return s.address() + off;
    }

    private static long at(MemorySegment s, long base, long off) {
        return Mem.RAW && base != 0 ? base + off : s.address() + off;
    }

    private static void read(long address) {
        Recorder.access(address, Recorder.READ);
    }

    private static void store(long address) {
        Recorder.access(address, Recorder.STORE);
    }

    private static void rmw(long address) {
        Recorder.access(address, Recorder.RMW);
    }

    // ---- long -------------------------------------------------------------------------------------
    public static long getLongPlain(MemorySegment s, long off) { read(at(s, off)); return Mem.getLongPlain(s, off); }
    public static void setLongPlain(MemorySegment s, long off, long v) { store(at(s, off)); Mem.setLongPlain(s, off, v); }
    public static long getLongOpaque(MemorySegment s, long off) { read(at(s, off)); return Mem.getLongOpaque(s, off); }
    public static void setLongOpaque(MemorySegment s, long off, long v) { store(at(s, off)); Mem.setLongOpaque(s, off, v); }
    public static long getLongAcquire(MemorySegment s, long off) { read(at(s, off)); return Mem.getLongAcquire(s, off); }
    public static void setLongRelease(MemorySegment s, long off, long v) { store(at(s, off)); Mem.setLongRelease(s, off, v); }
    public static long getLongVolatile(MemorySegment s, long off) { read(at(s, off)); return Mem.getLongVolatile(s, off); }

    public static void setLongVolatile(MemorySegment s, long off, long v) {
        store(at(s, off));
        Recorder.fence(true);
        Mem.setLongVolatile(s, off, v);
    }

    public static boolean casLong(MemorySegment s, long off, long expect, long update) {
        rmw(at(s, off));
        return Mem.casLong(s, off, expect, update);
    }

    public static long getAndAddLong(MemorySegment s, long off, long delta) {
        rmw(at(s, off));
        return Mem.getAndAddLong(s, off, delta);
    }

    public static long getAndSetLong(MemorySegment s, long off, long v) {
        rmw(at(s, off));
        return Mem.getAndSetLong(s, off, v);
    }

    public static long getAndOrLong(MemorySegment s, long off, long bits) {
        rmw(at(s, off));
        return Mem.getAndOrLong(s, off, bits);
    }

    public static long getAndAndLong(MemorySegment s, long off, long bits) {
        rmw(at(s, off));
        return Mem.getAndAndLong(s, off, bits);
    }

    // ---- long at a raw address ----------------------------------------------------------------------
    public static long getLongPlainAt(long a) { read(a); return Mem.getLongPlainAt(a); }
    public static void setLongPlainAt(long a, long v) { store(a); Mem.setLongPlainAt(a, v); }
    public static long getLongOpaqueAt(long a) { read(a); return Mem.getLongOpaqueAt(a); }
    public static void setLongOpaqueAt(long a, long v) { store(a); Mem.setLongOpaqueAt(a, v); }
    public static long getLongAcquireAt(long a) { read(a); return Mem.getLongAcquireAt(a); }
    public static long getLongVolatileAt(long a) { read(a); return Mem.getLongVolatileAt(a); }
    public static void setLongReleaseAt(long a, long v) { store(a); Mem.setLongReleaseAt(a, v); }
    public static boolean casLongAt(long a, long expect, long update) { rmw(a); return Mem.casLongAt(a, expect, update); }
    public static boolean maskable(long a) { return Mem.maskable(a); } // no access
    public static long getLongOpaqueAtMasked(long a) { read(a); return Mem.getLongOpaqueAtMasked(a); }

    // ---- long at base + off, else in the segment at off -------------------------------------------------
    public static long getLongPlainAt(MemorySegment s, long base, long off) {
        read(at(s, base, off));
        return Mem.getLongPlainAt(s, base, off);
    }

    public static long getLongOpaqueAt(MemorySegment s, long base, long off) {
        read(at(s, base, off));
        return Mem.getLongOpaqueAt(s, base, off);
    }

    public static long getLongAcquireAt(MemorySegment s, long base, long off) {
        read(at(s, base, off));
        return Mem.getLongAcquireAt(s, base, off);
    }

    public static long getLongVolatileAt(MemorySegment s, long base, long off) {
        read(at(s, base, off));
        return Mem.getLongVolatileAt(s, base, off);
    }

    public static void setLongPlainAt(MemorySegment s, long base, long off, long v) {
        store(at(s, base, off));
        Mem.setLongPlainAt(s, base, off, v);
    }

    public static void setLongOpaqueAt(MemorySegment s, long base, long off, long v) {
        store(at(s, base, off));
        Mem.setLongOpaqueAt(s, base, off, v);
    }

    public static void setLongReleaseAt(MemorySegment s, long base, long off, long v) {
        store(at(s, base, off));
        Mem.setLongReleaseAt(s, base, off, v);
    }

    public static boolean casLongAt(MemorySegment s, long base, long off, long expect, long update) {
        rmw(at(s, base, off));
        return Mem.casLongAt(s, base, off, expect, update);
    }

    // ---- int --------------------------------------------------------------------------------------
    public static int getIntPlain(MemorySegment s, long off) { read(at(s, off)); return Mem.getIntPlain(s, off); }
    public static void setIntPlain(MemorySegment s, long off, int v) { store(at(s, off)); Mem.setIntPlain(s, off, v); }
    public static int getIntOpaque(MemorySegment s, long off) { read(at(s, off)); return Mem.getIntOpaque(s, off); }
    public static void setIntOpaque(MemorySegment s, long off, int v) { store(at(s, off)); Mem.setIntOpaque(s, off, v); }
    public static int getIntAcquire(MemorySegment s, long off) { read(at(s, off)); return Mem.getIntAcquire(s, off); }
    public static void setIntRelease(MemorySegment s, long off, int v) { store(at(s, off)); Mem.setIntRelease(s, off, v); }

    public static boolean casInt(MemorySegment s, long off, int expect, int update) {
        rmw(at(s, off));
        return Mem.casInt(s, off, expect, update);
    }

    // ---- fences (VarHandle's static methods) ----------------------------------------------------------
    public static void fullFence() { Recorder.fence(true); VarHandle.fullFence(); }
    public static void acquireFence() { Recorder.fence(false); VarHandle.acquireFence(); }
    public static void releaseFence() { Recorder.fence(false); VarHandle.releaseFence(); }
    public static void loadLoadFence() { Recorder.fence(false); VarHandle.loadLoadFence(); }
    public static void storeStoreFence() { Recorder.fence(false); VarHandle.storeStoreFence(); }

    // ---- the rest ---------------------------------------------------------------------------------------

    /** {@code MemorySegment.copy(src, srcOff, dst, dstOff, bytes)}: one store per destination line touched. */
    public static void copy(MemorySegment src, long srcOff, MemorySegment dst, long dstOff, long bytes) {
        if (bytes > 0) {
            long first = at(dst, dstOff) >>> Recorder.LINE_SHIFT;
            long last = (at(dst, dstOff) + bytes - 1) >>> Recorder.LINE_SHIFT;
            for (long line = first; line <= last; line++) {
                store(line << Recorder.LINE_SHIFT);
            }
        }
        MemorySegment.copy(src, srcOff, dst, dstOff, bytes);
    }

    /** Called before a read-modify-write through a {@code VarHandle} on the heap (not classed: no address). */
    public static void heapAtomic() {
        Recorder.heapAtomic();
    }

    /** Called with the block {@code PoolMemory.allocate} is about to return; returns it. */
    public static MemorySegment allocated(MemorySegment block, String purpose) {
        Recorder.allocated(purpose, block.address(), block.byteSize());
        return block;
    }
}
