package dev.threadpool;

import dev.threadpool.internal.memory.Capacity;
import java.time.Duration;
import java.util.Objects;

/**
 * Immutable pool configuration. Build with {@link #builder()}; {@link Builder#build()} validates every field
 * and names the parameter and its allowed range in the exception. See {@code docs/CONFIGURATION.md} for the
 * full reference.
 *
 * <p>Fields marked "(WORK_STEALING / LANE_EXTENSION)" are validated now and take effect in those variants;
 * {@code GLOBAL_QUEUE} ignores them.
 */
public final class PoolConfig {
    /** Worker threads are capped at 64: the idle and non-empty bitmaps are one long each. */
    /** Most workers a pool may have, overflow workers included ({@link #workerSlots()}). */
    public static final int MAX_THREADS = 64;
    /** Smallest {@link Builder#queueCapacity}. */
    public static final int MIN_QUEUE_CAPACITY = 2;
    /** Largest {@link Builder#queueCapacity}: 2^24 descriptors. */
    public static final int MAX_QUEUE_CAPACITY = 1 << 24;
    /** The smallest default {@link Builder#queueCapacity}, the one of pools of up to 16 workers. */
    public static final int MIN_DEFAULT_QUEUE_CAPACITY = 4096;
    /** Descriptors per worker in the default {@link Builder#queueCapacity} (see {@link #defaultQueueCapacity}). */
    public static final int DEFAULT_DESCRIPTORS_PER_WORKER = 256;
    /** Largest {@link Builder#localQueueCapacity}: 65536 entries. */
    public static final int MAX_LOCAL_QUEUE_CAPACITY = 1 << 16;
    /** Largest {@link Builder#recentErrorCapacity}. */
    public static final int MAX_RECENT_ERRORS = 1024;
    /** Default {@link Builder#idleWindow}: 50 µs, several park/unpark round trips on a VM. */
    public static final long DEFAULT_IDLE_WINDOW_NANOS = 50_000;
    /** Smallest non-zero {@link Builder#workerStackSize}: 64 KiB. */
    public static final long MIN_WORKER_STACK_SIZE = 64L * 1024;
    /** Largest {@link Builder#workerStackSize}: 1 GiB. */
    public static final long MAX_WORKER_STACK_SIZE = 1L << 30;

    private final int maxThreads;
    private final int queueCapacity;
    private final SchedulerVariant schedulerVariant;
    private final TimestampMode timestampMode;
    private final IdleStrategy idleStrategy;
    private final Duration spinBeforePark;
    private final Duration idleWindow;
    private final TaskErrorHandler errorHandler;
    private final int recentErrorCapacity;
    private final String threadNamePrefix;
    private final String jmxName;
    private final boolean daemon;
    private final long workerStackSize;
    private final int threadPriority;
    private final Thread.UncaughtExceptionHandler uncaughtExceptionHandler;
    private final int localQueueCapacity;
    private final QueueKind queueKind;
    private final int wakeCoalesceBatch;
    private final int injectBatchSize;
    private final int stealBatchSize;
    private final int blockingWorkers;
    private final boolean cpuHelpsBlocking;
    private final int maxOverflowWorkers;
    private final Duration blockingPromotionTimeout;
    private final Duration watchdogInterval;
    private final long workerScratchCapBytes;
    private final int[] workerCpus;
    private final Duration scratchIdlePurge;

    private PoolConfig(Builder b, int queueCapacity, int maxOverflowWorkers) {
        this.maxThreads = b.maxThreads;
        this.queueCapacity = queueCapacity;
        this.schedulerVariant = b.schedulerVariant;
        this.timestampMode = b.timestampMode;
        this.idleStrategy = b.idleStrategy;
        this.spinBeforePark = b.spinBeforePark;
        this.idleWindow = b.idleWindow;
        this.errorHandler = b.errorHandler;
        this.recentErrorCapacity = b.recentErrorCapacity;
        this.threadNamePrefix = b.threadNamePrefix;
        this.jmxName = b.jmxName;
        this.daemon = b.daemon;
        this.workerStackSize = b.workerStackSize;
        this.threadPriority = b.threadPriority;
        this.uncaughtExceptionHandler = b.uncaughtExceptionHandler;
        this.localQueueCapacity = b.localQueueCapacity;
        this.queueKind = b.queueKind;
        this.wakeCoalesceBatch = b.wakeCoalesceBatch;
        this.injectBatchSize = b.injectBatchSize;
        this.stealBatchSize = b.stealBatchSize;
        this.blockingWorkers = b.blockingWorkers;
        this.cpuHelpsBlocking = b.cpuHelpsBlocking;
        this.maxOverflowWorkers = maxOverflowWorkers;
        this.blockingPromotionTimeout = b.blockingPromotionTimeout;
        this.watchdogInterval = b.watchdogInterval;
        this.workerScratchCapBytes = b.workerScratchCapBytes;
        this.workerCpus = b.workerCpus.clone();
        this.scratchIdlePurge = b.scratchIdlePurge;
    }

