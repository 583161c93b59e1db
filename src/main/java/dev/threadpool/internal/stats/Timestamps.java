package dev.threadpool.internal.stats;

/**
 * The process-wide switch that compiles timestamps out of the hot path.
 *
 * <p>{@code -Ddev.threadpool.timestamps=false} makes {@link #COMPILED} false. It is a {@code static final}, which
 * the JIT treats as a constant: every {@code if (Timestamps.COMPILED && timestamps)} in the submit and worker
 * paths then folds away entirely, clock reads, descriptor stores and histogram writes included, whatever a
 * pool's {@link dev.threadpool.TimestampMode} says (a FULL pool then records nothing and reports
 * {@code latency.enabled == false}). With the default ({@code true}) each site costs the load of one final
 * boolean field of the pool and a well-predicted branch when the pool's mode is DISABLED. The property is read
 * once, when this class initialises (the first pool created): set it on the command line.
 */
public final class Timestamps {
    /** The system property; {@code false} (case-insensitive) compiles timestamps out. */
    public static final String PROPERTY = "dev.threadpool.timestamps";
    public static final boolean COMPILED = !"false".equalsIgnoreCase(System.getProperty(PROPERTY, "true").trim());

    private Timestamps() {}
}
