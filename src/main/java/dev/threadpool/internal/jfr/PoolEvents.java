package dev.threadpool.internal.jfr;

import dev.threadpool.PoolStats;
import java.util.function.Supplier;
import jdk.jfr.EventType;
import jdk.jfr.FlightRecorder;
import jdk.jfr.FlightRecorderListener;

/**
 * The pool's JDK Flight Recorder events, behind static methods that cost one predictable branch when no
 * recording wants them. Every event is named {@code dev.threadpool.*} in category "Thread Pool":
 *
 * <table>
 *   <caption>Events</caption>
 *   <tr><th>Event</th><th>Emitted by</th><th>Default</th></tr>
 *   <tr><td>{@code dev.threadpool.TaskStall}</td><td>the watchdog: {@link #stall}</td><td>on</td></tr>
 *   <tr><td>{@code dev.threadpool.OverflowWorker}</td><td>the watchdog: {@link #overflowSpawned},
 *       {@link #overflowRetired}</td><td>on</td></tr>
 *   <tr><td>{@code dev.threadpool.ShutdownPhase}</td><td>{@code PoolCore} shutdown and close:
 *       {@link #shutdownPhase}</td><td>on</td></tr>
 *   <tr><td>{@code dev.threadpool.TaskLatency}</td><td>workers, one task in {@value #LATENCY_SAMPLE_EVERY} with
 *       {@code TimestampMode.FULL}: {@link #taskLatency}</td><td>off (a recording enables it)</td></tr>
 *   <tr><td>{@code dev.threadpool.PoolStats}</td><td>periodic hook per live pool:
 *       {@link #registerPeriodicStats}</td><td>on, every 1 s</td></tr>
 * </table>
 *
 * <h2>Cost when nobody records</h2>
 * Each method first asks {@link FlightRecorder#isInitialized()} (one volatile read: no recording can exist
 * before JFR is initialised), then {@link EventType#isEnabled()} of the event's type: false while no recording
 * enables the event, and then nothing is allocated and no field is written. Creating a pool never initialises
 * JFR either. The event
 * object is made only behind that check, and committed only if {@code shouldCommit()} (thresholds) agrees.
 * The periodic hook runs only while a recording enables {@code PoolStats}: JFR calls it, the pool never does.
 * If the JVM has no usable Flight Recorder, every method is a no-op.
 *
 * <p>The {@code pool} argument names the pool in the events: its {@code threadNamePrefix}.
 */
public final class PoolEvents {
    static final String PREFIX = "dev.threadpool.";
    /** One task in this many per worker is sampled for {@code TaskLatency}. */
    public static final int LATENCY_SAMPLE_EVERY = 1024;

    /** The shutdown phases, in the order they happen; each is emitted at most once per pool. */
    public enum Phase {
        /** The first shutdown (or close) call won the race to start it. */
        BEGIN,
        /** Admission closed: {@code accepted} is final. */
        ADMISSION_CLOSED,
        /** Every accepted task completed, failed or was cancelled. */
        TASKS_ENDED,
        /** Every worker has exited. */
        WORKERS_JOINED,
        /** The arena is closed; {@code liveBytes} is what was left (0 for a clean close). */
        ARENA_CLOSED
    }

    /**
     * The event types, looked up on first use after the Flight Recorder is up: {@code EventType.getEventType}
     * registers the classes, which would initialise JFR (about 150 ms and some memory) in every JVM that
     * merely creates a pool.
     */
    private static final class Types {
        static final EventType STALL;
        static final EventType OVERFLOW;
        static final EventType SHUTDOWN;
        static final EventType LATENCY;

        static {
            EventType stall = null, overflow = null, shutdown = null, latency = null;
            try {
                stall = EventType.getEventType(StallEvent.class);
                overflow = EventType.getEventType(OverflowWorkerEvent.class);
                shutdown = EventType.getEventType(ShutdownPhaseEvent.class);
                latency = EventType.getEventType(TaskLatencyEvent.class);
            } catch (RuntimeException | LinkageError unavailable) {
                stall = overflow = shutdown = latency = null; // no usable Flight Recorder: stay no-ops
            }
            STALL = stall;
            OVERFLOW = overflow;
            SHUTDOWN = shutdown;
            LATENCY = latency;
        }
    }

    private static final int STALL = 0, OVERFLOW = 1, SHUTDOWN = 2, LATENCY = 3;

    private PoolEvents() {}

    /**
     * Whether a recording wants event {@code which}. Until the Flight Recorder is initialised no recording can
     * exist: one volatile read answers, and JFR is not touched. Afterwards, one {@link EventType#isEnabled()}.
     */
    private static boolean on(int which) {
        if (!FlightRecorder.isInitialized()) {
            return false;
        }
        EventType type = switch (which) {
            case STALL -> Types.STALL;
            case OVERFLOW -> Types.OVERFLOW;
            case SHUTDOWN -> Types.SHUTDOWN;
            default -> Types.LATENCY;
        };
        return type != null && type.isEnabled();
    }

