package dev.threadpool.stress;

import java.util.concurrent.atomic.AtomicReference;

/**
 * Runs a subject's outside callers, one daemon thread each, and waits for them with a bound: a caller that hangs
 * (a lost wake-up, a deadlock) is reported as a failure instead of hanging the run, and, being a daemon, does not
 * keep the JVM alive after the report. The first throwable of any caller is rethrown.
 */
final class OutsideCallers {
    static final long BOUND_MILLIS = 120_000;

    private OutsideCallers() {}

    /** One caller's work; may throw (a checked exception counts as a failure like any other). */
    @FunctionalInterface
    interface Body {
        void run() throws Exception;
    }

    /** Starts {@code callers[c]} (null: none) on a thread named {@code prefix + c}, then joins them all. */
    static void runAll(String prefix, Body[] callers, String what) throws InterruptedException {
        AtomicReference<Throwable> failed = new AtomicReference<>();
        Thread[] ts = new Thread[callers.length];
        for (int c = 0; c < callers.length; c++) {
            Body body = callers[c];
            if (body == null) {
                continue;
            }
            ts[c] = new Thread(() -> {
                try {
                    body.run();
                } catch (Throwable t) {
                    failed.compareAndSet(null, t);
                }
            }, prefix + c);
            ts[c].setDaemon(true);
            ts[c].start();
        }
        for (Thread t : ts) {
            if (t != null) {
                t.join(BOUND_MILLIS);
                if (t.isAlive()) {
                    throw new IllegalStateException(t.getName() + " did not finish within " + BOUND_MILLIS / 1000
                            + " s");
                }
            }
        }
        if (failed.get() != null) {
            throw new IllegalStateException(what + " failed", failed.get());
        }
    }
}
