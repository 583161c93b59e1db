package dev.threadpool.internal.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.internal.memory.CacheLine;
import dev.threadpool.internal.memory.PoolMemory;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The long-spinner token of {@link ParkingLot}: at most one holder, given back, on a line of its own. */
class ParkingLotSpinnerTest {
    private final PoolMemory mem = PoolMemory.create();

    @AfterEach
    void close() {
        mem.close();
    }

    @Test
    void oneHolderAtATimeAndReusableAfterRelease() {
        ParkingLot lot = new ParkingLot(mem, 4);
        assertTrue(lot.tryClaimSpinner());
        assertFalse(lot.tryClaimSpinner(), "a second claim while held");
        lot.releaseSpinner();
        assertTrue(lot.tryClaimSpinner(), "free again after release");
        lot.releaseSpinner();
    }

    @Test
    void theTokenDoesNotShareTheIdleMaskLine() {
        new ParkingLot(mem, 4);
        // idle mask + hint on one line, the token on the next: two PAD lines in all, counted exactly
        // (as PoolMemory counts any block of that size, alignment slack included)
        try (PoolMemory ref = PoolMemory.create()) {
            ref.allocate("two lines", 2L * CacheLine.PAD);
            assertEquals(ref.liveBytes(), mem.liveBytes());
        }
        assertEquals(2L * CacheLine.PAD, ParkingLot.SPINNER_OFFSET + CacheLine.PAD, "the token's line is the second");
    }

    @Test
    void racingClaimersNeverHoldItTogether() throws Exception {
        ParkingLot lot = new ParkingLot(mem, 4);
        int threads = 4;
        int rounds = 20_000;
        AtomicInteger holders = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        AtomicInteger claims = new AtomicInteger();
        CyclicBarrier start = new CyclicBarrier(threads);
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            ts[t] = new Thread(() -> {
                try {
                    start.await(10, TimeUnit.SECONDS);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
                for (int r = 0; r < rounds; r++) {
                    if (lot.tryClaimSpinner()) {
                        claims.incrementAndGet();
                        if (holders.incrementAndGet() != 1) {
                            overlaps.incrementAndGet();
                        }
                        holders.decrementAndGet();
                        lot.releaseSpinner();
                    }
                }
            });
            ts[t].start();
        }
        for (Thread t : ts) {
            t.join(TimeUnit.SECONDS.toMillis(30));
            assertFalse(t.isAlive(), "claimer did not finish");
        }
        assertEquals(0, overlaps.get(), "two holders at once");
        assertTrue(claims.get() > 0);
        assertTrue(lot.tryClaimSpinner(), "released at the end");
    }
}
