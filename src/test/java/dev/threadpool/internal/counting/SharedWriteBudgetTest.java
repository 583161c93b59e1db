package dev.threadpool.internal.counting;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.internal.counting.LineClasses.LineClass;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 48, "Count, do not guess": the pool's off-heap writes per task and per path, counted in a
 * {@link CountingLoader} at {@code maxThreads(64)} on every variant, against the budgets in {@link Budgets}; and
 * the line classification ({@link LineClasses}) against what the pool actually does. Deterministic: counts, not
 * timings (the wake-dependent counts have their margin stated in {@link Budgets}). docs/SCALING.md is the same
 * measurement as a table ({@link ScalingTable}).
 */
@Timeout(120)
class SharedWriteBudgetTest {
    private static Counting counting;
    private static List<Summary> summaries;
    private static final List<String> PURPOSES = new ArrayList<>();

    @BeforeAll
    static void measure() throws Exception {
        counting = new Counting();
        summaries = new ArrayList<>();
        for (Path p : Path.values()) {
            for (String[] v : Counting.VARIANTS) {
                Scenarios.Run r = counting.run(p, v, Counting.tasksFor(p));
                if (r != null) {
                    summaries.add(Summary.of(p, Counting.name(v), r));
                    Recorder.blocks().values().forEach(b -> PURPOSES.add(b.purpose()));
                }
            }
        }
    }

    @Test
    void theLoaderRewroteThePoolsAccesses() {
        CountingLoader l = counting.loader();
        assertTrue(l.memCallsRewritten() > 200, "Mem calls rewritten: " + l.memCallsRewritten());
        assertTrue(l.fencesRewritten() > 0, "fences rewritten: " + l.fencesRewritten());
        assertEquals(1, l.allocationHooks(), "PoolMemory.allocate's one return hooked");
    }

    @Test
    void everyPathWasCountedOnEveryVariantThatHasIt() {
        // STEAL has no GLOBAL_QUEUE row (one shared ring: nothing to steal)
        assertEquals(Path.values().length * Counting.VARIANTS.size() - 1, summaries.size());
        for (Summary s : summaries) {
            assertTrue(s.tasks() > 0, s.path() + " " + s.variant());
            assertEquals(0, s.unmappedWrites(), s.path() + " on " + s.variant() + " wrote memory no pool block holds");
        }
    }

    @Test
    void everyBlockPurposeIsClassified() {
        assertTrue(PURPOSES.contains("counters") && PURPOSES.contains("idle mask"), PURPOSES.toString());
        for (String p : PURPOSES) {
            LineClasses.classify(p, 0); // throws for a purpose with no row
        }
    }

