package dev.threadpool.jcstress;

import dev.threadpool.internal.memory.PoolMemory;
import dev.threadpool.internal.queue.LifoSlot;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.Expect;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.JJJ_Result;
import org.openjdk.jcstress.infra.results.JJ_Result;

/**
 * Races on one {@link LifoSlot}: the owner's put against a (future) thief's take. Every value stored is
 * returned by exactly one exchange. Outcomes print {@code -1} for EMPTY.
 */
public final class LifoSlotTest {
    private LifoSlotTest() {}

    static LifoSlot slot() {
        return new LifoSlot(PoolMemory.createGcManaged(), "jcstress lifo slot", 1);
    }

    @JCStressTest
    @Description("The slot holds 3. The owner puts 7 (displacing what is there) while a thief takes; the"
            + " arbiter takes what is left. r1 = put's displaced entry, r2 = thief's take, r3 = left over:"
            + " 3 and 7 each appear exactly once.")
    @Outcome(id = "3, 7, -1", expect = Expect.ACCEPTABLE,
            desc = "put's exchange first (returns 3 to the owner); the take's exchange then returns 7")
    @Outcome(id = "-1, 3, 7", expect = Expect.ACCEPTABLE,
            desc = "take's exchange first (returns 3, leaves EMPTY); put then displaces EMPTY; 7 stays")
    @Outcome(expect = Expect.FORBIDDEN, desc = "an entry lost (the take saw EMPTY while 3 or 7 was there) or"
            + " returned twice")
    @State
    public static class PutVsTake {
        final LifoSlot s = slot();

        { s.put(0, 3); }

        @Actor public void owner(JJJ_Result r) { r.r1 = s.put(0, 7); }
        @Actor public void thief(JJJ_Result r) { r.r2 = s.take(0); }
        @Arbiter public void rest(JJJ_Result r) { r.r3 = s.take(0); }
    }

    @JCStressTest
    @Description("The slot is empty. The owner puts 7 while a thief takes: the thief gets 7 or EMPTY, and"
            + " if EMPTY the 7 is still in the slot (the empty fast path may miss it, never lose it).")
    @Outcome(id = "-1, 7, -1", expect = Expect.ACCEPTABLE, desc = "put first; take's exchange returns 7")
    @Outcome(id = "-1, -1, 7", expect = Expect.ACCEPTABLE,
            desc = "take's opaque read saw EMPTY before the put: empty; 7 stays for the next take")
    @Outcome(expect = Expect.FORBIDDEN, desc = "7 lost or returned twice, or put displaced a phantom")
    @State
    public static class PutIntoEmptyVsTake {
        final LifoSlot s = slot();

        @Actor public void owner(JJJ_Result r) { r.r1 = s.put(0, 7); }
        @Actor public void thief(JJJ_Result r) { r.r2 = s.take(0); }
        @Arbiter public void rest(JJJ_Result r) { r.r3 = s.take(0); }
    }

    @JCStressTest
    @Description("Two takes race for the entry 5: exactly one exchange returns it.")
    @Outcome(id = {"5, -1", "-1, 5"}, expect = Expect.ACCEPTABLE,
            desc = "one exchange returned 5; the other saw EMPTY (fast path) or exchanged EMPTY for EMPTY")
    @Outcome(expect = Expect.FORBIDDEN, desc = "5 taken twice or not at all")
    @State
    public static class TwoTakes {
        final LifoSlot s = slot();

        { s.put(0, 5); }

        @Actor public void taker1(JJ_Result r) { r.r1 = s.take(0); }
        @Actor public void taker2(JJ_Result r) { r.r2 = s.take(0); }
    }
}