    /**
     * A builder holding every default.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * A configuration with every default.
     *
     * @return {@code builder().build()}
     */
    public static PoolConfig defaults() {
        return builder().build();
    }

    /** {@return worker threads, 1..{@link #MAX_THREADS} (see {@link Builder#maxThreads})} */
    public int maxThreads() { return maxThreads; }
    /** {@return descriptors, a power of two (see {@link Builder#queueCapacity})} */
    public int queueCapacity() { return queueCapacity; }

    /**
     * The {@code queueCapacity} of a pool of {@code maxThreads} workers that sets none: {@code max(4096, the next
     * power of two at least 256 x maxThreads)}, so 4096 up to 16 workers, 8192 up to 32, 16384 up to 64. It grows
     * with the workers so that each worker's descriptor cache may hold 64 slots (one freelist CAS per 32
     * descriptors a worker gives back) while all of them hold at most a quarter of the table (docs/CONFIGURATION.md,
     * "Descriptor caches").
     *
     * @param maxThreads the workers, 1..64
     * @return the default descriptor count for that many workers
     * @throws IllegalArgumentException if {@code maxThreads} is not in [1, 64]
     */
    public static int defaultQueueCapacity(int maxThreads) {
        if (maxThreads < 1 || maxThreads > MAX_THREADS) {
            throw new IllegalArgumentException("maxThreads must be in [1, " + MAX_THREADS + "]: maxThreads="
                    + maxThreads);
        }
        int perWorkers = DEFAULT_DESCRIPTORS_PER_WORKER * maxThreads;
        return Math.max(MIN_DEFAULT_QUEUE_CAPACITY, Integer.highestOneBit(perWorkers - 1) << 1);
    }
    /** {@return the scheduler (see {@link Builder#schedulerVariant})} */
    public SchedulerVariant schedulerVariant() { return schedulerVariant; }
    /** {@return which timestamps tasks carry (see {@link Builder#timestampMode})} */
    public TimestampMode timestampMode() { return timestampMode; }
    /** {@return what an idle worker does (see {@link Builder#idleStrategy})} */
    public IdleStrategy idleStrategy() { return idleStrategy; }
    /** {@return how long SPIN_THEN_PARK spins (see {@link Builder#spinBeforePark})} */
    public Duration spinBeforePark() { return spinBeforePark; }
    /** {@return (PARK) the window in which a worker that has just run dry stays reachable without an unpark} */
    public Duration idleWindow() { return idleWindow; }
    /** {@return the handler called when a task throws; null: no handler} */
    public TaskErrorHandler errorHandler() { return errorHandler; }
    /** {@return how many recent task errors are kept (see {@link Builder#recentErrorCapacity})} */
    public int recentErrorCapacity() { return recentErrorCapacity; }
    /** {@return the prefix of every pool thread's name (see {@link Builder#threadNamePrefix})} */
    public String threadNamePrefix() { return threadNamePrefix; }
    /** {@return the ObjectName of the pool's {@link ThreadPoolMXBean}; null: no MXBean (the default)} */
    public String jmxName() { return jmxName; }
    /** {@return whether workers are daemon threads (see {@link Builder#daemon})} */
    public boolean daemon() { return daemon; }
    /** {@return the stack size of every worker thread in bytes; 0: the JVM's default ({@code -Xss})} */
    public long workerStackSize() { return workerStackSize; }
    /** {@return the priority of every thread the pool starts} */
    public int threadPriority() { return threadPriority; }
    /**
     * {@return the uncaught exception handler of every pool thread; null: the JVM's default (the thread group's,
     * then the default uncaught handler)}
     */
    public Thread.UncaughtExceptionHandler uncaughtExceptionHandler() { return uncaughtExceptionHandler; }
    /** {@return local queue size (see {@link Builder#localQueueCapacity})} */
    public int localQueueCapacity() { return localQueueCapacity; }
    /** {@return local queue kind (see {@link Builder#queueKind})} */
    public QueueKind queueKind() { return queueKind; }
    /** {@return how many wakes of a parked worker are coalesced into one (see {@link Builder#wakeCoalesceBatch})} */
    public int wakeCoalesceBatch() { return wakeCoalesceBatch; }
    /** {@return entries taken from the inject ring at once (see {@link Builder#injectBatchSize})} */
    public int injectBatchSize() { return injectBatchSize; }
    /** {@return most entries one steal moves (see {@link Builder#stealBatchSize})} */
    public int stealBatchSize() { return stealBatchSize; }
    /** {@return workers reserved for the blocking lane (see {@link Builder#blockingWorkers})} */
    public int blockingWorkers() { return blockingWorkers; }
    /** {@return whether default-lane workers help the blocking lane (see {@link Builder#cpuHelpsBlocking})} */
    public boolean cpuHelpsBlocking() { return cpuHelpsBlocking; }
    /** {@return overflow workers the watchdog may add, default resolved ({@link Builder#maxOverflowWorkers})} */
    public int maxOverflowWorkers() { return maxOverflowWorkers; }
    /** {@return the running time after which a task counts as stalled ({@link Builder#blockingPromotionTimeout})} */
    public Duration blockingPromotionTimeout() { return blockingPromotionTimeout; }
    /** {@return the watchdog period (see {@link Builder#watchdogInterval})} */
    public Duration watchdogInterval() { return watchdogInterval; }
    /** {@return the per-worker scratch cap in bytes; 0: disabled ({@link Builder#workerScratchCapBytes})} */
    public long workerScratchCapBytes() { return workerScratchCapBytes; }
    /**
     * {@return a copy of the CPUs the workers are pinned to (worker i: {@code cpus[i % length]}); empty when
     * pinning is off}
     */
    public int[] workerCpus() { return workerCpus.clone(); }
    /**
     * {@return how long a parked worker keeps its scratch buffer before freeing it; {@link Duration#ZERO}: until
     * purged}
     */
    public Duration scratchIdlePurge() { return scratchIdlePurge; }

