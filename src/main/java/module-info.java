/**
 * thread-pool: a fixed-capacity thread pool whose state lives off-heap in one FFM arena.
 *
 * <p>Launch with {@code --enable-native-access=dev.threadpool} (module path) or
 * {@code --enable-native-access=ALL-UNNAMED} (class path); see the README.
 */
module dev.threadpool {
    // JDK Flight Recorder events (dev.threadpool.internal.jfr); they cost nothing while no recording runs.
    requires jdk.jfr;

    exports dev.threadpool;

    // ThreadPool.processMemory(): automatic modules on the module path, loaded only when first asked.
    requires org.jnrproject.posix;
    requires org.jnrproject.ffi;
    requires org.jnrproject.constants;
}
