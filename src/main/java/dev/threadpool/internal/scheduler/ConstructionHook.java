package dev.threadpool.internal.scheduler;

import dev.threadpool.internal.memory.PoolMemory;

/**
 * Fault-injection seam for tests: {@link PoolCore}'s package-private constructor calls {@link #at} at each named
 * stage of construction, and a test's hook throws there to simulate that stage failing (an
 * {@code OutOfMemoryError} on the heap arrays, a failed {@code Thread.start}, ...). The public constructor
 * passes {@link #NONE}: a handful of calls to an empty method, once per pool, on a cold path.
 */
@FunctionalInterface
interface ConstructionHook {
    /** The stages, in the order the constructor reaches them. */
    enum Stage {
        /** The pool's {@link PoolMemory} exists; nothing is allocated in it yet. */
        ARENA_CREATED,
        /** Every off-heap structure is allocated (descriptor table, rings, counters, scheduler, watchdog). */
        STRUCTURES_BUILT,
        /** Before the on-heap per-slot arrays and scratch handles are made. */
        HEAP_STATE,
        /** Before worker {@code index} is started (workers {@code [0, index)} are running). */
        WORKER_START,
        /** Every worker is running; before the JFR periodic hook is registered. */
        JFR_HOOK,
        /** LANE_EXTENSION only: the JFR hook is registered; before the watchdog thread is started. */
        WATCHDOG_START
    }

    ConstructionHook NONE = (stage, index, memory) -> { };

    /**
     * Called at {@code stage}; {@code index} is the worker about to start for {@link Stage#WORKER_START}, else
     * -1. {@code memory} is the pool's allocator (a test reads its totals after the constructor failed).
     */
    void at(Stage stage, int index, PoolMemory memory);
}
