/**
 * The public API of {@code thread-pool}: {@link dev.threadpool.ThreadPool}, its configuration
 * ({@link dev.threadpool.PoolConfig}) and the types they use. Everything else lives in
 * {@code dev.threadpool.internal.*}, which the module does not export.
 */
package dev.threadpool;
