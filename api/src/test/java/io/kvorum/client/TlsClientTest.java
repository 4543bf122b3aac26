package io.kvorum.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvorum.client.placement.ClusterView;
import io.kvorum.client.placement.ReplicaRouter;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The driver against a node that serves HTTPS and asks for a bearer token (docs/operations.md#security), with
 * certificates from {@code ./kvorum certs}: it trusts the CA it is given and nothing else, checks
 * that the certificate names the host it dialled, and sends the token with every request.
 */
class TlsClientTest {

    @TempDir
    static Path pki;
    private static SslContext serverTls;
    private static SslContext otherServerTls;
    private final List<AutoCloseable> open = new ArrayList<>();

    @BeforeAll
    static void certificates() throws Exception {
        run(root().resolve("kvorum").toString(), "certs", pki.resolve("ours").toString(), "n1");
        run(root().resolve("kvorum").toString(), "certs", pki.resolve("other").toString(), "n1");
        serverTls = SslContextBuilder.forServer(pki.resolve("ours/n1.pem").toFile(), pki.resolve("ours/n1.key").toFile()).build();
        otherServerTls = SslContextBuilder.forServer(pki.resolve("other/n1.pem").toFile(),
                pki.resolve("other/n1.key").toFile()).build();
    }

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable c : open) {
            c.close();
        }
    }

    private <T extends AutoCloseable> T closing(T c) {
        open.add(c);
        return c;
    }

    private static FakeNode.Script tokenChecking(String token) {
        return (request, n) -> !("Bearer " + token).equals(request.headers().get("Authorization"))
                ? FakeNode.answer(401, "authentication required\n", "WWW-Authenticate", "Bearer realm=\"kvorum\"")
                : request.method().equals(HttpMethod.PUT) ? FakeNode.answer(201, "")
                : FakeNode.answer(200, "value");
    }

    private KvorumClient client(FakeNode node, Path ca, String token) {
        KvorumClient.Builder b = KvorumClient.builder().endpoints(node.uri()).requestTimeout(Duration.ofSeconds(10))
                .retryPolicy(RetryPolicy.NONE);
        if (ca != null) {
            b.trustCertificates(ca);
        }
        if (token != null) {
            b.bearerToken(token);
        }
        return closing(b.build());
    }

    @Test
    void readsAndWritesOverHttpsWithTheCaAndTheToken() throws Exception {
        FakeNode node = closing(FakeNode.startHttps(serverTls, tokenChecking("t0k3n")));
        KvorumClient client = client(node, pki.resolve("ours/ca.pem"), "t0k3n");

        client.put("k", "v".getBytes(StandardCharsets.UTF_8)).get(10, TimeUnit.SECONDS);
        assertThat(client.get("k").get(10, TimeUnit.SECONDS)).hasValueSatisfying(
                v -> assertThat(new String(v, StandardCharsets.UTF_8)).isEqualTo("value"));
        assertThat(node.seen).extracting(FakeNode.Seen::authorization).containsOnly("Bearer t0k3n");
        assertThat(client.toString()).doesNotContain("t0k3n");
    }

    @Test
    void aWrongTokenIsUnauthorizedAndNotRetried() throws Exception {
        FakeNode node = closing(FakeNode.startHttps(serverTls, tokenChecking("right")));
        KvorumClient client = closing(KvorumClient.builder().endpoints(node.uri()).requestTimeout(Duration.ofSeconds(10))
                .trustCertificates(pki.resolve("ours/ca.pem")).bearerToken("wrong").build());

        assertThatThrownBy(() -> client.get("k").join()).isInstanceOf(CompletionException.class)
                .hasCauseInstanceOf(UnauthorizedException.class).satisfies(e -> assertThat(e).hasMessageNotContaining("wrong"));
        assertThat(node.seen).as("a 401 is not retried").hasSize(1);
    }

    @Test
    void aNodeWhoseCertificateAnotherCaSignedIsRefused() throws Exception {
        FakeNode impostor = closing(FakeNode.startHttps(otherServerTls, tokenChecking("t")));
        KvorumClient client = client(impostor, pki.resolve("ours/ca.pem"), "t");

        // The path builder finds no issuer (another CA's name), or the validator refuses the signature
        // (a CA of the same name): either way a certificate-path failure, and the message says TLS.
        assertThatThrownBy(() -> client.get("k").get(10, TimeUnit.SECONDS))
                .hasRootCauseInstanceOf(java.security.GeneralSecurityException.class)
                .hasMessageContaining("TLS handshake");
        assertThat(impostor.seen).as("no request reached it").isEmpty();
    }

    @Test
    void aCaAddedToTheTrustFileIsTrustedFromALaterHandshakeWithoutANewClient(@TempDir Path dir) throws Exception {
        Path trust = dir.resolve("ca.pem");
        Files.copy(pki.resolve("ours/ca.pem"), trust);
        FakeNode moved = closing(FakeNode.startHttps(otherServerTls, tokenChecking("t")));
        KvorumClient client = client(moved, trust, "t");
        assertThatThrownBy(() -> client.get("k").get(10, TimeUnit.SECONDS)).hasMessageContaining("TLS handshake");

        // The cluster moves to another CA: both in the file first, as the README says.
        Path next = dir.resolve("ca.pem.next");
        Files.writeString(next, Files.readString(pki.resolve("ours/ca.pem")) + Files.readString(pki.resolve("other/ca.pem")));
        Files.move(next, trust, java.nio.file.StandardCopyOption.REPLACE_EXISTING, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100)).ignoreExceptions()
                .untilAsserted(() -> assertThat(client.get("k").get(10, TimeUnit.SECONDS)).isPresent());

        Files.delete(trust);
        FakeNode stayed = closing(FakeNode.startHttps(serverTls, tokenChecking("t")));
        KvorumClient another = client(stayed, pki.resolve("ours/ca.pem"), "t");
        assertThat(another.get("k").get(10, TimeUnit.SECONDS)).isPresent();
        assertThat(client.get("k").get(10, TimeUnit.SECONDS)).as("a file gone for a moment keeps the trust before").isPresent();
    }

    @Test
    void aRefusedHandshakeIsAConnectFailureThatIsNotRetriedAndLeavesTheNodeUp() throws Exception {
        FakeNode impostor = closing(FakeNode.startHttps(otherServerTls, tokenChecking("t")));
        KvorumClient client = closing(KvorumClient.builder().endpoints(impostor.uri()).trustCertificates(pki.resolve("ours/ca.pem"))
                .requestTimeout(Duration.ofSeconds(10)).retryPolicy(new RetryPolicy(3, Duration.ofMillis(1), Duration.ofMillis(5))).build());

        assertThatThrownBy(() -> client.get("k").get(10, TimeUnit.SECONDS)).cause()
                .isInstanceOf(java.net.ConnectException.class).hasMessageContaining("TLS handshake");
        assertThat(impostor.connections).as("the same certificate would fail again: one attempt").hasValue(1);
        assertThat(client.routing().endpoints().get(0).healthy()).as("the client's trust is at fault, not the node").isTrue();
    }

    @Test
    void anHttpsEndpointThatAnswersPlainHttpIsNamedSoNotDumped() throws Exception {
        FakeNode plain = closing(FakeNode.start(tokenChecking("t")));
        java.net.URI https = java.net.URI.create("https://127.0.0.1:" + plain.port());
        KvorumClient toPlain = closing(KvorumClient.builder().endpoints(https).trustCertificates(pki.resolve("ours/ca.pem"))
                .requestTimeout(Duration.ofSeconds(10)).retryPolicy(RetryPolicy.NONE).build());

        assertThatThrownBy(() -> toPlain.get("k").get(10, TimeUnit.SECONDS)).cause()
                .isInstanceOf(java.net.ConnectException.class).hasMessageContaining("without TLS (a plain http:// node?)")
                .hasMessageNotContaining("485454");
    }

    @Test
    void anHttpEndpointOnAnHttpsNodeIsHintedAt() throws Exception {
        FakeNode tls = closing(FakeNode.startHttps(serverTls, tokenChecking("t")));
        KvorumClient plain = closing(KvorumClient.builder().endpoints(java.net.URI.create("http://127.0.0.1:" + tls.port()))
                .requestTimeout(Duration.ofSeconds(10)).retryPolicy(RetryPolicy.NONE).build());

        assertThatThrownBy(() -> plain.get("k").get(10, TimeUnit.SECONDS)).cause()
                .isInstanceOf(KvorumConnectionException.class)
                .hasMessageContaining("no answer ever received on it (if the node serves HTTPS, its endpoint is https://)");
    }

    @Test
    void withoutTheCaTheJdkTrustStoreRefusesAPrivateCa() throws Exception {
        FakeNode node = closing(FakeNode.startHttps(serverTls, tokenChecking("t")));
        KvorumClient client = client(node, null, "t");

        assertThatThrownBy(() -> client.get("k").get(10, TimeUnit.SECONDS))
                .hasRootCauseInstanceOf(java.security.GeneralSecurityException.class);
        assertThat(node.seen).isEmpty();
    }

    @Test
    void aRoutingClientOverHttpsSendsEachWriteToItsKeysReplica() throws Exception {
        AtomicReference<String> membership = new AtomicReference<>();
        FakeNode.Script script = (request, n) -> request.uri().startsWith("/v0/cluster")
                ? FakeNode.answer(200, membership.get()) : FakeNode.answer(201, "");
        FakeNode a = closing(FakeNode.startHttps(serverTls, script));
        FakeNode b = closing(FakeNode.startHttps(serverTls, script));
        membership.set(MembershipFollowingTest.view(1, MembershipFollowingTest.states(a, "normal", b, "normal")));
        KvorumClient client = closing(KvorumClient.builder().endpoints(a.uri()).trustCertificates(pki.resolve("ours/ca.pem"))
                .requestTimeout(Duration.ofSeconds(10)).routeToReplicas().build());
        assertThat(client.endpoints()).as("members keep the seed's scheme").containsExactlyInAnyOrder(a.uri(), b.uri());

        ReplicaRouter router = ReplicaRouter.of(ClusterView.parse(membership.get()), "https");
        List<String> toB = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            client.put("k" + i, "v".getBytes(StandardCharsets.UTF_8)).get(10, TimeUnit.SECONDS);
            if (router.replicasFor("k" + i, 1).get(0).equals(b.uri())) {
                toB.add("/v0/entity?id=k" + i);
            }
        }
        assertThat(toB).as("the placement puts some of 20 keys on each node").isNotEmpty().hasSizeLessThan(20);
        assertThat(b.seen).filteredOn(s -> s.method().equals("PUT")).extracting(FakeNode.Seen::uri)
                .as("every write went to its key's replica").containsExactlyElementsOf(toB);
    }

    @Test
    void aFileThatHoldsNoCertificateIsRefusedByTheBuilder() throws Exception {
        Path notPem = Files.writeString(pki.resolve("not.pem"), "hello\n");
        assertThatThrownBy(() -> KvorumClient.builder().trustCertificates(notPem))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not.pem");
    }

    private static void run(String... command) throws Exception {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out;
        try (InputStream in = p.getInputStream()) {
            out = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
    }

    private static Path root() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isRegularFile(dir.resolve("kvorum")) && Files.isDirectory(dir.resolve("api"))) {
                return dir;
            }
        }
        throw new AssertionError("no ./kvorum above " + Path.of("").toAbsolutePath());
    }
}
