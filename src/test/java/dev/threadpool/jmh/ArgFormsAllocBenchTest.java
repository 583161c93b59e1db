package dev.threadpool.jmh;

import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.openjdk.jmh.annotations.Param;

/**
 * {@link ArgFormsAllocBench} works on every (pool, form) of its parameters: setup, a few invocations, the
 * iteration's check (every task ran once with its own argument), teardown. Nothing is timed or measured here;
 * the allocation itself is {@code ZeroAllocationTest}'s and the benchmark's.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ArgFormsAllocBenchTest {
    static List<String[]> cases() throws NoSuchFieldException {
        List<String[]> out = new ArrayList<>();
        for (String pool : values("pool")) {
            for (String form : values("form")) {
                out.add(new String[] {pool, form});
            }
        }
        return out;
    }

    private static String[] values(String field) throws NoSuchFieldException {
        return ArgFormsAllocBench.class.getField(field).getAnnotation(Param.class).value();
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("cases")
    void everyFormRunsEveryTaskOnceWithItsArgument(String pool, String form) throws Exception {
        ArgFormsAllocBench b = new ArgFormsAllocBench();
        b.pool = pool;
        b.form = form;
        b.setUp();
        try {
            for (int i = 0; i < 3; i++) {
                b.argForm();
            }
            b.check();
        } finally {
            b.tearDown();
        }
    }

    @Test
    void anUnknownFormOrPoolIsRefusedByName() {
        ArgFormsAllocBench b = new ArgFormsAllocBench();
        b.pool = "GLOBAL_QUEUE";
        b.form = "worker_submitter_submit";
        assertThrows(IllegalArgumentException.class, b::setUp);
        b.form = "nope";
        assertThrows(IllegalArgumentException.class, b::setUp);
        b.form = "submit";
        b.pool = "NOPE";
        assertThrows(IllegalArgumentException.class, b::setUp);
    }
}
