package dev.threadpool.internal.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.QueueEntry;
import dev.threadpool.internal.queue.WorkDeque;
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
            long gen1 = t.publish(idx, false);
            assertTrue(t.tryStart(idx, gen1, 0), "queued -> running");
            assertFalse(t.tryStart(idx, gen1, 0), "exactly once");
            t.finish(idx, false); // detached: released at once
            assertEquals(DescriptorTable.FREE, DescriptorTable.state(t.ctlAcquire(idx)));
            assertEquals(DescriptorTable.COMPLETED, DescriptorTable.outcome(t.ctlAcquire(idx)));
            int again = t.acquire();
            assertEquals(idx, again, "LIFO freelist");
            long gen2 = t.publish(again, false);
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
            long gen = t.publish(idx, true);
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
            long gen2 = t.publish(idx2, false);
            assertEquals(0, t.tryCancel(idx2, gen2, true), "cancel() never cancels a detached task");
            assertTrue(t.tryStart(idx2, gen2, 1));
            assertEquals(0, t.tryCancel(idx2, gen2, false), "running: too late");
        }
    }

    @Test
    void waitableSlotsStayTerminalUntilReleasedAndFinishIsForDetachedSlotsOnly() {
        try (PoolMemory m = PoolMemory.create()) {
            DescriptorTable t = new DescriptorTable(m, 2);
            int idx = t.acquire();
            long gen = t.publish(idx, true);
            assertTrue(t.tryStart(idx, gen, 0));
            assertThrows(IllegalStateException.class, () -> t.finish(idx, true), "a waitable is not freed by its worker");
            RuntimeException boom = new RuntimeException("boom");
            t.finishWaitable(idx, boom);
            assertEquals(DescriptorTable.FAILED, DescriptorTable.state(t.ctlAcquire(idx)));
            assertEquals(1, t.countFree());
            assertTrue(t.tryReleaseWaitable(idx, gen) != 0);
            assertSame(boom, t.failure(idx), "the winner reads the failure of the slot it now owns");
            t.pushReleased(idx);
            assertEquals(2, t.countFree());
        }
    }

    @Test
    void aReleasedSlotKeepsItsFailureForItsOwnGenerationOnlyUntilTheNextAcquireClearsIt() {
        try (PoolMemory m = PoolMemory.create()) {
            DescriptorTable t = new DescriptorTable(m, 2);
            int idx = t.acquire();
            long gen = t.publish(idx, true);
            t.tryStart(idx, gen, 0);
            RuntimeException boom = new RuntimeException("boom");
            t.finishWaitable(idx, boom);
            t.tryReleaseWaitable(idx, gen);
            t.pushReleased(idx);
            assertSame(boom, t.failureOf(idx, gen), "a late await of the same generation still gets the cause");
            assertNull(t.failureOf(idx, gen - 1), "not an older handle");
            assertEquals(idx, t.acquire(), "reused");
            assertNull(t.failureOf(idx, gen), "the slot moved on: the old handle gets nothing");
            assertNull(t.failure(idx), "and the new owner cleared the old failure");
        }
    }

    @Test
    void handlesPackGenAboveLog2CapacityIndexBitsAndAreNeverNegativeOrASentinel() {
        try (PoolMemory m = PoolMemory.create()) {
            int[] caps = {2, 3, 16, 128, 256, 1 << 12};
            for (int cap : caps) {
                DescriptorTable t = new DescriptorTable(m, cap);
                int bits = Math.max(1, 32 - Integer.numberOfLeadingZeros(cap - 1));
                assertEquals(bits, t.idxBits(), "idxBits of " + cap);
                assertEquals((1L << Math.min(56, 63 - bits)) - 1, t.maxGen(), "maxGen of " + cap);
                for (long gen : new long[] {1, 2, 0xFFFF_FFFFL, 1L << 32, t.maxGen()}) {
                    for (int idx : new int[] {0, 1, cap - 1}) {
                        long h = t.handle(idx, gen);
                        assertTrue(h > 0, "positive: cap " + cap + " gen " + gen + " idx " + idx);
                        assertNotEquals(QueueEntry.EMPTY, h);
                        assertNotEquals(WorkDeque.ABORT, h);
                        assertEquals(idx, t.slotOf(h));
                        assertEquals(gen, t.genOf(h));
                        assertTrue(t.isValidHandle(h));
                    }
                }
                assertFalse(t.isValidHandle(-1L), "EMPTY");
                assertFalse(t.isValidHandle(t.handle(0, 0)), "gen 0 is never issued");
                assertFalse(t.isValidHandle(t.handle(0, t.maxGen() + 1)), "past maxGen (a retired slot's gen)");
                if (cap != 1 << bits) {
                    assertFalse(t.isValidHandle(t.handle(cap, 1)), "slot past capacity");
                }
            }
        }
    }

    @Test
    void generationsDoNotWrapAt32Bits() {
        try (PoolMemory m = PoolMemory.create()) {
            DescriptorTable t = new DescriptorTable(m, 2);
            int idx = t.acquire();
            long gen1 = t.publish(idx, true);
            t.tryCancel(idx, gen1, true);
            t.tryReleaseWaitable(idx, gen1);
            t.pushReleased(idx);
            t.setGenerationForTest(idx, gen1 + (1L << 32) - 1); // reused 2^32 - 1 more times
            assertEquals(idx, t.acquire());
            long gen2 = t.publish(idx, true);
            assertEquals(gen1 + (1L << 32), gen2, "the 2^32-th reuse");
            assertNotEquals(t.handle(idx, gen1), t.handle(idx, gen2), "a different handle");
            assertEquals(0, t.tryCancel(idx, gen1, true), "the old handle does not reach the new task");
            assertFalse(t.tryStart(idx, gen1, 0), "nor does an old entry");
            assertTrue(t.tryStart(idx, gen2, 0));
        }
    }

    @Test
    void aSlotWhoseGenerationsAreUsedUpIsRetiredNotHandedOutAgain() {
        try (PoolMemory m = PoolMemory.create()) {
            DescriptorTable t = new DescriptorTable(m, 4);
            int idx = t.acquire(); // slot 0, gen 1
            t.unreserve(idx);
            t.setGenerationForTest(idx, t.maxGen() - 1);
            assertEquals(idx, t.acquire(), "the last but one generation is handed out");
            long last = t.publish(idx, true);
            assertEquals(t.maxGen(), last, "then the last one: handle " + Long.toHexString(t.handle(idx, last)));
            assertTrue(t.handle(idx, last) > 0, "the largest handle is still positive");
            assertTrue(t.tryStart(idx, last, 0));
            t.finishWaitable(idx, new RuntimeException("last"));
            t.tryReleaseWaitable(idx, last);
            t.pushReleased(idx);
            assertEquals(4, t.countFree());

            int next = t.acquire();
            assertNotEquals(idx, next, "the used-up slot was retired and the next one handed out");
            long c = t.ctlAcquire(idx);
            assertEquals(DescriptorTable.RETIRED, DescriptorTable.state(c));
            assertEquals(t.maxGen() + 1, DescriptorTable.gen(c), "a generation no handle carries");
            assertNull(t.failureOf(idx, last), "its last handle is stale now");
            assertNull(t.failure(idx), "and its failure dropped");
            assertEquals(1, t.countRetired());
            assertEquals(2, t.countFree(), "4 slots: 1 retired, 1 held, 2 free");
            t.unreserve(next);
            Set<Integer> got = new HashSet<>();
            for (int i; (i = t.acquire()) >= 0; ) {
                assertTrue(got.add(i), "handed out twice: " + i);
            }
            assertEquals(Set.of(1, 2, 3), got, "the retired slot never comes back");
        }
    }

    @Test
    void reserveRetiresAUsedUpSlotOfACacheAndReportsIt() {
        try (PoolMemory m = PoolMemory.create()) {
            DescriptorTable t = new DescriptorTable(m, 2);
            t.setGenerationForTest(0, t.maxGen());
            assertFalse(t.reserve(0), "used up: retired");
            assertEquals(DescriptorTable.RETIRED, DescriptorTable.state(t.ctlAcquire(0)));
            assertThrows(IllegalStateException.class, () -> t.reserve(0), "and never reserved again");
            assertTrue(t.reserve(1));
            assertEquals(DescriptorTable.RESERVED, DescriptorTable.state(t.ctlAcquire(1)));
        }
    }

    @Test
    void aDescCachePopSkipsARetiredSlot() {
        try (PoolMemory m = PoolMemory.create()) {
            DescriptorTable t = new DescriptorTable(m, 4);
            DescCache cache = new DescCache(m, "test cache", t);
            t.setGenerationForTest(0, t.maxGen()); // slot 0 is on top of the freelist, so popped first
            int got = cache.pop();
            assertEquals(1, got, "slot 0 retired on the way, slot 1 handed out");
            assertEquals(DescriptorTable.RETIRED, DescriptorTable.state(t.ctlAcquire(0)));
            assertEquals(DescriptorTable.RESERVED, DescriptorTable.state(t.ctlAcquire(1)));
            t.freeReserved(got);
            cache.push(got);
            cache.drainAll();
            assertEquals(3, t.countFree());
            assertEquals(1, t.countRetired());
        }
    }

    @Test
    void setGenerationForTestRefusesWhatNoSlotCanHave() {
        try (PoolMemory m = PoolMemory.create()) {
            DescriptorTable t = new DescriptorTable(m, 2);
            assertThrows(IllegalArgumentException.class, () -> t.setGenerationForTest(0, t.maxGen() + 1));
            t.acquire();
            assertThrows(IllegalStateException.class, () -> t.setGenerationForTest(0, 5), "only a FREE slot");
        }
    }
}
