package dev.threadpool.internal.memory;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * Atomic access to longs and ints inside a {@link MemorySegment}, one static method per VarHandle
 * access mode (see the package comment for the naming scheme).
 *
 * <p>The handles are {@code static final} and invoke-exact, so the JIT binds each call to the exact
 * access mode with no boxing or adaptation, and a wrong argument type fails at the first call instead of
 * silently taking a slow path. Offsets are in bytes from the start of the segment and must be naturally
 * aligned (8 for long, 4 for int): atomic modes reject misaligned addresses.
 */
public final class Mem {
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle().withInvokeExactBehavior();
    private static final VarHandle INT = ValueLayout.JAVA_INT.varHandle().withInvokeExactBehavior();

    /**
     * The whole address space as one segment of the global session ({@code MemorySegment.NULL} reinterpreted
     * to {@code Long.MAX_VALUE} bytes), or null where that restricted call is refused
     * ({@code --illegal-native-access=deny} without {@code --enable-native-access}). A {@code static final}
     * segment is a constant to the JIT: its liveness, read-only and bounds checks fold away, and an access
     * costs the address arithmetic and an alignment test. See native-notes/FFM.md, "Raw addresses".
     */
    private static final MemorySegment ALL = everything();

    /**
     * Whether the {@code *At(address)} accessors below are available. When false a structure uses its
     * segment-and-offset accessors instead (a {@code static final}, so the JIT folds the choice away).
     */
    public static final boolean RAW = ALL != null;

    private Mem() {}

    private static MemorySegment everything() {
        try {
            return MemorySegment.NULL.reinterpret(Long.MAX_VALUE);
        } catch (IllegalCallerException | UnsupportedOperationException refused) {
            return null; // native access denied to this module: segment-and-offset accesses only
        }
    }

    // ---- long -------------------------------------------------------------------------------------
    public static long getLongPlain(MemorySegment s, long off) { return (long) LONG.get(s, off); }
    public static void setLongPlain(MemorySegment s, long off, long v) { LONG.set(s, off, v); }
    public static long getLongOpaque(MemorySegment s, long off) { return (long) LONG.getOpaque(s, off); }
    public static void setLongOpaque(MemorySegment s, long off, long v) { LONG.setOpaque(s, off, v); }
    public static long getLongAcquire(MemorySegment s, long off) { return (long) LONG.getAcquire(s, off); }
    public static void setLongRelease(MemorySegment s, long off, long v) { LONG.setRelease(s, off, v); }
    public static long getLongVolatile(MemorySegment s, long off) { return (long) LONG.getVolatile(s, off); }
    public static void setLongVolatile(MemorySegment s, long off, long v) { LONG.setVolatile(s, off, v); }

    public static boolean casLong(MemorySegment s, long off, long expect, long update) {
        return (boolean) LONG.compareAndSet(s, off, expect, update);
    }

    public static long getAndAddLong(MemorySegment s, long off, long delta) {
        return (long) LONG.getAndAdd(s, off, delta);
    }

    public static long getAndSetLong(MemorySegment s, long off, long v) {
        return (long) LONG.getAndSet(s, off, v);
    }

    public static long getAndOrLong(MemorySegment s, long off, long bits) {
        return (long) LONG.getAndBitwiseOr(s, off, bits);
    }

    public static long getAndAndLong(MemorySegment s, long off, long bits) {
        return (long) LONG.getAndBitwiseAnd(s, off, bits);
    }

    // ---- long at a raw address (only when RAW; see native-notes/FFM.md, "Raw addresses") ------------
    // No liveness or bounds check: the caller guarantees the block at the address is allocated for the whole
    // access. Used only where that is argued at the use (native-notes/FFM.md, "Raw addresses"): accesses by the
    // pool's own workers to blocks freed after every worker has been joined (WorkDeque's owner and thief
    // operations; a worker's own counters, run word, local RingQueue push and pop, LifoSlot's empty test, and its
    // per-pop looks at the idle mask and the space waiters, and the demand check of its joins and forks),
    // and a carrying BoundedRing's push and pop, which run only while the task is accepted or on a worker.
    public static long getLongPlainAt(long address) { return (long) LONG.get(ALL, address); }
    public static void setLongPlainAt(long address, long v) { LONG.set(ALL, address, v); }
    public static long getLongOpaqueAt(long address) { return (long) LONG.getOpaque(ALL, address); }
    public static void setLongOpaqueAt(long address, long v) { LONG.setOpaque(ALL, address, v); }
    public static long getLongAcquireAt(long address) { return (long) LONG.getAcquire(ALL, address); }
    public static long getLongVolatileAt(long address) { return (long) LONG.getVolatile(ALL, address); }
    public static void setLongReleaseAt(long address, long v) { LONG.setRelease(ALL, address, v); }

