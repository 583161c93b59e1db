package dev.threadpool;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.threadpool.examples.AccountingAudit;
import dev.threadpool.examples.BlockingIoLane;
import dev.threadpool.examples.GameLoop;
import dev.threadpool.examples.OrderBookFanout;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * Runs every example in docs/examples with small parameters: each checks its own results and throws if one
 * is wrong, so a passing run means the example works, not just that it compiles.
 */
@Isolated // captures System.out
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ExamplesTest {
    interface Main {
        void run(String[] args) throws Exception;
    }

    private static String capture(Main main, String... args) throws Exception {
        PrintStream old = System.out;
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        System.setOut(new PrintStream(buf, true, StandardCharsets.UTF_8));
        try {
            main.run(args);
        } finally {
            System.setOut(old);
        }
        String out = buf.toString(StandardCharsets.UTF_8);
        old.print(out);
        return out;
    }

    @Test
    void gameLoop() throws Exception {
        String out = capture(GameLoop::main, "30", "16", "5000", "20");
        assertTrue(out.contains("frame time (us)") && out.contains("ForkJoinPool")
                && out.contains("matches the serial run on both sides: OK"), out);
    }

    @Test
    void orderBookFanout() throws Exception {
        String out = capture(OrderBookFanout::main, "300", "256", "20");
        assertTrue(out.contains("batch latency (us)") && out.contains("ForkJoinPool")
                && out.contains("thread-pool (fn, ctx, arg)") && out.contains("thread-pool (lambda)")
                && out.contains("books equal the serial replay on every side: OK"), out);
    }

    @Test
    void orderBookFanoutInOneForm() throws Exception {
        String out = capture(OrderBookFanout::main, "100", "128", "10", "args");
        assertTrue(out.contains("thread-pool (fn, ctx, arg)") && !out.contains("thread-pool (lambda)")
                && out.contains("books equal the serial replay on every side: OK"), out);
        IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> OrderBookFanout.main(new String[] {"100", "128", "10", "runnable"}));
        assertTrue(e.getMessage().contains("form must be one of args, lambda, both"), e.getMessage());
    }

    @Test
    void blockingIoLane() throws Exception {
        String out = capture(BlockingIoLane::main, "20", "500");
        assertTrue(out.contains("BlockingIoLane on "), out);
    }

    @Test
    void accountingAudit() throws Exception {
        String out = capture(AccountingAudit::main, "5000");
        assertTrue(out.contains("all checks passed"), out);
    }
}
