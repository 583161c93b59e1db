package dev.threadpool.lincheck;

import dev.threadpool.internal.memory.Mem;
import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.scheduler.DescCache;
import dev.threadpool.internal.scheduler.DescriptorTable;
import dev.threadpool.lincheck.mutants.TaglessFreelist;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Options;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.jetbrains.lincheck.datastructures.verifier.Verifier;
import org.junit.jupiter.api.Test;

/**
 * The descriptor freelist of {@link DescriptorTable} (a tagged Treiber stack) with its batch operations,
 * and a {@link DescCache} per thread on top of it, against their contract ({@link Spec}): 4 descriptors,
 * refills of at most 2. Every thread acquires and releases slots singly, in batches and through its own
 * cache; the slots a thread holds are tracked per thread (the Lincheck thread id), so a slot handed out
 * twice, lost, or returned in the wrong order is a result the specification cannot produce. Stress and
 * model checking, the acquireBatch weakness shown to be real, and a mutant caught.
 */
public class FreelistLincheck {
    static final int CAPACITY = 4;
    static final int REFILL = 2;
    /** Thread ids Lincheck hands out (parallel threads, and the init and post parts). */
    static final int MAX_THREADS = 8;

    /** The freelist operations of {@link DescriptorTable} and of its mutant. */
    interface Table {
        int acquire();

        void unreserve(int idx);

        int acquireBatch(MemorySegment dst, long dstOffset, int max);

        void releaseBatch(MemorySegment src, long srcOffset, int n);

        void reserve(int idx);

        void freeReserved(int idx);
    }

    /** The Lincheck test object for the freelist alone (what the mutant is run with). */
    public static class FreelistOps {
        final Table table;
        final PoolMemory memory;
        /** Per thread id: the RESERVED slots it holds, oldest first. Only that thread touches its deque. */
        final List<ArrayDeque<Integer>> held = new ArrayList<>();
        /** Per thread id: a buffer for the batch operations. */
        final MemorySegment[] buf = new MemorySegment[MAX_THREADS];

        FreelistOps(PoolMemory memory, Table table) {
            this.memory = memory;
            this.table = table;
            for (int i = 0; i < MAX_THREADS; i++) {
                held.add(new ArrayDeque<>());
                buf[i] = memory.allocate("lincheck batch buffer " + i, 4L * CAPACITY);
            }
        }

        /** Pops one slot: its index (now held), or -1 when the freelist is empty. */
        @Operation
        public int acquire(@Param(gen = ThreadIdGen.class) int tid) {
            int idx = table.acquire();
            if (idx >= 0) {
                held.get(tid).addLast(idx);
            }
            return idx;
        }

        /** Gives back the oldest slot this thread holds (unreserve: FREE, then push); -1 if it holds none. */
        @Operation
        public int release(@Param(gen = ThreadIdGen.class) int tid) {
            Integer idx = held.get(tid).pollFirst();
            if (idx == null) {
                return -1;
            }
            table.unreserve(idx);
            return idx;
        }

        /** Pops up to {@code max} slots with one claim and reserves each (a slot handed out twice throws). */
        @Operation
        public List<Integer> acquireBatch(@Param(gen = ThreadIdGen.class) int tid,
                @Param(gen = IntGen.class, conf = "1:3") int max) {
            int n = table.acquireBatch(buf[tid], 0, max);
            List<Integer> out = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                int idx = Mem.getIntPlain(buf[tid], 4L * i);
                table.reserve(idx);
                held.get(tid).addLast(idx);
                out.add(idx);
            }
            return out;
        }

