package dev.threadpool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.demo.LaunchCheck;
import dev.threadpool.internal.memory.Mem;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The library works as a named module and on the class path: each form launches a child JVM (the same java
 * as this one) running {@link LaunchCheck} (the demo, src/demo/java: always on the class path, outside the
 * library; the library is target/classes, on the module path or on the class path), which creates a pool, runs tasks through every submit path, checks
 * the accounting after close, and (with {@code --jfr}) checks that creating a pool does not initialise JFR
 * yet a later recording still gets the pool's periodic events. Bounded waits on the child.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class LaunchFormsTest {
    private static final long CHILD_TIMEOUT_S = 120;

    private static String java() {
        return ProcessHandle.current().info().command().orElse(
                Path.of(System.getProperty("java.home"), "bin", "java").toString());
    }

    /** target/classes: where the library and its module descriptor were compiled to. */
    private static Path mainClasses() throws Exception {
        Path p = Path.of(ThreadPool.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        assertTrue(Files.exists(p.resolve("module-info.class")), "module descriptor in " + p);
        assertTrue(!Files.exists(p.resolve("dev/threadpool/demo")), "no demo in the library: " + p);
        return p;
    }

    /** target/test-classes: where the demo (LaunchCheck) was compiled to. */
    private static Path demoClasses() throws Exception {
        return Path.of(LaunchCheck.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    }

    private static String classPath() throws Exception {
        return mainClasses() + File.pathSeparator + demoClasses();
    }

    private static String run(List<String> command) throws IOException, InterruptedException {
        Path log = Files.createTempFile("launch", ".log");
        try {
            Process child = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile())
                    .start();
            if (!child.waitFor(CHILD_TIMEOUT_S, TimeUnit.SECONDS)) {
                child.destroyForcibly();
                child.waitFor(10, TimeUnit.SECONDS);
                throw new AssertionError("child JVM did not finish in " + CHILD_TIMEOUT_S + " s: " + command
                        + "\n" + Files.readString(log, StandardCharsets.UTF_8));
            }
            String out = Files.readString(log, StandardCharsets.UTF_8);
            assertEquals(0, child.exitValue(), "exit status of " + command + "\n" + out);
            return out;
        } finally {
            Files.deleteIfExists(log);
        }
    }

    /** LaunchCheck reports the deque mode from the public Module API; the library decides it in Mem.RAW. */
    @Test
    void launchCheckReadsTheDequeModeTheLibraryUses() {
        assertEquals(Mem.RAW, ThreadPool.class.getModule().isNativeAccessEnabled());
    }

    @Test
    void runsAsANamedModule() throws Exception {
        List<String> cmd = new ArrayList<>(List.of(java(), "--enable-native-access=dev.threadpool",
                "--module-path", mainClasses().toString(), "--add-modules", "dev.threadpool",
                "-cp", demoClasses().toString(), "dev.threadpool.demo.LaunchCheck", "2000", "--jfr"));
        String out = run(cmd);
        assertTrue(out.contains("LaunchCheck OK: named module dev.threadpool"), out);
        assertTrue(out.contains("LaunchCheck deque access: raw addresses"), out);
        assertTrue(out.contains("PoolStats seen after a late JFR start"), out);
        assertTrue(!out.contains("WARNING"), "no JVM warnings with the documented flag:\n" + out);
    }

    @Test
    void runsOnTheClassPath() throws Exception {
        List<String> cmd = new ArrayList<>(List.of(java(), "--enable-native-access=ALL-UNNAMED",
                "-cp", classPath(), "dev.threadpool.demo.LaunchCheck", "2000", "--jfr"));
        String out = run(cmd);
        assertTrue(out.contains("LaunchCheck OK: class path (unnamed module)"), out);
        assertTrue(out.contains("PoolStats seen after a late JFR start"), out);
        assertTrue(out.contains("LaunchCheck deque access: raw addresses"), out);
        assertTrue(!out.contains("WARNING"), "no JVM warnings with the documented flag:\n" + out);
    }

    /**
     * Without the flag and with native access denied, the pool still works: the workers' deques fall back from
     * raw addresses (a restricted call) to checked segment accesses (native-notes/FFM.md, "Raw addresses").
     */
    @Test
    void runsWithNativeAccessDenied() throws Exception {
        List<String> cmd = new ArrayList<>(List.of(java(), "--illegal-native-access=deny",
                "-cp", classPath(), "dev.threadpool.demo.LaunchCheck", "2000"));
        String out = run(cmd);
        assertTrue(out.contains("LaunchCheck OK: class path (unnamed module)"), out);
        assertTrue(out.contains("LaunchCheck deque access: segment and offset"), out);
    }
}
