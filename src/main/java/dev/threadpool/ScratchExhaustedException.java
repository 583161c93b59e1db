package dev.threadpool;

/** A {@link WorkerScratch#allocate} would exceed the worker's scratch cap ({@code workerScratchCapBytes}). */
public class ScratchExhaustedException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    public ScratchExhaustedException(String message) {
        super(message);
    }
}
