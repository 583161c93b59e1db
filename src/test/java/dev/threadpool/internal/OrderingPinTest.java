package dev.threadpool.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassModel;
import java.lang.classfile.CodeElement;
import java.lang.classfile.MethodModel;
import java.lang.classfile.instruction.InvokeInstruction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The ordering pin (issue 46): every ordering-relevant call of the off-heap structures and of the park, wake
 * and join protocols, method by method and in program order, against the list in {@code ordering-pins.txt}
 * (next to this class in src/test/resources). Counted are the {@code Mem} accesses that are not plain, every
 * {@code VarHandle} call (fences, {@code setRelease}, {@code getAcquire}...), calls of our own helpers whose
 * name states a mode ({@code ctlAcquire}, {@code peekVolatile}...) and, in the callers of the park/wake and join
 * handshakes ({@code Idle}, {@code Joining}...), the handshake's steps ({@code announce}, {@code hasWork},
 * {@code tryMarkParked}...), whose order is the protocol.
 *
 * <p>Why a pin. Weakening an access by one step (a full fence removed, release or acquire to plain, a CAS to a
 * plain store) changes the list, so this test fails on every such weakening, on any machine, every time. It is
 * the detector for the weakenings no behavioural test can see on x86 (release to plain and acquire to plain
 * reorder only in the compiler, and HotSpot happens not to move these accesses; the full fence of a steal
 * orders two loads that x86 never reorders), and a second detector for the rest, which jcstress and Lincheck
 * catch by behaviour (docs/TESTING.md, "Weakened orderings", says which row has which). It is a change detector,
 * not a proof: a change that keeps the list (an access moved to the wrong place in the same method) passes it.
 * A deliberate change of an ordering updates the pin in the same commit, with the pairing comment at the access
 * and the table row re-read; the failure message prints the method's new line to paste.
 */
class OrderingPinTest {

    /** The classes pinned: the off-heap structures, the freelist, the park/wake handshake and the join frames. */
    static final List<String> PINNED = List.of(
            "dev.threadpool.internal.queue.WorkDeque",
            "dev.threadpool.internal.queue.RingQueue",
            "dev.threadpool.internal.queue.BoundedRing",
            "dev.threadpool.internal.queue.CarriedBatches",
            "dev.threadpool.internal.queue.CarriedRings",
            "dev.threadpool.internal.queue.LifoSlot",
            "dev.threadpool.internal.scheduler.Freelist",
            "dev.threadpool.internal.scheduler.DescriptorTable",
            "dev.threadpool.internal.scheduler.DescCache",
            "dev.threadpool.internal.scheduler.OutsideDescCaches",
            "dev.threadpool.internal.scheduler.ParkingLot",
            "dev.threadpool.internal.scheduler.WakeCoalescer",
            "dev.threadpool.internal.scheduler.Idle",
            "dev.threadpool.internal.scheduler.WorkerLoop",
            "dev.threadpool.internal.scheduler.WorkStealingScheduler",
            "dev.threadpool.internal.scheduler.GlobalQueueScheduler",
            "dev.threadpool.internal.scheduler.JoinDeques",
            "dev.threadpool.internal.scheduler.Joining",
            "dev.threadpool.internal.scheduler.SpaceWaiters",
            "dev.threadpool.internal.scheduler.WorkSummary",
            "dev.threadpool.internal.scheduler.LocalQueues",
            "dev.threadpool.internal.scheduler.JoinAwareScheduler",
            "dev.threadpool.internal.scheduler.LaneScheduler");

    static final String MEM = "dev/threadpool/internal/memory/Mem";
    static final String VAR_HANDLE = "java/lang/invoke/VarHandle";
    /** A helper of ours whose name states an access mode. */
    static final Pattern MODE_NAME = Pattern.compile(".*(Acquire|Release|Volatile|Opaque|Fence).*|cas[A-Z].*|getAnd.*");
    /** The steps of the park/wake and join handshakes, whose order in the callers (Idle, Joining) is the protocol. */
    static final Pattern STEP_NAME = Pattern.compile("announce|retract|hasWork|lookForWork|ranDry|pendingPush|searching|park|parkNanos"
            + "|idleMask|wakeOne|wakeOneOf|signalWork|beginSearch|endSearch|takeWakeStamp|stampWake"
            + "|word|isDone|tryMarkParked|markStolen|complete|finishStolen|tryReclaim|takeBack|offer|offerArg"
            + "|offerFork|forkHandle|setResult|setResultObject|result|takeResultObject|finishFork|clearFork"
            + "|mark|clear|clearArg|isMarked|mask");
    static final List<String> STEP_OWNERS = List.of("dev/threadpool/internal/scheduler/ParkingLot",
            "dev/threadpool/internal/scheduler/Idle",
            "dev/threadpool/internal/scheduler/Scheduler", "dev/threadpool/internal/scheduler/WakeCoalescer",
            "dev/threadpool/internal/scheduler/JoinDeques", "dev/threadpool/internal/stats/WorkerTimes",
            "dev/threadpool/internal/scheduler/WorkSummary");

