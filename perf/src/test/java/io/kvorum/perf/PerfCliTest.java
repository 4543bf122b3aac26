package io.kvorum.perf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvorum.perf.load.LoadTool;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** What {@code ./kvorum perf} says about input it cannot use: before it starts anything, one line naming the option, exit 2. */
class PerfCliTest {

    @TempDir
    Path tmp;

    private record Outcome(int exitCode, String out, String err) { }

    private static Outcome execute(String... args) {
        return execute(PerfMain::commandLine, args);
    }

    /** Makes the command line once System.err is redirected: picocli's default writers wrap the stream of then. */
    private static Outcome execute(Supplier<CommandLine> commandLine, String... args) {
        StringWriter out = new StringWriter();
        StringWriter parseErrors = new StringWriter();
        ByteArrayOutputStream stderr = new ByteArrayOutputStream();
        PrintStream original = System.err;
        System.setErr(new PrintStream(stderr, true, StandardCharsets.UTF_8));
        try {
            CommandLine cli = commandLine.get();
            cli.setErr(new PrintWriter(parseErrors, true));
            cli.setOut(new PrintWriter(out, true));
            int code = cli.execute(args);
            return new Outcome(code, out.toString(), parseErrors + stderr.toString(StandardCharsets.UTF_8));
        } finally {
            System.setErr(original);
        }
    }

    @Test
    void aRateOrDurationThatCannotBeMeasuredIsRefusedUpFront() {
        Outcome negative = execute("run", "--rate", "-5");
        assertThat(negative.exitCode()).isEqualTo(2);
        assertThat(negative.err()).contains("--rate must be positive").contains("-5");
        assertThat(execute("run", "--rate", "0").err()).contains("--rate must be positive");
        Outcome duration = execute("run", "--rate", "1000", "--duration=-5s");
        assertThat(duration.exitCode()).isEqualTo(2);
        assertThat(duration.err()).contains("--duration must be positive");
        assertThat(execute("run", "--rate", "1000", "--warmup=-1s").err()).contains("--warmup must be 0s or more");
        Outcome connections = execute("run", "--rate", "1000", "--connections", "0");
        assertThat(connections.err()).contains("--connections must be positive, got 0").doesNotContain("--keys");
    }

    @Test
    void aJoinsWarmUpNeedsALoadAndTimesThatCannotBeMeasuredAreRefusedBeforeAnyNodeStarts() {
        Outcome noLoad = execute("join", "--warmup", "30s", "--out", tmp.resolve("no-load").toString());
        assertThat(noLoad.exitCode()).isEqualTo(2);
        assertThat(noLoad.err()).contains("--warmup").contains("needs --rate");
        Outcome negative = execute("join", "--rate", "1000", "--warmup=-1s", "--out", tmp.resolve("negative").toString());
        assertThat(negative.exitCode()).isEqualTo(2);
        assertThat(negative.err()).contains("--warmup must be 0s or more");
        Outcome window = execute("join", "--rate", "1000", "--load-duration=0s", "--out", tmp.resolve("window").toString());
        assertThat(window.exitCode()).isEqualTo(2);
        assertThat(window.err()).contains("--load-duration must be positive");
        assertThat(tmp.resolve("no-load")).doesNotExist();
    }

    @Test
    void aBackupsOptionsThatCannotBeMeasuredAreRefusedBeforeAnyNodeStarts() {
        Outcome noLoad = execute("backup", "--warmup", "30s", "--out", tmp.resolve("no-load").toString());
        assertThat(noLoad.exitCode()).isEqualTo(2);
        assertThat(noLoad.err()).contains("--warmup").contains("needs --rate");
        Outcome restoreRate = execute("backup", "--restore-rate", "0", "--out", tmp.resolve("restore-rate").toString());
        assertThat(restoreRate.exitCode()).isEqualTo(2);
        assertThat(restoreRate.err()).contains("--restore-rate must be positive, got 0");
        Outcome rate = execute("backup", "--rate", "-5", "--out", tmp.resolve("rate").toString());
        assertThat(rate.exitCode()).isEqualTo(2);
        assertThat(rate.err()).contains("--rate must be positive, got -5");
        Outcome window = execute("backup", "--rate", "1000", "--load-duration=0s", "--out", tmp.resolve("window").toString());
        assertThat(window.exitCode()).isEqualTo(2);
        assertThat(window.err()).contains("--load-duration must be positive");
        Outcome rounds = execute("backup", "--rounds", "0", "--out", tmp.resolve("rounds").toString());
        assertThat(rounds.exitCode()).isEqualTo(2);
        assertThat(rounds.err()).contains("--rounds must be at least 1, got 0");
        assertThat(tmp.resolve("no-load")).doesNotExist();
        assertThat(tmp.resolve("restore-rate")).doesNotExist();
        assertThat(tmp.resolve("rounds")).doesNotExist();
    }

