package dev.threadpool.internal.scheduler;

import java.util.function.ObjLongConsumer;

/**
 * A task in argument form ({@code submit(fn, ctx, arg)}) as a {@link Runnable}, made only where the pool must hand
 * such a task to code that takes a {@code Runnable}: the {@link dev.threadpool.TaskErrorHandler} of one that threw,
 * and the list of tasks a {@code CANCEL_PENDING} sweep took ({@code ExecutorService.shutdownNow}). Both are off the
 * hot path (a failure, a shutdown), so the one object per report costs nothing per task; the task itself travels
 * as its three parts and never becomes an object (DESIGN.md, "Tasks with arguments").
 *
 * <p>{@link #run()} makes the call the pool would have made, {@code fn.accept(ctx, arg)}; {@link #toString()} names
 * all three, so a handler that logs the task logs its argument.
 */
final class ArgumentTask implements Runnable {
    private final Object fn;
    private final Object ctx;
    private final long arg;

    ArgumentTask(Object fn, Object ctx, long arg) {
        this.fn = fn;
        this.ctx = ctx;
        this.arg = arg;
    }

    /**
     * Calls {@code fn.accept(ctx, arg)}: the run of a task in argument form. {@code fn} is the
     * {@code ObjLongConsumer<? super T>} the public submit took with a {@code T ctx}, so the call is well typed; the
     * pool stores both as {@code Object} (the references travel in {@code Object} arrays).
     */
    @SuppressWarnings("unchecked")
    static void call(Object fn, Object ctx, long arg) {
        ((ObjLongConsumer<Object>) fn).accept(ctx, arg);
    }

    @Override
    public void run() {
        call(fn, ctx, arg);
    }

    @Override
    public String toString() {
        return "ArgumentTask[fn=" + fn + ", ctx=" + ctx + ", arg=" + arg + "]";
    }
}
