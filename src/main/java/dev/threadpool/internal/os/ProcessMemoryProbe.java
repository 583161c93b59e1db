package dev.threadpool.internal.os;

import dev.threadpool.ProcessMemory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * Reads the process's memory figures (see {@link ProcessMemory} for the source per platform).
 *
 * <h2>Lazy loading</h2>
 * The native bindings live in {@link NativeProbe}, a separate class that the JVM initialises (and so links
 * jnr-posix, jnr-ffi and jffi's JNI stub) on the first {@link #read()} only: a program that never asks never
 * loads a byte of jffi, and nothing else in the pool refers to these classes. A failure to bind (missing
 * native library, no native access granted) is remembered and reported as -1 figures with the reason in
 * {@code source}, instead of throwing on every call.
 */
public final class ProcessMemoryProbe {
    private ProcessMemoryProbe() {}

    /** The current figures; thread-safe. */
    public static ProcessMemory read() {
        return consistent(Holder.PROBE.read());
    }

    /**
     * One snapshot never shows a peak below its current figure. The probes read the current resident size
     * first and the peak second, yet the peak can still come out lower (CI: peak 115,085,312 beside resident
     * 115,277,824): Linux keeps the high-water mark ({@code mm->hiwater_rss}, behind {@code ru_maxrss} and
     * VmHWM) up to date lazily (on munmap and exit), and the RSS counters it is compared with are batched per
     * CPU, so two reads of the kernel's figures disagree by a few pages. The process did have the resident
     * size we read, so the true peak is at least that: report max(peak, resident).
     */
    static ProcessMemory consistent(ProcessMemory m) {
        if (m.peakResidentBytes() >= 0 && m.residentBytes() > m.peakResidentBytes()) {
            return new ProcessMemory(m.residentBytes(), m.residentBytes(), m.virtualBytes(), m.source());
        }
        return m;
    }

    /** Initialised on first use only: the lazy holder idiom. */
    private static final class Holder {
        static final Probe PROBE = create();

        private static Probe create() {
            String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
            if (!jnrPresent()) {
                return () -> new ProcessMemory(-1, -1, -1, NO_JNR);
            }
            try {
                if (os.contains("linux")) {
                    return NativeProbe.linux();
                }
                if (os.contains("mac") || os.contains("darwin")) {
                    return NativeProbe.macos();
                }
                if (os.contains("windows")) {
                    return NativeProbe.windows();
                }
                return () -> new ProcessMemory(-1, -1, -1, "unsupported os: " + os);
            } catch (LinkageError | RuntimeException e) {
                String why = "native binding unavailable: " + e;
                return () -> new ProcessMemory(-1, -1, -1, why);
            }
        }
    }

    /** The {@code source} of every figure when jnr-posix (an optional dependency since issue 45) is absent. */
    public static final String NO_JNR = "jnr-posix not on the class path/module path: add com.github.jnr:jnr-posix"
            + " 3.1.20 for process memory (module path: also --add-modules ALL-MODULE-PATH; see README)";

    /**
     * Whether jnr-posix can be loaded by the library: on the class path, or on the module path and resolved
     * (the descriptor's {@code requires static} does not resolve it by itself). Loads nothing: no initialisation.
     */
    private static boolean jnrPresent() {
        try {
            Class.forName("jnr.posix.POSIXFactory", false, ProcessMemoryProbe.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    interface Probe {
        ProcessMemory read();
    }

    /** Parses {@code /proc/self/statm}: "size resident shared text lib data dt", in pages. */
    static long[] statmPages(String text) {
        String[] f = text.trim().split("\\s+");
        if (f.length < 2) {
            throw new IllegalArgumentException("unexpected /proc/self/statm: " + text);
        }
        return new long[] {Long.parseLong(f[0]), Long.parseLong(f[1])};
    }

    static String readStatm() {
        try {
            return Files.readString(Path.of("/proc/self/statm"));
        } catch (IOException e) {
            throw new IllegalStateException("cannot read /proc/self/statm", e);
        }
    }
}
