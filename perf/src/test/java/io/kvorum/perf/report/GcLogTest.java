package io.kvorum.perf.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.io.IOException;
import java.io.InputStream;
import java.time.Instant;
import java.time.OffsetDateTime;
import org.junit.jupiter.api.Test;

/** Pauses of the measured run only, from logs with the time decoration ({@code -Xlog:gc*:file=..:time,uptime,level,tags}). */
class GcLogTest {

    private static String resource(String name) throws IOException {
        try (InputStream in = GcLogTest.class.getResourceAsStream(name)) {
            return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        }
    }

    private static Instant at(String time) {
        return OffsetDateTime.parse(time).toInstant();
    }

    /**
     * The real G1 log of a 3-node run with the time decoration added (JVM start 10:15:00.000+01:00):
     * GC(2) ends 3 ms before the window, GC(3) and GC(4) are inside, GC(5)'s Remark starts 4 ms after it.
     */
    @Test
    void g1KeepsOnlyThePausesOfTheMeasuredRun() throws IOException {
        GcLog log = GcLog.parse(resource("/gc/g1-timed-n1.log"));
        GcLog.Window window = new GcLog.Window(at("2026-11-22T10:15:27.430+01:00"), at("2026-11-22T10:16:08.190+01:00"));

        GcSummary measured = log.during(window);

        assertThat(log.timed()).isTrue();
        assertThat(measured.collector()).isEqualTo("G1");
        assertThat(measured.pauseCount()).isEqualTo(2);
        assertThat(measured.totalMs()).isCloseTo(2.622 + 179.777, within(1e-9));
        assertThat(measured.maxMs()).isEqualTo(179.777);
        assertThat(measured.p99Ms()).isCloseTo(179.777, within(0.5));
        assertThat(measured.longPauses()).containsExactly(
                "at +40.289 s: GC(4) Pause Young (Concurrent Start) (Metadata GC Threshold) 566M->8M(1024M) 179.777ms");
        // The whole log is what it was without the decoration.
        assertThat(log.whole()).isEqualTo(GcSummary.parse(resource("/gc/g1-3-nodes-n1.log")));
        assertThat(log.whole().maxMs()).isEqualTo(213.997);
    }

    /** A pause that started before the window's end and ended after it stopped the measured run: it counts. */
    @Test
    void aPauseOverlappingTheWindowsEdgeCounts() throws IOException {
        GcLog log = GcLog.parse(resource("/gc/g1-timed-n1.log"));

        // GC(5) Remark ran from 10:16:08.194 to .408; the window ends at .200.
        GcSummary end = log.during(new GcLog.Window(at("2026-11-22T10:15:27.430+01:00"), at("2026-11-22T10:16:08.200+01:00")));
        // GC(2) ran from 10:15:27.410 to .427; the window starts at .420.
        GcSummary start = log.during(new GcLog.Window(at("2026-11-22T10:15:27.420+01:00"), at("2026-11-22T10:16:08.190+01:00")));

        assertThat(end.pauseCount()).isEqualTo(3);
        assertThat(end.maxMs()).isEqualTo(213.997);
        assertThat(start.pauseCount()).isEqualTo(3);
        assertThat(start.longPauses()).first().asString().startsWith("at +0.007 s: GC(2) Pause Young");
    }

    /**
     * ZGC (JDK 17) logs its pauses as gc,phases: GC(0) at start-up (Mark End 14.8 ms) is before the
     * window, GC(1) inside, GC(2) (Relocate Start 12.5 ms) begins 11 ms after it.
     */
    @Test
    void zgcKeepsOnlyThePausesOfTheMeasuredRun() throws IOException {
        GcLog log = GcLog.parse(resource("/gc/zgc-timed-n2.log"));
        GcLog.Window window = new GcLog.Window(at("2026-11-22T09:20:10.000Z"), at("2026-11-22T09:21:10.000Z"));

        GcSummary measured = log.during(window);

        assertThat(measured.collector()).isEqualTo("The Z Garbage Collector");
        assertThat(measured.pauseCount()).isEqualTo(3);
        assertThat(measured.totalMs()).isCloseTo(0.018 + 11.250 + 0.024, within(1e-9));
        assertThat(measured.maxMs()).isEqualTo(11.25);
        assertThat(measured.longPauses()).containsExactly("at +30.091 s: GC(1) Pause Mark End 11.250ms");
        assertThat(log.whole().pauseCount()).isEqualTo(9);
        assertThat(log.whole().longPauses()).containsExactly("GC(0) Pause Mark End 14.805ms", "GC(1) Pause Mark End 11.250ms",
                "GC(2) Pause Relocate Start 12.500ms");
    }

    @Test
    void aLogWithoutTheTimeDecorationHasNoWindowSummary() throws IOException {
        GcLog log = GcLog.parse(resource("/gc/g1-3-nodes-n1.log"));

        assertThat(log.timed()).isFalse();
        assertThat(log.during(new GcLog.Window(Instant.EPOCH, Instant.now()))).isNull();
        assertThat(log.whole().pauseCount()).isEqualTo(7);
    }

    @Test
    void timeDecorationOffsetsAsHotSpotPrintsThem() {
        assertThat(GcLog.time("[2026-11-22T10:15:04.424+0100][4.424s][info][gc] GC(0) Pause Young 1ms"))
                .isEqualTo(Instant.parse("2026-11-22T09:15:04.424Z"));
        assertThat(GcLog.time("[2026-11-22T04:15:04.424-0500][info][gc] x")).isEqualTo(Instant.parse("2026-11-22T09:15:04.424Z"));
        assertThat(GcLog.time("[4.424s][info][gc] GC(0) Pause Young 1ms")).isNull();
    }

    @Test
    void nodeGcTakesTheHeapFromTheLastXmx() {
        String cmd = "/usr/lib/jvm/bin/java -Xms1g -Xmx1g -XX:+AlwaysPreTouch -Xlog:gc*:file=/r/gc-n3.log:time,uptime,level,tags "
                + "-Xmx2g -jar kvorum-node.jar --node-id n3";
        String log = "[2026-11-22T10:15:00.015+0100][0.015s][info][gc] Using Serial\n";

        NodeGc gc = NodeGc.of("n3", cmd, log, null);

        assertThat(gc.heap()).isEqualTo("2g");
        assertThat(gc.collector()).isEqualTo("Serial");
        assertThat(gc.measured()).isNull();
        assertThat(NodeGc.heap("java -jar x.jar")).isEqualTo("?");
    }
}
