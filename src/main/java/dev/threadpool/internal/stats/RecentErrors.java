package dev.threadpool.internal.stats;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * A bounded, most-recent-last list of task failures, plus the count of error-handler failures. Written only
 * when a task throws (a cold path), so a plain lock is the right tool.
 */
public final class RecentErrors {
    private final int capacity;
    private final ArrayDeque<Throwable> errors;
    private long handlerFailures;
    private long dropped;

    public RecentErrors(int capacity) {
        this.capacity = capacity;
        this.errors = new ArrayDeque<>(Math.max(1, capacity));
    }

    public synchronized void record(Throwable t) {
        if (capacity == 0) {
            dropped++;
            return;
        }
        if (errors.size() == capacity) {
            errors.pollFirst();
            dropped++;
        }
        errors.addLast(t);
    }

    public synchronized void recordHandlerFailure() {
        handlerFailures++;
    }

    public synchronized List<Throwable> snapshot() {
        return List.copyOf(new ArrayList<>(errors));
    }

    public synchronized long handlerFailures() {
        return handlerFailures;
    }

    /** Errors that no longer fit (the oldest were dropped). */
    public synchronized long dropped() {
        return dropped;
    }
}
