package dev.threadpool;

/** The per-worker local queue used by {@code WORK_STEALING} and {@code LANE_EXTENSION}. */
public enum QueueKind {
    /** Bounded SPMC ring with steal-half (Go runq / Tokio style). The default. */
    RING,
    /** The Chase–Lev work-stealing deque (growable). */
    CHASE_LEV
}