    @Test
    void everyOrderingCallIsPinned() throws IOException {
        List<String> diffs = diffs();
        assertTrue(diffs.isEmpty(), "The memory ordering of " + diffs.size() + " method(s) changed. A weakening breaks"
                + " the pairing written at the access (docs/TESTING.md, \"Weakened orderings\"); a deliberate change"
                + " updates src/test/resources/dev/threadpool/internal/ordering-pins.txt in the same commit:\n"
                + String.join("\n", diffs));
    }

    /** Each pinned method whose ordering calls differ from the pin, and each method with calls but no pin. */
    static List<String> diffs() throws IOException {
        Map<String, String> expected = readPins();
        Map<String, String> actual = new TreeMap<>();
        for (String c : PINNED) {
            actual.putAll(orderingCalls(c));
        }
        List<String> diffs = new ArrayList<>();
        for (Map.Entry<String, String> e : expected.entrySet()) {
            String now = actual.get(e.getKey());
            if (!e.getValue().equals(now)) {
                diffs.add("  " + e.getKey() + "\n    pinned: " + e.getValue() + "\n    now:    "
                        + (now == null ? "(no ordering call, or no such method)" : now));
            }
        }
        for (Map.Entry<String, String> e : actual.entrySet()) {
            if (!expected.containsKey(e.getKey())) {
                diffs.add("  " + e.getKey() + " is not pinned; its line:\n    " + e.getKey() + ": " + e.getValue());
            }
        }
        return diffs;
    }

    @Test
    void thePinSeesAFenceAndAModeWhereTheyAre() throws IOException {
        // The extraction itself: WorkDeque.take has its full fence between the bottom store and the top load.
        String take = orderingCalls("dev.threadpool.internal.queue.WorkDeque").get(
                "dev.threadpool.internal.queue.WorkDeque#take()J");
        assertNotNull(take);
        assertTrue(take.startsWith("Mem.setLongOpaqueAt VarHandle.fullFence Mem.getLongOpaqueAt"), take);
        assertEquals(PINNED.size(), PINNED.stream().distinct().count());
    }

    /** "class#nameDescriptor" -> the method's ordering calls in program order, for methods that have any. */
    static Map<String, String> orderingCalls(String className) throws IOException {
        String res = className.replace('.', '/') + ".class";
        byte[] bytes;
        try (InputStream in = OrderingPinTest.class.getClassLoader().getResourceAsStream(res)) {
            assertNotNull(in, "class file of " + className);
            bytes = in.readAllBytes();
        }
        ClassModel cm = ClassFile.of().parse(bytes);
        Map<String, String> out = new LinkedHashMap<>();
        for (MethodModel m : cm.methods()) {
            List<String> calls = new ArrayList<>();
            m.code().ifPresent(code -> {
                for (CodeElement e : code) {
                    if (e instanceof InvokeInstruction ii && counts(ii)) {
                        String owner = ii.owner().asInternalName();
                        calls.add(owner.substring(owner.lastIndexOf('/') + 1) + "." + ii.name().stringValue());
                    }
                }
            });
            if (!calls.isEmpty()) {
                out.put(className + "#" + m.methodName().stringValue() + m.methodType().stringValue(),
                        String.join(" ", calls));
            }
        }
        return out;
    }

    static boolean counts(InvokeInstruction ii) {
        String owner = ii.owner().asInternalName();
        String name = ii.name().stringValue();
        if (owner.equals(VAR_HANDLE)) {
            return !name.equals("get") && !name.equals("set"); // plain VarHandle accesses are not orderings
        }
        if (owner.equals(MEM)) {
            return !name.contains("Plain") && !name.equals("maskable"); // maskable: a test of an address, no access
        }
        return owner.startsWith("dev/threadpool/internal/") && MODE_NAME.matcher(name).matches()
                || STEP_OWNERS.contains(owner) && STEP_NAME.matcher(name).matches();
    }

    /** The committed pin file's lines (its copy on the test class path). */
    static List<String> pinFileLines() throws IOException {
        try (InputStream in = OrderingPinTest.class.getResourceAsStream("ordering-pins.txt")) {
            assertNotNull(in, "ordering-pins.txt next to OrderingPinTest in src/test/resources");
            return List.of(new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n"));
        }
    }

    static Map<String, String> readPins() throws IOException {
        Map<String, String> pins = new TreeMap<>();
        for (String line : pinFileLines()) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            int sep = line.indexOf(": ");
            pins.put(line.substring(0, sep), line.substring(sep + 2));
        }
        return pins;
    }

    /**
     * Prints the pin file as it should be now (the committed file's header, then every method's line sorted as
     * the file keeps them), for a deliberate update: redirect it into ordering-pins.txt. With {@code --check},
     * runs the pin's comparison instead and exits 1 on a difference (src/jcstress/weaken.py's sweep, one JVM per
     * weakening).
     */
    public static void main(String[] args) throws IOException {
        if (args.length == 1 && args[0].equals("--check")) {
            List<String> d = diffs();
            System.out.println(d.isEmpty() ? "pin: unchanged" : "pin: CHANGED\n" + String.join("\n", d));
            System.exit(d.isEmpty() ? 0 : 1);
        }
        pinFileLines().stream().filter(line -> line.startsWith("#")).forEach(System.out::println);
        Map<String, String> now = new TreeMap<>();
        for (String c : PINNED) {
            now.putAll(orderingCalls(c));
        }
        now.forEach((k, v) -> System.out.println(k + ": " + v));
    }
}
