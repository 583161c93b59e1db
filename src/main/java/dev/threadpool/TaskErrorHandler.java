package dev.threadpool;

/**
 * Called on the worker that ran a task which threw. It runs before the task is counted as failed and before
 * its waiters wake. Whatever the handler itself throws is contained (counted, never rethrown): it cannot kill
 * the worker or skew the accounting. Keep it short and thread-safe.
 */
@FunctionalInterface
public interface TaskErrorHandler {
    /**
     * Handles one failure, on the worker that ran the task.
     *
     * @param task  the task that threw, as submitted; for a task submitted in argument form
     *              ({@link ThreadPool#submit(java.util.function.ObjLongConsumer, Object, long)}), a {@code Runnable}
     *              made for this report, whose {@code run()} calls {@code fn.accept(ctx, arg)} again and whose
     *              {@code toString()} names the function, the context and the argument
     * @param error what it threw
     */
    void onError(Runnable task, Throwable error);
}
