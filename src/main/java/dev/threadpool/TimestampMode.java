package dev.threadpool;

/** Whether the pool records per-task timestamps (submit, start, end). */
public enum TimestampMode {
    /** No timestamps: the hot path reads no clock. The default. */
    DISABLED,
    /** Submit, start and end times in every descriptor ({@link System#nanoTime()}). */
    FULL
}
