/**
 * Off-heap memory for one pool: the counting allocator ({@link dev.threadpool.internal.memory.PoolMemory}),
 * the cache-line constant ({@link dev.threadpool.internal.memory.CacheLine}) and the access helper
 * ({@link dev.threadpool.internal.memory.Mem}).
 *
 * <h2>Access-mode naming, used everywhere in {@code dev.threadpool.internal}</h2>
 * Every non-plain access to a pool structure goes through {@link dev.threadpool.internal.memory.Mem}, whose
 * method names say the VarHandle access mode, so the ordering of an access is visible where it is written:
 * <pre>
 *   getLongPlain / setLongPlain       plain: owner-only data, or data published by a later release
 *   getLongOpaque / setLongOpaque     opaque: single-writer counters read by monitors; no ordering, no tearing
 *   getLongAcquire / setLongRelease   acquire/release: the publication pairs (ring sequence words, states)
 *   getLongVolatile / setLongVolatile seq_cst: the Dekker-style handshakes (park vs submit)
 *   casLong, getAndAddLong, getAndSetLong, getAndOrLong, getAndAndLong
 *                                     read-modify-write, always volatile (fully fenced on x86 and AArch64)
 * </pre>
 * A comment at each access names what it publishes or observes and the access it pairs with.
 */
package dev.threadpool.internal.memory;
