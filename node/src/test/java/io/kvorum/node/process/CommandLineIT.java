package io.kvorum.node.process;

import static io.kvorum.testkit.NodeJvm.clusterMember;
import static io.kvorum.testkit.NodeJvm.loopbackUri;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvorum.client.KvorumClient;
import io.kvorum.client.placement.ClusterView;
import io.kvorum.node.config.NodeOption;
import io.kvorum.testkit.Await;
import io.kvorum.testkit.NodeJvm;
import io.kvorum.testkit.Ports;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * docs/operations.md#starting-nodes, the command line: "A bad option ... exits non-zero at once with a one-line message on
 * stderr that says what is wrong, and no stack trace"; options as environment variables, a flag
 * winning over its variable, {@code --help}, and the defaults with no options at all.
 *
 * <p>Every process runs in a fresh working directory, so a node that wrongly starts with the
 * default {@code ./data/n1} writes into the test's temporary directory, and every bad-option case
 * gives a valid {@code --cluster} on free ports (unless {@code --cluster} is what is bad), so such a
 * node would not take port 8080 either.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class CommandLineIT {

    /**
     * How long a rejected command line may take to exit: JVM start on a busy machine, then "at
     * once". A node that wrongly accepted its options would keep running and never exit.
     */
    private static final Duration REJECTED_EXIT = Duration.ofSeconds(20);
    /** The bound from SIGTERM to exit (docs/operations.md#signals-and-durability). */
    private static final Duration SIGTERM_EXIT = Duration.ofSeconds(10);

    /** The options docs/operations.md#starting-nodes lists; {@code --help} must name each. */
    private static final List<String> SPEC_OPTIONS = List.of("--cluster", "--node-id", "--data-dir", "--bind",
            "--replication-factor", "--fsync", "--anti-entropy-interval", "--request-timeout", "--max-value-bytes");

    @TempDir
    Path tmp;

    @RegisterExtension
    final NodeProcesses nodes = new NodeProcesses(() -> tmp);

    private Path workDir;

    @BeforeEach
    void createWorkDir() throws IOException {
        workDir = Files.createDirectories(tmp.resolve("work"));
    }

    /** A bad command line or environment, and the words its message must contain. */
    record BadOption(String what, List<String> args, Map<String, String> env, List<String> mentions) {
        @Override
        public String toString() {
            return what;
        }
    }

    static Stream<Arguments> badOptions() {
        int[] p = Ports.freePorts(4);
        String ok = clusterMember("n1", p[0], p[1]);
        String loopback = "127.0.0.1:" + p[0] + ":" + p[1];
        return Stream.of(
                bad("unknown flag", List.of("--cluster", ok, "--no-such-option", "1"), Map.of(), "--no-such-option"),
                bad("unknown switch", List.of("--cluster", ok, "--verbose"), Map.of(), "--verbose"),
                bad("flag without its value", List.of("--cluster", ok, "--data-dir"), Map.of(), "--data-dir"),
                bad("--cluster entry without '='", List.of("--cluster", "n1"), Map.of(), "--cluster"),
                bad("--cluster entry without ports", List.of("--cluster", "n1=127.0.0.1"), Map.of(), "--cluster"),
                bad("--cluster entry without gRPC port", List.of("--cluster", "n1=127.0.0.1:" + p[0]), Map.of(),
                        "--cluster"),
                bad("--cluster entry with a port that is not a number",
                        List.of("--cluster", "n1=127.0.0.1:http:" + p[1]), Map.of(), "--cluster"),
                bad("--cluster entry with a port over 65535", List.of("--cluster", "n1=127.0.0.1:70000:" + p[1]),
                        Map.of(), "--cluster"),
                bad("--cluster entry with an empty id", List.of("--cluster", "=" + loopback), Map.of(), "--cluster"),
                bad("--cluster entry with an empty host", List.of("--cluster", "n1=:" + p[0] + ":" + p[1]), Map.of(),
                        "--cluster"),
                bad("--cluster entry with a fourth field", List.of("--cluster", "n1=" + loopback + ":" + p[2]),
                        Map.of(), "--cluster"),
                bad("--cluster entries separated by ';'",
                        List.of("--cluster", "n1=" + loopback + ";" + clusterMember("n2", p[2], p[3]),
                                "--node-id", "n1"),
                        Map.of(), "--cluster"),
                bad("--cluster host with a space", List.of("--cluster", "n1=bad host:" + p[0] + ":" + p[1]), Map.of(),
                        "--cluster"),
                bad("--cluster empty", List.of("--cluster", ""), Map.of(), "--cluster"),
                bad("--cluster with a trailing comma", List.of("--cluster", ok + ","), Map.of(), "--cluster"),
                bad("duplicate node ids", List.of("--cluster", ok + "," + clusterMember("n1", p[2], p[3])), Map.of(),
                        "n1"),
                bad("--node-id not in --cluster", List.of("--cluster", ok, "--node-id", "n7"), Map.of(), "n7"),
                bad("two-node --cluster without --node-id",
                        List.of("--cluster", ok + "," + clusterMember("n2", p[2], p[3])), Map.of(), "--node-id"),
                bad("--bind host with a space", List.of("--cluster", ok, "--bind", "bad host"), Map.of(), "--bind"),
                bad("--request-timeout not a number", List.of("--cluster", ok, "--request-timeout", "abc"), Map.of(),
                        "--request-timeout"),
                bad("--replication-factor over the cluster size", List.of("--cluster", ok, "--replication-factor", "5"),
                        Map.of(), "--replication-factor"),
                bad("--replication-factor 0", List.of("--cluster", ok, "--replication-factor", "0"), Map.of(),
                        "--replication-factor"),
                bad("--max-value-bytes negative", List.of("--cluster", ok, "--max-value-bytes", "-1"), Map.of(),
                        "--max-value-bytes"),
                bad("--fsync=maybe", List.of("--cluster", ok, "--fsync=maybe"), Map.of(), "--fsync"),
                bad("KVORUM_FSYNC=maybe", List.of("--cluster", ok), Map.of("KVORUM_FSYNC", "maybe"), "KVORUM_FSYNC"),
                bad("KVORUM_REQUEST_TIMEOUT not a number", List.of("--cluster", ok),
                        Map.of("KVORUM_REQUEST_TIMEOUT", "abc"), "KVORUM_REQUEST_TIMEOUT"),
                bad("KVORUM_CLUSTER malformed", List.of(), Map.of("KVORUM_CLUSTER", "n1=127.0.0.1"), "KVORUM_CLUSTER"));
    }

    private static Arguments bad(String what, List<String> args, Map<String, String> env, String mention) {
        return Arguments.of(Named.of(what, new BadOption(what, args, env, List.of(mention))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badOptions")
    void badOptionIsRejected(BadOption option) {
        NodeJvm.Launch launch = nodes.launch("bad").args(option.args()).workDir(workDir);
        option.env().forEach(launch::env);
        assertRejected(option.what(), launch.start(), option.mentions());
    }

    /**
     * docs/operations.md#security: the TLS flags are all three or none, and a certificate, key, CA or token file that
     * cannot be read or used is a bad option (exit 2, one line, naming the option), never a node
     * that starts and fails its first handshake.
     */
    @Test
    void securityOptionsThatCannotBeUsedAreRejected() throws Exception {
        Path pki = Certificates.make(tmp.resolve("pki"), "n1", "n2");
        Path notPem = Files.writeString(tmp.resolve("not.pem"), "this is not a certificate\n");
        Path emptyTokens = Files.writeString(tmp.resolve("empty-tokens"), "\n   \n");
        String cert = pki.resolve("n1.pem").toString();
        String key = pki.resolve("n1.key").toString();
        String ca = pki.resolve("ca.pem").toString();
        int[] p = Ports.freePorts(2);
        String ok = clusterMember("n1", p[0], p[1]);
        Map<String, List<String>> cases = new LinkedHashMap<>();
        cases.put("--tls-cert alone", List.of("--tls-cert", cert));
        cases.put("--tls-cert and --tls-key without --tls-ca", List.of("--tls-cert", cert, "--tls-key", key));
        cases.put("a certificate file that does not exist",
                List.of("--tls-cert", tmp.resolve("absent.pem").toString(), "--tls-key", key, "--tls-ca", ca));
        cases.put("a certificate that is not PEM", List.of("--tls-cert", notPem.toString(), "--tls-key", key, "--tls-ca", ca));
        cases.put("a CA that is not PEM", List.of("--tls-cert", cert, "--tls-key", key, "--tls-ca", notPem.toString()));
        cases.put("a key that is not PEM", List.of("--tls-cert", cert, "--tls-key", notPem.toString(), "--tls-ca", ca));
        cases.put("the key of another certificate",
                List.of("--tls-cert", cert, "--tls-key", pki.resolve("n2.key").toString(), "--tls-ca", ca));
        cases.put("an empty token file", List.of("--auth-token-file", emptyTokens.toString()));
        cases.put("a token file that does not exist", List.of("--auth-token-file", tmp.resolve("absent").toString()));
        cases.put("the key given as the CA too", List.of("--tls-cert", cert, "--tls-key", key, "--tls-ca", key));
        Path hugeTokens = Files.writeString(tmp.resolve("huge-tokens"), "t".repeat(2 << 20) + "\n");
        cases.put("a token file over 1 MiB", List.of("--auth-token-file", hugeTokens.toString()));
        String secret = "unknown-role-s3cret";
        Path unknownRole = Files.writeString(tmp.resolve("role-tokens"), "ok read\n" + secret + " reader\n");
        cases.put("a token file with an unknown role", List.of("--auth-token-file", unknownRole.toString()));
        Map<String, String> mentions = new HashMap<>(Map.of(
                "--tls-cert alone", "--tls-key",
                "--tls-cert and --tls-key without --tls-ca", "--tls-ca",
                "a certificate file that does not exist", "--tls-cert",
                "a certificate that is not PEM", "--tls-cert",
                "a CA that is not PEM", "--tls-ca",
                "a key that is not PEM", "--tls-key",
                "the key of another certificate", "--tls-key",
                "an empty token file", "--auth-token-file",
                "a token file that does not exist", "--auth-token-file"));
        mentions.put("the key given as the CA too", "--tls-ca");
        mentions.put("a token file over 1 MiB", "--auth-token-file");
        mentions.put("a token file with an unknown role", "line 2: the second field is not a role");
        for (Map.Entry<String, List<String>> c : cases.entrySet()) {
            List<String> args = new ArrayList<>(List.of("--cluster", ok, "--data-dir", tmp.resolve("data").toString()));
            args.addAll(c.getValue());
            NodeJvm node = nodes.launch("bad-security").args(args).workDir(workDir).start();
            assertRejected(c.getKey(), node, List.of(mentions.get(c.getKey())));
            assertThat(node.awaitExit(REJECTED_EXIT)).as("exit status for %s", c.getKey()).isEqualTo(2);
            assertThat(node.stderr() + node.stdout()).as("no key material or token in the message")
                    .doesNotContain(Files.readAllLines(Path.of(key)).get(1)).doesNotContain(secret);
        }
    }

    @Test
    void httpPortInUseIsRejected() throws IOException {
        int[] p = Ports.freePorts(2);
        try (ServerSocket holder = new ServerSocket(p[0], 50, InetAddress.getLoopbackAddress())) {
            NodeJvm node = nodes.launch("port-in-use").workDir(workDir)
                    .args("--cluster", clusterMember("n1", p[0], p[1]), "--data-dir", tmp.resolve("data").toString())
                    .start();
            assertRejected("HTTP port in use", node, List.of(Integer.toString(holder.getLocalPort())));
        }
    }

    /** The warm-up holds the node's ports: one in use fails the start at once, before any warm-up. */
    @Test
    void aPortInUseIsRejectedBeforeTheWarmUp() throws IOException {
        int[] p = Ports.freePorts(2);
        try (ServerSocket holder = new ServerSocket(p[1], 50, InetAddress.getLoopbackAddress())) {
            NodeJvm node = nodes.launch("grpc-port-in-use").workDir(workDir)
                    .args("--cluster", clusterMember("n1", p[0], p[1]), "--data-dir", tmp.resolve("data").toString(),
                            "--warm-up", "100000")
                    .start();
            assertRejected("gRPC port in use", node, List.of("gRPC", Integer.toString(holder.getLocalPort())));
            assertThat(node.stdout()).as("the log\n%s", node.describe()).doesNotContain("warming the request path");
        }
    }

    /**
     * SIGTERM while the node warms up stops it at once with status 0, and leaves no throwaway
     * store behind; the node's own data dir is its own again for the next start.
     */
    @Test
    void sigtermDuringTheWarmUpStopsTheNode() throws Exception {
        int[] p = Ports.freePorts(2);
        Path dataDir = tmp.resolve("data");
        List<String> args = List.of("--cluster", clusterMember("n1", p[0], p[1]), "--data-dir", dataDir.toString());
        NodeJvm node = nodes.launch("warming").workDir(workDir).args(args).args("--warm-up", "1000000").start();
        Await.until("the warm-up to start", Duration.ofSeconds(60), () -> node.stdout().contains("warming the request path"),
                node::describe);

        assertStopsOnSigterm(node);
        assertThat(node.stdout()).as("the log\n%s", node.describe()).contains("node stopped before it had started")
                .doesNotContain("serving");
        assertThat(dataDir.resolve("warm-up")).as("the throwaway cluster's stores").doesNotExist();
        nodes.launch("after-warming").workDir(workDir).args(args).args("--warm-up", "100").startReady(p[0]);
    }

    /**
     * docs/operations.md#growing-and-shrinking-a-cluster: "--cluster seeds it on a node's first start". A start that failed (here, its HTTP
     * port was taken) is not that first start: the corrected command line is what the node then
     * serves and stores.
     */
    @Test
    void aFirstStartThatFailsStoresNoMembership() throws Exception {
        int[] p = Ports.freePorts(4);
        Path dataDir = tmp.resolve("data");
        try (ServerSocket holder = new ServerSocket(p[0], 50, InetAddress.getLoopbackAddress())) {
            NodeJvm typo = nodes.launch("port-in-use").workDir(workDir)
                    .args("--cluster", clusterMember("n1", p[0], p[1]), "--data-dir", dataDir.toString()).start();
            assertRejected("HTTP port in use", typo, List.of(Integer.toString(p[0])));
        }

        NodeJvm corrected = nodes.launch("corrected").workDir(workDir)
                .args("--cluster", clusterMember("n1", p[2], p[3]), "--data-dir", dataDir.toString()).startReady(p[2]);
        assertThat(ownEntry(p[2])).as("the membership served after the corrected start\n%s", corrected.describe())
                .extracting(ClusterView.Member::http, ClusterView.Member::grpc).containsExactly(p[2], p[3]);
        assertThat(corrected.stdout()).as("no stored membership to differ from").doesNotContain("stored membership wins");
        assertStopsOnSigterm(corrected);
    }

    /**
     * docs/operations.md#growing-and-shrinking-a-cluster: later, "the stored membership ... wins, and a differing --cluster is logged and
     * ignored": the node listens on the ports of its stored entry, not on those of the flag.
     */
    @Test
    void aRestartListensOnTheStoredPortsWhateverTheFlagSays() throws Exception {
        int[] p = Ports.freePorts(4);
        Path dataDir = tmp.resolve("data");
        NodeJvm first = nodes.launch("first").workDir(workDir)
                .args("--cluster", clusterMember("n1", p[0], p[1]), "--data-dir", dataDir.toString()).startReady(p[0]);
        assertStopsOnSigterm(first);

        NodeJvm again = nodes.launch("other-ports").workDir(workDir)
                .args("--cluster", clusterMember("n1", p[2], p[3]), "--data-dir", dataDir.toString()).startReady(p[0]);
        assertThat(ownEntry(p[0])).as("the stored entry, served\n%s", again.describe())
                .extracting(ClusterView.Member::http, ClusterView.Member::grpc).containsExactly(p[0], p[1]);
        assertThat(again.stdout()).as("the differing flag is logged").contains("stored membership wins");
        assertStopsOnSigterm(again);
    }

    @Test
    void dataDirThatCannotBeCreatedIsRejected() throws IOException {
        // Permissions do not stop root, but nothing can create a directory under a regular file.
        Path file = Files.writeString(tmp.resolve("plain-file"), "not a directory");
        Path dataDir = file.resolve("sub");
        int[] p = Ports.freePorts(2);
        NodeJvm node = nodes.launch("bad-data-dir").workDir(workDir)
                .args("--cluster", clusterMember("n1", p[0], p[1]), "--data-dir", dataDir.toString())
                .start();
        assertRejected("data dir under a regular file", node, List.of(dataDir.toString(), "Not a directory"));

        NodeJvm onAFile = nodes.launch("data-dir-is-a-file").workDir(workDir)
                .args("--cluster", clusterMember("n1", p[0], p[1]), "--data-dir", file.toString())
                .start();
        assertRejected("data dir is a regular file", onAFile, List.of(file.toString(), "is not a directory"));
    }

    @Test
    void dataDirInUseByARunningNodeIsRejected() {
        Path dataDir = tmp.resolve("shared-data");
        int[] p = Ports.freePorts(4);
        NodeJvm owner = nodes.launch("owner").workDir(workDir)
                .args("--cluster", clusterMember("n1", p[0], p[1]), "--data-dir", dataDir.toString())
                .startReady(p[0]);
        NodeJvm second = nodes.launch("second").workDir(workDir)
                .args("--cluster", clusterMember("n1", p[2], p[3]), "--data-dir", dataDir.toString())
                .start();
        assertRejected("data dir in use", second, List.of(dataDir.toString()));
        assertThat(owner.isAlive()).as("the node that owns the data dir still runs").isTrue();
        owner.awaitReady(p[0]);
    }

    /**
     * A data dir remembers its node: started under another {@code --node-id} it is refused with a
     * line naming both, before anything in it changes, and its own node starts on it as before.
     */
    @Test
    void dataDirOfAnotherNodeIsRejected() throws Exception {
        Path dataDir = tmp.resolve("n1-data");
        int[] p = Ports.freePorts(4);
        String cluster = clusterMember("n1", p[0], p[1]) + "," + clusterMember("n2", p[2], p[3]);
        NodeJvm n1 = nodes.launch("n1").workDir(workDir)
                .args("--cluster", cluster, "--node-id", "n1", "--data-dir", dataDir.toString()).startReady(p[0]);
        assertStopsOnSigterm(n1);
        List<String> before;
        try (var files = Files.list(dataDir)) {
            before = files.map(f -> f.getFileName().toString()).sorted().toList();
        }

        NodeJvm n2 = nodes.launch("n2-on-n1-data").workDir(workDir)
                .args("--cluster", cluster, "--node-id", "n2", "--data-dir", dataDir.toString()).start();
        assertRejected("data dir of another node", n2, List.of(dataDir.toString(), "n1", "n2"));
        try (var files = Files.list(dataDir)) {
            assertThat(files.map(f -> f.getFileName().toString()).sorted().toList())
                    .as("the data dir's files after the refusal").isEqualTo(before);
        }

        NodeJvm again = nodes.launch("n1-again").workDir(workDir)
                .args("--cluster", cluster, "--node-id", "n1", "--data-dir", dataDir.toString()).startReady(p[0]);
        assertStopsOnSigterm(again);
    }

    @Test
    void environmentVariablesAloneConfigureTheNode() {
        int[] p = Ports.freePorts(2);
        Path dataDir = tmp.resolve("env-data");
        NodeJvm node = nodes.launch("env").workDir(workDir)
                .env("KVORUM_CLUSTER", clusterMember("n1", p[0], p[1]))
                .env("KVORUM_DATA_DIR", dataDir.toString())
                .startReady(p[0]);

        assertRoundTrip(p[0]);
        assertThat(dataDir).as("KVORUM_DATA_DIR").isNotEmptyDirectory();
        assertThat(workDir.resolve("data")).as("the default data dir, which KVORUM_DATA_DIR replaces").doesNotExist();
        assertStopsOnSigterm(node);
    }

    @Test
    void flagWinsOverItsVariable() {
        int[] p = Ports.freePorts(4);
        Path envData = tmp.resolve("env-data");
        Path flagData = tmp.resolve("flag-data");
        NodeJvm node = nodes.launch("flag-over-env").workDir(workDir)
                .env("KVORUM_CLUSTER", clusterMember("n1", p[0], p[1]))
                .env("KVORUM_DATA_DIR", envData.toString())
                .env("KVORUM_REQUEST_TIMEOUT", "abc") // invalid, but overridden: must not matter
                .args("--cluster", clusterMember("n1", p[2], p[3]), "--data-dir", flagData.toString(),
                        "--request-timeout", "1000")
                .startReady(p[2]);

        assertRoundTrip(p[2]);
        assertThat(flagData).as("--data-dir").isNotEmptyDirectory();
        assertThat(envData).as("KVORUM_DATA_DIR, overridden by --data-dir").doesNotExist();
        assertThatThrownBy(() -> new Socket(InetAddress.getLoopbackAddress(), p[0]).close())
                .as("nothing listens on the HTTP port of KVORUM_CLUSTER, overridden by --cluster")
                .isInstanceOf(IOException.class);
        assertStopsOnSigterm(node);
    }

    @Test
    void helpExitsZeroAndListsEveryOption() {
        NodeJvm help = nodes.launch("help").workDir(workDir).args("--help").start();
        assertThat(help.awaitExit(REJECTED_EXIT)).as("exit status of --help\n%s", help.describe()).isZero();
        List<String> expected = new ArrayList<>(SPEC_OPTIONS);
        for (NodeOption o : NodeOption.values()) {
            expected.add(o.flag());
        }
        assertThat(help.stdout()).as("--help output").contains(expected);
        assertThat(help.stderr()).as("stderr of --help").isBlank();
        assertThat(workDir.resolve("data")).as("--help starts no node").doesNotExist();
    }

    /**
     * With no options at all: a single-node cluster on 127.0.0.1:8080 with its data in
     * {@code ./data/n1}. Port 8080 (and 9080, the default gRPC port) must be free on this machine; if
     * another program holds it the test fails and says so, since a skipped test would look passed.
     */
    @Test
    void noOptionsServesOn8080WithDataInDataN1() {
        for (int port : new int[] {8080, 9080}) {
            try (ServerSocket probe = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
                assertThat(probe.getLocalPort()).isEqualTo(port);
            } catch (IOException e) {
                throw new AssertionError("this test needs 127.0.0.1:" + port + " free for the node's default "
                        + "--cluster, but another process holds it (" + e.getMessage() + "); stop that process and "
                        + "run the test again", e);
            }
        }
        NodeJvm node = nodes.launch("defaults").workDir(workDir).startReady(8080);
        assertThat(node.isAlive()).as("the node this test started serves 8080").isTrue();

        assertRoundTrip(8080);
        assertThat(workDir.resolve("data").resolve("n1")).as("./data/n1 under the working directory")
                .isNotEmptyDirectory();
        assertStopsOnSigterm(node);
    }

    /**
     * Exit non-zero within {@link #REJECTED_EXIT}; stderr exactly one non-blank line naming each of
     * {@code mentions}; no stack trace on stderr or stdout.
     */
    private void assertRejected(String what, NodeJvm node, List<String> mentions) {
        int status = node.awaitExit(REJECTED_EXIT);
        String stderr = node.stderr();
        String stdout = node.stdout();
        String context = " (" + what + ")\n" + node.describe();
        assertThat(status).as("exit status" + context).isNotZero();
        List<String> lines = stderr.lines().toList();
        assertThat(lines).as("stderr lines" + context).hasSize(1);
        String message = lines.get(0);
        assertThat(message).as("the message" + context).isNotBlank().contains(mentions)
                .doesNotContainPattern("\\bnull\\b");
        for (String output : List.of(stderr, stdout)) {
            assertThat(output).as("no stack trace" + context).doesNotContain("Exception").doesNotContain("\tat ");
        }
    }

    private static void assertRoundTrip(int httpPort) {
        KvorumClient client = KvorumClient.create(loopbackUri(httpPort), Duration.ofSeconds(30));
        byte[] value = ("value on " + httpPort).getBytes(StandardCharsets.UTF_8);
        client.put("command-line-it", value).join();
        assertThat(client.get("command-line-it").join()).as("value read back from port " + httpPort)
                .hasValueSatisfying(v -> assertThat(v).isEqualTo(value));
    }

    /** The only member of the membership the node on {@code httpPort} serves at {@code GET /v0/cluster}. */
    private static ClusterView.Member ownEntry(int httpPort) throws IOException, InterruptedException {
        HttpResponse<String> answer = HttpClient.newHttpClient().send(
                HttpRequest.newBuilder(loopbackUri(httpPort).resolve("/v0/cluster")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(answer.statusCode()).as("GET /v0/cluster: %s", answer.body()).isEqualTo(200);
        List<ClusterView.Member> members = ClusterView.parse(answer.body()).members();
        assertThat(members).as("members").hasSize(1);
        return members.get(0);
    }

    private static void assertStopsOnSigterm(NodeJvm node) {
        node.terminate();
        assertThat(node.awaitExit(SIGTERM_EXIT)).as("exit status after SIGTERM\n%s", node.describe()).isZero();
    }
}
