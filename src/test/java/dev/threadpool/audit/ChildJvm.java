package dev.threadpool.audit;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Launches a main class of the test class path in a child JVM (the running JDK's {@code java}). */
public final class ChildJvm {
    /** A generous bound: the child does milliseconds of work. */
    private static final long TIMEOUT_SECONDS = 60;

    public record Result(int exitCode, String output) {}

    private ChildJvm() {}

    public static String javaCommand() {
        return ProcessHandle.current().info().command()
                .orElseThrow(() -> new IllegalStateException("cannot find this JVM's java command"));
    }

    public static Result run(Class<?> main, List<String> jvmArgs) throws IOException, InterruptedException {
        return run(main, jvmArgs, System.getProperty("java.class.path"));
    }

    /** As {@link #run(Class, List)} with the given class path (e.g. this one less some jars). */
    public static Result run(Class<?> main, List<String> jvmArgs, String classPath)
            throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(javaCommand());
        cmd.add("--enable-native-access=ALL-UNNAMED");
        cmd.addAll(jvmArgs);
        cmd.add("-cp");
        cmd.add(classPath);
        cmd.add(main.getName());
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        byte[] out;
        try (InputStream in = p.getInputStream()) {
            out = in.readAllBytes(); // ends when the child exits (or closes its output)
        }
        if (!p.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("child JVM did not exit within " + TIMEOUT_SECONDS + " s: " + cmd);
        }
        return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8));
    }
}
