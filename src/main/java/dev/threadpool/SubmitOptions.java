package dev.threadpool;

/**
 * Per-submission options. Immutable; use the constants on the hot path (they allocate nothing).
 *
 * @param lane the lane the task is routed to. Only {@code LANE_EXTENSION} has a separate blocking lane; the
 *             other variants accept {@link Lane#BLOCKING} and run such tasks on the shared workers.
 */
public record SubmitOptions(Lane lane) {
    public static final SubmitOptions DEFAULT = new SubmitOptions(Lane.DEFAULT);
    public static final SubmitOptions BLOCKING = new SubmitOptions(Lane.BLOCKING);

    public SubmitOptions {
        if (lane == null) {
            throw new NullPointerException("lane must not be null");
        }
    }
}
