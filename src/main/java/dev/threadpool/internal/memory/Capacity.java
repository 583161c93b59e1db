package dev.threadpool.internal.memory;

/** The one validation rule for every power-of-two size in the pool, with the message format users see. */
public final class Capacity {
    private Capacity() {}

    /**
     * Returns {@code value} if it is a power of two in {@code [min, max]}; otherwise throws
     * {@code IllegalArgumentException("<name> must be a power of two in [min, max]: <name>=<value>")}.
     */
    public static int checkPowerOfTwo(String name, int value, int min, int max) {
        if (value < min || value > max || Integer.bitCount(value) != 1) {
            throw new IllegalArgumentException(name + " must be a power of two in [" + min + ", " + max + "]: "
                    + name + "=" + value);
        }
        return value;
    }
}
