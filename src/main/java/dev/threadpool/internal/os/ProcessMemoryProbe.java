package dev.threadpool.internal.os;

import dev.threadpool.ProcessMemory;

/** Placeholder replaced below. */
public final class ProcessMemoryProbe {
    private ProcessMemoryProbe() {}

    public static ProcessMemory read() {
        throw new UnsupportedOperationException();
    }
}
