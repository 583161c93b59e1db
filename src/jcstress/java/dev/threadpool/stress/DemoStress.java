package dev.threadpool.stress;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Counting stress for DEMO subjects: deliberately broken structures that must never be in
 * {@link CountingStress}'s default list (CI would fail on them, by design). The only one is
 * {@code no-fence-deque} ({@link NoFenceDequeSubject}, seed 002 Case 3).
 *
 * <pre>
 *   DemoStress &lt;subject&gt; [items] [threads]                      one run in this JVM (CountingStress format)
 *   DemoStress --launch [--runs R] [--items N] [--threads T] [--modes c2,c1,int] [--subjects a,b]
 * </pre>
 * {@code --launch} runs each subject {@code R} times per JIT mode in fresh JVMs, like {@link StressLauncher},
 * and reports how many runs broke. A broken run is the expected finding, so it always exits 0.
 */
public final class DemoStress {
    private static final List<StressSubject> DEMO_SUBJECTS = List.of(new NoFenceDequeSubject());

    private DemoStress() {}

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("--launch")) {
            launch(Arrays.copyOfRange(args, 1, args.length));
            return;
        }
        // Registered in this JVM only; the default list other JVMs see is untouched.
        for (StressSubject s : DEMO_SUBJECTS) {
            CountingStress.register(s);
        }
        CountingStress.main(args);
    }

    private static void launch(String[] args) throws Exception {
        int runs = 10;
        int items = 1_000_000;
        int threads = 4;
        List<String> modes = List.of("c2", "c1", "int");
        List<String> subjects = new ArrayList<>();
        for (StressSubject s : DEMO_SUBJECTS) subjects.add(s.name());
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
        for (String subject : subjects) {
            for (String mode : modes) {
                String[] jit = switch (mode) {
                    case "c2" -> new String[0];
                    case "c1" -> new String[] {"-XX:TieredStopAtLevel=1"};
                    case "int" -> new String[] {"-Xint"};
                    default -> throw new IllegalArgumentException("mode must be c2, c1 or int: " + mode);
                };
                int n = mode.equals("int") ? Math.max(1000, items / 10) : items;
                int broken = 0;
                for (int r = 0; r < runs; r++) {
                    List<String> cmd = new ArrayList<>();
                    cmd.add(java);
                    cmd.addAll(Arrays.asList(jit));
                    cmd.add("--enable-native-access=ALL-UNNAMED");
                    cmd.add("-cp");
                    cmd.add(cp);
                    cmd.add(DemoStress.class.getName());
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
                    if (p.waitFor() != 0 || !last.endsWith("-> OK")) {
                        broken++;
                    }
                }
                System.out.printf("%-14s %-4s broken in %d of %d runs (demo: broken is the expected finding)%n",
                        subject, mode, broken, runs);
            }
        }
    }
}
