/**
 * thread-pool: a fixed-capacity thread pool whose state lives off-heap in one FFM arena.
 *
 * <p>Launch with {@code --enable-native-access=dev.threadpool} (module path) or
 * {@code --enable-native-access=ALL-UNNAMED} (class path); see the README.
 */
module dev.threadpool {
    // JDK Flight Recorder events (dev.threadpool.internal.jfr); they cost nothing while no recording runs.
    requires jdk.jfr;
    // The opt-in MXBean (PoolConfig.Builder.jmxName, dev.threadpool.ThreadPoolMXBean).
    requires java.management;

    exports dev.threadpool;
    // Micrometer binder (ThreadPoolMetrics); the only package that references Micrometer.
    exports dev.threadpool.metrics;

    // micrometer-core (automatic module name "micrometer.core", from its manifest), an optional dependency:
    // only dev.threadpool.metrics uses it, so a program without Micrometer never loads a Micrometer class.
    requires static micrometer.core;

    // ThreadPool.processMemory() only, loaded when first asked. Static (optional at run time): a program that
    // never asks needs neither the jars nor any flag; one that asks puts jnr-posix and its dependencies on the
    // module path and resolves them with --add-modules org.jnrproject.posix (or ALL-MODULE-PATH). Without
    // them processMemory() reports -1 figures and the reason (ProcessMemoryProbe catches the LinkageError).
    requires static org.jnrproject.posix;
    requires static org.jnrproject.ffi;
    requires static org.jnrproject.constants;
}
