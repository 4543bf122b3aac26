package io.kvorum.node.process;

import static io.kvorum.testkit.NodeJvm.clusterMember;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvorum.client.KvorumClient;
import io.kvorum.client.RangeReader;
import io.grpc.ManagedChannel;
import io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.NettyChannelBuilder;
import io.kvorum.node.admin.StatusCommand;
import io.kvorum.node.cluster.Membership;
import io.kvorum.node.cluster.Topology;
import io.kvorum.proto.MemberProto;
import io.kvorum.proto.MembershipGrpc;
import io.kvorum.proto.MembershipProto;
import io.kvorum.proto.ProposeRequest;
import io.kvorum.proto.RequestHeader;
import io.kvorum.testkit.Await;
import io.kvorum.testkit.NodeJvm;
import io.kvorum.testkit.Ports;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/operations.md#security on node processes started as an operator starts them, with certificates from
 * {@code ./kvorum certs}: HTTPS and bearer tokens for clients (quorum requests, a client without the
 * CA, curl, missing and wrong tokens, plain HTTP to the HTTPS port, rotation without restart), mutual
 * TLS between nodes (a member with a certificate of another CA, or without TLS, can neither write to
 * nor read from the others, and they log the refusal), and logs that never carry a token, a value or
 * a key file's content.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class SecurityIT {

    /** docs/operations.md#security: the token file is re-read within 10 s of a change (the node re-reads it every 2 s). */
    private static final Duration ROTATION_BOUND = Duration.ofSeconds(10);
    private static final Duration READY = Duration.ofSeconds(60);

    @TempDir
    Path tmp;

    @RegisterExtension
    final NodeProcesses nodes = new NodeProcesses(() -> tmp);

    private final List<String> secrets = new ArrayList<>();
    private Path pki;
    private Path tokenFile;
    private String token;
    private HttpClient https;
    private int[] ports;
    private String cluster;

    @BeforeEach
    void certificatesAndTokens() throws Exception {
        pki = Certificates.make(tmp.resolve("pki"), "n1", "n2", "n3");
        token = secret("token");
        tokenFile = Files.writeString(tmp.resolve("tokens"), token + "\n");
        https = HttpClient.newBuilder().sslContext(Certificates.trusting(pki)).connectTimeout(Duration.ofSeconds(5))
                .version(HttpClient.Version.HTTP_1_1).build();
        ports = Ports.freePorts(6);
        List<String> members = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            members.add(clusterMember("n" + (i + 1), ports[2 * i], ports[2 * i + 1]));
        }
        cluster = String.join(",", members);
    }

    /** A random string that no log may contain. */
    private String secret(String what) {
        byte[] bytes = new byte[12];
        new SecureRandom().nextBytes(bytes);
        String s = what + "-" + HexFormat.of().formatHex(bytes);
        secrets.add(s);
        return s;
    }

    private NodeJvm start(int node, List<String> tls) {
        List<String> args = new ArrayList<>(List.of("--cluster", cluster, "--node-id", "n" + (node + 1),
                "--data-dir", tmp.resolve("data-n" + (node + 1)).toString(), "--auth-token-file", tokenFile.toString(),
                "--anti-entropy-interval", "0"));
        args.addAll(tls);
        return nodes.launch("n" + (node + 1)).args(args).start();
    }

    private NodeJvm startSecured(int node) {
        return start(node, Certificates.flags(pki, "n" + (node + 1), pki));
    }

    private void awaitReady(NodeJvm node, int index, boolean tls) {
        awaitReady(node, URI.create((tls ? "https" : "http") + "://127.0.0.1:" + ports[2 * index] + "/v0/status"),
                tls ? https : HttpClient.newHttpClient());
    }

    /** Polls {@code status} with {@code client} until it answers 200, failing at once if the node exits. */
    private static void awaitReady(NodeJvm node, URI status, HttpClient client) {
        node.awaitReady(client, status, READY);
    }

    private URI entity(int node, String key, String query) {
        return URI.create("https://127.0.0.1:" + ports[2 * node] + "/v0/entity?id=" + key + "&" + query);
    }

    private HttpResponse<String> send(String method, URI uri, String body, String authorization) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(20))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (authorization != null) {
            request.header("Authorization", authorization);
        }
        return https.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private String bearer(String t) {
        return "Bearer " + t;
    }

    @Test
    void aSecuredClusterServesOnlyHttpsRequestsWithAToken() throws Exception {
        List<NodeJvm> cluster = List.of(startSecured(0), startSecured(1), startSecured(2));
        for (int i = 0; i < 3; i++) {
            awaitReady(cluster.get(i), i, true);
        }
        String value = secret("value");

        // Quorum write and read over HTTPS, with the token: the nodes replicate over mutual TLS.
        assertThat(send("PUT", entity(0, "k1", "ack=3&from=3"), value, bearer(token)).statusCode()).isEqualTo(201);
        assertThat(send("GET", entity(1, "k1", "ack=2&from=3"), null, bearer(token)).body()).isEqualTo(value);

        // A client that does not trust the CA fails the handshake.
        HttpClient untrusting = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        assertThatThrownBy(() -> untrusting.send(HttpRequest.newBuilder(entity(0, "k1", "")).build(),
                HttpResponse.BodyHandlers.ofString())).isInstanceOf(SSLHandshakeException.class);

        // Without a token, or with a wrong one: 401 with the challenge, and no effect.
        String wrong = secret("wrong-token");
        for (String authorization : new String[] {null, bearer(wrong), "Basic " + token}) {
            HttpResponse<String> refused = send("PUT", entity(2, "k1", "ack=1&from=3"), secret("overwrite"), authorization);
            assertThat(refused.statusCode()).as("PUT with %s", authorization == null ? "no token" : "a bad one")
                    .isEqualTo(401);
            assertThat(refused.headers().firstValue("WWW-Authenticate")).hasValueSatisfying(
                    h -> assertThat(h).startsWith("Bearer"));
            assertThat(send("DELETE", entity(2, "k1", ""), null, authorization).statusCode()).isEqualTo(401);
            assertThat(send("GET", entity(2, "k1", ""), null, authorization).statusCode()).isEqualTo(401);
        }
        assertThat(send("GET", entity(2, "k1", "ack=3&from=3"), null, bearer(token)).body())
                .as("untouched by the refused requests").isEqualTo(value);
        assertThat(send("GET", URI.create("https://127.0.0.1:" + ports[0] + "/v0/status"), null, null).statusCode())
                .as("status needs no token").isEqualTo(200);

        // curl, as the README shows it.
        String curlValue = secret("curl-value");
        assertThat(curl("-X", "PUT", "--data-binary", curlValue, entity(1, "k2", "ack=2&from=3").toString()))
                .isEqualTo("201");
        assertThat(send("GET", entity(0, "k2", "ack=2&from=3"), null, bearer(token)).body()).isEqualTo(curlValue);

        // The Java client, routing to replicas: trust in the CA and the token, ranges included.
        String driverValue = secret("driver-value");
        try (KvorumClient kv = KvorumClient.builder().endpoints(URI.create("https://127.0.0.1:" + ports[0]))
                .trustCertificates(pki.resolve("ca.pem")).bearerToken(token).routeToReplicas().build()) {
            assertThat(kv.endpoints()).as("the members, learned from the seed over HTTPS").hasSize(3)
                    .allSatisfy(u -> assertThat(u.getScheme()).isEqualTo("https"));
            kv.put("driver-1", driverValue.getBytes(StandardCharsets.UTF_8)).get(20, TimeUnit.SECONDS);
            assertThat(kv.get("driver-1").get(20, TimeUnit.SECONDS)).hasValueSatisfying(
                    v -> assertThat(new String(v, StandardCharsets.UTF_8)).isEqualTo(driverValue));
            try (RangeReader range = kv.range("driver-", "driver.")) {
                assertThat(range.stream().map(RangeReader.Entry::keyString)).containsExactly("driver-1");
            }
        }

        // ./kvorum status, trusting the CA; without it the node cannot be reached.
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        String url = "https://127.0.0.1:" + ports[0];
        assertThat(StatusCommand.run(List.of(url, "--ca", pki.resolve("ca.pem").toString()), new PrintStream(out),
                new PrintStream(err), System.currentTimeMillis())).as("status with --ca: %s%s", out, err).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("n2").contains("n3");
        ByteArrayOutputStream untrusted = new ByteArrayOutputStream();
        assertThat(StatusCommand.run(List.of(url), new PrintStream(new ByteArrayOutputStream()), new PrintStream(untrusted),
                System.currentTimeMillis())).as("status without the CA").isEqualTo(2);
        assertThat(untrusted.toString(StandardCharsets.UTF_8)).as("said in words, with the remedy")
                .contains("its certificate is not trusted").contains("--ca FILE").doesNotContain("sun.security");
        ByteArrayOutputStream plain = new ByteArrayOutputStream();
        assertThat(StatusCommand.run(List.of("http://127.0.0.1:" + ports[0]), new PrintStream(new ByteArrayOutputStream()),
                new PrintStream(plain), System.currentTimeMillis())).as("status over plain HTTP").isEqualTo(2);
        assertThat(plain.toString(StandardCharsets.UTF_8)).contains("if it serves HTTPS, ask " + url + "/v0/status");

        // Plain HTTP to the HTTPS port: no HTTP answer, and nothing stored.
        String plainAnswer = plainHttpPut(ports[0], "k3", bearer(token), secret("plain-value"));
        assertThat(plainAnswer).as("what a plain-HTTP client reads back").doesNotStartWith("HTTP/");
        assertThat(send("GET", entity(0, "k3", "ack=3&from=3"), null, bearer(token)).statusCode()).isEqualTo(404);

        // Rotation: a second token, then the first retired; an empty rewrite keeps what was read before.
        String next = secret("next-token");
        Files.writeString(tokenFile, token + "\n" + next + "\n");
        awaitStatus("the new token accepted", next, 200);
        assertThat(send("GET", entity(0, "k1", ""), null, bearer(token)).statusCode()).as("both valid").isEqualTo(200);
        Files.writeString(tokenFile, next + "\n");
        awaitStatus("the old token refused", token, 401);
        Files.writeString(tokenFile, "");
        Await.until("a node noticing the empty token file", ROTATION_BOUND,
                () -> cluster.get(1).stdout().contains("holds no token"), cluster.get(1)::describe);
        assertThat(send("GET", entity(1, "k1", ""), null, bearer(next)).statusCode())
                .as("the tokens read before the file was emptied").isEqualTo(200);

        for (NodeJvm node : cluster) {
            node.terminate();
            assertThat(node.awaitExit(Duration.ofSeconds(10))).isZero();
        }
        assertLogsHoldNoSecret(cluster);
    }

    /** Polls until every node answers {@code status} to a GET with {@code t}, within {@link #ROTATION_BOUND}. */
    private void awaitStatus(String what, String t, int status) {
        Await.until(what, ROTATION_BOUND, () -> {
            for (int node = 0; node < 3; node++) {
                try {
                    if (send("GET", entity(node, "k1", ""), null, bearer(t)).statusCode() != status) {
                        return false;
                    }
                } catch (Exception e) {
                    return false;
                }
            }
            return true;
        });
    }

    private String curl(String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}",
                "--cacert", pki.resolve("ca.pem").toString(), "-H", "Authorization: Bearer " + token));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out;
        try (InputStream in = p.getInputStream()) {
            out = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        return out.trim();
    }

    /** Sends a plain-HTTP PUT to an HTTPS port and returns whatever comes back before the connection closes. */
    private static String plainHttpPut(int port, String key, String authorization, String value) throws IOException {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 5000);
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            out.write(("PUT /v0/entity?id=" + key + "&ack=1&from=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: "
                    + authorization + "\r\nContent-Length: " + value.length() + "\r\n\r\n" + value)
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            return new String(socket.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
        }
    }

    @Test
    void aMemberWithACertificateOfAnotherCaOrWithoutTlsIsRefused() throws Exception {
        Path foreign = Certificates.make(tmp.resolve("foreign-pki"), "n3");
        NodeJvm n1 = startSecured(0);
        NodeJvm n2 = startSecured(1);
        awaitReady(n1, 0, true);
        awaitReady(n2, 1, true);

        NodeJvm impostor = start(2, Certificates.flags(foreign, "n3", foreign));
        awaitReadyTrusting(impostor, 2, foreign);
        assertRefused(impostor, foreign, "another CA", n1, "is not signed by the CA");
        impostor.terminate();
        assertThat(impostor.awaitExit(Duration.ofSeconds(10))).isZero();

        NodeJvm plain = start(2, List.of());
        awaitReady(plain, 2, false);
        assertRefused(plain, null, "no TLS", n1, "does not speak this node's protocol");
        plain.terminate();
        assertThat(plain.awaitExit(Duration.ofSeconds(10))).isZero();

        // Control: the same member with the cluster's certificate takes part, so the refusals were TLS.
        NodeJvm member = startSecured(2);
        awaitReady(member, 2, true);
        awaitWritingToAllThree(member, 2);
        assertLogsHoldNoSecret(List.of(n1, n2, impostor, plain, member));
    }

    /** Waits until a write through {@code node} (at {@code index}) with {@code ack=3&from=3} answers 201. */
    private void awaitWritingToAllThree(NodeJvm node, int index) {
        Await.until(node.name() + " writing to all three", READY, () -> {
            try {
                return send("PUT", entity(index, "control", "ack=3&from=3"), "v", bearer(token)).statusCode() == 201;
            } catch (Exception e) {
                return false;
            }
        }, node::describe);
    }

    @Test
    void aCertificateOfTheClusterCaForAnotherIdCannotTakeAMembersPlace() throws Exception {
        Certificates.make(pki, "n9"); // the cluster's own CA, for an id that is no member
        NodeJvm n1 = startSecured(0);
        NodeJvm n2 = startSecured(1);
        awaitReady(n1, 0, true);
        awaitReady(n2, 1, true);

        NodeJvm impostor = start(2, Certificates.flags(pki, "n9", pki)); // n3's options, n9's certificate
        awaitReady(impostor, 2, true);
        Await.until("the impostor's warning about its own certificate", READY,
                () -> impostor.stdout().contains("n9, not this node's id n3"), impostor::describe);
        assertThat(send("PUT", entity(0, "needs-n3", "ack=3&from=3"), "v", bearer(token)).statusCode())
                .as("a write through n1 that needs n3").isEqualTo(504);
        assertRefused(impostor, pki, "a certificate for n9", n1, "claim to come from member 'n3'");
        Await.until("n1 refusing the impostor's answers", READY,
                () -> n1.stdout().contains("(CN=n9) names localhost, n9, not member n3"), n1::describe);
        impostor.terminate();
        assertThat(impostor.awaitExit(Duration.ofSeconds(10))).isZero();

        NodeJvm member = startSecured(2);
        awaitReady(member, 2, true);
        awaitWritingToAllThree(n1, 0);
        assertAForgedProposalChangesNothing(n1);
        assertLogsHoldNoSecret(List.of(n1, n2, impostor, member));
    }

    /**
     * n2's own certificate and key, used as a member gone rogue would: a {@code Membership.Propose}
     * to n1 of an epoch that drops n3. n1 is the change coordinator, not n2: refused, nothing changes.
     */
    private void assertAForgedProposalChangesNothing(NodeJvm n1) throws Exception {
        String identity = Membership.first("kvorum", Topology.parse(cluster), 3).identity();
        MembershipProto.Builder forged = MembershipProto.newBuilder().setName("kvorum").setIdentity(identity)
                .setEpoch(2).setReplicationFactor(3);
        for (int i = 0; i < 2; i++) {
            forged.addMembers(MemberProto.newBuilder().setId("n" + (i + 1)).setHost("127.0.0.1")
                    .setHttp(ports[2 * i]).setGrpc(ports[2 * i + 1]).setState("normal"));
        }
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", ports[1])
                .sslContext(GrpcSslContexts.forClient().keyManager(pki.resolve("n2.pem").toFile(), pki.resolve("n2.key").toFile())
                        .trustManager(pki.resolve("ca.pem").toFile()).build())
                .build();
        try {
            RequestHeader header = RequestHeader.newBuilder().setClusterId(identity).setClusterName("kvorum")
                    .setSender("n2").setEpoch(1).setTimeoutMillis(10_000).build();
            assertThatThrownBy(() -> MembershipGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
                    .propose(ProposeRequest.newBuilder().setHeader(header).setMembership(forged).build()))
                    .as("a proposal from n2, which does not coordinate changes").hasMessageContaining("FAILED_PRECONDITION")
                    .hasMessageContaining("only the change coordinator");
        } finally {
            channel.shutdownNow();
        }
        HttpResponse<String> view = send("GET", URI.create("https://127.0.0.1:" + ports[0] + "/v0/cluster"), null, bearer(token));
        assertThat(view.body()).as("n1's membership").contains("\"epoch\":1").contains("\"n3\"");
        Await.until("n1 logging the refused proposal", READY,
                () -> n1.stdout().contains("proposed by n2 refused"), n1::describe);
    }

    /** Readiness of a node whose certificate the cluster's CA did not sign. */
    private void awaitReadyTrusting(NodeJvm node, int index, Path ownCa) throws Exception {
        awaitReady(node, URI.create("https://127.0.0.1:" + ports[2 * index] + "/v0/status"),
                HttpClient.newBuilder().sslContext(Certificates.trusting(ownCa)).build());
    }

    /**
     * Requests coordinated by the misfit that need a member fail with 504, one it serves alone is
     * stored on it alone, and the members log the refusal.
     */
    private void assertRefused(NodeJvm misfit, Path misfitCa, String what, NodeJvm member, String logged) throws Exception {
        HttpClient client = misfitCa != null
                ? HttpClient.newBuilder().sslContext(Certificates.trusting(misfitCa)).build()
                : HttpClient.newHttpClient();
        String base = (misfitCa != null ? "https" : "http") + "://127.0.0.1:" + ports[4] + "/v0/entity?id=";
        String key = "from-" + what.replace(' ', '-');
        HttpResponse<String> needsPeers = client.send(HttpRequest.newBuilder(URI.create(base + key + "&ack=2&from=3"))
                .header("Authorization", bearer(token)).PUT(HttpRequest.BodyPublishers.ofString("x")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(needsPeers.statusCode()).as("a PUT through the node with %s that needs a peer", what).isEqualTo(504);
        HttpResponse<String> alone = client.send(HttpRequest.newBuilder(URI.create(base + key + "&ack=1&from=3"))
                .header("Authorization", bearer(token)).PUT(HttpRequest.BodyPublishers.ofString("x")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(alone.statusCode()).as("a PUT it may acknowledge alone").isEqualTo(201);
        // n1 and n2 both answer (the misfit cannot), so 404 means neither stored what the misfit sent.
        assertThat(send("GET", entity(0, key, "ack=2&from=3"), null, bearer(token)).statusCode())
                .as("the key the node with %s wrote, on the members", what).isEqualTo(404);
        Await.until("a member logging the refusal of the node with " + what, Duration.ofSeconds(30),
                () -> member.stdout().contains(logged), member::describe);
    }

    /** docs/operations.md#security: no token (valid or not), no value and no line of a key file in any log, not even as a hex dump. */
    private void assertLogsHoldNoSecret(List<NodeJvm> processes) throws IOException {
        List<String> keyLines = new ArrayList<>();
        try (var files = Files.walk(tmp)) {
            for (Path key : files.filter(p -> p.toString().endsWith(".key")).toList()) {
                Files.readAllLines(key).stream().filter(l -> !l.startsWith("-----") && !l.isBlank()).forEach(keyLines::add);
            }
        }
        assertThat(keyLines).as("key material to look for").isNotEmpty();
        for (NodeJvm p : processes) {
            String logs = p.stdout() + p.stderr();
            assertThat(logs).as("logs of %s", p.name()).isNotBlank();
            for (String secret : secrets) {
                assertThat(logs).as("logs of %s", p.name()).doesNotContain(secret)
                        .doesNotContainIgnoringCase(HexFormat.of().formatHex(secret.getBytes(StandardCharsets.UTF_8)));
            }
            for (String line : keyLines) {
                assertThat(logs).as("logs of %s", p.name()).doesNotContain(line);
            }
        }
    }
}
