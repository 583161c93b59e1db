package dev.threadpool.stress;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Runs {@link CountingStress} many times per subject under several JIT modes, each run in a fresh JVM (the
 * same java binary and class path as this one), and fails if any run was BROKEN.
 *
 * <pre>
 *   StressLauncher [--runs R] [--items N] [--threads T] [--modes c2,c1,int] [--subjects a,b]
 * </pre>
 * Modes: {@code c2} (default tiered), {@code c1} ({@code -XX:TieredStopAtLevel=1}), {@code int}
 * ({@code -Xint}). Under {@code int} the item count is divided by 10 to keep the time comparable. The default
 * subjects are every subject but the 64-worker ones ({@link CountingStress#WIDE}), which {@code --subjects}
 * names.
 */
public final class StressLauncher {
    private StressLauncher() {}

    public static void main(String[] args) throws Exception {
        List<String> subjects = CountingStress.SUBJECTS.keySet().stream()
                .filter(s -> !CountingStress.WIDE.contains(s)).toList(); // the 64-worker ones: --subjects
        int broken = launch(args, CountingStress.class.getName(), subjects, "");
        System.exit(broken == 0 ? 0 : 1);
    }

    /**
     * Parses the launcher flags and runs {@code mainClass <subject> <items> <threads>} in fresh JVMs, each
     * subject {@code --runs} times per JIT mode; returns how many runs broke (a non-zero exit or a last line
     * that is not {@code -> OK}). {@code note} is appended to each per-mode summary line.
     */
    static int launch(String[] args, String mainClass, List<String> defaultSubjects, String note) throws Exception {
        int runs = 3;
        int items = 1_000_000;
        int threads = 4;
        List<String> modes = List.of("c2", "c1", "int");
        List<String> subjects = defaultSubjects;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--runs" -> runs = Integer.parseInt(args[++i]);
                case "--items" -> items = Integer.parseInt(args[++i]);
                case "--threads" -> threads = Integer.parseInt(args[++i]);
                case "--modes" -> modes = Arrays.asList(args[++i].split(","));
                case "--subjects" -> subjects = Arrays.asList(args[++i].split(","));
                default -> {
                    System.err.println("unknown argument: " + args[i]);
                    System.exit(2);
                }
            }
        }
        String java = ProcessHandle.current().info().command().orElse("java");
        String cp = System.getProperty("java.class.path");
        int broken = 0;
        int total = 0;
        for (String subject : subjects) {
            for (String mode : modes) {
                String[] jit = switch (mode) {
                    case "c2" -> new String[0];
                    case "c1" -> new String[] {"-XX:TieredStopAtLevel=1"};
                    case "int" -> new String[] {"-Xint"};
                    default -> throw new IllegalArgumentException("mode must be c2, c1 or int: " + mode);
                };
                int n = mode.equals("int") ? Math.max(1000, items / 10) : items;
                int modeBroken = 0;
                for (int r = 0; r < runs; r++) {
                    List<String> cmd = new ArrayList<>();
                    cmd.add(java);
                    cmd.addAll(Arrays.asList(jit));
                    cmd.add("--enable-native-access=ALL-UNNAMED");
                    cmd.add("-cp");
                    cmd.add(cp);
                    cmd.add(mainClass);
                    cmd.add(subject);
                    cmd.add(Integer.toString(n));
                    cmd.add(Integer.toString(threads));
                    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
                    String last = "";
                    try (BufferedReader in = new BufferedReader(
                            new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                        for (String line; (line = in.readLine()) != null; ) {
                            System.out.println("[" + mode + " #" + (r + 1) + "] " + line);
                            last = line;
                        }
                    }
                    int rc = p.waitFor();
                    total++;
                    if (rc != 0 || !last.endsWith("-> OK")) {
                        modeBroken++;
                    }
                }
                broken += modeBroken;
                System.out.printf("%-14s %-4s broken in %d of %d runs%s%n", subject, mode, modeBroken, runs, note);
            }
        }
        System.out.printf("counting stress: %d runs, %d broken -> %s%n", total, broken, broken == 0 ? "OK" : "BROKEN");
        return broken;
    }
}
