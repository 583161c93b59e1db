package dev.threadpool.internal.queue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.internal.memory.PoolMemory;
import org.junit.jupiter.api.Test;

/**
 * What {@code ChaseLevLocalQueues} relies on when a {@link WorkDeque} cannot grow: {@code push} throws before it
 * changes anything, so the deque is exactly as it was (size, capacity, contents, both ends) and the value is still
 * the caller's; a later push grows once allocation works again. Growth failures come from
 * {@link PoolMemory#failAllocationsForTest}, as a failing native allocation would.
 */
class WorkDequeGrowthFailureTest {
    private static final long EMPTY = QueueEntry.EMPTY;

    @Test
    void aFailedGrowthLeavesTheDequeUnchangedAndALaterPushGrows() {
        try (PoolMemory mem = PoolMemory.create(); WorkDeque q = new WorkDeque(mem, "test", 2)) {
            q.push(1);
            q.push(2); // full at capacity 2
            long liveBefore = mem.liveBytes();
            mem.failAllocationsForTest(purpose -> purpose.equals("test array 1"));
            OutOfMemoryError e = assertThrows(OutOfMemoryError.class, () -> q.push(3));
            assertTrue(e.getMessage().contains("test array 1"), e.getMessage());
            assertEquals(2, q.size(), "nothing was pushed");
            assertEquals(2, q.capacity(), "no new array was published");
            assertEquals(liveBefore, mem.liveBytes(), "nothing was allocated");
            assertThrows(OutOfMemoryError.class, () -> q.push(3), "a second try fails the same way");

            mem.failAllocationsForTest(null);
            q.push(3); // grows now
            assertEquals(4, q.capacity());
            assertEquals(1, q.steal(), "the oldest is still at the top");
            assertEquals(3, q.take());
            assertEquals(2, q.take());
            assertEquals(EMPTY, q.take());
            assertEquals(EMPTY, q.steal());
        }
    }

    @Test
    void theDequeStaysUsableAtTheEdgeItCouldNotPass() {
        try (PoolMemory mem = PoolMemory.create()) {
            WorkDeque q = new WorkDeque(mem, "edge", 2);
            mem.failAllocationsForTest(purpose -> purpose.startsWith("edge array "));
            for (int round = 0; round < 3; round++) {
                q.push(10);
                q.push(20);
                assertThrows(OutOfMemoryError.class, () -> q.push(30));
                assertEquals(20, q.take(), "round " + round);
                q.push(40); // room again: no growth needed
                assertEquals(10, q.steal(), "round " + round);
                assertEquals(40, q.take(), "round " + round);
                assertEquals(EMPTY, q.take(), "round " + round);
            }
            q.close();
            assertEquals(0, mem.liveBytes(), "the failed growths allocated nothing; close gave every byte back");
        }
    }
}
