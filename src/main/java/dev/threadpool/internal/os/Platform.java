package dev.threadpool.internal.os;

import java.util.Locale;

/** What the pool knows about the platform it runs on (for reports and the demo). */
public final class Platform {
    private Platform() {}

    public static String describe() {
        return System.getProperty("os.name") + " " + System.getProperty("os.arch") + ", "
                + Runtime.getRuntime().availableProcessors() + " CPUs, Java " + Runtime.version();
    }

    public static boolean isLinux() {
        return System.getProperty("os.name", "").toLowerCase(Locale.ROOT).contains("linux");
    }
}
