package dev.threadpool;

import java.lang.foreign.MemorySegment;

/**
 * The calling worker's scratch buffer: temporary off-heap memory for a running task, from
 * {@link ThreadPool#scratch()}. One bounded buffer per worker ({@code workerScratchCapBytes}), allocated in the
 * pool's arena on the first {@link #allocate} and counted in {@code liveBytes}; a pool that never calls
 * {@code allocate} never allocates it.
 *
 * <h2>Use</h2>
 * <pre>{@code
 *   WorkerScratch s = pool.scratch();
 *   long mark = s.begin();
 *   try {
 *       MemorySegment tmp = s.allocate(4096, 64);
 *       ... use tmp ...
 *   } finally {
 *       s.finish(mark);   // everything allocated since begin() is given back to the buffer
 *   }
 * }</pre>
 * Marks nest and must be finished in LIFO order (at most {@link #MAX_NESTING} open at once). Every method may be
 * called only from the worker that owns the buffer ({@link IllegalStateException} otherwise); on that worker
 * they are lock-free: {@code begin} and {@code finish} of the outermost mark are one CAS / one release store
 * each (the handshake with a concurrent purge), the rest is plain arithmetic.
 *
 * <p>Contents are not zeroed between uses. A segment must not be used after the {@code finish} that covers
 * it; after the buffer is purged ({@link ThreadPool#purgeWorkerCaches()}, or idle purge) any access to an old
 * segment fails with {@link IllegalStateException} instead of touching freed memory.
 */
public interface WorkerScratch {
    /** Most marks open at once on one worker. */
    int MAX_NESTING = 64;
    /** Largest alignment {@link #allocate} accepts. */
    long MAX_ALIGNMENT = 4096;

    /**
     * Opens a mark.
     *
     * @return the mark, to pass to {@link #finish}
     * @throws IllegalStateException not the owning worker, or {@link #MAX_NESTING} marks are already open
     */
    long begin();

    /**
     * {@code bytes} bytes aligned to {@code alignment} (a power of two in [1, 4096]) from the buffer.
     *
     * @param bytes     the size, in bytes ({@code >= 0})
     * @param alignment the alignment, in bytes: a power of two in [1, {@link #MAX_ALIGNMENT}]
     * @return a segment of {@code bytes} bytes, valid until the {@code finish} that covers it; not zeroed
     * @throws IllegalStateException no mark is open, or not the owning worker
     * @throws IllegalArgumentException {@code bytes} is negative, or {@code alignment} is not a power of two in
     *         [1, {@link #MAX_ALIGNMENT}]
     * @throws ScratchExhaustedException the buffer's {@link #capacity()} would be exceeded
     */
    MemorySegment allocate(long bytes, long alignment);

    /**
     * Closes {@code mark}, the most recently opened one, and gives back everything allocated since it.
     *
     * @param mark the value {@link #begin()} returned for the innermost open mark
     * @throws IllegalStateException not the owning worker, or {@code mark} is not the innermost open mark
     */
    void finish(long mark);

    /**
     * The cap: {@code workerScratchCapBytes}.
     *
     * @return the buffer's capacity, in bytes
     */
    long capacity();

    /**
     * Bytes in use now (including alignment padding).
     *
     * @return bytes allocated under the open marks, 0 when none is open
     */
    long used();
}
