package dev.threadpool;

/**
 * Thrown by {@link ThreadPool#join} when a half threw, once both halves ended: a {@link TaskFailedException}
 * (catch either) whose cause is left's throwable if left threw, else right's; the other one, if both threw, is
 * suppressed on the cause. A join failure passing through enclosing joins is rethrown as it is, so a whole
 * tree of joins raises one of these, not one wrapper per level.
 */
public final class JoinFailedException extends TaskFailedException {
    private static final long serialVersionUID = 1L;

    /**
     * The failure of a join whose half threw {@code cause}.
     *
     * @param cause the half's throwable (not null): left's if left threw, else right's
     */
    public JoinFailedException(Throwable cause) {
        super("join: a half failed: " + cause, cause);
    }
}
