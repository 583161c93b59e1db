package dev.threadpool.internal.counting;

/** The paths counted, with what "per task" means for each and whose accesses are counted. */
public enum Path {
    OUTSIDE_DETACHED("outside detached submit", "per task; the submitting thread (carried where the variant carries)"),
    OUTSIDE_DESCRIPTOR("outside submit with a descriptor (TimestampMode.FULL)",
            "per task; the submitting thread, plus all threads for the SUBMITTED and freelist columns"),
    OUTSIDE_GROUP("outside submit(task, WaitGroup)", "per task; the submitting thread (the done is the worker's: next row)"),
    WORKER_SUBMIT("worker submit run by the same worker", "per task; the workers that ran the chain: submit, pop, run, release"),
    WORKER_GROUP("worker submit(task, WaitGroup) with its done", "per task; as the row above, with add and done"),
    STEAL("steal-half, per stolen task", "per task run by a thief; the thieves' whole activity (wake, search, steal, run)"),
    JOIN_OFFERED("join, top 8 levels (offered, taken back)", "per join; the owner"),
    JOIN_DEEP("join, nested below the top 8 levels", "per join; the owner"),
    JOIN_STOLEN("join, half stolen", "per join; the owner and the thieves that ran right halves"),
    PARK_WAKE("park-and-wake cycle", "per cycle; every thread: the waker's submit, the wake, the run, the re-park"),
    IDLE_LOOK("idle look (scheduler.lookForWork(i)), idle pool", "per look; the looking thread; the lines read"),
    IDLE_LOOK_BUSY("idle look (scheduler.lookForWork(i)), half the workers busy with stale bits",
            "per look; the looking thread; the lines read while half the workers run a task they took from their own"
                    + " LIFO slot (their WorkSummary bit still set, nothing to take)"),
    PARK_RECHECK("park re-check (scheduler.hasWork(i)), idle pool",
            "per re-check (once per park, after the announcement); the looking thread; the lines read");

    public final String title;
    public final String counted;

    Path(String title, String counted) {
        this.title = title;
        this.counted = counted;
    }
}
