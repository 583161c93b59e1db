package dev.threadpool.internal.counting;

/** The paths counted, with what "per task" means for each and whose accesses are counted. */
public enum Path {
    OUTSIDE_DETACHED("outside detached submit, bursts into an idle pool",
            "per task; the submitting thread (carried where the variant carries); bursts of 64 into a pool whose"
                    + " workers all park between bursts: the wake regime"),
    OUTSIDE_DESCRIPTOR("outside submit with a descriptor (TimestampMode.FULL), bursts into an idle pool",
            "per task; the submitting thread, plus all threads for the SUBMITTED and freelist columns; bursts as"
                    + " above"),
    OUTSIDE_DETACHED_BUSY("outside detached submit, every worker busy",
            "per task; the submitting thread, while each of the 64 workers runs a chain of its own submits (steady"
                    + " state: nobody parked), at most 256 of its tasks outstanding"),
    OUTSIDE_DESCRIPTOR_BUSY("outside submit with a descriptor (TimestampMode.FULL), every worker busy",
            "per task; the submitting thread, plus all threads for the SUBMITTED and freelist columns (the workers'"
                    + " own chains included); busy as above"),
    OUTSIDE_GROUP("outside submit(task, WaitGroup)", "per task; the submitting thread (the done is the worker's: next row)"),
    WORKER_SUBMIT("worker submit run by the same worker, one chain in an idle pool",
            "per task; the workers that ran the chain: submit, pop, run, release; the 63 other workers idle, so each"
                    + " submit may wake one, and a woken worker may take the chain's next link"),
    WORKER_SUBMIT_BUSY("worker submit run by the same worker, every worker busy",
            "per task; every worker, each running a chain of its own submits (steady state: nobody parked)"),
    WORKER_GROUP("worker submit(task, WaitGroup) with its done, one chain in an idle pool",
            "per task; as the idle-pool worker submit, with add and done"),
    WORKER_GROUP_BUSY("worker submit(task, WaitGroup) with its done, every worker busy",
            "per task; as the busy worker submit, each link submitted with one WaitGroup shared by all the chains"),
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
