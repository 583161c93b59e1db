package dev.threadpool.stress;

/**
 * One structure under counting stress. {@link #run} pushes the items {@code 1..items} through the structure
 * with {@code threads} concurrent parties (its own mix of owners, producers, thieves), and records every item
 * that comes out in {@code seen}: {@code seen.hit(v)} once per time item {@code v} is taken.
 */
interface StressSubject {
    String name();

    /** Runs one round; returns a one-line summary of what each party did (shown beside lost/duplicated). */
    String run(int items, int threads, Seen seen) throws Exception;
}
