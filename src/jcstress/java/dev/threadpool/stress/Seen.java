package dev.threadpool.stress;

import java.util.concurrent.atomic.AtomicIntegerArray;

/** How many times each item 1..n came out. Lost = seen 0 times, duplicated = seen more than once. */
final class Seen {
    private final AtomicIntegerArray counts;
    private final int n;

    Seen(int n) {
        this.n = n;
        this.counts = new AtomicIntegerArray(n + 1);
    }

    /** Records one take of item {@code v}; an out-of-range value counts as a duplicate (garbage). */
    void hit(long v) {
        if (v < 1 || v > n) {
            counts.getAndIncrement(0); // slot 0: values that were never pushed
            return;
        }
        counts.getAndIncrement((int) v);
    }

    long lost() {
        long lost = 0;
        for (int i = 1; i <= n; i++) {
            if (counts.get(i) == 0) {
                lost++;
            }
        }
        return lost;
    }

    long duplicated() {
        long dup = counts.get(0);
        for (int i = 1; i <= n; i++) {
            if (counts.get(i) > 1) {
                dup++;
            }
        }
        return dup;
    }
}
