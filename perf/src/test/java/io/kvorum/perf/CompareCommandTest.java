package io.kvorum.perf;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.perf.profile.AsyncProfiler;
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
                Map.of("p50", 1.0, "p99", 2.0), 3.0, List.of(), Double.NaN, cpuCollapsed);
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
}