        /** Gives back every slot this thread holds, oldest first, with one claim; returns how many. */
        @Operation
        public int releaseBatch(@Param(gen = ThreadIdGen.class) int tid) {
            ArrayDeque<Integer> h = held.get(tid);
            int n = h.size();
            for (int i = 0; i < n; i++) {
                int idx = h.pollFirst();
                table.freeReserved(idx);
                Mem.setIntPlain(buf[tid], 4L * i, idx);
            }
            table.releaseBatch(buf[tid], 0, n);
            return n;
        }
    }

    /** The freelist and a DescCache per thread: the object the real suite runs. */
    public static class CacheOps extends FreelistOps {
        private final DescCache[] caches;

        public CacheOps() {
            this(PoolMemory.createGcManaged());
        }

        private CacheOps(PoolMemory memory) {
            this(memory, new DescriptorTable(memory, CAPACITY));
        }

        private CacheOps(PoolMemory memory, DescriptorTable t) {
            super(memory, new Table() {
                public int acquire() { return t.acquire(); }
                public void unreserve(int idx) { t.unreserve(idx); }
                public int acquireBatch(MemorySegment dst, long off, int max) { return t.acquireBatch(dst, off, max); }
                public void releaseBatch(MemorySegment src, long off, int n) { t.releaseBatch(src, off, n); }
                public void reserve(int idx) { t.reserve(idx); }
                public void freeReserved(int idx) { t.freeReserved(idx); }
            });
            this.caches = DescCache.allocateArray(memory, "lincheck caches", t, MAX_THREADS, REFILL);
        }

        /** DescCache.pop: a slot (now held) from this thread's cache, refilled when empty; -1 if none. */
        @Operation
        public int cachePop(@Param(gen = ThreadIdGen.class) int tid) {
            int idx = caches[tid].pop();
            if (idx >= 0) {
                held.get(tid).addLast(idx);
            }
            return idx;
        }

        /** DescCache.push of the oldest slot this thread holds (freeReserved first); -1 if it holds none. */
        @Operation
        public int cachePush(@Param(gen = ThreadIdGen.class) int tid) {
            Integer idx = held.get(tid).pollFirst();
            if (idx == null) {
                return -1;
            }
            table.freeReserved(idx);
            caches[tid].push(idx);
            return idx;
        }

        /** DescCache.drainAll: every cached slot back to the freelist with one claim; returns how many. */
        @Operation
        public int cacheDrain(@Param(gen = ThreadIdGen.class) int tid) {
            int n = caches[tid].count();
            caches[tid].drainAll();
            return n;
        }
    }

    /**
     * The contract of the freelist and the caches. The freelist is a stack (top first); each thread holds
     * slots (oldest first) and has a cache (bottom first). Every operation is one atomic step except the
     * batch pops:
     * <pre>
     *   acquire            pop the top (held), or -1 when empty
     *   release            push the thread's oldest held slot
     *   releaseBatch       push all its held slots, oldest first, in one step (the newest ends on top)
     *   acquireBatch(max)  step 1: note how many changes of the head there have been
     *                      step 2, the claim: empty: []   else pop n = min(w, size) slots, where
     *                      w = max halved k times (not below 1) and k &lt;= the head changes since step 1
     *   cachePop           cache not empty: its top (no shared step)   else a refill: acquireBatch(2)'s two
     *                      steps, the slots reversed into the cache, the top one popped (the same slot a
     *                      single acquire would have returned); -1 when both are empty
     *   cachePush          the oldest held slot onto the cache (no shared step; no spill with 4 slots)
     *   cacheDrain         push the cache, bottom first, in one step (its top ends on top)
     * </pre>
     * The weakness: after a lost CAS, acquireBatch halves its walk, so under contention a batch (and a
     * refill) may take fewer slots than were free at its claim, down to one. Never none while the freelist
     * holds a slot, and each halving is paid for by another thread's successful change of the head. A slot
     * in a cache is free but off the freelist: another thread's acquire may return -1 while it sits there.
     * The pool tolerates both: a short refill only means an earlier next refill, and a thread that finds
     * no slot waits as a space waiter, which every release (including a cache's spill and drain) wakes.
     */
    public static final class Spec implements StepSpec<Spec.S> {
        record S(List<Integer> stack, List<List<Integer>> held, List<List<Integer>> cache, int changes) {
            S pop(int n, int tid, boolean toCache) {
                List<Integer> taken = stack.subList(0, n);
                S s = new S(List.copyOf(stack.subList(n, stack.size())), held, cache, changes + 1);
                if (toCache) {
                    List<Integer> c = new ArrayList<>(taken.reversed()); // refill reverses: first popped on top
                    int top = c.removeLast();
                    return s.withCache(tid, c).withHeld(tid, append(held.get(tid), List.of(top)));
                }
                return s.withHeld(tid, append(held.get(tid), taken));
            }

            /** Pushes {@code slots} in order: the last one ends on top. */
            S push(List<Integer> slots) {
                if (slots.isEmpty()) {
                    return this;
                }
                List<Integer> st = new ArrayList<>(slots.reversed());
                st.addAll(stack);
                return new S(List.copyOf(st), held, cache, changes + 1);
            }

            S withHeld(int tid, List<Integer> h) {
                List<List<Integer>> all = new ArrayList<>(held);
                all.set(tid, List.copyOf(h));
                return new S(stack, List.copyOf(all), cache, changes);
            }

            S withCache(int tid, List<Integer> c) {
                List<List<Integer>> all = new ArrayList<>(cache);
                all.set(tid, List.copyOf(c));
                return new S(stack, held, List.copyOf(all), changes);
            }
        }

        /** acquireBatch or a refill after its step 1: the head changes seen then. */
        record Begin(int changes) {}

        static List<Integer> append(List<Integer> a, List<Integer> b) {
            List<Integer> out = new ArrayList<>(a);
            out.addAll(b);
            return out;
        }

        @Override
        public S initial() {
            List<Integer> stack = new ArrayList<>();
            for (int i = 0; i < CAPACITY; i++) {
                stack.add(i); // the constructor links 0 -> 1 -> 2 -> 3, 0 on top
            }
            List<List<Integer>> none = new ArrayList<>();
            for (int i = 0; i < MAX_THREADS; i++) {
                none.add(List.of());
            }
            return new S(List.copyOf(stack), List.copyOf(none), List.copyOf(none), 0);
        }

        /** The batch sizes a claim may take: min(w, size) for w = max halved up to k times. */
        static List<Integer> batchSizes(int max, int size, int k) {
            List<Integer> out = new ArrayList<>();
            int w = max;
            for (int i = 0; i <= k; i++) {
                int n = Math.min(w, size);
                if (!out.contains(n)) {
                    out.add(n);
                }
                if (w == 1) {
                    break;
                }
                w = Math.max(1, w >>> 1);
            }
            return out;
        }

        @Override
        public void step(S s, Call call, Object progress, List<Next<S>> out) {
            int tid = call.intArg(0);
            List<Integer> held = s.held().get(tid);
            switch (call.name()) {
                case "acquire" -> {
                    int r = (Integer) call.result();
                    if (s.stack().isEmpty()) {
                        if (r == -1) {
                            out.add(new Next<>(s, DONE));
                        }
                    } else if (r == s.stack().getFirst()) {
                        out.add(new Next<>(s.pop(1, tid, false), DONE));
                    }
                }
                case "release" -> {
                    int r = (Integer) call.result();
                    if (held.isEmpty()) {
                        if (r == -1) {
                            out.add(new Next<>(s, DONE));
                        }
                    } else if (r == held.getFirst()) {
                        out.add(new Next<>(s.withHeld(tid, held.subList(1, held.size())).push(List.of(r)), DONE));
                    }
                }
                case "releaseBatch" -> {
                    if ((Integer) call.result() == held.size()) {
                        out.add(new Next<>(s.withHeld(tid, List.of()).push(held), DONE));
                    }
                }
                case "acquireBatch" -> {
                    @SuppressWarnings("unchecked")
                    List<Integer> r = (List<Integer>) call.result();
                    if (progress == null) {
                        out.add(new Next<>(s, new Begin(s.changes())));
                        return;
                    }
                    int k = s.changes() - ((Begin) progress).changes();
                    if (s.stack().isEmpty()) {
                        if (r.isEmpty()) {
                            out.add(new Next<>(s, DONE));
                        }
                        return;
                    }
                    int n = r.size();
                    if (batchSizes(call.intArg(1), s.stack().size(), k).contains(n)
                            && r.equals(s.stack().subList(0, n))) {
                        out.add(new Next<>(s.pop(n, tid, false), DONE));
                    }
                }
                case "cachePop" -> {
                    int r = (Integer) call.result();
                    List<Integer> c = s.cache().get(tid);
                    if (!c.isEmpty()) {
                        if (r == c.getLast()) {
                            out.add(new Next<>(s.withCache(tid, c.subList(0, c.size() - 1))
                                    .withHeld(tid, append(held, List.of(r))), DONE));
                        }
                        return;
                    }
                    if (progress == null) {
                        out.add(new Next<>(s, new Begin(s.changes())));
                        return;
                    }
                    int k = s.changes() - ((Begin) progress).changes();
                    if (s.stack().isEmpty()) {
                        if (r == -1) {
                            out.add(new Next<>(s, DONE));
                        }
                        return;
                    }
                    if (r != s.stack().getFirst()) {
                        return;
                    }
                    for (int n : batchSizes(REFILL, s.stack().size(), k)) {
                        out.add(new Next<>(s.pop(n, tid, true), DONE)); // how many were cached is not visible
                    }
                }
                case "cachePush" -> {
                    int r = (Integer) call.result();
                    if (held.isEmpty()) {
                        if (r == -1) {
                            out.add(new Next<>(s, DONE));
                        }
                    } else if (r == held.getFirst()) {
                        out.add(new Next<>(s.withHeld(tid, held.subList(1, held.size()))
                                .withCache(tid, append(s.cache().get(tid), List.of(r))), DONE));
                    }
                }
                case "cacheDrain" -> {
                    List<Integer> c = s.cache().get(tid);
                    if ((Integer) call.result() == c.size()) {
                        out.add(new Next<>(s.withCache(tid, List.of()).push(c), DONE));
                    }
                }
                default -> throw new IllegalArgumentException("no such operation: " + call.name());
            }
        }
    }

    // ---- the checks ----------------------------------------------------------------------------------

    private static <O extends Options<O, ?>> O against(O options, Class<? extends Verifier> verifier) {
        return options.sequentialSpecification(Spec.class).verifier(verifier);
    }

    /**
     * The freelist ABA interleaving: thread 0 reads top 0 and next 1 and is suspended; thread 1 takes 0 and 1
     * and gives 0 back; thread 0's claim must then fail. Afterwards two acquires show where the head is.
     */
    private static Scenario aba() {
        return Scenario.of(FreelistOps.class)
                .thread().op("acquire", 0)
                .thread().op("acquire", 1).op("acquire", 1).op("release", 1)
                .post("acquire", 2).post("acquire", 2);
    }

    /** Random scenarios, plus the ABA interleaving (catches the mutant below). */
    static ModelCheckingOptions modelCheckingOptions() {
        return against(Checks.modelChecking(3, 2), StepVerifier.class).addCustomScenario(aba().build());
    }

    @Test
    void stress() {
        Checks.timed("Freelist+DescCache stress", () ->
                against(Checks.stress(3, 3), StepVerifier.class).check(CacheOps.class));
    }

    @Test
    void modelChecking() {
        Checks.timed("Freelist+DescCache model checking", () -> modelCheckingOptions().check(CacheOps.class));
    }

    /** The weakness: an acquire lands between acquireBatch's walk and its CAS; the retry takes half. */
    @Test
    void acquireBatchHalvesAfterALostClaimIsReal() {
        Scenario scenario = Scenario.of(FreelistOps.class)
                .thread().op("acquireBatch", 0, 2)
                .thread().op("acquire", 1);
        Checks.weakness("Freelist weakness: acquireBatch halves after a lost CAS", Spec.class, CacheOps.class,
                scenario, 2, 1);
    }

    /** {@link TaglessFreelist}: the freelist head without its ABA tag. */
    public static class Tagless extends FreelistOps {
        public Tagless() {
            this(PoolMemory.createGcManaged());
        }

        private Tagless(PoolMemory memory) {
            this(memory, new TaglessFreelist(memory, CAPACITY));
        }

        private Tagless(PoolMemory memory, TaglessFreelist t) {
            super(memory, new Table() {
                public int acquire() { return t.acquire(); }
                public void unreserve(int idx) { t.unreserve(idx); }
                public int acquireBatch(MemorySegment dst, long off, int max) { return t.acquireBatch(dst, off, max); }
                public void releaseBatch(MemorySegment src, long off, int n) { t.releaseBatch(src, off, n); }
                public void reserve(int idx) { t.reserve(idx); }
                public void freeReserved(int idx) { t.freeReserved(idx); }
            });
        }
    }

    @Test
    void mutantTaglessHeadIsCaught() {
        Checks.timed("Freelist mutant tagless head", () -> Checks.assertFails(modelCheckingOptions(), Tagless.class));
    }
}
