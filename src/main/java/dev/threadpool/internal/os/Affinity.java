package dev.threadpool.internal.os;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;

/**
 * CPU affinity of the calling thread on Linux, through FFM downcalls to glibc:
 * {@code int sched_setaffinity(pid_t pid, size_t cpusetsize, const cpu_set_t *mask)} and
 * {@code int sched_getaffinity(pid_t pid, size_t cpusetsize, cpu_set_t *mask)}, with {@code pid == 0}
 * meaning the calling thread. {@code errno} is captured with {@code Linker.Option.captureCallState("errno")}
 * (read right after the call, before the JVM can clobber it). See native-notes/FFM.md, "CPU affinity".
 *
 * <p>{@code cpu_set_t} is a bit mask of {@value #CPU_SET_BITS} bits (glibc's {@code CPU_SETSIZE}), 128 bytes,
 * stored as an array of {@code unsigned long}: CPU {@code n} is bit {@code n % 64} of word {@code n / 64}.
 * The masks are confined-arena temporaries of the calling thread, freed before the call returns; they are not
 * pool state and so not part of the pool's accounting.
 */
public final class Affinity {
    /** Bits in glibc's cpu_set_t ({@code CPU_SETSIZE}); CPU ids must be below it. */
    public static final int CPU_SET_BITS = 1024;
    private static final long CPU_SET_BYTES = CPU_SET_BITS / 8;

    private static final MethodHandle SET;
    private static final MethodHandle GET;
    private static final StructLayout CAPTURE;
    private static final VarHandle ERRNO;
    private static final String UNAVAILABLE;

    static {
        MethodHandle set = null, get = null;
        StructLayout capture = null;
        VarHandle errno = null;
        String why = null;
        if (!Platform.isLinux()) {
            why = "CPU affinity (workerCpus) is supported on Linux only; this is " + System.getProperty("os.name");
        } else {
            try {
                Linker linker = Linker.nativeLinker();
                Linker.Option ccs = Linker.Option.captureCallState("errno");
                capture = Linker.Option.captureStateLayout();
                errno = capture.varHandle(MemoryLayout.PathElement.groupElement("errno"));
                FunctionDescriptor fd = FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT,
                        ValueLayout.JAVA_LONG, ValueLayout.ADDRESS);
                set = linker.downcallHandle(linker.defaultLookup().find("sched_setaffinity").orElseThrow(), fd, ccs);
                get = linker.downcallHandle(linker.defaultLookup().find("sched_getaffinity").orElseThrow(), fd, ccs);
            } catch (RuntimeException | LinkageError e) {
                why = "CPU affinity is unavailable: cannot link sched_setaffinity/sched_getaffinity (" + e + ")";
                set = get = null;
            }
        }
        SET = set;
        GET = get;
        CAPTURE = capture;
        ERRNO = errno;
        UNAVAILABLE = why;
    }

    private Affinity() {}

    /** Whether pinning works on this platform. */
    public static boolean isSupported() {
        return UNAVAILABLE == null;
    }

    /** @throws UnsupportedOperationException with the reason, where pinning does not work */
    public static void requireSupported() {
        if (UNAVAILABLE != null) {
            throw new UnsupportedOperationException(UNAVAILABLE);
        }
    }

    /**
     * Checks configured CPU ids against the CPUs the calling thread may run on (normally the process's mask:
     * taskset, cgroups cpusets).
     *
     * @throws UnsupportedOperationException where pinning does not work
     * @throws IllegalArgumentException naming the first id that is not usable and listing the usable ones
     */
    public static void checkUsable(int[] cpus) {
        requireSupported();
        List<Integer> allowed = currentThreadCpus();
        for (int i = 0; i < cpus.length; i++) {
            if (!allowed.contains(cpus[i])) {
                throw new IllegalArgumentException("workerCpus[" + i + "]=" + cpus[i] + " is not a CPU this"
                        + " process may run on; allowed CPUs: " + allowed);
            }
        }
    }

    /** Linux errno of sched_setaffinity for a CPU outside the allowed or online set. */
    private static final int EINVAL = 22;

    /**
     * Pins the calling thread to {@code cpu}.
     *
     * @throws IllegalStateException carrying errno if the kernel refuses (EINVAL: not an allowed CPU)
     */
    public static void pinCurrentThread(int cpu) {
        requireSupported();
        if (cpu < 0 || cpu >= CPU_SET_BITS) {
            throw new IllegalArgumentException("cpu must be in [0, " + (CPU_SET_BITS - 1) + "]: cpu=" + cpu);
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment mask = a.allocate(CPU_SET_BYTES, 8); // zeroed
            // cpu_set_t is an array of 64-bit words, CPU n at bit n % 64 of word n / 64 (little-endian x86/arm64)
            long word = (long) (cpu / Long.SIZE) * Long.BYTES;
            mask.set(ValueLayout.JAVA_LONG, word, 1L << (cpu % Long.SIZE));
            MemorySegment state = a.allocate(CAPTURE);
            int rc = (int) SET.invokeExact(state, 0, CPU_SET_BYTES, mask);
            if (rc != 0) {
                int errno = (int) ERRNO.get(state, 0L);
                throw new IllegalStateException("sched_setaffinity(cpu " + cpu + ") failed: errno " + errno
                        + (errno == EINVAL ? " (EINVAL: CPU not allowed or offline)" : ""));
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("sched_setaffinity downcall failed", t);
        }
    }

    /** The CPUs the calling thread may run on, ascending ({@code sched_getaffinity(0, ...)}). */
    public static List<Integer> currentThreadCpus() {
        requireSupported();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment mask = a.allocate(CPU_SET_BYTES, 8);
            MemorySegment state = a.allocate(CAPTURE);
            int rc = (int) GET.invokeExact(state, 0, CPU_SET_BYTES, mask);
            if (rc != 0) {
                throw new IllegalStateException("sched_getaffinity failed: errno " + (int) ERRNO.get(state, 0L));
            }
            List<Integer> cpus = new ArrayList<>();
            for (int w = 0; w < CPU_SET_BITS / 64; w++) {
                long bits = mask.get(ValueLayout.JAVA_LONG, (long) w * Long.BYTES);
                while (bits != 0) {
                    cpus.add(w * 64 + Long.numberOfTrailingZeros(bits));
                    bits &= bits - 1;
                }
            }
            return cpus;
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("sched_getaffinity downcall failed", t);
        }
    }
}
