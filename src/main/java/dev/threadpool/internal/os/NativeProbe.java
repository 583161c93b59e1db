package dev.threadpool.internal.os;

import dev.threadpool.ProcessMemory;
import jnr.constants.platform.Sysconf;
import jnr.ffi.LibraryLoader;
import jnr.ffi.Runtime;
import jnr.ffi.Struct;
import jnr.ffi.annotations.Out;
import jnr.ffi.byref.IntByReference;
import jnr.posix.POSIX;
import jnr.posix.POSIXFactory;

/**
 * The jnr-posix / jnr-ffi bindings behind {@link ProcessMemoryProbe}. Only {@link ProcessMemoryProbe.Holder}
 * touches this class, so it and the jnr classes it links load on the first process-memory read.
 *
 * <p>jnr-posix has no {@code getrusage}: it is bound here with jnr-ffi ({@link LibC}, {@link Rusage}).
 * The Linux path is tested; the macOS and Windows paths are written from the platform headers and untested.
 */
final class NativeProbe {
    private NativeProbe() {}

    static final int RUSAGE_SELF = 0;

    /** The C library calls jnr-posix lacks. Public: jnr-ffi generates its implementation. */
    public interface LibC {
        int getrusage(int who, @Out Rusage usage);
    }

    /**
     * {@code struct rusage} on LP64 (Linux x86-64 / AArch64, macOS): two {@code struct timeval} of 16 bytes
     * (on macOS {@code tv_usec} is an int plus padding; only the size matters here), then 14 longs starting
     * with {@code ru_maxrss} at offset 32. 144 bytes in all.
     */
    public static final class Rusage extends Struct {
        public final Signed64 utimeSec = new Signed64();
        public final Signed64 utimeUsec = new Signed64();
        public final Signed64 stimeSec = new Signed64();
        public final Signed64 stimeUsec = new Signed64();
        /** Linux: KiB. macOS: bytes. */
        public final Signed64 maxrss = new Signed64();
        public final Signed64[] rest = array(new Signed64[13]);

        public Rusage(Runtime runtime) {
            super(runtime);
        }
    }

    private static void requireLp64(Runtime rt) {
        if (rt.addressSize() != 8) {
            throw new UnsupportedOperationException("struct rusage is bound for 64-bit processes only");
        }
    }

    /**
     * On the module path our binding interfaces sit in a package {@code dev.threadpool} does not export, and
     * jnr-ffi's default (ASM) loader defines their implementation in an unnamed module that may not access
     * them (IllegalAccessError "superinterface check failed"). Its reflection loader builds a
     * {@link java.lang.reflect.Proxy} instead, which the JDK places in a dynamic module granted access to the
     * interfaces' package: select it there, before jnr-ffi's provider class reads the property (it is read once,
     * when jnr-ffi's {@code NativeLibraryLoader} initialises, which nothing but this class triggers). On the
     * class path the fast ASM loader stays.
     */
    private static void selectLoaderForModulePath() {
        if (NativeProbe.class.getModule().isNamed() && System.getProperty("jnr.ffi.asm.enabled") == null) {
            System.setProperty("jnr.ffi.asm.enabled", "false");
        }
    }

    static {
        selectLoaderForModulePath();
    }

    // ---- Linux (tested) -----------------------------------------------------------------------------------

    static ProcessMemoryProbe.Probe linux() {
        POSIX posix = POSIXFactory.getNativePOSIX();
        long pageSize = posix.sysconf(Sysconf._SC_PAGESIZE);
        if (pageSize <= 0) {
            pageSize = 4096;
        }
        final long page = pageSize;
        LibC libc = LibraryLoader.create(LibC.class).load("c");
        Runtime rt = Runtime.getRuntime(libc);
        requireLp64(rt);
        return () -> {
            long[] statm = ProcessMemoryProbe.statmPages(ProcessMemoryProbe.readStatm());
            Rusage ru = new Rusage(rt);
            long peak = libc.getrusage(RUSAGE_SELF, ru) == 0 ? ru.maxrss.get() * 1024L : -1; // KiB on Linux
            return new ProcessMemory(statm[1] * page, peak, statm[0] * page,
                    "linux: /proc/self/statm x sysconf(_SC_PAGESIZE)=" + page + " + getrusage.ru_maxrss");
        };
    }

    // ---- macOS (written, untested) --------------------------------------------------------------------------

    /** Mach calls for resident / virtual size. */
    public interface Mach {
        int mach_task_self();

