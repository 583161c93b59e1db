package dev.threadpool.internal.os;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.threadpool.ProcessMemory;
import org.junit.jupiter.api.Test;

/** The one-snapshot rule: a peak that lags the current figure is raised to it; nothing else changes. */
class ProcessMemoryProbeTest {
    @Test
    void aLaggingPeakIsRaisedToTheResidentFigure() {
        ProcessMemory m = ProcessMemoryProbe.consistent(new ProcessMemory(115_277_824, 115_085_312, 900, "s"));
        assertEquals(new ProcessMemory(115_277_824, 115_277_824, 900, "s"), m);
    }

    @Test
    void aConsistentOrUnknownSnapshotIsKept() {
        ProcessMemory ok = new ProcessMemory(10, 20, 30, "s");
        assertSame(ok, ProcessMemoryProbe.consistent(ok));
        ProcessMemory unknown = new ProcessMemory(10, -1, 30, "s");
        assertSame(unknown, ProcessMemoryProbe.consistent(unknown));
    }
}