    @Test
    void aPurposeWithNoRowIsRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> LineClasses.classify("a new block", 0));
        assertTrue(e.getMessage().contains("a new block"), e.getMessage());
    }

    /**
     * An owner-only line written by two threads means the table is wrong. Checked on a mixed flood (outside
     * and registered submitters, workers' own submits, groups, joins) and on the scenarios where most threads
     * write (thieves, a chain that moves between workers, stolen joins), each against its own pool's blocks
     * right after it ran (a later pool reuses addresses).
     */
    @Test
    void ownerOnlyLinesHaveOneWriter() throws Exception {
        Set<String> ownerPurposes = new TreeSet<>();
        List<String> wrong = new ArrayList<>();
        int ownerLines = 0;
        for (String[] v : Counting.VARIANTS) {
            ownerLines += checkOwners("flood " + Counting.name(v), counting.flood(v, 8192), ownerPurposes, wrong);
            for (Path p : new Path[] {Path.STEAL, Path.WORKER_SUBMIT, Path.JOIN_STOLEN}) {
                Scenarios.Run r = counting.run(p, v, Counting.tasksFor(p));
                if (r != null) {
                    ownerLines += checkOwners(p + " " + Counting.name(v), r, ownerPurposes, wrong);
                }
            }
        }
        assertTrue(ownerLines > 1000, "owner-only lines written: " + ownerLines);
        // the flood reaches the owner-only rows of every kind: worker counters, local queues' tails and cells or
        // deque arrays, join deques, and the registered submitter's queue (WORK_STEALING) and descriptor cache
        for (String expected : List.of("counters", "local queue N", "local deque N array N", "join deque N control",
                "submitter descriptor caches", "submitter queue N")) {
            assertTrue(ownerPurposes.contains(expected), "no owner-only line of \"" + expected + "\" was written: "
                    + ownerPurposes);
        }
        assertTrue(wrong.isEmpty(), "lines classed owner-only with several writers:\n" + String.join("\n", wrong));
    }

    /** Checks one run against the blocks of its pool (the last one built); returns the owner-only lines written. */
    private static int checkOwners(String label, Scenarios.Run r, Set<String> purposes, List<String> wrong) {
        int n = 0;
        for (Map.Entry<Long, Set<Thread>> e : Summary.writers(r.counts()).entrySet()) {
            Recorder.Block b = Recorder.blockOfLine(e.getKey());
            if (b == null) {
                continue; // counted as unmapped by everyPathWasCountedOnEveryVariantThatHasIt
            }
            long off = (e.getKey() << Recorder.LINE_SHIFT) - b.start();
            if (LineClasses.classify(b.purpose(), off).lineClass() == LineClass.OWNER) {
                n++;
                purposes.add(b.purpose().replaceAll(" \\d+", " N"));
                if (e.getValue().size() > 1) {
                    wrong.add(label + ": \"" + b.purpose() + "\" @" + off + " written by "
                            + e.getValue().stream().map(Thread::getName).sorted().toList());
                }
            }
        }
        return n;
    }

    @Test
    void everyPathIsWithinItsCeiling() {
        List<String> over = new ArrayList<>();
        int checked = 0;
        for (Summary s : summaries) {
            for (Budgets.Budget b : Budgets.ALL) {
                if (b.path() == s.path()) {
                    checked++;
                    String v = b.violation(s);
                    if (v != null) {
                        over.add(v);
                    }
                }
            }
        }
        assertTrue(checked >= 30, "budgets checked: " + checked);
        assertTrue(over.isEmpty(), "over the ceiling (a regression, or a change that should move the pin in"
                + " Budgets and regenerate docs/SCALING.md):\n" + String.join("\n", over));
    }

    /**
     * Admission: an unregistered outside thread's task with a descriptor costs no write on SUBMITTED (it accepts on
     * its outside stripe: one CAS there, exact but for a failed CAS retried now and then, so within 1/32) and a
     * fraction on the freelist (its stripe cache's refills, the runners' spills and flushes); a worker's own submit costs none on SUBMITTED (it accepts
     * on its own ADMITTED word) and a fraction on the freelist (its cache's refills and spills).
     */
    @Test
    void theAdmissionAndFreelistCountsPerTask() {
        for (Summary s : summaries) {
            double submitted = s.perTask(s.submittedRmws());
            double freelist = s.perTask(s.freelistRmws());
            if (s.path() == Path.OUTSIDE_DESCRIPTOR) {
                assertEquals(0, s.submittedRmws(), s.path() + " " + s.variant() + ": an outside thread accepts on its"
                        + " stripe, SUBMITTED " + submitted);
                double stripe = s.perTask(s.outsideStripeRmws());
                assertTrue(stripe >= 1 && stripe <= 1 + 1.0 / 32, s.path() + " " + s.variant()
                        + " outside stripe RMW " + stripe + ": one accept CAS a task");
                // the submitter's pops come from its outside stripe's cache (OutsideDescCaches: one refill CAS per
                // 64 with the default capacity at 64 workers); the runners' spills (one per 32 releases) and their
                // flushes before they park come on top, and those depend on how often 64 workers on 2 CPUs park
                assertTrue(freelist > 0 && freelist <= 2 + 1.0 / 8, s.path() + " " + s.variant()
                        + " freelist " + freelist);
            }
            if (s.path() == Path.WORKER_SUBMIT || s.path() == Path.WORKER_GROUP) {
                assertEquals(0, s.submittedRmws(), s.path() + " " + s.variant() + ": a worker accepts on its own word");
                // the caches' refills and spills (DescCache: up to 64 slots, a spill gives back 48) and the flush of
                // a worker's cache when it starts a search (Slots, hazard rule 2): with 64 workers on 2 CPUs workers
                // search all the time, GLOBAL_QUEUE's most of all (0.27 to 0.55), so the bound is loose here. It may
                // be 0: a chain whose runner releases each slot into the cache its next submit acquires from never
                // touches the freelist (seen on 2 of 4 runs of the busy rows), so only the ceiling is asserted.
                double bound = s.variant().equals("GLOBAL_QUEUE") ? 1 : 3.0 / 4; // up to 0.41 seen, GLOBAL_QUEUE 0.55
                assertTrue(freelist >= 0 && freelist <= bound, s.path() + " " + s.variant() + " freelist " + freelist
                        + ": the worker caches' refills, spills and flushes only");
            }
            if (s.path() == Path.OUTSIDE_DETACHED && !s.variant().equals("GLOBAL_QUEUE")) {
                assertEquals(0, s.submittedRmws(), "a carried submit takes no descriptor: " + s.variant());
            }
        }
    }

    /**
     * Issue 48's targets, not only today's ceilings: every budget with a target that applies (not GLOBAL_QUEUE's
     * ring, by design: Budgets.Budget) is met on every variant, so docs/SCALING.md shows no row over budget.
     */
    @Test
    void everyTargetOfIssue48IsMet() {
        List<String> over = new ArrayList<>();
        int checked = 0;
        for (Summary s : summaries) {
            for (Budgets.Budget b : Budgets.ALL) {
                if (b.path() == s.path() && b.targetApplies(s)) {
                    checked++;
                    if (!b.meetsTarget(s)) {
                        over.add(s.path() + " on " + s.variant() + ": " + b.metric() + " = "
                                + Summary.format(b.value().applyAsDouble(s)) + " per task, target " + b.targetText());
                    }
                }
            }
        }
        assertTrue(checked >= 30, "targets checked: " + checked);
        assertTrue(over.isEmpty(), "over issue 48's target:\n" + String.join("\n", over));
    }

    /**
     * The check can fail: a bad count is reported; an unregistered outside thread's admission as it was before the
     * outside stripes (one CAS on SUBMITTED per task) fails issue 48's target and its ceiling, and so does one
     * more all-shared write per task on that path; today's counts meet the target.
     */
    @Test
    void theBudgetCheckCatchesASharedWrite() {
        Budgets.Budget workerSubmit = Budgets.ALL.get(0);
        assertEquals(Path.WORKER_SUBMIT_BUSY, workerSubmit.path());
        Summary bad = new Summary(Path.WORKER_SUBMIT_BUSY, "WORK_STEALING RING", 8, 8, 32, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                0, Map.of(), 0, "");
        String v = workerSubmit.violation(bad);
        assertNotNull(v, "5 all-shared writes per task must exceed the ceiling");
        assertTrue(v.contains("= 5 per task"), v);
        Summary good = new Summary(Path.WORKER_SUBMIT_BUSY, "WORK_STEALING RING", 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                0, Map.of(), 0, "");
        assertNull(workerSubmit.violation(good));
        Budgets.Budget admission = outsideDescriptorBudget("SUBMITTED RMW");
        Budgets.Budget outsideWakes = outsideDescriptorBudget("all-shared writes outside wakes");
        int seen = 0;
        for (Summary s : summaries) {
            if (s.path() == Path.OUTSIDE_DESCRIPTOR) {
                assertTrue(admission.meetsTarget(s), "no admission CAS on SUBMITTED on " + s.variant());
                assertNull(admission.violation(s));
                assertNull(outsideWakes.violation(s));
                // one CAS on SUBMITTED per task, as before the outside stripes: over the target and the ceiling
                Summary onSubmitted = withSharedRmws(s, s.tasks(), s.tasks());
                assertTrue(!admission.meetsTarget(onSubmitted), s.variant());
                assertNotNull(admission.violation(onSubmitted), s.variant());
                assertNotNull(outsideWakes.violation(onSubmitted), s.variant() + ": the SUBMITTED CAS is all-shared");
                // one more all-shared write per task, anywhere: over the ceiling
                assertNotNull(outsideWakes.violation(withSharedRmws(s, s.tasks(), 0)), s.variant()
                        + ": one more all-shared write a task must exceed the ceiling");
                seen++;
            }
        }
        assertEquals(4, seen, "every variant's outside descriptor submit was counted");
    }

    private static Budgets.Budget outsideDescriptorBudget(String metric) {
        return Budgets.ALL.stream().filter(b -> b.path() == Path.OUTSIDE_DESCRIPTOR && b.metric().equals(metric))
                .findFirst().orElseThrow();
    }

    /** {@code s} with {@code more} all-shared RMWs, {@code onSubmitted} of them on SUBMITTED. */
    private static Summary withSharedRmws(Summary s, long more, long onSubmitted) {
        return new Summary(s.path(), s.variant(), s.tasks(), s.allStores(), s.allRmws() + more, s.fewWrites(),
                s.ownerWrites(), s.fullFences(), s.lightFences(), s.heapAtomics(), s.submittedRmws() + onSubmitted,
                s.outsideStripeRmws(), s.freelistRmws(), s.wakeWrites(), s.linesRead(), s.allLinesRead(),
                s.allSharedWrites(), s.unmappedWrites(), s.note());
    }
}
