package dev.threadpool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.audit.ChildJvm;
import dev.threadpool.audit.ProcessMemoryMain;
import dev.threadpool.internal.os.ProcessMemoryProbe;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
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
        // An independent reading: /proc/self/status VmHWM (peak RSS, kB). Neither figure is monotonic across
        // reads: the kernel answers both as max(mm->hiwater_rss, RSS at the read), and mm->hiwater_rss is only
        // brought up to date lazily (on munmap, exit). RSS that shrinks between the two reads (a GC giving pages
        // back) can leave the later VmHWM a few pages below our ru_maxrss: CI saw 16 KiB. So the two must agree
        // to within what RSS can move between adjacent reads, bounded by a quarter of the figure: that still
        // fails a unit slip (KiB or pages taken for bytes is a factor of 1,024 or 4,096).
        long hwm = statusKb("VmHWM:") * 1024;
        long peak = m.peakResidentBytes();
        assertTrue(Math.abs(hwm - peak) <= hwm / 4, "ru_maxrss " + peak + " agrees with VmHWM " + hwm + ": " + m);
        long vmSize = statusKb("VmSize:") * 1024;
        assertTrue(vmSize > 0 && m.virtualBytes() > 0, "VmSize " + vmSize + " vs " + m);
    }

    /** peak >= resident in every snapshot, while the heap churns (pages come and go between the two reads). */
    @Test
    @EnabledOnOs(OS.LINUX)
    void peakIsNeverBelowResidentInOneSnapshot() {
        long sink = 0;
        for (int i = 0; i < 2_000; i++) {
            byte[] churn = new byte[(i % 64 + 1) * 16 * 1024];
            churn[churn.length - 1] = (byte) i;
            sink += churn[churn.length - 1];
            ProcessMemory m = ThreadPool.processMemory();
            assertTrue(m.peakResidentBytes() >= m.residentBytes(), "snapshot " + i + ": " + m);
        }
        assertTrue(sink != Long.MIN_VALUE);
    }

    /**
     * jnr-posix is optional: a child JVM whose class path leaves every jnr jar out (jnr-posix, jnr-ffi, jffi,
     * jnr-constants, the jnr asm jars) runs a pool as usual, and processMemory() says why it has no figures.
     */
    @Test
    void withoutJnrAPoolRunsAndProcessMemorySaysWhy() throws Exception {
        String cp = Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
                .filter(e -> !e.replace('\\', '/').contains("/com/github/jnr/"))
                .collect(Collectors.joining(File.pathSeparator));
        assertTrue(!cp.equals(System.getProperty("java.class.path")), "jnr was on the test class path");
        ChildJvm.Result r = ChildJvm.run(ProcessMemoryMain.class, List.of(), cp);
        assertEquals(0, r.exitCode(), r.output());
        assertTrue(r.output().contains("snapshot 100"), "the pool ran: " + r.output());
        assertTrue(r.output().contains("process memory ProcessMemory[residentBytes=-1, peakResidentBytes=-1,"
                + " virtualBytes=-1, source=" + ProcessMemoryProbe.NO_JNR + "]"), r.output());
        assertFalse(r.output().contains("WARNING"), r.output());
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
