package dev.threadpool.lincheck;

import java.util.List;

/**
 * A sequential specification whose operations may take more than one atomic step, and whose steps may be
 * nondeterministic: the form in which a structure's real contract can be written down when that contract
 * is weaker than "every operation is one atomic step of a sequential object".
 *
 * <p>{@link StepVerifier} accepts a concurrent history if its operations can be cut into steps, each step
 * placed at one instant, such that: the steps of one operation lie inside that operation's interval (so
 * an operation that finished before another began has all its steps before the other's first one), the
 * steps of one thread come in program order, and the sequence of steps is a run of this specification in
 * which every operation ends with the result it really returned. With one step per operation and one
 * possible next state per step this is exactly linearizability (Herlihy and Wing 1990); a second step is how
 * a contract says "this operation is not atomic, and here is the instant at which its other half happens".
 *
 * <p>The specification sees the result the operation really returned ({@link Call#result}), so it can
 * resolve choices the real structure made without enumerating them (how many cells a batch claimed) and
 * simply refuse a step whose result is impossible. States and progress values must be immutable and
 * implement {@code equals}/{@code hashCode} (records of lists), since the search memoises them.
 *
 * @param <S> the state of the sequential object
 */
public interface StepSpec<S> {

    /** Progress value meaning "this operation has finished". */
    Object DONE = new Object() {
        @Override
        public String toString() {
            return "DONE";
        }
    };

    /** The result of a {@code void} operation. */
    Object VOID = new Object() {
        @Override
        public String toString() {
            return "void";
        }
    };

    /** The state before the first operation (and before the constructor's own effects, if any). */
    S initial();

    /**
     * Adds to {@code out} every way operation {@code call} can take its next atomic step from {@code state}.
     * {@code progress} is null before its first step, else what its previous step returned. A step that
     * finishes the operation has progress {@link #DONE}; a step that cannot happen (the result contradicts
     * the state) is simply not added.
     */
    void step(S state, Call call, Object progress, List<Next<S>> out);

    /** One operation of the history: the method name, its arguments and what it returned. */
    record Call(String name, List<Object> args, Object result) {
        public long longArg(int i) {
            return ((Number) args.get(i)).longValue();
        }

        public int intArg(int i) {
            return ((Number) args.get(i)).intValue();
        }
    }

    /** One possible step: the state after it and the operation's progress ({@link #DONE} when finished). */
    record Next<S>(S state, Object progress) {}
}
