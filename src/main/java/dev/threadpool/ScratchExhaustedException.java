package dev.threadpool;

/** A {@link WorkerScratch#allocate} would exceed the worker's scratch cap ({@code workerScratchCapBytes}). */
public class ScratchExhaustedException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    /**
     * An allocation the scratch buffer cannot hold.
     *
     * @param message the request and the cap, for the exception's message
     */
    public ScratchExhaustedException(String message) {
        super(message);
    }
}
