package dev.threadpool.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.PoolConfig;
import dev.threadpool.PoolStats;
import dev.threadpool.ThreadPool;
import dev.threadpool.audit.ChildJvm;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Micrometer is optional: the core never references it, and a program without it on the class path creates,
 * uses and closes a pool (with an MXBean) without a NoClassDefFoundError.
 */
class NoMicrometerTest {

    /** The main classes' directory (target/classes), found from a core class. */
    private static Path mainClasses() throws Exception {
        return Path.of(ThreadPool.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    }

    @Test
    void onlyTheMetricsPackageReferencesMicrometer() throws Exception {
        Path root = mainClasses();
        List<String> offenders = new ArrayList<>();
        int scanned = 0;
        try (Stream<Path> files = Files.walk(root.resolve("dev/threadpool"))) {
            for (Path f : (Iterable<Path>) files.filter(p -> p.toString().endsWith(".class"))::iterator) {
                String rel = root.relativize(f).toString().replace(File.separatorChar, '/');
                if (rel.startsWith("dev/threadpool/metrics/")) {
                    continue;
                }
                scanned++;
                // Class names in a constant pool are UTF-8 (modified UTF-8, the same for ASCII).
                if (new String(Files.readAllBytes(f), StandardCharsets.ISO_8859_1).contains("io/micrometer")) {
                    offenders.add(rel);
                }
            }
        }
        assertTrue(scanned > 50, "scanned " + scanned + " classes under " + root);
        assertEquals(List.of(), offenders, "core classes referencing io/micrometer");
    }

    @Test
    void aPoolRunsWithoutMicrometerOnTheClassPath() throws Exception {
        String cp = Stream.of(System.getProperty("java.class.path").split(File.pathSeparator))
                .filter(e -> !e.contains("micrometer"))
                .collect(Collectors.joining(File.pathSeparator));
        assertFalse(cp.contains("micrometer"));
        ChildJvm.Result r = runWithClassPath(cp);
        assertEquals(0, r.exitCode(), r.output());
        assertTrue(r.output().contains("NO_MICROMETER_OK submitted=10"), r.output());
    }

    private static ChildJvm.Result runWithClassPath(String cp) throws IOException, InterruptedException {
        List<String> cmd = List.of(ChildJvm.javaCommand(), "--enable-native-access=ALL-UNNAMED",
                "--sun-misc-unsafe-memory-access=allow", "-cp", cp, Child.class.getName());
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("child did not exit: " + out);
        }
        return new ChildJvm.Result(p.exitValue(), out);
    }

    /** The child: no Micrometer on its class path. */
    public static final class Child {
        public static void main(String[] args) throws Exception {
            try {
                Class.forName("io.micrometer.core.instrument.MeterRegistry");
                System.out.println("Micrometer is on the class path");
                System.exit(2);
            } catch (ClassNotFoundException expected) {
                // as intended
            }
            PoolStats s;
            try (ThreadPool pool = ThreadPool.create(PoolConfig.builder().maxThreads(2)
                    .jmxName("dev.threadpool:type=ThreadPool,name=child").build())) {
                java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(10);
                for (int i = 0; i < 10; i++) {
                    pool.submit(done::countDown);
                }
                done.await();
                s = pool.statsSnapshot();
            }
            System.out.println("NO_MICROMETER_OK submitted=" + s.submitted());
        }
    }
}
