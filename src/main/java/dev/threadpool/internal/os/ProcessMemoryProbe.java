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
        return Holder.PROBE.read();
    }

    /** Initialised on first use only: the lazy holder idiom. */
    private static final class Holder {
        static final Probe PROBE = create();

        private static Probe create() {
            String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
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
