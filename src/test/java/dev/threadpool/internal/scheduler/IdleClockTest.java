package dev.threadpool.internal.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Idle's idle clock ("The idle clock"): an idle span ends at the last clock read plus the looks made since, at the
 * cost of a look measured by the last read that followed enough looks and no park. Pure arithmetic on a worker's
 * own fields, so every value here is exact.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class IdleClockTest {
    private final WorkerThread self = new WorkerThread(null, 0, "idle-clock-test", true, false, false);

    @Test
    void beforeAnyCalibrationTheSpanEndsAtTheLastRead() {
        Idle.startClock(self, 1_000);
        self.looksSinceClock = 10;
        assertEquals(1_000, Idle.idleEnd(self), "no measured look cost yet: the last read");
    }

    @Test
    void aReadAfterEnoughLooksMeasuresTheirCostAndTheEndAddsTheLooksSince() {
        Idle.startClock(self, 1_000);
        self.looksSinceClock = Idle.MIN_LOOKS_TO_CALIBRATE;
        assertEquals(1_000 + 100L * Idle.MIN_LOOKS_TO_CALIBRATE,
                Idle.calibrate(self, 1_000 + 100L * Idle.MIN_LOOKS_TO_CALIBRATE), "returns the reading");
        assertEquals(0, self.looksSinceClock, "the count restarts at a read");
        self.looksSinceClock = 10;
        assertEquals(1_000 + 100L * Idle.MIN_LOOKS_TO_CALIBRATE + 10 * 100, Idle.idleEnd(self),
                "10 looks at 100 ns after the read");
    }

    @Test
    void fractionalLookCostsKeepTheirSixteenths() {
        Idle.startClock(self, 0);
        self.looksSinceClock = 64;
        Idle.calibrate(self, 100); // 1.5625 ns a look: 25 sixteenths
        self.looksSinceClock = 64;
        assertEquals(200, Idle.idleEnd(self));
    }

    @Test
    void aReadAfterTooFewLooksKeepsTheMeasuredCost() {
        Idle.startClock(self, 0);
        self.looksSinceClock = Idle.MIN_LOOKS_TO_CALIBRATE;
        Idle.calibrate(self, 50L * Idle.MIN_LOOKS_TO_CALIBRATE); // 50 ns a look
        long read = 50L * Idle.MIN_LOOKS_TO_CALIBRATE + 1_000_000; // after a few looks and a long stall
        self.looksSinceClock = Idle.MIN_LOOKS_TO_CALIBRATE - 1;
        Idle.calibrate(self, read);
        self.looksSinceClock = 4;
        assertEquals(read + 4 * 50, Idle.idleEnd(self), "too few looks to say what one costs: 50 ns kept");
    }

    @Test
    void aParkRestartsTheClockWithoutMeasuringTheLooksBeforeIt() {
        Idle.startClock(self, 0);
        self.looksSinceClock = Idle.MIN_LOOKS_TO_CALIBRATE;
        Idle.calibrate(self, 20L * Idle.MIN_LOOKS_TO_CALIBRATE); // 20 ns a look
        self.looksSinceClock = 1_000; // looks, then a park: their time is mostly the park's
        long before = System.nanoTime();
        long now = Idle.clockAfterPark(self);
        assertTrue(now >= before, "a fresh reading");
        assertEquals(now, self.idleClock);
        assertEquals(0, self.looksSinceClock);
        self.looksSinceClock = 3;
        assertEquals(now + 3 * 20, Idle.idleEnd(self), "the cost measured before the park is kept");
    }
}
