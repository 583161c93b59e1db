package dev.threadpool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.audit.ChildJvm;
import dev.threadpool.audit.ProcessMemoryMain;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ProcessMemoryTest {

    @Test
    @EnabledOnOs(OS.LINUX)
    void linuxFiguresAgreeWithProcStatus() throws Exception {
        ProcessMemory m = ThreadPool.processMemory();
        assertTrue(m.source().startsWith("linux:"), m.toString());
        assertTrue(m.residentBytes() > 0, "resident: " + m);
        assertTrue(m.virtualBytes() >= m.residentBytes(), "virtual >= resident: " + m);
        assertTrue(m.peakResidentBytes() > 0, "peak resident: " + m);
        // An independent reading: /proc/self/status VmHWM (peak RSS, kB), after ours, so never smaller.
        long hwm = statusKb("VmHWM:") * 1024;
        assertTrue(m.peakResidentBytes() <= hwm, "ru_maxrss " + m.peakResidentBytes() + " <= later VmHWM " + hwm);
        // ru_maxrss and VmHWM are the same kernel figure (hiwater_rss): the later read can only be larger,
        // and on an idle test JVM not by more than what it grew since (bounded generously by 256 MiB).
        assertTrue(hwm - m.peakResidentBytes() < 256L << 20, "same figure: " + hwm + " vs " + m);
        long vmSize = statusKb("VmSize:") * 1024;
        assertTrue(vmSize > 0 && m.virtualBytes() > 0, "VmSize " + vmSize + " vs " + m);
    }

    private static long statusKb(String key) throws Exception {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith(key)) {
                return Long.parseLong(line.substring(key.length()).trim().split("\\s+")[0]);
            }
        }
        throw new AssertionError(key + " not in /proc/self/status");
    }

    @Test
    void aProgramThatNeverAsksNeverLoadsJffi() throws Exception {
        ChildJvm.Result r = ChildJvm.run(ProcessMemoryMain.class, List.of("-Xlog:class+load=info"));
        assertEquals(0, r.exitCode(), r.output());
        List<String> lines = r.output().lines().toList();
        int marker = lines.indexOf(ProcessMemoryMain.MARKER);
        assertTrue(marker > 0, "marker printed: " + r.output());
        for (String line : lines.subList(0, marker)) {
            assertFalse(line.contains("com.kenai.jffi") || line.contains(" jnr."),
                    "loaded before anyone asked for process memory: " + line);
        }
        assertTrue(lines.subList(marker, lines.size()).stream().anyMatch(l -> l.contains("com.kenai.jffi")),
                "processMemory() loads jffi");
        assertTrue(r.output().contains("process memory ProcessMemory[residentBytes="), r.output());
    }
}
