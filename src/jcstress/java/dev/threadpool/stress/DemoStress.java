package dev.threadpool.stress;

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
        List<String> subjects = new ArrayList<>();
        for (StressSubject s : DEMO_SUBJECTS) {
            subjects.add(s.name());
        }
        StressLauncher.launch(args, DemoStress.class.getName(), subjects,
                " (demo: broken is the expected finding)");
    }
}