    @Test
    void aValueOfTheWrongKindSaysWhatIsTaken() {
        Outcome workload = execute("run", "--rate", "1000", "--workload", "scan");
        assertThat(workload.exitCode()).isEqualTo(2);
        assertThat(workload.err()).contains("'scan' is not a workload: put, get, mixed, delete")
                .doesNotContain("No enum constant");
        Outcome duration = execute("run", "--rate", "1000", "--duration", "30");
        assertThat(duration.exitCode()).isEqualTo(2);
        assertThat(duration.err()).contains("'30' is not a duration: a whole number and a unit (500ms, 30s, 2m)");

        LoadOptions.DurationConverter durations = new LoadOptions.DurationConverter();
        assertThat(durations.convert("PT1M30S")).isEqualTo(Duration.ofSeconds(90));
        assertThat(durations.convert("5S")).isEqualTo(Duration.ofSeconds(5));
        assertThat(durations.convert("500ms")).isEqualTo(Duration.ofMillis(500));
        assertThat(durations.convert("2m")).isEqualTo(Duration.ofMinutes(2));
    }

    @Test
    void noCommandIsAUsageErrorAndTheVersionIsPrinted() {
        Outcome none = execute();
        assertThat(none.exitCode()).isEqualTo(2);
        assertThat(none.err()).contains("a command is missing");
        Outcome version = execute("-V");
        assertThat(version.exitCode()).isZero();
        assertThat(version.out()).startsWith("kvorum perf ");
        assertThat(execute("run", "-V").out()).startsWith("kvorum perf ");
    }

    @Test
    void aRunFolderIsNewOrEmptyNeverAnotherRunsOrAFile() throws Exception {
        Path earlier = Files.createDirectories(tmp.resolve("earlier"));
        Files.writeString(earlier.resolve("cpu.html"), "an earlier run's flame graph");
        Path file = Files.writeString(tmp.resolve("afile"), "x");

        assertThatThrownBy(() -> RunFolder.create(earlier, "x")).isInstanceOf(UsageException.class)
                .hasMessageContaining("holds files already");
        assertThatThrownBy(() -> RunFolder.create(file, "x")).isInstanceOf(UsageException.class)
                .hasMessageContaining("is a file");
        assertThatThrownBy(() -> RunFolder.create(file.resolve("below"), "x")).isInstanceOf(UsageException.class)
                .hasMessageContaining("cannot create");
        assertThat(RunFolder.create(tmp.resolve("empty"), "x")).isDirectory();
        assertThat(RunFolder.create(tmp.resolve("empty"), "x")).as("still empty: fine").isDirectory();
    }

    @Test
    void compareRefusesTheSameRunTwiceAndANonPositiveTop() {
        Outcome twice = execute("compare", tmp.toString(), tmp.resolve(".").toString());
        assertThat(twice.exitCode()).isEqualTo(2);
        assertThat(twice.err()).contains("kvorum perf compare: a run folder is named twice");
        Outcome top = execute("compare", tmp.toString(), "--top", "-3");
        assertThat(top.exitCode()).isEqualTo(2);
        assertThat(top.err()).contains("--top must be positive, got -3");
    }

    @Test
    void aWrk2SetButWrongIsNamed() {
        assertThat(LoadTool.wrk2Missing(Map.of("WRK2", tmp.resolve("nope").toString())))
                .startsWith("WRK2=" + tmp.resolve("nope") + " is not wrk2 (no executable file there)");
        assertThat(LoadTool.wrk2Missing(Map.of())).isEqualTo(LoadTool.WRK2_MISSING);
    }

    @Test
    void aRunFolderWhoseResultIsNotJsonIsOneLine() throws Exception {
        Path run = Files.createDirectories(tmp.resolve("broken"));
        Files.writeString(run.resolve("result.json"), "{bad");
        Path other = Files.createDirectories(tmp.resolve("other"));
        Files.writeString(other.resolve("result.json"), "{bad");

        Outcome broken = execute("compare", run.toString(), other.toString());

        assertThat(broken.exitCode()).isEqualTo(2);
        assertThat(broken.err().lines()).singleElement().asString()
                .startsWith("kvorum perf compare: " + run.resolve("result.json") + " is not a run's result");
    }

    /** What the environment did (a preload the nodes refused, say) is one line and status 1, not a stack trace. */
    @Test
    void anIoFailureIsOneLineAndStatusOne() {
        Outcome failed = execute(() -> PerfMain.commandLine().addSubcommand("failing", new FailingCommand()), "failing");

        assertThat(failed.exitCode()).isEqualTo(1);
        assertThat(failed.err().lines()).singleElement().asString()
                .isEqualTo("kvorum perf failing: preload failed: 876 of 1,000 keys not written");
    }

    @CommandLine.Command(name = "failing")
    static final class FailingCommand implements java.util.concurrent.Callable<Integer> {
        @Override
        public Integer call() throws java.io.IOException {
            throw new java.io.IOException("preload failed: 876 of 1,000 keys not written");
        }
    }
}
