package io.kvorum.perf.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.OffsetDateTime;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The report's GC section: every node during the measured run first, the whole run below. */
class RunReportGcTest {

    private static final String CMD = "/usr/bin/java -Xms1g -Xmx1g -XX:+AlwaysPreTouch -Xlog:gc*:file=/r/gc-n1.log:time,uptime,level,tags -jar n.jar";

    private static String resource(String name) throws IOException {
        try (InputStream in = RunReportGcTest.class.getResourceAsStream(name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    private static RunReport report(List<NodeGc> gc, GcLog.Window window) {
        return new RunReport(null, null, null, null, List.of(), null, null, null, null, null, null, null, null, null, null, gc, window,
                null, List.of(), java.util.Map.of(), null);
    }

    @Test
    void oneRowPerNodeForTheMeasuredRunThenTheWholeRun() throws IOException {
        GcLog.Window window = new GcLog.Window(OffsetDateTime.parse("2026-11-22T10:15:27.430+01:00").toInstant(),
                OffsetDateTime.parse("2026-11-22T10:16:08.190+01:00").toInstant());
        List<NodeGc> gc = List.of(
                NodeGc.of("n1", CMD, resource("/gc/g1-timed-n1.log"), window),
                NodeGc.of("n2", CMD.replace("1g", "2g"), resource("/gc/zgc-timed-n2.log"), window));

        String md = report(gc, window).gcSection();

        assertThat(md).contains("## GC during the measured run", "(40.8 s, wall clock")
                .contains("| node | collector | heap (-Xmx) | pauses | total | max | p99 | over 10.0 ms |")
                .contains("| n1 | G1 | 1g | 2 | 182 ms | 180 ms | 180 ms | 1 |")
                .contains("| n2 | The Z Garbage Collector | 2g | 0 | 0.000 ms | 0.000 ms | 0.000 ms | none |")
                .contains("- n1: `at +40.289 s: GC(4) Pause Young (Concurrent Start) (Metadata GC Threshold) 566M->8M(1024M) 179.777ms`")
                .contains("| n1 | 7 | 483 ms | 214 ms | 5 |")
                .contains("| n2 | 9 | 38.7 ms | 14.8 ms | 3 |")
                .doesNotContain("GC(0) Pause Young", "Pause Remark", "window unknown");
        assertThat(md.indexOf("| n1 | G1 |")).isLessThan(md.indexOf("Whole run"));
    }

    @Test
    void oldLogsWithoutTheTimeDecorationSayTheWindowIsUnknown() throws IOException {
        GcLog.Window window = new GcLog.Window(OffsetDateTime.parse("2026-11-22T10:15:27.430+01:00").toInstant(),
                OffsetDateTime.parse("2026-11-22T10:16:08.190+01:00").toInstant());
        List<NodeGc> gc = List.of(NodeGc.of("n1", CMD, resource("/gc/g1-3-nodes-n1.log"), window));

        String md = report(gc, window).gcSection();

        assertThat(md).contains("Measured window unknown: the GC logs have no `time` decoration")
                .contains("| n1 | G1 | 1g | ? | ? | ? | ? | ? |")
                .contains("| n1 | 7 | 483 ms | 214 ms | 5 |")
                .contains("- n1: `GC(5) Pause Remark 10M->10M(1024M) 213.997ms`");
        assertThat(RunResult.of("x", RunResult.FIXED_RATE, "get", 1, 1, new io.kvorum.perf.load.WrkOutput(
                0, 0, 0, "0", io.kvorum.perf.load.WrkOutput.SocketErrors.NONE, 0, java.util.Map.of(), java.util.Map.of(), List.of(), 0),
                gc, window, null, null)
                .gcMeasured()).isNull();
    }

    @Test
    void noGcLogForAUrlTarget() {
        assertThat(report(null, null).gcSection()).contains("No GC log (the target was not started by this run).");
    }
}
