package dev.threadpool.internal.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.internal.memory.PoolMemory;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class DescriptorTableTest {

    @Test
    void acquireHandsOutEverySlotOnceThenReportsEmpty() {
        try (PoolMemory m = PoolMemory.create()) {
            DescriptorTable t = new DescriptorTable(m, 8);
            Set<Integer> got = new HashSet<>();
            for (int i = 0; i < 8; i++) {
                int idx = t.acquire();
                assertTrue(idx >= 0 && idx < 8);
                assertTrue(got.add(idx), "slot handed out twice");
                assertEquals(DescriptorTable.RESERVED, DescriptorTable.state(t.ctlAcquire(idx)));
            }
            assertEquals(-1, t.acquire());
            assertFalse(t.hasFree());
            t.unreserve(3);
            assertTrue(t.hasFree());
            assertEquals(3, t.acquire());
        }
    }

    @Test
    void generationAdvancesOnEveryReuseAndStaleEntriesCannotStart() {
        try (PoolMemory m = PoolMemory.create()) {
            DescriptorTable t = new DescriptorTable(m, 2);
            int idx = t.acquire();
            int gen1 = t.publish(idx, false);
            assertTrue(t.tryStart(idx, gen1, 0), "queued -> running");
            assertFalse(t.tryStart(idx, gen1, 0), "exactly once");
            assertTrue(t.finish(idx, false), "detached: released at once");
            assertEquals(DescriptorTable.FREE, DescriptorTable.state(t.ctlAcquire(idx)));
            assertEquals(DescriptorTable.COMPLETED, DescriptorTable.outcome(t.ctlAcquire(idx)));
            int again = t.acquire();
            assertEquals(idx, again, "LIFO freelist");
            int gen2 = t.publish(again, false);
            assertEquals(gen1 + 1, gen2);
            assertFalse(t.tryStart(idx, gen1, 0), "an entry of the old generation is stale");
            assertTrue(t.tryStart(idx, gen2, 0));
        }
    }

    @Test
    void cancelRacesStartAndOnlyOneWins() {
        try (PoolMemory m = PoolMemory.create()) {
            DescriptorTable t = new DescriptorTable(m, 2);
            int idx = t.acquire();
            int gen = t.publish(idx, true);
            long replaced = t.tryCancel(idx, gen, true);
            assertEquals(DescriptorTable.QUEUED, DescriptorTable.state(replaced), "returns the word it replaced");
            assertTrue(DescriptorTable.waitable(replaced), "which tells the canceller what it cancelled");
            assertEquals(gen, DescriptorTable.gen(replaced));
            assertFalse(t.tryStart(idx, gen, 0), "cancelled tasks never start");
            long prev = t.tryReleaseWaitable(idx, gen);
            assertEquals(DescriptorTable.CANCELLED, DescriptorTable.state(prev));
            assertEquals(0, t.tryReleaseWaitable(idx, gen), "released once");
            t.pushReleased(idx);
            int idx2 = t.acquire();
            int gen2 = t.publish(idx2, false);
            assertEquals(0, t.tryCancel(idx2, gen2, true), "cancel() never cancels a detached task");
            assertTrue(t.tryStart(idx2, gen2, 1));
            assertEquals(0, t.tryCancel(idx2, gen2, false), "running: too late");
        }
    }

    @Test
    void waitableSlotsStayTerminalUntilReleased() {
        try (PoolMemory m = PoolMemory.create()) {
            DescriptorTable t = new DescriptorTable(m, 2);
            int idx = t.acquire();
            int gen = t.publish(idx, true);
            assertTrue(t.tryStart(idx, gen, 0));
            assertFalse(t.finish(idx, true), "waitable: not released by the worker");
            assertEquals(DescriptorTable.FAILED, DescriptorTable.state(t.ctlAcquire(idx)));
            assertEquals(1, t.countFree());
            assertTrue(t.tryReleaseWaitable(idx, gen) != 0);
            t.pushReleased(idx);
            assertEquals(2, t.countFree());
        }
    }
}