    /** Watchdog: {@code worker} has been running one task for at least {@code runningNanos}. */
    public static void stall(String pool, int worker, long runningNanos) {
        if (!on(STALL)) {
            return;
        }
        StallEvent e = new StallEvent();
        if (e.shouldCommit()) {
            e.pool = pool;
            e.worker = worker;
            e.runningNanos = runningNanos;
            e.commit();
        }
    }

    /** Watchdog: overflow worker {@code worker} (its index in the worker slots) was started. */
    public static void overflowSpawned(String pool, int worker) {
        overflow(pool, worker, "SPAWNED");
    }

    /** Watchdog: overflow worker {@code worker} retired. */
    public static void overflowRetired(String pool, int worker) {
        overflow(pool, worker, "RETIRED");
    }

    private static void overflow(String pool, int worker, String action) {
        if (!on(OVERFLOW)) {
            return;
        }
        OverflowWorkerEvent e = new OverflowWorkerEvent();
        if (e.shouldCommit()) {
            e.pool = pool;
            e.worker = worker;
            e.action = action;
            e.commit();
        }
    }

    /** One shutdown phase; counts not known yet at that phase are -1. */
    public static void shutdownPhase(String pool, Phase phase, String mode, long accepted, long finished,
            long cancelled, long liveBytes) {
        if (!on(SHUTDOWN)) {
            return;
        }
        ShutdownPhaseEvent e = new ShutdownPhaseEvent();
        if (e.shouldCommit()) {
            e.pool = pool;
            e.phase = phase.name();
            e.mode = mode;
            e.accepted = accepted;
            e.finished = finished;
            e.cancelled = cancelled;
            e.liveBytes = liveBytes;
            e.commit();
        }
    }

    /** Whether a recording wants {@code TaskLatency}: lets the worker skip even reading the timestamps. */
    public static boolean taskLatencyEnabled() {
        return on(LATENCY);
    }

    /** A sampled task's queue wait and run time. */
    public static void taskLatency(String pool, int worker, long queuedNanos, long runNanos) {
        if (!on(LATENCY)) {
            return;
        }
        TaskLatencyEvent e = new TaskLatencyEvent();
        if (e.shouldCommit()) {
            e.pool = pool;
            e.worker = worker;
            e.queuedNanos = queuedNanos;
            e.runNanos = runNanos;
            e.commit();
        }
    }

    /**
     * Registers the periodic {@code PoolStats} event of one pool: JFR calls {@code source} once per period,
     * only while a recording enables the event. If the Flight Recorder is not initialised yet, registration
     * waits for it (a {@link FlightRecorderListener}), so creating a pool never starts JFR. Close the returned
     * handle when the pool closes.
     */
    public static AutoCloseable registerPeriodicStats(String pool, Supplier<PoolStats> source) {
        PeriodicStats p = new PeriodicStats(pool, source);
        try {
            FlightRecorder.addListener(p); // calls recorderInitialized at once if JFR is already up
        } catch (RuntimeException | LinkageError unavailable) {
            // no usable Flight Recorder: nothing to register
        }
        return p;
    }

    /** One pool's periodic hook; registered with JFR once JFR is up, removed by {@link #close()}. */
    private static final class PeriodicStats implements FlightRecorderListener, AutoCloseable, Runnable {
        private final String pool;
        private final Supplier<PoolStats> source;
        private boolean registered; // guarded by this
        private boolean closed; // guarded by this

        PeriodicStats(String pool, Supplier<PoolStats> source) {
            this.pool = pool;
            this.source = source;
        }

        @Override
        public synchronized void recorderInitialized(FlightRecorder recorder) {
            if (!closed && !registered) {
                FlightRecorder.addPeriodicEvent(PoolStatsEvent.class, this);
                registered = true;
            }
        }

        @Override
        public void close() {
            synchronized (this) {
                if (closed) {
                    return;
                }
                closed = true;
                if (registered) {
                    FlightRecorder.removePeriodicEvent(this);
                }
            }
            try {
                FlightRecorder.removeListener(this);
            } catch (RuntimeException | LinkageError unavailable) {
                // it was never added
            }
        }

        /** The periodic hook: runs on JFR's periodic thread, only while a recording enables PoolStats. */
        @Override
        public void run() {
            PoolStatsEvent e = new PoolStatsEvent();
            if (!e.shouldCommit()) {
                return;
            }
            PoolStats s = source.get();
            e.pool = pool;
            e.submitted = s.submitted();
            e.started = s.started();
            e.completed = s.completed();
            e.failed = s.failed();
            e.cancelled = s.cancelled();
            e.rejected = s.rejected();
            e.queuedTasks = s.queuedTasks();
            e.activeTasks = s.activeTasks();
            e.taskDescLive = s.taskDescLive();
            e.liveBytes = s.liveBytes();
            e.peakLiveBytes = s.peakLiveBytes();
            e.parks = s.parks();
            e.wakeups = s.wakeups();
            e.steals = s.steals();
            e.inlineRuns = s.inlineRuns();
            e.parkedWorkers = s.parkedWorkers();
            e.stallsSeen = s.stallsSeen();
            e.overflowLive = s.overflowLive();
            e.commit();
        }
    }
}
