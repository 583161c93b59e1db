package dev.threadpool.internal.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.internal.memory.PoolMemory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link SpaceWaiters#await}: the yield phase ({@link SpaceWaiters#YIELDS_BEFORE_PARK} re-checks, nothing
 * registered, so no worker's signal is spent on a thread that is not parked), then the park phase (registered,
 * woken by {@link SpaceWaiters#signal}), and the two ways out of either (abort, deadline), each leaving no waiter
 * behind. The handshake's race itself is jcstress's ({@code SpaceWaitersTest}); every wait here is bounded.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SpaceWaitersTest {
    private static final long BOUND_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final PoolMemory mem = PoolMemory.create();
    private final SpaceWaiters waiters = new SpaceWaiters(mem, "test waiters");

    @AfterEach
    void close() {
        mem.close();
        assertEquals(0, mem.liveBytes(), "the waiters' block is freed with the memory");
    }

    @Test
    void roomThatShowsUpWhileYieldingIsTakenWithoutRegistering() {
        AtomicInteger checks = new AtomicInteger();
        AtomicBoolean sawRegistration = new AtomicBoolean();
        int readyAt = SpaceWaiters.YIELDS_BEFORE_PARK / 2;
        boolean ready = waiters.await(() -> {
            sawRegistration.compareAndSet(false, waiters.hasWaiters());
            return checks.incrementAndGet() >= readyAt;
        }, () -> false, Long.MAX_VALUE);
        assertTrue(ready, "the room was seen");
        assertEquals(readyAt, checks.get(), "one check per yield, and the first check that sees room returns");
        assertFalse(sawRegistration.get(), "the yield phase registers nothing, so no signal is spent on it");
        assertFalse(waiters.hasWaiters());
    }

    @Test
    void afterTheYieldsTheWaiterRegistersParksAndIsWokenBySignal() throws InterruptedException {
        AtomicBoolean room = new AtomicBoolean();
        AtomicInteger checks = new AtomicInteger();
        AtomicReference<Boolean> result = new AtomicReference<>();
        Thread waiter = new Thread(() -> result.set(waiters.await(() -> {
            checks.incrementAndGet();
            return room.get();
        }, () -> false, Long.MAX_VALUE)), "space-waiter");
        waiter.setDaemon(true);
        waiter.start();
        long deadline = System.nanoTime() + BOUND_NANOS;
        while (!waiters.hasWaiters()) { // registered: the yield phase is over
            assertTrue(System.nanoTime() - deadline < 0, "the waiter never registered");
            Thread.onSpinWait();
        }
        assertTrue(checks.get() >= SpaceWaiters.YIELDS_BEFORE_PARK,
                "it registered only after its yields: " + checks.get() + " checks");
        room.set(true);
        waiters.signal(); // the signaller's half: room first, then the look at the mask
        waiter.join(TimeUnit.NANOSECONDS.toMillis(BOUND_NANOS));
        assertFalse(waiter.isAlive(), "the signal woke the waiter");
        assertEquals(Boolean.TRUE, result.get());
        assertFalse(waiters.hasWaiters(), "the waiter deregistered on its way out");
    }

    @Test
    void anAbortInTheYieldPhaseReturnsFalseWithoutRegistering() {
        AtomicInteger checks = new AtomicInteger();
        boolean ready = waiters.await(() -> {
            checks.incrementAndGet();
            return false;
        }, () -> checks.get() >= 3, Long.MAX_VALUE);
        assertFalse(ready);
        assertEquals(3, checks.get(), "the abort is checked after every look at the room");
        assertFalse(waiters.hasWaiters());
    }

    @Test
    void aDeadlineAlreadyPassedReturnsFalseAfterOneLook() {
        AtomicInteger checks = new AtomicInteger();
        boolean ready = waiters.await(() -> {
            checks.incrementAndGet();
            return false;
        }, () -> false, System.nanoTime() - 1);
        assertFalse(ready);
        assertEquals(1, checks.get());
        assertFalse(waiters.hasWaiters());
    }

    @Test
    void aDeadlineInTheParkPhaseEndsTheWaitAndDeregisters() {
        long start = System.nanoTime();
        long wait = TimeUnit.MILLISECONDS.toNanos(20);
        boolean ready = waiters.await(() -> false, () -> false, start + wait);
        assertFalse(ready);
        assertTrue(System.nanoTime() - start >= wait, "it waited until the deadline");
        assertFalse(waiters.hasWaiters());
    }
}