    /**
     * How many worker indices a pool built from this configuration may ever use: {@code maxThreads}, plus
     * {@code maxOverflowWorkers} in LANE_EXTENSION (the indices of the watchdog's overflow workers,
     * {@code [maxThreads, workerSlots())}); the other variants have no overflow workers and ignore
     * {@code maxOverflowWorkers}. At most {@link #MAX_THREADS} ({@link Builder#build()} checks the sum). Every
     * per-worker structure of the pool is sized by it, and {@code ThreadPool.currentWorkerIndex()} is below it.
     *
     * @return the number of worker indices, 1..{@link #MAX_THREADS}
     */
    public int workerSlots() {
        return schedulerVariant == SchedulerVariant.LANE_EXTENSION ? maxThreads + maxOverflowWorkers : maxThreads;
    }

    @Override
    public String toString() {
        return "PoolConfig[variant=" + schedulerVariant + ", maxThreads=" + maxThreads + ", queueCapacity="
                + queueCapacity + ", idleStrategy=" + idleStrategy + ", timestampMode=" + timestampMode + "]";
    }

    /** Builder with defaults; every setter returns {@code this}. Validation happens in {@link #build()}. */
    public static final class Builder {
        private int maxThreads = Math.min(Runtime.getRuntime().availableProcessors(), MAX_THREADS);
        /** Meaningful once set ({@link #queueCapacitySet}); else build() takes defaultQueueCapacity(maxThreads). */
        private int queueCapacity;
        private boolean queueCapacitySet;
        private SchedulerVariant schedulerVariant = SchedulerVariant.GLOBAL_QUEUE;
        private TimestampMode timestampMode = TimestampMode.DISABLED;
        private IdleStrategy idleStrategy = IdleStrategy.PARK;
        private Duration spinBeforePark = Duration.ofNanos(50_000);
        private Duration idleWindow = Duration.ofNanos(DEFAULT_IDLE_WINDOW_NANOS);
        private TaskErrorHandler errorHandler;
        private int recentErrorCapacity = 16;
        private String threadNamePrefix = "thread-pool-";
        private String jmxName;
        private boolean daemon;
        private long workerStackSize;
        private int threadPriority = Thread.NORM_PRIORITY;
        private Thread.UncaughtExceptionHandler uncaughtExceptionHandler;
        private int localQueueCapacity = 256;
        private QueueKind queueKind = QueueKind.RING;
        private int wakeCoalesceBatch = 32;
        private int injectBatchSize = 32;
        private int stealBatchSize = 8;
        private int blockingWorkers = 1;
        private boolean cpuHelpsBlocking;
        /** {@link #UNSET}: min(4, 64 - maxThreads), resolved by build() so every maxThreads has a valid default. */
        private int maxOverflowWorkers = UNSET;
        private Duration blockingPromotionTimeout = Duration.ofMillis(100);
        private Duration watchdogInterval = Duration.ofMillis(10);
        private long workerScratchCapBytes = 64 * 1024;
        private int[] workerCpus = new int[0];
        private Duration scratchIdlePurge = Duration.ZERO;

