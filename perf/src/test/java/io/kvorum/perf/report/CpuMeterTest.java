package io.kvorum.perf.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CpuMeterTest {

    @TempDir
    Path dir;

    @Test
    void countsTheCpuTimeTheMeasuredProcessSpends() {
        CpuMeter meter = CpuMeter.start(Map.of("self", ProcessHandle.current()));
        long spun = spin(300_000_000L);

        CpuUse use = meter.stop();

        assertThat(spun).isGreaterThanOrEqualTo(300_000_000L);
        assertThat(use.serverSeconds()).isGreaterThanOrEqualTo(spun / 1e9 * 0.9);
        assertThat(use.windowSeconds()).isPositive();
        assertThat(use.serverSeconds()).isLessThanOrEqualTo(use.windowSeconds() * Runtime.getRuntime().availableProcessors() + 0.1);
        assertThat(use.byServer()).containsOnlyKeys("self").containsEntry("self", use.serverSeconds());
    }

    /**
     * Spins until this thread has used {@code cpuNanos} of CPU, or 20 s have passed on a starved
     * machine; returns the CPU time it used.
     */
    static long spin(long cpuNanos) {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long start = threads.getCurrentThreadCpuTime();
        long deadline = System.nanoTime() + 20_000_000_000L;
        long sink = 0;
        while (threads.getCurrentThreadCpuTime() - start < cpuNanos && System.nanoTime() < deadline) {
            sink += Long.numberOfTrailingZeros(sink + System.nanoTime());
        }
        return sink < 0 ? 0 : threads.getCurrentThreadCpuTime() - start; // uses the sink, so the loop stays
    }

    @Test
    void theMachinesBusyTimeIsItsBusyShareOfEveryCoreOverTheWindow() throws Exception {
        Path stat = dir.resolve("stat");
        // user nice system idle iowait irq softirq steal guest guest_nice
        Files.writeString(stat, "cpu  1000 0 500 8000 500 0 0 0 0 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n");
        CpuMeter meter = CpuMeter.start(Map.of(), stat);
        // 400 more ticks, 100 of them busy (user 60, system 30, softirq 10), 300 idle or waiting.
        Files.writeString(stat, "cpu  1060 0 530 8250 550 0 10 0 0 0\n");

        CpuUse use = meter.stop();

        int cores = Runtime.getRuntime().availableProcessors();
        assertThat(use.machineSeconds()).isCloseTo(0.25 * cores * use.windowSeconds(), within(1e-9));
        assertThat(use.serverSeconds()).isZero();
    }

    @Test
    void aMachineWithoutProcStatHasAnUnknownBusyTime() {
        CpuUse use = CpuMeter.start(Map.of(), dir.resolve("absent")).stop();

        assertThat(use.machineSeconds()).isNaN();
        assertThat(use.summary("the node", 1000)).contains("unknown");
    }

    @Test
    void perRequestFiguresAndTheReportsSentence() {
        CpuUse use = new CpuUse(3.0, 4.0, 2.0, Map.of("n1", 3.0), null);

        assertThat(use.serverMicrosPerRequest(100_000)).isEqualTo(30.0);
        assertThat(use.machineMicrosPerRequest(100_000)).isEqualTo(40.0);
        assertThat(use.serverMicrosPerRequest(0)).isNaN();
        assertThat(use.summary("the nodes", 100_000))
                .isEqualTo("the nodes used 1.50 cores, **30.0 µs of CPU per request**; the whole machine (load tool "
                        + "included) 40.0 µs per request");
    }

    @Test
    void aClustersSentenceSaysHowManyCoresEachNodeUsed() {
        Map<String, Double> byNode = new LinkedHashMap<>();
        byNode.put("n1", 16.5);
        byNode.put("n2", 9.0);
        byNode.put("n3", 4.5);
        CpuUse use = new CpuUse(30.0, 36.0, 30.0, byNode, null);

        assertThat(use.summary("the nodes", 300_000))
                .startsWith("the nodes used 1.00 cores (n1 0.55, n2 0.30, n3 0.15), **100.0 µs of CPU per request**");
    }

    @Test
    void onlyTheAggregateLineOfProcStatIsRead() {
        assertThat(CpuMeter.MachineTicks.parse("cpu0 1 2 3 4 5")).isNull();
        assertThat(CpuMeter.MachineTicks.parse("cpu  10 20 30 40 50 60 70 80 90 100"))
                .isEqualTo(new CpuMeter.MachineTicks(10 + 20 + 30 + 60 + 70 + 80, 360));
    }
}
