package dev.threadpool.demo;

import java.io.PrintStream;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * A progress line for a long phase: a daemon thread prints {@code status} every 250 ms while the phase runs
 * (on a terminal it rewrites one line in place; into a pipe or file it prints a line a second, so logs stay
 * short), and {@link #close()} stops it and prints the final line. The thread is bounded by the phase: close
 * always stops it, waiting at most one second for it to exit.
 *
 * <pre>{@code
 * try (Progress p = Progress.start("flood", () -> pool.statsSnapshot().completed() + " tasks done")) {
 *     runTheFlood();
 * }
 * }</pre>
 */
public final class Progress implements AutoCloseable {
    /** Refresh period of the line. */
    static final long TICK_NANOS = 250_000_000L;
    /** Outside a terminal, one line per this many ticks. */
    private static final int TICKS_PER_PLAIN_LINE = 4;

    private final String label;
    private final Supplier<String> status;
    private final PrintStream out;
    private final boolean inPlace;
    private final long startNanos = System.nanoTime();
    private final Thread ticker;
    private volatile boolean stopped;
    private int lastWidth;

    private Progress(String label, Supplier<String> status, PrintStream out, boolean inPlace) {
        this.label = label;
        this.status = status;
        this.out = out;
        this.inPlace = inPlace;
        this.ticker = new Thread(this::tick, "progress-" + label);
        ticker.setDaemon(true);
    }

    /** Starts a progress line on {@code System.out}, in place when a terminal is attached. */
    public static Progress start(String label, Supplier<String> status) {
        return start(label, status, System.out, System.console() != null && System.console().isTerminal());
    }

    /** As {@link #start(String, Supplier)}, printing to {@code out}; {@code inPlace} rewrites one line. */
    public static Progress start(String label, Supplier<String> status, PrintStream out, boolean inPlace) {
        Objects.requireNonNull(label, "label must not be null");
        Objects.requireNonNull(status, "status must not be null");
        Objects.requireNonNull(out, "out must not be null");
        Progress p = new Progress(label, status, out, inPlace);
        p.ticker.start();
        return p;
    }

    /** Runs {@code phase} with a progress line and returns its result. */
    public static <T> T during(String label, Supplier<String> status, Callable<T> phase) throws Exception {
        try (Progress p = start(label, status)) {
            return phase.call();
        }
    }

    private void tick() {
        int ticks = 0;
        while (!stopped) {
            LockSupport.parkNanos(this, TICK_NANOS); // a refresh timer, not a synchronisation
            if (stopped) {
                break;
            }
            ticks++;
            if (inPlace || ticks % TICKS_PER_PLAIN_LINE == 0) {
                print(false);
            }
        }
    }

    private synchronized void print(boolean last) {
        String s;
        try {
            s = status.get();
        } catch (RuntimeException e) {
            s = "(status unavailable: " + e + ")";
        }
        String text = String.format(Locale.ROOT, "   [%s %.1f s] %s", label, (System.nanoTime() - startNanos) / 1e9, s);
        if (inPlace) {
            out.print("\r" + text + " ".repeat(Math.max(0, lastWidth - text.length())));
            lastWidth = text.length();
            if (last) {
                out.println();
            }
        } else {
            out.println(text);
        }
        out.flush();
    }

    /** Stops the line and prints the final status. Idempotent. */
    @Override
    public void close() {
        if (stopped) {
            return;
        }
        stopped = true;
        LockSupport.unpark(ticker);
        try {
            ticker.join(1_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        print(true);
    }
}