        private static final int UNSET = Integer.MIN_VALUE;
        /** Overflow workers when none is configured (capped by the 64-worker limit). */
        public static final int DEFAULT_MAX_OVERFLOW_WORKERS = 4;

        private Builder() {}

        /**
         * Worker threads, 1..64. Default: available processors (at most 64).
         *
         * @param n the number of workers
         * @return this builder
         */
        public Builder maxThreads(int n) { this.maxThreads = n; return this; }
        /**
         * Descriptors (queued + running + un-awaited tasks), a power of two in [2, 2^24]. Default
         * {@link PoolConfig#defaultQueueCapacity defaultQueueCapacity(maxThreads)}: 4096 up to 16 workers, then the
         * next power of two at least 256 per worker (16384 at 64), so that every worker's descriptor cache can
         * hold 64 while all of them hold at most a quarter of the table. A value set here is kept as given.
         *
         * @param n the descriptor count
         * @return this builder
         */
        public Builder queueCapacity(int n) { this.queueCapacity = n; this.queueCapacitySet = true; return this; }
        /**
         * Which scheduler the pool runs (see {@link SchedulerVariant}). Default GLOBAL_QUEUE.
         *
         * @param v the scheduler (not null)
         * @return this builder
         */
        public Builder schedulerVariant(SchedulerVariant v) { this.schedulerVariant = v; return this; }
        /**
         * Which timestamps tasks carry, and so which latencies are recorded (see {@link TimestampMode}). Default
         * DISABLED.
         *
         * @param m the timestamp mode (not null)
         * @return this builder
         */
        public Builder timestampMode(TimestampMode m) { this.timestampMode = m; return this; }
        /**
         * What a worker with no work does (see {@link IdleStrategy}). Default PARK.
         *
         * @param s the idle strategy (not null)
         * @return this builder
         */
        public Builder idleStrategy(IdleStrategy s) { this.idleStrategy = s; return this; }
        /**
         * How long SPIN_THEN_PARK spins, in [0, 1s]. Default 50 µs.
         *
         * @param d the spin time (not null)
         * @return this builder
         */
        public Builder spinBeforePark(Duration d) { this.spinBeforePark = d; return this; }
        /**
         * (PARK) How long a worker that has just run dry keeps looking for work before it parks, so that the
         * next task reaches it without an unpark: in [0, 1 ms], default 50 µs; 0 turns the window off. A worker
         * opens it only when it has run a task since its last window and its last idle spell was no longer
         * than the window (an idle pool parks at once; see docs/ALGORITHMS.md, "The idle window").
         *
         * @param d the window (not null)
         * @return this builder
         */
        public Builder idleWindow(Duration d) { this.idleWindow = d; return this; }
        /**
         * Called on the worker when a task throws; null for none.
         *
         * @param h the handler, or null
         * @return this builder
         */
        public Builder errorHandler(TaskErrorHandler h) { this.errorHandler = h; return this; }
        /**
         * How many recent task errors are kept, 0..1024. Default 16.
         *
         * @param n the number of errors kept
         * @return this builder
         */
        public Builder recentErrorCapacity(int n) { this.recentErrorCapacity = n; return this; }
        /**
         * Prefix of every pool thread's name (followed by the worker index). Default {@code "thread-pool-"}.
         *
         * @param p the prefix (not null)
         * @return this builder
         */
        public Builder threadNamePrefix(String p) { this.threadNamePrefix = p; return this; }
        /**
         * Registers a {@link ThreadPoolMXBean} under this ObjectName in the platform MBean server when the pool
         * is created, and unregisters it when the pool closes (or its creation fails). A name already
         * registered fails {@code ThreadPool.create}. Suggested form:
         * {@code dev.threadpool:type=ThreadPool,name=<name>}. Null (the default): no MXBean.
         *
         * @param name the ObjectName, or null
         * @return this builder
         */
        public Builder jmxName(String name) { this.jmxName = name; return this; }
        /**
         * Whether workers are daemon threads. Default false (close the pool to let the JVM exit).
         *
         * @param d true for daemon workers
         * @return this builder
         */
        public Builder daemon(boolean d) { this.daemon = d; return this; }
        /**
         * Stack size of each worker thread (base and overflow workers) in bytes: 0 (the default: the JVM's,
         * {@code -Xss}) or in [64 KiB, 1 GiB]. Deep recursion on a worker, nested {@code join}s included, needs
         * it: see docs/CONFIGURATION.md, "Worker stack size", for the bytes a nested join takes. Passed to the
         * {@link Thread} constructor, which the JVM may round up or, on some platforms, ignore.
         *
         * @param bytes the stack size in bytes, or 0
         * @return this builder
         */
        public Builder workerStackSize(long bytes) { this.workerStackSize = bytes; return this; }
        /**
         * Priority of every thread the pool starts (workers, overflow workers, the LANE_EXTENSION watchdog), in
         * [{@link Thread#MIN_PRIORITY}, {@link Thread#MAX_PRIORITY}]. Default {@link Thread#NORM_PRIORITY}. A hint
         * to the OS, which Linux ignores unless the JVM runs with {@code -XX:ThreadPriorityPolicy=1} as root.
         *
         * @param p the priority
         * @return this builder
         */
        public Builder threadPriority(int p) { this.threadPriority = p; return this; }
        /**
         * Uncaught exception handler of every thread the pool starts, for what escapes the pool's own
         * containment (a task's throwable never does: it goes to {@link #errorHandler}); null (the default)
         * keeps the JVM's (the thread group's, then {@link Thread#getDefaultUncaughtExceptionHandler()}).
         *
         * @param h the handler, or null
         * @return this builder
         */
        public Builder uncaughtExceptionHandler(Thread.UncaughtExceptionHandler h) {
            this.uncaughtExceptionHandler = h;
            return this;
        }
        /**
         * (WORK_STEALING / LANE_EXTENSION) Local queue size, a power of two in [2, 65536]. Default 256.
         *
         * @param n the entries per local queue
         * @return this builder
         */
        public Builder localQueueCapacity(int n) { this.localQueueCapacity = n; return this; }
        /**
         * (WORK_STEALING / LANE_EXTENSION) Local queue kind. Default RING.
         *
         * @param k the queue kind (not null)
         * @return this builder
         */
        public Builder queueKind(QueueKind k) { this.queueKind = k; return this; }
        /**
         * While a worker is searching for work, a submit that finds a parked worker wakes it only every
         * {@code n}-th time (the searcher is bound to see the entry; see {@code WakeCoalescer}), 1..4096.
         * Default 32. Every variant (LANE_EXTENSION: the default lane; blocking-lane submits are never
         * coalesced).
         *
         * @param n wakes per actual unpark while a worker searches
         * @return this builder
         */
        public Builder wakeCoalesceBatch(int n) { this.wakeCoalesceBatch = n; return this; }
        /**
         * (WORK_STEALING / LANE_EXTENSION) Entries taken from the inject ring at once, 1..1024. Default 32.
         *
         * @param n the batch size
         * @return this builder
         */
        public Builder injectBatchSize(int n) { this.injectBatchSize = n; return this; }
        /**
         * (WORK_STEALING / LANE_EXTENSION) Most entries one steal moves, 1..1024. Default 8.
         *
         * @param n the batch size
         * @return this builder
         */
        public Builder stealBatchSize(int n) { this.stealBatchSize = n; return this; }
        /**
         * (LANE_EXTENSION) Workers reserved for the blocking lane, 1..maxThreads-1. Default 1.
         *
         * @param n the number of blocking-lane workers
         * @return this builder
         */
        public Builder blockingWorkers(int n) { this.blockingWorkers = n; return this; }
        /**
         * (LANE_EXTENSION) Whether default-lane workers help the blocking lane. Default false.
         *
         * @param b true to let default-lane workers help
         * @return this builder
         */
        public Builder cpuHelpsBlocking(boolean b) { this.cpuHelpsBlocking = b; return this; }
        /**
         * (LANE_EXTENSION) Overflow workers the watchdog may add, 0..64-maxThreads (maxThreads +
         * maxOverflowWorkers is at most 64). Default min(4, 64 - maxThreads).
         *
         * @param n the most overflow workers
         * @return this builder
         */
        public Builder maxOverflowWorkers(int n) { this.maxOverflowWorkers = n; return this; }
        /**
         * (LANE_EXTENSION) Running time after which a default-lane task counts as stalled, in (0, 1 h]. Default
         * 100 ms. Timed by the watchdog from the tick that first saw the task: never called early, at most about
         * two {@code watchdogInterval}s late.
         *
         * @param d the timeout (not null)
         * @return this builder
         */
        public Builder blockingPromotionTimeout(Duration d) { this.blockingPromotionTimeout = d; return this; }
        /**
         * (LANE_EXTENSION) Watchdog period, in [1 ms, 1 h]. Default 10 ms.
         *
         * @param d the period (not null)
         * @return this builder
         */
        public Builder watchdogInterval(Duration d) { this.watchdogInterval = d; return this; }
        /**
         * Per-worker scratch buffer cap in bytes, 0..1 GiB (0 disables scratch). Default 64 KiB.
         *
         * @param n the cap in bytes, or 0
         * @return this builder
         */
        public Builder workerScratchCapBytes(long n) { this.workerScratchCapBytes = n; return this; }
        /**
         * (Linux) Pins worker {@code i} to CPU {@code cpus[i % cpus.length]} when it starts; no arguments turn
         * pinning off (the default). Ids in [0, 1023] here; {@code ThreadPool.create} also checks that each is a
         * CPU this process may run on ({@link IllegalArgumentException}) and that the OS supports pinning
         * ({@link UnsupportedOperationException} elsewhere).
         *
         * @param cpus CPU ids, one or more per worker cycle; none to turn pinning off (not null)
         * @return this builder
         */
        public Builder workerCpus(int... cpus) {
            this.workerCpus = Objects.requireNonNull(cpus, "workerCpus must not be null").clone();
            return this;
        }
        /**
         * A worker parked this long with a scratch buffer frees it: 0 (the default: only
         * {@link ThreadPool#purgeWorkerCaches()} frees it) or in [1 ms, 1 h].
         *
         * @param d the idle time (not null), or {@link Duration#ZERO}
         * @return this builder
         */
        public Builder scratchIdlePurge(Duration d) { this.scratchIdlePurge = d; return this; }