        /** kern_return_t task_info(task_name_t, task_flavor_t, task_info_t out, mach_msg_type_number_t *count) */
        int task_info(int task, int flavor, @Out MachTaskBasicInfo info, IntByReference count);
    }

    /** {@code struct mach_task_basic_info} (flavor MACH_TASK_BASIC_INFO = 20, count = 12 natural words). */
    public static final class MachTaskBasicInfo extends Struct {
        public final Signed64 virtualSize = new Signed64();
        public final Signed64 residentSize = new Signed64();
        public final Signed64 residentSizeMax = new Signed64();
        public final Signed64 userTime = new Signed64();   // time_value_t: two ints
        public final Signed64 systemTime = new Signed64(); // time_value_t: two ints
        public final Signed32 policy = new Signed32();
        public final Signed32 suspendCount = new Signed32();

        public MachTaskBasicInfo(Runtime runtime) {
            super(runtime);
        }
    }

    static final int MACH_TASK_BASIC_INFO = 20;
    static final int MACH_TASK_BASIC_INFO_COUNT = 12; // sizeof(struct) / sizeof(natural_t) = 48 / 4

    static ProcessMemoryProbe.Probe macos() {
        LibC libc = LibraryLoader.create(LibC.class).load("c");
        Mach mach = LibraryLoader.create(Mach.class).load("c"); // libSystem re-exports the Mach calls
        Runtime rt = Runtime.getRuntime(libc);
        requireLp64(rt);
        return () -> {
            Rusage ru = new Rusage(rt);
            long peak = libc.getrusage(RUSAGE_SELF, ru) == 0 ? ru.maxrss.get() : -1; // bytes on macOS
            MachTaskBasicInfo info = new MachTaskBasicInfo(rt);
            IntByReference count = new IntByReference(MACH_TASK_BASIC_INFO_COUNT);
            boolean ok = mach.task_info(mach.mach_task_self(), MACH_TASK_BASIC_INFO, info, count) == 0;
            return new ProcessMemory(ok ? info.residentSize.get() : -1, peak, ok ? info.virtualSize.get() : -1,
                    "macos: task_info(MACH_TASK_BASIC_INFO) + getrusage.ru_maxrss (untested)");
        };
    }

    // ---- Windows (written, untested) ------------------------------------------------------------------------

    /** kernel32: GetCurrentProcess and K32GetProcessMemoryInfo (psapi's entry point, in kernel32 since Win7). */
    public interface Kernel32 {
        jnr.ffi.Pointer GetCurrentProcess();

        boolean K32GetProcessMemoryInfo(jnr.ffi.Pointer process, @Out ProcessMemoryCounters counters, int cb);
    }

    /** {@code PROCESS_MEMORY_COUNTERS} (cb DWORD, PageFaultCount DWORD, then eight SIZE_T). */
    public static final class ProcessMemoryCounters extends Struct {
        public final Unsigned32 cb = new Unsigned32();
        public final Unsigned32 pageFaultCount = new Unsigned32();
        public final size_t peakWorkingSetSize = new size_t();
        public final size_t workingSetSize = new size_t();
        public final size_t quotaPeakPagedPoolUsage = new size_t();
        public final size_t quotaPagedPoolUsage = new size_t();
        public final size_t quotaPeakNonPagedPoolUsage = new size_t();
        public final size_t quotaNonPagedPoolUsage = new size_t();
        public final size_t pagefileUsage = new size_t();
        public final size_t peakPagefileUsage = new size_t();

        public ProcessMemoryCounters(Runtime runtime) {
            super(runtime);
        }
    }

    static ProcessMemoryProbe.Probe windows() {
        Kernel32 k32 = LibraryLoader.create(Kernel32.class).load("kernel32");
        Runtime rt = Runtime.getRuntime(k32);
        return () -> {
            ProcessMemoryCounters c = new ProcessMemoryCounters(rt);
            int size = Struct.size(c);
            c.cb.set(size);
            boolean ok = k32.K32GetProcessMemoryInfo(k32.GetCurrentProcess(), c, size);
            return ok
                    ? new ProcessMemory(c.workingSetSize.get(), c.peakWorkingSetSize.get(), c.pagefileUsage.get(),
                            "windows: K32GetProcessMemoryInfo (untested)")
                    : new ProcessMemory(-1, -1, -1, "windows: K32GetProcessMemoryInfo failed (untested)");
        };
    }
}
