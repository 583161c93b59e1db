package dev.threadpool.internal.scheduler;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.management.HotSpotDiagnosticMXBean;
import java.io.InputStream;
import java.lang.classfile.Attributes;
import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassModel;
import java.lang.classfile.MethodModel;
import java.lang.classfile.attribute.CodeAttribute;
import java.lang.classfile.instruction.InvokeInstruction;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The methods that call the user's halves back must stay too large for C2 to inline them into their caller:
 * {@code Joining.joinBoth} (both forms of join) and {@code Joining.joinFork} (the join of a fork handle, which runs
 * a half taken back). The user's recursion calls them and they call the user's halves, and when C2 inlined
 * {@code joinBoth} into the user's node the join tree ran at one of three speeds, 22, 27 or 34 ns a join on one
 * worker, by JVM (PERFORMANCE_TRACKING 75). A hot callee larger than {@code FreqInlineSize} bytes of bytecode is
 * never inlined, whatever was compiled first. This reads each method's code length from the class file and the
 * running JVM's {@code FreqInlineSize}. (The owner's wait for a stolen half is {@code awaitStolen}, shared by both:
 * joinBoth is still well above the limit without it.)
 */
class JoinShapeTest {

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"joinBoth", "joinFork"})
    void isLargerThanTheHotInlineLimit(String method) throws Exception {
        int codeLength = codeLength(method);
        int freqInlineSize = freqInlineSize();
        assertTrue(codeLength > freqInlineSize, "Joining." + method + " is " + codeLength + " bytes of bytecode, not"
                + " more than FreqInlineSize=" + freqInlineSize + ": C2 may inline it into the user's recursion, and"
                + " the join tree's speed then depends on the JVM (see Joining.joinBoth's javadoc)");
    }

    /**
     * The other way round for {@code Joining.fork}, which never calls the user back: its recursion's path must stay
     * small enough to be inlined into the user's code (PERFORMANCE_TRACKING 92: at 280 bytes with its offering path
     * inside, C2 compiled it to 5.7 KB, more than {@code InlineSmallCode}, and called it once a split).
     */
    @Test
    void forkIsSmallerThanTheHotInlineLimit() throws Exception {
        int codeLength = codeLength("fork");
        int freqInlineSize = freqInlineSize();
        assertTrue(codeLength < freqInlineSize / 2, "Joining.fork is " + codeLength + " bytes of bytecode, not less"
                + " than half of FreqInlineSize=" + freqInlineSize + ": keep the offer in forkGeneral, so C2 inlines a"
                + " recursion's fork into it");
    }

    /**
     * Nor may {@code Joining.fork} call {@code forkGeneral} by name: C2 inlined it into the user's recursion in the
     * JVMs whose profile called it often, and the recursion's compile then ran out of its node budget before the
     * join (PERFORMANCE_TRACKING 94). {@code fork} calls {@code callGeneral}, which calls it through a method handle,
     * and nothing else in the class names it.
     */
    @Test
    void forkCallsItsGeneralPathOnlyThroughAMethodHandle() throws Exception {
        ClassModel model = joiningClass();
        for (MethodModel m : model.methods()) {
            for (String callee : invokedMethods(m)) {
                assertTrue(!callee.equals("forkGeneral"), "Joining." + m.methodName().stringValue() + " calls"
                        + " forkGeneral by name: C2 may inline it into the user's recursion (call it through"
                        + " Joining.general)");
            }
        }
        assertTrue(invokedMethods(method(model, "fork")).contains("callGeneral"), "Joining.fork calls callGeneral");
        assertTrue(invokedMethods(method(model, "callGeneral")).contains("invokeExact"),
                "Joining.callGeneral calls forkGeneral through its method handle");
    }

    private static List<String> invokedMethods(MethodModel m) {
        List<String> names = new ArrayList<>();
        m.findAttribute(Attributes.code()).ifPresent(code -> code.forEach(e -> {
            if (e instanceof InvokeInstruction i) {
                names.add(i.name().stringValue());
            }
        }));
        return names;
    }

    private static MethodModel method(ClassModel model, String name) {
        for (MethodModel m : model.methods()) {
            if (m.methodName().equalsString(name)) {
                return m;
            }
        }
        throw new AssertionError("Joining." + name + " not found");
    }

    private static ClassModel joiningClass() throws Exception {
        try (InputStream in = Joining.class.getResourceAsStream("Joining.class")) {
            assertNotNull(in, "Joining.class on the class path");
            return ClassFile.of().parse(in.readAllBytes());
        }
    }

    private static int codeLength(String method) throws Exception {
        int codeLength = method(joiningClass(), method).findAttribute(Attributes.code())
                .map(CodeAttribute::codeLength).orElse(-1);
        assertTrue(codeLength > 0, "Joining." + method + " has code");
        return codeLength;
    }

    private static int freqInlineSize() {
        HotSpotDiagnosticMXBean hotspot = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
        return Integer.parseInt(hotspot.getVMOption("FreqInlineSize").getValue());
    }
}