        /**
         * Validates and builds.
         *
         * @return a new, immutable configuration; this builder can be changed and built again
         * @throws IllegalArgumentException naming the field and its allowed range
         * @throws NullPointerException naming a null field
         */
        public PoolConfig build() {
            range("maxThreads", maxThreads, 1, MAX_THREADS);
            final int capacity = queueCapacitySet ? queueCapacity : defaultQueueCapacity(maxThreads);
            powerOfTwo("queueCapacity", capacity, MIN_QUEUE_CAPACITY, MAX_QUEUE_CAPACITY);
            Objects.requireNonNull(schedulerVariant, "schedulerVariant must not be null");
            Objects.requireNonNull(timestampMode, "timestampMode must not be null");
            Objects.requireNonNull(idleStrategy, "idleStrategy must not be null");
            Objects.requireNonNull(queueKind, "queueKind must not be null");
            Objects.requireNonNull(threadNamePrefix, "threadNamePrefix must not be null");
            checkJmxName(jmxName);
            if (workerStackSize != 0
                    && (workerStackSize < MIN_WORKER_STACK_SIZE || workerStackSize > MAX_WORKER_STACK_SIZE)) {
                throw new IllegalArgumentException("workerStackSize must be 0 (the JVM default) or in ["
                        + MIN_WORKER_STACK_SIZE + ", " + MAX_WORKER_STACK_SIZE + "]: workerStackSize="
                        + workerStackSize);
            }
            range("threadPriority", threadPriority, Thread.MIN_PRIORITY, Thread.MAX_PRIORITY);
            duration("spinBeforePark", spinBeforePark, Duration.ZERO, Duration.ofSeconds(1));
            duration("idleWindow", idleWindow, Duration.ZERO, Duration.ofMillis(1));
            range("recentErrorCapacity", recentErrorCapacity, 0, MAX_RECENT_ERRORS);
            powerOfTwo("localQueueCapacity", localQueueCapacity, 2, MAX_LOCAL_QUEUE_CAPACITY);
            range("wakeCoalesceBatch", wakeCoalesceBatch, 1, 4096);
            range("injectBatchSize", injectBatchSize, 1, 1024);
            range("stealBatchSize", stealBatchSize, 1, 1024);
            if (schedulerVariant == SchedulerVariant.LANE_EXTENSION) {
                if (maxThreads < 2) {
                    throw new IllegalArgumentException("LANE_EXTENSION needs maxThreads >= 2 (one blocking and one"
                            + " default worker): maxThreads=" + maxThreads);
                }
                range("blockingWorkers", blockingWorkers, 1, maxThreads - 1);
            } else {
                range("blockingWorkers", blockingWorkers, 0, maxThreads);
            }
            final int overflow;
            if (maxOverflowWorkers == UNSET) {
                overflow = Math.min(DEFAULT_MAX_OVERFLOW_WORKERS, MAX_THREADS - maxThreads);
            } else if (maxOverflowWorkers < 0 || maxOverflowWorkers > MAX_THREADS - maxThreads) {
                throw new IllegalArgumentException("maxOverflowWorkers must be in [0, " + (MAX_THREADS - maxThreads)
                        + "] (maxThreads + maxOverflowWorkers <= " + MAX_THREADS + ", maxThreads=" + maxThreads
                        + "): maxOverflowWorkers=" + maxOverflowWorkers);
            } else {
                overflow = maxOverflowWorkers;
            }
            duration("blockingPromotionTimeout", blockingPromotionTimeout, Duration.ofNanos(1), Duration.ofHours(1));
            duration("watchdogInterval", watchdogInterval, Duration.ofMillis(1), Duration.ofHours(1));
            for (int i = 0; i < workerCpus.length; i++) {
                if (workerCpus[i] < 0 || workerCpus[i] > 1023) {
                    throw new IllegalArgumentException("workerCpus[" + i + "] must be a CPU id in [0, 1023]: "
                            + "workerCpus[" + i + "]=" + workerCpus[i]);
                }
            }
            if (workerScratchCapBytes < 0 || workerScratchCapBytes > (1L << 30)) {
                throw new IllegalArgumentException("workerScratchCapBytes must be in [0, 1073741824]: "
                        + "workerScratchCapBytes=" + workerScratchCapBytes);
            }
            Objects.requireNonNull(scratchIdlePurge, "scratchIdlePurge must not be null");
            if (!scratchIdlePurge.isZero()) {
                duration("scratchIdlePurge", scratchIdlePurge, Duration.ofMillis(1), Duration.ofHours(1));
            }
            return new PoolConfig(this, capacity, overflow);

        }

