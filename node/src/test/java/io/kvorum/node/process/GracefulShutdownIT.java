package io.kvorum.node.process;

import static io.kvorum.testkit.NodeJvm.clusterMember;
import static io.kvorum.testkit.NodeJvm.loopbackUri;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.client.KvorumClient;
import io.kvorum.client.KvorumException;
import io.kvorum.node.cluster.MembershipStore;
import io.kvorum.testkit.Await;
import io.kvorum.testkit.NodeJvm;
import io.kvorum.testkit.Ports;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/operations.md#starting-nodes: "SIGTERM stops the node gracefully (stop accepting, finish or fail in-flight requests,
 * flush, exit 0 within 10 s)". Each test sends SIGTERM and waits at most those 10 s for exit
 * status 0, then checks what the shutdown did to requests and data.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class GracefulShutdownIT {

    /** The bound from SIGTERM to exit (docs/operations.md#signals-and-durability). */
    private static final Duration SIGTERM_EXIT = Duration.ofSeconds(10);
    private static final Duration ANSWERS = Duration.ofSeconds(90);
    private static final int PARALLELISM = 32;

    @TempDir
    Path tmp;

    @RegisterExtension
    final NodeProcesses nodes = new NodeProcesses(() -> tmp);

    @Test
    void sigtermExitsZeroLogsThatItStoppedAndKeepsTheData() {
        Node node = new Node();
        NodeJvm first = node.start("n1");
        KvorumClient client = node.client();
        WriteLoad load = new WriteLoad(client, "before-term", PARALLELISM, 1);
        load.writeAll(500, ANSWERS);
        assertThat(load.failed()).as("writes a healthy node refused").isEmpty();

        first.terminate();
        assertThat(first.awaitExit(SIGTERM_EXIT)).as("exit status after SIGTERM\n%s", first.describe()).isZero();
        assertThat(first.stdout().lines())
                .as("the log says the node stopped\n%s", first.describe())
                .anyMatch(line -> line.matches("(?i).*\\bstopped\\b.*"));
        assertThat(first.stdout() + first.stderr())
                .as("a clean shutdown logs no stack trace\n%s", first.describe())
                .doesNotContain("\tat ");

        node.start("n1-restarted");
        Map<String, byte[]> acknowledged = load.acknowledged();
        Map<String, Optional<byte[]>> read =
                WriteLoad.readAll(node.client(), acknowledged.keySet(), PARALLELISM, ANSWERS);
        assertThat(WriteLoad.mismatches(acknowledged, read))
                .as("writes acknowledged before SIGTERM, read after restart").isEmpty();
    }

    /**
     * SIGTERM arrives while {@value #PARALLELISM} writes are in flight. Each must end either with
     * an answer ({@code 201}, or {@code 503} for "not done") or with a failed connection, and none
     * may hang: the client's own timeout is far longer than the wait, so a hang cannot pass as a
     * failure. What was answered {@code 201} must be there after a restart.
     */
    @Test
    void requestsInFlightAtSigtermAreAnsweredOrFailAndNoneHangs() {
        Node node = new Node();
        NodeJvm first = node.start("n1");
        KvorumClient client = KvorumClient.create(loopbackUri(node.http), Duration.ofMinutes(4));
        WriteLoad load = new WriteLoad(client, "during-term", PARALLELISM, 2);

        load.startContinuous();
        Await.until("500 writes acknowledged, with more in flight", ANSWERS,
                () -> load.acknowledgedCount() >= 500 && load.inFlight() > 0, first::describe);
        int inFlightAtTerm = load.inFlight();
        first.terminate();
        int status = first.awaitExit(SIGTERM_EXIT);
        load.stop(ANSWERS); // every write answered or failed: none hangs
        assertThat(inFlightAtTerm).as("writes in flight when SIGTERM was sent").isPositive();
        assertThat(status).as("exit status after SIGTERM with requests in flight\n%s", first.describe()).isZero();
        assertThat(first.stdout().lines()).as("the log says the node stopped\n%s", first.describe())
                .anyMatch(line -> line.matches("(?i).*\\bstopped\\b.*"));

        List<String> badOutcomes = new ArrayList<>();
        load.failed().forEach((key, error) -> {
            boolean connectionFailed = error instanceof IOException && !(error instanceof HttpTimeoutException);
            boolean refused = error instanceof KvorumException e && e.status() == 503;
            if (!connectionFailed && !refused) {
                badOutcomes.add(key + ": " + error);
            }
        });
        assertThat(badOutcomes).as("writes that neither got an answer nor a failed connection").isEmpty();

        node.start("n1-restarted");
        Map<String, byte[]> acknowledged = load.acknowledged();
        Map<String, byte[]> attempted = load.attempted();
        Map<String, Optional<byte[]>> read =
                WriteLoad.readAll(node.client(), attempted.keySet(), PARALLELISM, ANSWERS);
        assertThat(WriteLoad.mismatches(acknowledged, read))
                .as("writes acknowledged around SIGTERM, read after restart (%d in flight at SIGTERM)", inFlightAtTerm)
                .isEmpty();
        Map<String, byte[]> notAcknowledged = new HashMap<>(attempted);
        notAcknowledged.keySet().removeAll(acknowledged.keySet());
        List<String> torn = new ArrayList<>();
        notAcknowledged.forEach((key, sent) -> read.get(key).ifPresent(got -> {
            if (!Arrays.equals(got, sent)) {
                torn.add(key);
            }
        }));
        assertThat(torn).as("unacknowledged writes that read back as something other than what was sent").isEmpty();
    }

    /**
     * A client that sent half a request, and one that keeps an idle keep-alive connection, must
     * not hold the node up: it still exits 0 within 10 s, and each connection then ends with an
     * answer or a closed connection (the socket's read timeout would flag a hang).
     */
    @Test
    void halfSentRequestAndIdleConnectionDoNotHoldUpSigterm() throws IOException {
        Node node = new Node();
        NodeJvm first = node.start("n1");
        try (Socket halfSent = connect(node.http); Socket idle = connect(node.http)) {
            halfSent.getOutputStream().write(("PUT /v0/entity?id=half HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    + "Content-Length: 1000\r\n\r\n" + "x".repeat(10)).getBytes(StandardCharsets.US_ASCII));
            halfSent.getOutputStream().flush();
            idle.getOutputStream().write("GET /v0/status HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                    .getBytes(StandardCharsets.US_ASCII));
            idle.getOutputStream().flush();
            assertThat(readHead(idle.getInputStream())).as("status answer on the keep-alive connection")
                    .startsWith("HTTP/1.1 200");

            first.terminate();
            assertThat(first.awaitExit(SIGTERM_EXIT))
                    .as("exit status after SIGTERM with a half-sent request and an idle connection\n%s",
                            first.describe())
                    .isZero();
            for (Socket s : List.of(halfSent, idle)) {
                String end = endOf(s);
                assertThat(end).as("how the connection ended").matches("(closed|reset|HTTP/1\\.1 \\d{3}.*)");
            }
        }
    }

    /**
     * An upload in progress at SIGTERM is read whole and answered within the grace: the node waits
     * for a body still arriving as it waits for a request in progress, and the value is there after
     * a restart.
     */
    @Test
    void anUploadInProgressAtSigtermIsReadWholeAndAnswered() throws Exception {
        Node node = new Node();
        NodeJvm first = node.start("n1");
        byte[] value = "u".repeat(100_000).getBytes(StandardCharsets.US_ASCII);
        try (Socket upload = connect(node.http)) {
            OutputStream out = upload.getOutputStream();
            out.write(("PUT /v0/entity?id=uploading HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " + value.length
                    + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(value, 0, value.length / 2);
            out.flush();
            // SIGTERM only once the node has read the headers: it holds the body's bytes from then on.
            Await.until("the node to read the upload's headers", ANSWERS,
                    () -> requestBodyBytesHeld(node.http) >= value.length);

            first.terminate();
            // The rest of the body goes once the gateway has stopped accepting: its drain has begun.
            Await.until("the node to stop accepting connections", SIGTERM_EXIT, () -> !accepts(node.http),
                    first::describe);
            out.write(value, value.length / 2, value.length - value.length / 2);
            out.flush();
            assertThat(readHead(upload.getInputStream())).as("the answer to the upload").startsWith("HTTP/1.1 201");
        }
        assertThat(first.awaitExit(SIGTERM_EXIT)).as("exit status after SIGTERM\n%s", first.describe()).isZero();

        node.start("n1-restarted");
        assertThat(node.client().get("uploading").get(ANSWERS.toSeconds(), TimeUnit.SECONDS))
                .as("the uploaded value after a restart").hasValueSatisfying(v -> assertThat(v).isEqualTo(value));
    }

    /**
     * A node that is still starting (here: trying to join a cluster that does not answer) stops on
     * SIGTERM as a started one does, with status 0 and a line that says so, rather than the JVM's
     * 143; its data dir has no membership from a start that did not end, nor a copy of one.
     */
    @Test
    void sigtermWhileStartingExitsZeroAndLeavesNoMembership() throws Exception {
        int[] ports = Ports.freePorts(4);
        Path data = tmp.resolve("joining");
        NodeJvm joining = nodes.launch("joining").args("--join", "--node-id", "n2",
                "--cluster", clusterMember("n1", ports[0], ports[1]) + "," + clusterMember("n2", ports[2], ports[3]),
                "--data-dir", data.toString()).start();
        Await.until("the node to try to join", NodeJvm.READY_TIMEOUT,
                () -> joining.stdout().contains("cannot join yet"), joining::describe);

        joining.terminate();
        assertThat(joining.awaitExit(SIGTERM_EXIT)).as("exit status after SIGTERM while joining\n%s",
                joining.describe()).isZero();
        assertThat(joining.stdout()).as("the log says it stopped\n%s", joining.describe())
                .contains("stopped before it had started");
        try (var files = Files.list(data)) {
            assertThat(files.map(f -> f.getFileName().toString()))
                    .as("what the data dir holds").noneMatch(name -> name.startsWith(MembershipStore.FILE_NAME));
        }
    }

    /** {@code kvorum_http_body_bytes{body="request"}}: the bytes of request bodies the node holds. */
    private static double requestBodyBytesHeld(int port) {
        String sample = "kvorum_http_body_bytes{body=\"request\"} ";
        try (Socket s = connect(port)) {
            s.getOutputStream().write("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
                    .getBytes(StandardCharsets.US_ASCII));
            return new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8).lines()
                    .filter(line -> line.startsWith(sample))
                    .mapToDouble(line -> Double.parseDouble(line.substring(sample.length()).trim()))
                    .findFirst().orElseThrow(() -> new AssertionError("no " + sample + "in /metrics"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static boolean accepts(int port) {
        try (Socket probe = new Socket(InetAddress.getLoopbackAddress(), port)) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static Socket connect(int port) throws IOException {
        Socket s = new Socket(InetAddress.getLoopbackAddress(), port);
        s.setSoTimeout((int) ANSWERS.toMillis());
        return s;
    }

    /** Reads an HTTP response head (status line and headers) and the Content-Length body after it. */
    private static String readHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        while (!head.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
            int b = in.read();
            if (b < 0) {
                break;
            }
            head.write(b);
        }
        String text = head.toString(StandardCharsets.ISO_8859_1);
        int length = text.lines().filter(l -> l.toLowerCase().startsWith("content-length:"))
                .map(l -> Integer.parseInt(l.substring(l.indexOf(':') + 1).trim())).findFirst().orElse(0);
        in.readNBytes(length);
        return text;
    }

    /**
     * What the node did with a connection once it exited: "closed" (EOF), "reset", or the status
     * line of an answer. A read that times out fails the test: the connection hung.
     */
    private static String endOf(Socket s) {
        try {
            InputStream in = s.getInputStream();
            int first = in.read();
            if (first < 0) {
                return "closed";
            }
            String rest = readHead(in);
            return ((char) first + rest).lines().findFirst().orElse("");
        } catch (SocketTimeoutException e) {
            throw new AssertionError("a connection hung after the node exited", e);
        } catch (IOException e) {
            return "reset";
        }
    }

    /** One node's command line; a restart reuses it. */
    private final class Node {
        final int http;
        final List<String> args;

        Node() {
            int[] ports = Ports.freePorts(2);
            http = ports[0];
            args = List.of("--cluster", clusterMember("n1", ports[0], ports[1]),
                    "--data-dir", tmp.resolve("data").toString());
        }

        NodeJvm start(String name) {
            return nodes.launch(name).args(args).startReady(http);
        }

        /** A new client, so that no connection pooled before a restart is reused after it. */
        KvorumClient client() {
            return KvorumClient.create(loopbackUri(http), Duration.ofSeconds(30));
        }
    }
}
