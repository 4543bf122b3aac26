package io.kvorum.perf;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code perf peers}' options: their defaults, and input it refuses before anything starts (one line, exit 2). */
class PeersCommandTest {

    @TempDir
    Path tmp;

    private record Outcome(int exitCode, String err) { }

    private static Outcome execute(String... args) {
        StringWriter parseErrors = new StringWriter();
        ByteArrayOutputStream stderr = new ByteArrayOutputStream();
        PrintStream original = System.err;
        System.setErr(new PrintStream(stderr, true, StandardCharsets.UTF_8));
        try {
            CommandLine cli = PerfMain.commandLine();
            cli.setErr(new PrintWriter(parseErrors, true));
            cli.setOut(new PrintWriter(new StringWriter(), true));
            int code = cli.execute(args);
            return new Outcome(code, parseErrors + stderr.toString(StandardCharsets.UTF_8));
        } finally {
            System.setErr(original);
        }
    }

    @Test
    void theDefaultsAreTheComparisonOfIssue55() {
        PeersCommand peers = new PeersCommand();
        new CommandLine(peers).parseArgs();

        assertThat(peers.systems).containsExactly("kvorum", "kvorum-fsync", "cassandra", "etcd");
        assertThat(peers.nodes).containsExactly(1, 3);
        assertThat(peers.keys).isEqualTo(100_000);
        assertThat(peers.valueBytes).isEqualTo(100);
        assertThat(peers.inFlight).isEqualTo(128);
        assertThat(peers.rate).isEqualTo(3000);
        assertThat(peers.heap).isEqualTo("1g");
        assertThat(peers.duration).isEqualTo(Duration.ofSeconds(60));

        PeersCommand given = new PeersCommand();
        new CommandLine(given).parseArgs("--systems", "etcd,kvorum", "--nodes", "3", "--warmup", "0s", "--rate", "500");
        assertThat(given.systems).containsExactly("etcd", "kvorum");
        assertThat(given.nodes).containsExactly(3);
        assertThat(given.warmup).isZero();
        assertThat(given.rate).isEqualTo(500);
    }

    @Test
    void optionsThatCannotBeMeasuredAreRefusedBeforeAnySystemStarts() {
        Path out = tmp.resolve("run");
        String[][] cases = {
            {"--systems", "kvorum,mongodb"},
            {"--nodes", "0"},
            {"--nodes", "1,12"},
            {"--rate", "0"},
            {"--in-flight", "0"},
            {"--duration=0s"},
            {"--warmup=-1s"},
            {"--warmup-window=0s"},
        };
        String[] expected = {"'mongodb' is not a system: kvorum, kvorum-fsync, cassandra, etcd", "--nodes takes cluster sizes",
            "--nodes takes cluster sizes", "--rate must be positive", "--in-flight must be positive",
            "--duration must be positive", "--warmup must be 0s or more", "--warmup-window must be positive"};
        for (int i = 0; i < cases.length; i++) {
            String[] args = concat(new String[] {"peers", "--systems", "kvorum", "--jar", existingFile().toString(), "--out",
                out.toString()}, cases[i]);
            Outcome o = execute(args);
            assertThat(o.exitCode()).as(String.join(" ", cases[i])).isEqualTo(2);
            assertThat(o.err()).as(String.join(" ", cases[i])).contains(expected[i]);
        }
        assertThat(out).doesNotExist();
    }

    @Test
    void aSystemWhoseServerIsMissingIsNamedWithWhatToDo() {
        Path out = tmp.resolve("run");
        Outcome cassandra = execute("peers", "--systems", "cassandra", "--cassandra-classpath",
                tmp.resolve("none.classpath").toString(), "--out", out.toString());
        assertThat(cassandra.exitCode()).isEqualTo(2);
        assertThat(cassandra.err()).contains("Cassandra's class path").contains("none.classpath")
                .contains("./kvorum perf peers resolves it");

        Outcome etcd = execute("peers", "--systems", "etcd", "--etcd", tmp.resolve("no-etcd").toString(), "--out",
                out.toString());
        assertThat(etcd.exitCode()).isEqualTo(2);
        assertThat(etcd.err()).contains("no etcd binary").contains("apt-get install etcd-server");

        Outcome kvorum = execute("peers", "--systems", "kvorum-fsync", "--jar", tmp.resolve("no.jar").toString(), "--out",
                out.toString());
        assertThat(kvorum.exitCode()).isEqualTo(2);
        assertThat(kvorum.err()).contains("node jar not found");
        assertThat(out).doesNotExist();
    }

    @Test
    void etcdIsTheOptionThenKvorumEtcdThenThePath() throws Exception {
        Path bin = Files.createDirectories(tmp.resolve("bin"));
        Path etcd = Files.createFile(bin.resolve("etcd"), PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rwxr-xr-x")));
        Path other = Files.createFile(tmp.resolve("etcd-3.4"), PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rwxr-xr-x")));
        Map<String, String> path = Map.of("PATH", "/nonexistent:" + bin);

        assertThat(PeersCommand.etcdBinary(null, path)).contains(etcd.toString());
        assertThat(PeersCommand.etcdBinary(null, Map.of("PATH", path.get("PATH"), "KVORUM_ETCD", other.toString())))
                .contains(other.toString());
        assertThat(PeersCommand.etcdBinary(other.toString(), path)).contains(other.toString());
        assertThat(PeersCommand.etcdBinary(tmp.resolve("missing").toString(), path)).isEmpty();
        assertThat(PeersCommand.etcdBinary(null, Map.of("PATH", "/nonexistent"))).isEmpty();
    }

    private Path existingFile() {
        try {
            Path jar = tmp.resolve("kvorum-node.jar");
            return Files.exists(jar) ? jar : Files.createFile(jar);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static String[] concat(String[] a, String[] b) {
        String[] all = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }

}