        private static void checkJmxName(String name) {
            if (name == null) {
                return;
            }
            try {
                if (new javax.management.ObjectName(name).isPattern()) {
                    throw new IllegalArgumentException("jmxName must be an ObjectName without wildcards, e.g. "
                            + "dev.threadpool:type=ThreadPool,name=orders: jmxName=" + name);
                }
            } catch (javax.management.MalformedObjectNameException e) {
                throw new IllegalArgumentException("jmxName must be a valid ObjectName, e.g. "
                        + "dev.threadpool:type=ThreadPool,name=orders (" + e.getMessage() + "): jmxName=" + name, e);
            }
        }

        private static void range(String name, long v, long lo, long hi) {
            if (v < lo || v > hi) {
                throw new IllegalArgumentException(name + " must be in [" + lo + ", " + hi + "]: " + name + "=" + v);
            }
        }

        private static void powerOfTwo(String name, int v, int lo, int hi) {
            Capacity.checkPowerOfTwo(name, v, lo, hi);
        }

        private static void duration(String name, Duration d, Duration lo, Duration hi) {
            Objects.requireNonNull(d, () -> name + " must not be null");
            if (d.compareTo(lo) < 0 || d.compareTo(hi) > 0) {
                throw new IllegalArgumentException(name + " must be in [" + lo + ", " + hi + "]: " + name + "=" + d);
            }
        }
    }
}