    public static boolean casLongAt(long address, long expect, long update) {
        return (boolean) LONG.compareAndSet(ALL, address, expect, update);
    }

    /**
     * What {@link #getLongOpaqueAtMasked} keeps of an address: bits 55..3. Every user-space address of x86-64
     * (5-level paging included) and AArch64 is below 2^56, and a long's is 8-aligned.
     */
    private static final long MASKED_ADDRESS = 0x00FF_FFFF_FFFF_FFF8L;

    /** Whether {@code address} may be given to {@link #getLongOpaqueAtMasked}: its mask leaves it as it is. */
    public static boolean maskable(long address) {
        return (address & ~MASKED_ADDRESS) == 0;
    }

    /**
     * {@link #getLongOpaqueAt} of an address the caller checked once with {@link #maskable}. The mask tells the JIT
     * what that check found: the value is 8-aligned and far below {@code ALL}'s end, so the access's alignment and
     * bounds tests fold away, and the load is an AND and a move instead of about eleven instructions (the demand
     * check of a fork reads three such words per fork, PERFORMANCE_TRACKING 92). The mask changes no maskable
     * address.
     */
    public static long getLongOpaqueAtMasked(long address) {
        return (long) LONG.getOpaque(ALL, address & MASKED_ADDRESS);
    }

    // ---- long at base + off where base != 0, else in the segment at off ------------------------------
    // For structures that take some accesses by raw address (base = the block's address, "Raw addresses" argued
    // at the structure) and others, or all where !RAW, by segment (base = 0). Only the address or only the
    // segment is used, never both; where !RAW the choice folds away.
    public static long getLongPlainAt(MemorySegment s, long base, long off) {
        return RAW && base != 0 ? getLongPlainAt(base + off) : getLongPlain(s, off);
    }

    public static long getLongOpaqueAt(MemorySegment s, long base, long off) {
        return RAW && base != 0 ? getLongOpaqueAt(base + off) : getLongOpaque(s, off);
    }

    public static long getLongAcquireAt(MemorySegment s, long base, long off) {
        return RAW && base != 0 ? getLongAcquireAt(base + off) : getLongAcquire(s, off);
    }

    public static long getLongVolatileAt(MemorySegment s, long base, long off) {
        return RAW && base != 0 ? getLongVolatileAt(base + off) : getLongVolatile(s, off);
    }

    public static void setLongPlainAt(MemorySegment s, long base, long off, long v) {
        if (RAW && base != 0) {
            setLongPlainAt(base + off, v);
        } else {
            setLongPlain(s, off, v);
        }
    }

    public static void setLongOpaqueAt(MemorySegment s, long base, long off, long v) {
        if (RAW && base != 0) {
            setLongOpaqueAt(base + off, v);
        } else {
            setLongOpaque(s, off, v);
        }
    }

    public static void setLongReleaseAt(MemorySegment s, long base, long off, long v) {
        if (RAW && base != 0) {
            setLongReleaseAt(base + off, v);
        } else {
            setLongRelease(s, off, v);
        }
    }

    public static boolean casLongAt(MemorySegment s, long base, long off, long expect, long update) {
        return RAW && base != 0 ? casLongAt(base + off, expect, update) : casLong(s, off, expect, update);
    }

    // ---- int --------------------------------------------------------------------------------------
    public static int getIntPlain(MemorySegment s, long off) { return (int) INT.get(s, off); }
    public static void setIntPlain(MemorySegment s, long off, int v) { INT.set(s, off, v); }
    public static int getIntOpaque(MemorySegment s, long off) { return (int) INT.getOpaque(s, off); }
    public static void setIntOpaque(MemorySegment s, long off, int v) { INT.setOpaque(s, off, v); }
    public static int getIntAcquire(MemorySegment s, long off) { return (int) INT.getAcquire(s, off); }
    public static void setIntRelease(MemorySegment s, long off, int v) { INT.setRelease(s, off, v); }

    public static boolean casInt(MemorySegment s, long off, int expect, int update) {
        return (boolean) INT.compareAndSet(s, off, expect, update);
    }
}
