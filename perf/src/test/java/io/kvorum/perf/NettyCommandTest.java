package io.kvorum.perf;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** What {@code perf netty} (and so {@code perf nginx}) refuses before it starts anything. */
class NettyCommandTest {

    @Test
    void refusesAWorkloadOtherThanGetOrPut() {
        Outcome outcome = execute("netty", "--saturation", "--workload", "mixed");

        assertThat(outcome.exitCode()).isEqualTo(2);
        assertThat(outcome.err()).contains("--workload get or put");
    }

    @Test
    void refusesARunWithoutRateOrSaturation() {
        Outcome outcome = execute("netty", "--workload", "put");

        assertThat(outcome.exitCode()).isEqualTo(2);
        assertThat(outcome.err()).contains("give --rate N (N > 0) or --saturation");
    }

    @Test
    void namesTheOptionAtFault() {
        assertThat(execute("netty", "--rate", "0").err()).contains("give --rate N (N > 0) or --saturation, not --rate 0");
        assertThat(execute("netty", "--saturation", "--connections", "1").err())
                .contains("--connections at least --threads, got --threads 2 and --connections 1");
        assertThat(execute("netty", "--saturation", "--duration=-1s").err()).contains("--duration must be positive");
        assertThat(execute("netty", "--saturation", "--warmup=-1s").err()).contains("--warmup must be 0s or more");
    }

    @Test
    void refusesAnUnknownWorkloadName() {
        Outcome outcome = execute("netty", "--saturation", "--workload", "scan");

        assertThat(outcome.exitCode()).isEqualTo(2);
        assertThat(outcome.err()).contains("--workload");
    }

    @Test
    void refusesAHeapTheJvmWouldNotTake() {
        Outcome outcome = execute("netty", "--saturation", "--heap", "abc");

        assertThat(outcome.exitCode()).isEqualTo(2);
        assertThat(outcome.err()).contains("--heap takes a JVM heap size such as 512m or 1g, not 'abc'");
    }

    private record Outcome(int exitCode, String err) { }

    /** The command writes its own refusals to System.err, picocli its parse errors to the CommandLine's. */
    private static Outcome execute(String... args) {
        StringWriter parseErrors = new StringWriter();
        ByteArrayOutputStream stderr = new ByteArrayOutputStream();
        PrintStream original = System.err;
        System.setErr(new PrintStream(stderr, true, StandardCharsets.UTF_8));
        try {
            CommandLine cli = new CommandLine(new PerfMain());
            cli.setErr(new PrintWriter(parseErrors, true));
            cli.setOut(new PrintWriter(new StringWriter(), true));
            int code = cli.execute(args);
            return new Outcome(code, parseErrors + stderr.toString(StandardCharsets.UTF_8));
        } finally {
            System.setErr(original);
        }
    }
}
