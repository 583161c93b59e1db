package dev.threadpool.internal.counting;

import java.io.IOException;
import java.io.InputStream;
import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassModel;
import java.lang.classfile.ClassTransform;
import java.lang.classfile.CodeBuilder;
import java.lang.classfile.CodeElement;
import java.lang.classfile.CodeTransform;
import java.lang.classfile.MethodModel;
import java.lang.classfile.Opcode;
import java.lang.classfile.instruction.InvokeInstruction;
import java.lang.classfile.instruction.ReturnInstruction;
import java.lang.constant.ClassDesc;
import java.lang.constant.MethodTypeDesc;
import java.lang.invoke.MethodType;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A child-first class loader that runs the whole pool with its off-heap accesses counted (test only: the pool's
 * production classes are never changed on disk).
 *
 * <p>Every class under {@code dev.threadpool.} except this package is defined here, from the bytes the parent
 * loader would have used, rewritten with {@code java.lang.classfile}:
 * <ul>
 *   <li>{@code invokestatic dev/threadpool/internal/memory/Mem.m(desc)} becomes
 *       {@code invokestatic CountingMem.m(desc)} (same name, same descriptor; a {@code Mem} method without a twin
 *       in {@link CountingMem} fails the load with a message saying so, so a new access mode cannot go
 *       uncounted);</li>
 *   <li>{@code VarHandle.fullFence / acquireFence / releaseFence / loadLoadFence / storeStoreFence} and
 *       {@code MemorySegment.copy(MemorySegment, long, MemorySegment, long, long)} go to their twins too;</li>
 *   <li>each read-modify-write through a {@code VarHandle} (on-heap arrays and fields: {@code WaitGroup}'s stripes,
 *       the slot signals) is preceded by {@link CountingMem#heapAtomic()}: counted per thread, not classed;</li>
 *   <li>{@code PoolMemory.allocate(String, long, boolean)} hands each block to {@link CountingMem#allocated} before
 *       returning it, so the recorder knows every block's purpose and address range.</li>
 * </ul>
 * {@code Mem} itself is loaded unchanged (its accessors call each other). Classes of this package are the
 * parent's, shared by both sides: the rewritten pool records into the same {@link Recorder} the test reads.
 * Scenario code that uses the pool's API must be loaded here too (it is, being under {@code dev.threadpool.}),
 * and is driven through an interface of this package ({@link Scenarios}).
 */
public final class CountingLoader extends ClassLoader {
    static {
        registerAsParallelCapable();
    }

    private static final String MEM = "dev/threadpool/internal/memory/Mem";
    private static final String POOL_MEMORY = "dev/threadpool/internal/memory/PoolMemory";
    private static final String VAR_HANDLE = "java/lang/invoke/VarHandle";
    private static final String MEMORY_SEGMENT = "java/lang/foreign/MemorySegment";
    private static final ClassDesc COUNTING_MEM = ClassDesc.of(CountingMem.class.getName());
    private static final Set<String> FENCES = Set.of("fullFence", "acquireFence", "releaseFence", "loadLoadFence",
            "storeStoreFence");
    private static final String COPY_DESC = "(Ljava/lang/foreign/MemorySegment;JLjava/lang/foreign/MemorySegment;JJ)V";
    /** CountingMem's public static methods as name + descriptor. */
    private static final Set<String> TWINS = twins();

    private final AtomicLong memCallsRewritten = new AtomicLong();
    private final AtomicLong fencesRewritten = new AtomicLong();
    private final AtomicLong allocationHooks = new AtomicLong();

    /** A loader whose parent is the loader of this class: the test class path, pool classes included. */
    public CountingLoader() {
        super("counting", CountingLoader.class.getClassLoader());
    }

    private static Set<String> twins() {
        Set<String> s = new HashSet<>();
        for (Method m : CountingMem.class.getDeclaredMethods()) {
            if (Modifier.isPublic(m.getModifiers()) && Modifier.isStatic(m.getModifiers())) {
                s.add(m.getName() + MethodType.methodType(m.getReturnType(), m.getParameterTypes())
                        .toMethodDescriptorString());
            }
        }
        return s;
    }

    static boolean childFirst(String name) {
        return name.startsWith("dev.threadpool.") && !name.startsWith(CountingLoader.class.getPackageName() + ".");
    }

    @Override
    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
        if (!childFirst(name)) {
            return super.loadClass(name, resolve);
        }
        synchronized (getClassLoadingLock(name)) {
            Class<?> c = findLoadedClass(name);
            if (c == null) {
                byte[] bytes = classBytes(name);
                if (!name.equals(MEM.replace('/', '.'))) {
                    bytes = rewrite(bytes);
                }
                c = defineClass(name, bytes, 0, bytes.length);
            }
            if (resolve) {
                resolveClass(c);
            }
            return c;
        }
    }

    private byte[] classBytes(String name) throws ClassNotFoundException {
        String resource = name.replace('.', '/') + ".class";
        try (InputStream in = getParent().getResourceAsStream(resource)) {
            if (in == null) {
                throw new ClassNotFoundException(name + " (no " + resource + " on the parent's class path)");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new ClassNotFoundException(name, e);
        }
    }

    /** Invocations of {@code Mem} rewritten so far, over every class this loader defined. */
    public long memCallsRewritten() {
        return memCallsRewritten.get();
    }

    /** {@code VarHandle} fence calls rewritten so far. */
    public long fencesRewritten() {
        return fencesRewritten.get();
    }

    /** {@code PoolMemory} allocation returns hooked so far (1 once PoolMemory is loaded). */
    public long allocationHooks() {
        return allocationHooks.get();
    }

    private byte[] rewrite(byte[] bytes) {
        ClassFile cf = ClassFile.of();
        ClassModel model = cf.parse(bytes);
        boolean poolMemory = model.thisClass().asInternalName().equals(POOL_MEMORY);
        ClassTransform t = (cb, ce) -> {
            if (ce instanceof MethodModel mm && mm.code().isPresent()) {
                boolean hookAllocation = poolMemory && mm.methodName().equalsString("allocate")
                        && mm.methodType().equalsString("(Ljava/lang/String;JZ)Ljava/lang/foreign/MemorySegment;");
                cb.transformMethod(mm, (mb, me) -> {
                    if (me instanceof java.lang.classfile.CodeModel code) {
                        mb.transformCode(code, codeTransform(hookAllocation));
                    } else {
                        mb.with(me);
                    }
                });
            } else {
                cb.with(ce);
            }
        };
        return cf.transformClass(model, t);
    }

    private CodeTransform codeTransform(boolean hookAllocation) {
        return (CodeBuilder b, CodeElement e) -> {
            if (e instanceof InvokeInstruction ii) {
                String owner = ii.owner().asInternalName();
                String name = ii.name().stringValue();
                String desc = ii.type().stringValue();
                if (owner.equals(MEM) && ii.opcode() == Opcode.INVOKESTATIC) {
                    if (!TWINS.contains(name + desc)) {
                        throw new IllegalStateException("Mem." + name + desc + " has no twin in CountingMem: add one"
                                + " (same name and descriptor) that records the access, or the count misses it");
                    }
                    memCallsRewritten.incrementAndGet();
                    b.invokestatic(COUNTING_MEM, name, MethodTypeDesc.ofDescriptor(desc));
                    return;
                }
                if (owner.equals(VAR_HANDLE) && ii.opcode() == Opcode.INVOKESTATIC && FENCES.contains(name)) {
                    fencesRewritten.incrementAndGet();
                    b.invokestatic(COUNTING_MEM, name, MethodTypeDesc.ofDescriptor(desc));
                    return;
                }
                if (owner.equals(VAR_HANDLE) && ii.opcode() == Opcode.INVOKEVIRTUAL && isRmw(name)) {
                    b.invokestatic(COUNTING_MEM, "heapAtomic", MethodTypeDesc.ofDescriptor("()V"));
                    b.with(e);
                    return;
                }
                if (owner.equals(MEMORY_SEGMENT) && ii.opcode() == Opcode.INVOKESTATIC && name.equals("copy")
                        && desc.equals(COPY_DESC)) {
                    b.invokestatic(COUNTING_MEM, "copy", MethodTypeDesc.ofDescriptor(desc));
                    return;
                }
            }
            if (hookAllocation && e instanceof ReturnInstruction r && r.opcode() == Opcode.ARETURN) {
                allocationHooks.incrementAndGet();
                b.aload(1); // the purpose
                b.invokestatic(COUNTING_MEM, "allocated", MethodTypeDesc.ofDescriptor(
                        "(Ljava/lang/foreign/MemorySegment;Ljava/lang/String;)Ljava/lang/foreign/MemorySegment;"));
            }
            b.with(e);
        };
    }

    private static boolean isRmw(String name) {
        return name.startsWith("compareAndSet") || name.startsWith("compareAndExchange")
                || name.startsWith("weakCompareAndSet") || name.startsWith("getAndAdd") || name.startsWith("getAndSet")
                || name.startsWith("getAndBitwise");
    }
}
