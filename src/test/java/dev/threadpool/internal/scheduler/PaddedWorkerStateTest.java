package dev.threadpool.internal.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.internal.memory.CacheLine;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import org.junit.jupiter.api.Test;

/**
 * The per-worker objects a worker writes as it runs are padded by class hierarchy (a PAD of fields before and
 * after the owner's own): WorkStealingScheduler's {@link WorkerState} and the worker thread itself
 * ({@link WorkerThread}, whose own fields follow {@link Thread}'s), and a worker's {@link ForkStack} (whose arrays
 * also keep a gap of empty elements at each end). HotSpot decides the field layout, and it fills
 * holes in a superclass's layout with a subclass's small fields, so this checks the layout the running JVM chose:
 * every owner field at least a {@link CacheLine#PAD} from the object's start and from its end.
 */
class PaddedWorkerStateTest {

    @Test
    void theOwnersFieldsLieAPadFromBothEndsOfTheObject() throws Exception {
        assertPadded(WorkerState.class, 8);
    }

    @Test
    void aWorkerThreadsOwnFieldsLieAPadFromThreadsAndFromTheObjectsEnd() throws Exception {
        assertPadded(WorkerThread.class, 16);
    }

    @Test
    void aForkStacksFieldsLieAPadFromBothEndsOfTheObject() throws Exception {
        assertPadded(ForkStack.class, 8);
    }

    @Test
    void aForkStacksEntriesLieAGapFromBothEndsOfItsArrays() {
        assertTrue(ForkStack.GAP * 4 >= CacheLine.PAD, "a gap of references is a PAD: " + ForkStack.GAP);
        ForkStack s = new ForkStack();
        for (int round = 0; round < 2; round++) {
            int cap = s.capacity();
            assertTrue(cap >= ForkStack.INITIAL_CAPACITY, "capacity " + cap);
            for (Object a : new Object[] {s.fns, s.ctxs}) {
                assertEquals(cap + 2 * ForkStack.GAP, java.lang.reflect.Array.getLength(a));
            }
            assertEquals(cap * ForkStack.ENTRY + 2 * ForkStack.GAP, s.entries.length);
            s.setHandle(0, -1);
            s.setLevels(0, -3);
            s.setHandle(cap - 1, -2);
            s.setLevels(cap - 1, -4);
            s.keep(cap - 1, new Object(), null, -5); // a Runnable half's entry: its ARG and fns
            assertEquals(-1, s.entries[ForkStack.GAP + ForkStack.HANDLE]);
            assertEquals(-3, s.entries[ForkStack.GAP + ForkStack.LEVELS]);
            int last = ForkStack.GAP + (cap - 1) * ForkStack.ENTRY;
            assertEquals(-2, s.entries[last + ForkStack.HANDLE]);
            assertEquals(-4, s.entries[last + ForkStack.LEVELS]);
            assertEquals(-5, s.entries[last + ForkStack.ARG]);
            assertEquals(0, s.entries[ForkStack.GAP - 1]);
            for (int i = last + ForkStack.ARG + 1; i < s.entries.length; i++) {
                assertEquals(0, s.entries[i], "the end gap and the last entry's unused long");
            }
            s.grow(cap); // doubles, the gaps kept
            assertEquals(2 * cap, s.capacity());
            assertEquals(-1, s.handleAt(0));
            assertEquals(-3, s.levelsAt(0));
            assertEquals(-2, s.handleAt(cap - 1));
            assertEquals(-4, s.levelsAt(cap - 1));
            assertEquals(-5, s.argAt(cap - 1));
            assertEquals(0, s.handleAt(cap), "a new entry, where the old end gap was");
            s.takeKept(cap - 1, ForkStack.KEPT_OWN); // leave no reference for the next round's checks
        }
    }

    /** Every non-pad field declared below {@link Thread} (none of java.*) is the owner's. */
    @SuppressWarnings({"deprecation", "removal"})
    private static void assertPadded(Class<?> c, int minOwn) throws Exception {
        Field theUnsafe = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
        theUnsafe.setAccessible(true);
        sun.misc.Unsafe u = (sun.misc.Unsafe) theUnsafe.get(null);
        long firstOwn = Long.MAX_VALUE;
        long endOwn = 0;
        long endAll = 0;
        int own = 0;
        for (Class<?> k = c; k != Object.class; k = k.getSuperclass()) {
            for (Field f : k.getDeclaredFields()) {
                if (Modifier.isStatic(f.getModifiers())) {
                    continue;
                }
                long off = u.objectFieldOffset(f);
                long end = off + size(f.getType());
                endAll = Math.max(endAll, end);
                boolean jdk = k.getName().startsWith("java.");
                if (!jdk && !f.getName().matches("p|p\\d\\d|q\\d\\d")) {
                    own++;
                    firstOwn = Math.min(firstOwn, off);
                    endOwn = Math.max(endOwn, end);
                }
            }
        }
        assertTrue(own >= minOwn, c.getSimpleName() + ": the owner's fields were found: " + own);
        assertTrue(firstOwn >= CacheLine.PAD, c.getSimpleName() + ": first owner field at offset " + firstOwn);
        assertTrue(endAll - endOwn >= CacheLine.PAD,
                c.getSimpleName() + ": owner fields end at " + endOwn + ", the object at " + endAll);
    }

    private static long size(Class<?> t) {
        if (t == long.class || t == double.class) {
            return 8;
        }
        if (t == int.class || t == float.class) {
            return 4;
        }
        if (t == short.class || t == char.class) {
            return 2;
        }
        if (t == byte.class || t == boolean.class) {
            return 1;
        }
        return 4; // a reference: 4 with compressed oops; 8 would only move the end later
    }
}
