package dev.threadpool;

/**
 * Per-submission options. Immutable; use the constants on the hot path (they allocate nothing).
 *
 * @param lane the lane the task is routed to. Only {@code LANE_EXTENSION} has a separate blocking lane; the
 *             other variants accept {@link Lane#BLOCKING} and run such tasks on the shared workers.
 */
public record SubmitOptions(Lane lane) {
    /** The default lane: what the overloads without options use. */
    public static final SubmitOptions DEFAULT = new SubmitOptions(Lane.DEFAULT);
    /** The blocking lane ({@link Lane#BLOCKING}), for tasks that may block. */
    public static final SubmitOptions BLOCKING = new SubmitOptions(Lane.BLOCKING);

    /**
     * Checks the lane.
     *
     * @throws NullPointerException {@code lane} is null
     */
    public SubmitOptions {
        if (lane == null) {
            throw new NullPointerException("lane must not be null");
        }
    }
}
