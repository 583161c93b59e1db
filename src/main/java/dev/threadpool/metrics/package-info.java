/**
 * Micrometer metrics of a pool: {@link dev.threadpool.metrics.ThreadPoolMetrics}, a {@code MeterBinder}. The
 * only package of the library that references Micrometer, which is an optional dependency: a program that
 * never touches this package needs no Micrometer jar and loads no Micrometer class.
 */
package dev.threadpool.metrics;
