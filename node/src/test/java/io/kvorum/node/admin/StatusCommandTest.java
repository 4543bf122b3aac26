package io.kvorum.node.admin;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import io.kvorum.testkit.Ports;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@code kvorum status} against a stand-in node that answers fixed bodies on {@code /v0/status}. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class StatusCommandTest {

    /** The moment the fixtures are read at: 10 s after n2 went down. */
    private static final long NOW = 1_795_444_441_905L;

    private static final String THREE_NODES_N2_DOWN = "{\"node\":\"n1\",\"status\":\"serving\",\"clusterSize\":3,"
            + "\"replicationFactor\":3,\"peers\":{\"n2\":{\"state\":\"down\",\"since\":1795444431905,\"rttMicros\":16442,"
            + "\"address\":\"10.0.0.2:8080\"},"
            + "\"n3\":{\"state\":\"up\",\"since\":1795444421837,\"rttMicros\":10317,\"address\":\"10.0.0.3:8080\","
            + "\"clockOffsetMillis\":-3}},"
            + "\"hints\":{\"pending\":{\"n2\":20},\"delivered\":7,\"dropped\":1},"
            + "\"antiEntropy\":{\"trees\":\"ready\",\"treesAt\":1795444430000,\"lastRounds\":{"
            + "\"n2\":{\"endedAt\":1795444436905,\"ok\":false,\"recordsExchanged\":0,\"durationMs\":0,\"error\":\"n2 is unreachable\"},"
            + "\"n3\":{\"endedAt\":1795444429000,\"ok\":true,\"recordsExchanged\":4,\"durationMs\":12}}},"
            + "\"storageBytes\":52428800}";

    private static final String THREE_NODES_ALL_UP = THREE_NODES_N2_DOWN.replace("\"state\":\"down\"", "\"state\":\"up\"");

    private static final String SINGLE_NODE = "{\"node\":\"n1\",\"status\":\"serving\",\"clusterSize\":1,\"replicationFactor\":1,\"storageBytes\":812}";

    private HttpServer server;
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    @AfterEach
    void stopServer() {
        if (server != null) {
            server.stop(0);
        }
    }

    @Test
    void aClusterWithEveryMemberUpExitsZeroWithALinePerMember() throws IOException {
        int exit = run(serve(200, THREE_NODES_ALL_UP));

        assertThat(exit).isEqualTo(StatusCommand.EXIT_ALL_UP);
        List<String> lines = out.toString(UTF_8).lines().toList();
        assertThat(lines.get(0)).isEqualTo("Kvorum cluster of 3 node(s), replication factor 3, as n1 sees it; anti-entropy trees ready;"
                + " n1 stores 50 MiB");
        assertThat(lines.get(1)).startsWith("ID")
                .contains("ADDRESS", "STATE", "RTT", "CLOCK", "HINTS", "LAST ANTI-ENTROPY ROUND");
        assertThat(lines.get(2)).startsWith("n1").contains("127.0.0.1:" + server.getAddress().getPort(), "up (this node)");
        assertThat(lines.get(3)).startsWith("n2").contains("10.0.0.2:8080", "up", "10s ago", "16.44 ms", " 20 ", "failed 5s ago: n2 is unreachable");
        assertThat(lines.get(3).substring(lines.get(1).indexOf("CLOCK"))).as("n2's clock not measured")
                .startsWith("- ");
        assertThat(lines.get(4)).startsWith("n3")
                .contains("10.0.0.3:8080", "up", "20s ago", "10.32 ms", "-3 ms", " 0 ", "ok 12s ago, 4 records in 12 ms");
        assertThat(lines.get(5)).isEqualTo("3 of 3 members up; hints delivered 7, dropped 1 since n1 started");
        assertThat(lines).hasSize(6);
        assertThat(lines.get(1).indexOf("STATE")).as("columns aligned").isEqualTo(lines.get(3).indexOf("up"));
        assertThat(err.toString(UTF_8)).isEmpty();
    }

    @Test
    void aMemberDownExitsOneAndShowsIt() throws IOException {
        int exit = run(serve(200, THREE_NODES_N2_DOWN));

        assertThat(exit).isEqualTo(StatusCommand.EXIT_MEMBER_DOWN);
        List<String> lines = out.toString(UTF_8).lines().toList();
        assertThat(lines.get(3)).startsWith("n2").contains("down", "10s ago");
        assertThat(lines.get(5)).startsWith("2 of 3 members up");
    }

    @Test
    void aPeerNotHeardFromYetIsNotUp() throws IOException {
        int exit = run(serve(200, THREE_NODES_ALL_UP.replace("\"n3\":{\"state\":\"up\"", "\"n3\":{\"state\":\"unknown\"")));

        assertThat(exit).isEqualTo(StatusCommand.EXIT_MEMBER_DOWN);
        assertThat(out.toString(UTF_8)).contains("2 of 3 members up");
    }

    @Test
    void aSingleNodeIsOneMemberUp() throws IOException {
        int exit = run(serve(200, SINGLE_NODE));

        assertThat(exit).isEqualTo(StatusCommand.EXIT_ALL_UP);
        List<String> lines = out.toString(UTF_8).lines().toList();
        assertThat(lines.get(0)).isEqualTo("Kvorum cluster of 1 node(s), replication factor 1, as n1 sees it; n1 stores 812 B");
        assertThat(lines).hasSize(4).last().isEqualTo("1 of 1 members up");
    }

    @Test
    void storageErrorsGetALineOfTheirOwn() throws IOException {
        int exit = run(serve(200, SINGLE_NODE.replace("}", ",\"storageErrors\":{\"reads\":2,\"writes\":1500,"
                + "\"last\":\"write: Corruption: block checksum mismatch\",\"lastAt\":1795444436905}}")));

        assertThat(exit).as("the members are up").isEqualTo(StatusCommand.EXIT_ALL_UP);
        assertThat(out.toString(UTF_8).lines().toList()).hasSize(5).last().isEqualTo("STORAGE ERRORS: n1's store failed "
                + "2 read(s) and 1500 write(s) since it started; the last, 5s ago: write: Corruption: block checksum mismatch");
    }

    @Test
    void aNodeThatRefusesWritesForItsClockSaysSoLast() throws IOException {
        int exit = run(serve(200, THREE_NODES_ALL_UP.replace("\"clockOffsetMillis\":-3", "\"clockOffsetMillis\":-61500")
                .replace("\"storageBytes\":52428800",
                        "\"storageBytes\":52428800,\"writesRefused\":\"this node's clock is off\"")));

        assertThat(exit).as("the members are up").isEqualTo(StatusCommand.EXIT_ALL_UP);
        List<String> lines = out.toString(UTF_8).lines().toList();
        assertThat(lines.get(4)).startsWith("n3").contains("-61.5 s");
        assertThat(lines).hasSize(7).last().isEqualTo("WRITES REFUSED: this node's clock is off");
    }

    @Test
    void aRebuildingNodeSaysSoLast() throws IOException {
        int exit = run(serve(200, THREE_NODES_ALL_UP.replace("\"status\":\"serving\"", "\"status\":\"rebuilding\"")
                .replace("\"storageBytes\":52428800",
                        "\"storageBytes\":52428800,\"rebuilding\":{\"phase\":\"streaming\",\"recordsTaken\":1200}")));

        assertThat(exit).as("the members are up").isEqualTo(StatusCommand.EXIT_ALL_UP);
        assertThat(out.toString(UTF_8).lines().toList()).hasSize(7).last().asString()
                .startsWith("REBUILDING: n1 lost its data").contains("1200 records so far");
    }

    @Test
    void anUnreachableNodeExitsTwoWithOneLine() {
        int port = Ports.freePort();

        int exit = StatusCommand.run(List.of("http://127.0.0.1:" + port), print(out), print(err), NOW);

        assertThat(exit).isEqualTo(StatusCommand.EXIT_NO_STATUS);
        assertThat(out.toString(UTF_8)).isEmpty();
        assertThat(err.toString(UTF_8).lines().toList()).singleElement().asString()
                .startsWith("kvorum status: cannot reach http://127.0.0.1:" + port + "/v0/status: ");
    }

    @Test
    void aHostNameThatDoesNotResolveIsSaidSo() {
        // .invalid never resolves (RFC 2606), here or anywhere.
        int exit = StatusCommand.run(List.of("http://no-such-node.invalid:8080"), print(out), print(err), NOW);

        assertThat(exit).isEqualTo(StatusCommand.EXIT_NO_STATUS);
        assertThat(err.toString(UTF_8).lines().toList()).singleElement().asString()
                .isEqualTo("kvorum status: cannot reach http://no-such-node.invalid:8080/v0/status: the host name "
                        + "no-such-node.invalid does not resolve to an address");
    }

    @Test
    void malformedJsonExitsTwoWithOneClearLine() throws IOException {
        int exit = run(serve(200, "{\"node\":\"n1\",\"clusterSize\":"));

        assertThat(exit).isEqualTo(StatusCommand.EXIT_NO_STATUS);
        assertThat(out.toString(UTF_8)).isEmpty();
        assertThat(err.toString(UTF_8).lines().toList()).singleElement().asString()
                .endsWith("/v0/status did not answer a Kvorum status (malformed or unexpected JSON)");
    }

    @Test
    void jsonThatIsNotAStatusExitsTwo() throws IOException {
        assertThat(run(serve(200, "{\"hello\":\"world\"}"))).isEqualTo(StatusCommand.EXIT_NO_STATUS);
        assertThat(run(serve(200, "[1,2,3]"))).isEqualTo(StatusCommand.EXIT_NO_STATUS);
        assertThat(err.toString(UTF_8).lines()).hasSize(2).allMatch(l -> l.contains("did not answer a Kvorum status"));
    }

    @Test
    void anotherStatusCodeExitsTwo() throws IOException {
        int exit = run(serve(503, "this node is not a member of the cluster; send requests to a member: h:8081\n"));

        assertThat(exit).isEqualTo(StatusCommand.EXIT_NO_STATUS);
        assertThat(err.toString(UTF_8)).contains("answered 503 instead of a status: this node is not a member of "
                + "the cluster; send requests to a member: h:8081");
        assertThat(out.toString(UTF_8)).isEmpty();
    }

    @Test
    void aLongOrEmptyRefusalIsCutOrLeftOut() throws IOException {
        run(serve(500, "x".repeat(1000) + "\nsecond line"));
        run(serve(404, ""));

        List<String> lines = err.toString(UTF_8).lines().toList();
        assertThat(lines).hasSize(2);
        assertThat(lines.get(0)).contains("answered 500 instead of a status: " + "x".repeat(300) + "...")
                .doesNotContain("x".repeat(301)).doesNotContain("second line");
        assertThat(lines.get(1)).endsWith("answered 404 instead of a status");
    }

    @Test
    void badArgumentsExitTwoWithUsage() {
        assertThat(StatusCommand.run(List.of("--verbose"), print(out), print(err), NOW)).isEqualTo(StatusCommand.EXIT_NO_STATUS);
        assertThat(StatusCommand.run(List.of("a", "b"), print(out), print(err), NOW)).isEqualTo(StatusCommand.EXIT_NO_STATUS);
        assertThat(StatusCommand.run(List.of("ftp://x"), print(out), print(err), NOW)).isEqualTo(StatusCommand.EXIT_NO_STATUS);
        assertThat(StatusCommand.run(List.of("http://127.0.0.1:99999"), print(out), print(err), NOW))
                .isEqualTo(StatusCommand.EXIT_NO_STATUS);
        assertThat(StatusCommand.run(List.of("--ca", "/no/such/ca.pem"), print(out), print(err), NOW))
                .isEqualTo(StatusCommand.EXIT_NO_STATUS);
        assertThat(err.toString(UTF_8).lines().toList()).as("one line each, no stack trace").hasSize(5);
        assertThat(err.toString(UTF_8)).contains("http://127.0.0.1:99999 is not a node's URL");
        assertThat(err.toString(UTF_8)).contains("cannot use the CA file /no/such/ca.pem: it does not exist");
        assertThat(out.toString(UTF_8)).isEmpty();
    }

    @Test
    void helpIsTheUsageOnStandardOutput() {
        assertThat(StatusCommand.run(List.of("--help"), print(out), print(err), NOW)).isZero();
        assertThat(out.toString(UTF_8).strip()).isEqualTo(StatusCommand.USAGE);
        assertThat(err.toString(UTF_8)).isEmpty();
    }

    @Test
    void agoNamesTheLargestWholeUnit() {
        ClusterSummary summary = new ClusterSummary(null, "x", NOW);
        assertThat(summary.ago(0)).isEqualTo("-");
        assertThat(summary.ago(NOW - 119_000)).isEqualTo("119s ago");
        assertThat(summary.ago(NOW - 3 * 60_000)).isEqualTo("3m ago");
        assertThat(summary.ago(NOW - 5 * 3_600_000L)).isEqualTo("5h ago");
        assertThat(summary.ago(NOW - 3 * 86_400_000L)).isEqualTo("3d ago");
    }

    private int run(String url) {
        return StatusCommand.run(List.of(url), print(out), print(err), NOW);
    }

    private String serve(int code, String body) throws IOException {
        if (server != null) {
            server.stop(0);
        }
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/v0/status", exchange -> {
            byte[] bytes = body.getBytes(UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "application/json");
            exchange.sendResponseHeaders(code, bytes.length);
            try (OutputStream os = exchange.getResponseBody()) {
                os.write(bytes);
            }
        });
        server.start();
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    private static PrintStream print(ByteArrayOutputStream buffer) {
        return new PrintStream(buffer, true, UTF_8);
    }
}
