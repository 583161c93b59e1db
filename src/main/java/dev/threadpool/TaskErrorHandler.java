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
     * @param task  the task that threw, as submitted
     * @param error what it threw
     */
    void onError(Runnable task, Throwable error);
}
