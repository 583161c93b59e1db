package dev.threadpool;

/** The lane a task is routed to. Only {@code LANE_EXTENSION} gives {@link #BLOCKING} its own workers. */
public enum Lane {
    /** CPU-bound work. */
    DEFAULT,
    /** Work that may block (I/O, locks, sleeps). */
    BLOCKING
}
