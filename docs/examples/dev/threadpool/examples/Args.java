package dev.threadpool.examples;

/** The examples' argument convention: positional integers, each with a default. */
final class Args {
    private Args() {}

    /** {@code args[i]} as a positive int, or {@code dflt} when absent. */
    static int intArg(String[] args, int i, String name, int dflt) {
        if (args.length <= i) {
            return dflt;
        }
        int v = Integer.parseInt(args[i]);
        if (v <= 0) {
            throw new IllegalArgumentException(name + " must be > 0: " + name + "=" + v);
        }
        return v;
    }

    /** {@code args[i]}, which must be one of {@code allowed}, or {@code dflt} when absent. */
    static String choiceArg(String[] args, int i, String name, String dflt, String... allowed) {
        if (args.length <= i) {
            return dflt;
        }
        for (String a : allowed) {
            if (a.equals(args[i])) {
                return a;
            }
        }
        throw new IllegalArgumentException(name + " must be one of " + String.join(", ", allowed) + ": " + name
                + "=" + args[i]);
    }

    /** The value at {@code fraction} (0..1) of sorted {@code nanos}, in microseconds. */
    static double percentileMicros(long[] sortedNanos, double fraction) {
        int i = (int) Math.min(sortedNanos.length - 1, Math.round(fraction * (sortedNanos.length - 1)));
        return sortedNanos[i] / 1_000.0;
    }

    static void check(boolean ok, String what) {
        if (!ok) {
            throw new IllegalStateException("check failed: " + what);
        }
    }
}
