package io.kvorum.perf;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.perf.profile.AsyncProfiler;
import io.kvorum.perf.report.CpuUse;
import io.kvorum.perf.report.FrameDiff;
import io.kvorum.perf.report.RunResult;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CompareCommandTest {

    @TempDir
    Path dir;

    private static RunResult result(String label, String cpuCollapsed) {
        return new RunResult(label, RunResult.FIXED_RATE, "get", 1, 5000, 5000, 10, 50_000, 0, Map.of(200, 50_000L), 0,
                Map.of("p50", 1.0, "p99", 2.0), 3.0, List.of(), Double.NaN, cpuCollapsed, null, null);
    }

    @Test
    void gzippedStacksReadBackAsWritten() throws Exception {
        Path plain = Files.writeString(dir.resolve("cpu.collapsed"), "Thread.run;Netty.read 30\nThread.run;LevelDb.get 10\n");
        Path gz = dir.resolve(AsyncProfiler.CPU_COLLAPSED);

        AsyncProfiler.gzip(plain, gz);

        assertThat(Files.readAllBytes(gz)).startsWith(0x1f, 0x8b).isNotEqualTo(Files.readAllBytes(plain));
        assertThat(FrameDiff.selfShares(gz)).isEqualTo(FrameDiff.selfShares(plain))
                .containsEntry("Netty.read", 0.75).containsEntry("LevelDb.get", 0.25);
    }

    @Test
    void comparesANewGzippedRunWithAnOlderPlainOne() throws Exception {
        Path old = Files.createDirectories(dir.resolve("old"));
        Files.writeString(old.resolve("cpu.collapsed"), "Thread.run;Netty.read 50\nThread.run;LevelDb.get 50\n", StandardCharsets.UTF_8);
        Path current = Files.createDirectories(dir.resolve("new"));
        Path plain = Files.writeString(dir.resolve("stacks"), "Thread.run;Netty.read 90\nThread.run;LevelDb.get 10\n");
        AsyncProfiler.gzip(plain, current.resolve(AsyncProfiler.CPU_COLLAPSED));

        String md = CompareCommand.markdown(List.of(old, current),
                List.of(result("old", "cpu.collapsed"), result("new", AsyncProfiler.CPU_COLLAPSED)), 5);

        assertThat(md).doesNotContain("No cpu profile")
                .contains("| `LevelDb.get` | 50.00% | 10.00% | -40.00 pp |")
                .contains("| `Netty.read` | 50.00% | 90.00% | +40.00 pp |");
    }

    @Test
    void anOldRunWhoseStacksWereGzippedLaterIsFoundToo() throws Exception {
        Path run = Files.createDirectories(dir.resolve("run"));
        AsyncProfiler.gzip(Files.writeString(dir.resolve("s"), "a;b 1\n"), run.resolve("cpu.collapsed.gz"));

        assertThat(FrameDiff.find(run, "cpu.collapsed")).isEqualTo(run.resolve("cpu.collapsed.gz"));
        assertThat(FrameDiff.find(run, null)).isNull();
        assertThat(FrameDiff.find(dir, "cpu.collapsed.gz")).isNull();
    }

    @Test
    void gcColumnIsTheMeasuredMaxOfN1AndFallsBackToTheWholeRunOfOlderResults() throws Exception {
        RunResult.MeasuredGc n1 = new RunResult.MeasuredGc("G1", "1g", 60.0, 2, 182.399, 4.5, 4.5, List.of(), 213.997);
        RunResult.MeasuredGc n2 = new RunResult.MeasuredGc("G1", "1g", 60.0, 1, 30.0, 30.0, 30.0, List.of("at +1.000 s: GC(9) x 30ms"), 40);
        RunResult current = new RunResult("new", RunResult.FIXED_RATE, "get", 3, 5000, 5000, 60, 300_000, 0, Map.of(200, 300_000L), 0,
                Map.of("p50", 1.0, "p99", 2.0), 3.0, List.of(), 213.997, null, new java.util.LinkedHashMap<>(Map.of("n1", n1)),
                new CpuUse(6.0, 9.0, 60.0, null, null));
        RunResult older = new RunResult("old", RunResult.FIXED_RATE, "get", 3, 5000, 5000, 60, 300_000, 0, Map.of(200, 300_000L), 0,
                Map.of("p50", 1.0, "p99", 2.0), 3.0, List.of(), 213.997, null, null, null);
        Path newDir = Files.createDirectories(dir.resolve("new"));
        Path oldDir = Files.createDirectories(dir.resolve("old"));
        current.write(newDir.resolve("result.json"));
        older.write(oldDir.resolve("result.json"));
        java.util.LinkedHashMap<String, RunResult.MeasuredGc> both = new java.util.LinkedHashMap<>();
        both.put("n1", n1);
        both.put("n2", n2);
        RunResult threeNodes = new RunResult("3n", RunResult.FIXED_RATE, "get", 3, 5000, 5000, 60, 300_000, 0, Map.of(), 0,
                Map.of(), 3.0, List.of(), 213.997, null, both, null);
        threeNodes.write(dir.resolve("3n.json"));

        RunResult readNew = RunResult.read(newDir.resolve("result.json"));
        RunResult readOld = RunResult.read(oldDir.resolve("result.json"));

        assertThat(Files.readString(oldDir.resolve("result.json"))).doesNotContain("gcMeasured");
        assertThat(readOld.gcMeasured()).isNull();
        assertThat(readNew.gcMeasured()).containsEntry("n1", n1);
        assertThat(RunResult.read(dir.resolve("3n.json")).gcMeasured()).containsOnlyKeys("n1", "n2").containsEntry("n2", n2);
        assertThat(CompareCommand.gcMaxPause(readNew)).isEqualTo("4.50 ms");
        assertThat(CompareCommand.gcMaxPause(readOld)).isEqualTo("214 ms (whole run)");
        assertThat(CompareCommand.markdown(List.of(oldDir, newDir), List.of(readOld, readNew), 5))
                .contains("| old | get, 3 nodes | fixed rate | 5,000 | 5,000 | 1.00 ms | 2.00 ms | – | 3.00 ms | 0 | 214 ms (whole run) | – |")
                .contains("| new | get, 3 nodes | fixed rate | 5,000 | 5,000 | 1.00 ms | 2.00 ms | – | 3.00 ms | 0 | 4.50 ms | 20.0 µs |")
                .contains("No thread measurement for old, new, so no thread comparison.");
    }

    @Test
    void runsWithTheSameLabelAreToldApartByTheirFolders() throws Exception {
        Path short20 = Files.createDirectories(dir.resolve("a").resolve("warmup20s"));
        Path long60 = Files.createDirectories(dir.resolve("a").resolve("warmup60s"));
        Path again20 = Files.createDirectories(dir.resolve("b").resolve("warmup20s"));
        Path nginx = Files.createDirectories(dir.resolve("a").resolve("nginx"));
        List<Path> runs = List.of(short20, long60, again20, nginx);
        List<RunResult> results = List.of(result("put-3n", null), result("put-3n", null), result("put-3n", null),
                result("nginx-25000rps", null));

        List<String> names = CompareCommand.names(runs, results);

        assertThat(names).containsExactly("put-3n (" + short20 + ")", "put-3n (warmup60s)", "put-3n (" + again20 + ")",
                "nginx-25000rps");
        assertThat(CompareCommand.markdown(runs, results, 5))
                .contains("| put-3n (warmup60s) | get, 1 node | fixed rate |")
                .contains("| nginx-25000rps | get, 1 node | fixed rate |")
                .contains("- put-3n (warmup60s): `" + long60 + "`")
                .contains("vs put-3n (" + short20 + ")");
    }
}
