package io.kvorum.perf.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class GcSummaryTest {

    /** A real -Xlog:gc* log of n1 from a 3-node perf run (G1, 1 GiB heap). */
    @Test
    void g1PausesFromARealLog() throws IOException {
        String log;
        try (InputStream in = GcSummaryTest.class.getResourceAsStream("/gc/g1-3-nodes-n1.log")) {
            log = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        long expectedPauses = log.lines().filter(l -> l.matches(".*\\[gc\\s*] GC\\(\\d+\\) Pause .*ms$")).count();

        GcSummary gc = GcSummary.parse(log);

        assertThat(gc.collector()).isEqualTo("G1");
        assertThat(gc.pauseCount()).isEqualTo(expectedPauses).isGreaterThanOrEqualTo(7);
        assertThat(gc.maxMs()).isEqualTo(213.997);
        assertThat(gc.longPauses()).contains("GC(5) Pause Remark 10M->10M(1024M) 213.997ms")
                .noneMatch(p -> p.contains("Pause Cleanup"));
        assertThat(gc.p99Ms()).isCloseTo(213.997, within(0.5));
    }

    @Test
    void zgcPausesAreTaggedAsPhases() {
        String log = """
                [0.010s][info][gc,init] Using The Z Garbage Collector
                [1.200s][info][gc,phases   ] GC(0) Pause Mark Start 0.015ms
                [1.300s][info][gc,phases   ] GC(0) Concurrent Mark 95.120ms
                [1.310s][info][gc,phases   ] GC(0) Pause Mark End 12.500ms
                [1.400s][info][gc          ] GC(0) Garbage Collection (Warmup) 200M(10%)->50M(3%)
                """;

        GcSummary gc = GcSummary.parse(log);

        assertThat(gc.collector()).isEqualTo("The Z Garbage Collector");
        assertThat(gc.pauseCount()).isEqualTo(2);
        assertThat(gc.totalMs()).isCloseTo(12.515, within(1e-9));
        assertThat(gc.longPauses()).containsExactly("GC(0) Pause Mark End 12.500ms");
    }

    @Test
    void noPausesNoNumbers() {
        GcSummary gc = GcSummary.parse("[0.01s][info][gc] Using Serial\n");

        assertThat(gc.pauseCount()).isZero();
        assertThat(gc.maxMs()).isZero();
        assertThat(gc.p99Ms()).isZero();
    }
}
