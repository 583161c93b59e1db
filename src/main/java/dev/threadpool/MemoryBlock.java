package dev.threadpool;

/**
 * One entry of a pool's memory map ({@link ThreadPool#memoryMap()}).
 *
 * @param purpose      what the block holds ("task descriptors", "inject ring", ...)
 * @param usableBytes  bytes the pool uses
 * @param countedBytes bytes requested from the native allocator for it, alignment slack included; the
 *                     accounting totals are sums of this column
 * @param releasable   whether the block can be given back before the pool closes
 */
public record MemoryBlock(String purpose, long usableBytes, long countedBytes, boolean releasable) {}
