package io.kvorum.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.client.ForbiddenException;
import io.kvorum.client.KvorumClient;
import io.kvorum.client.RetryPolicy;
import io.kvorum.client.TrustedCa;
import io.kvorum.client.UnauthorizedException;
import io.kvorum.testkit.Await;
import io.kvorum.testkit.KvorumCerts;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/operations.md#security in Docker: the 3-node cluster of the image with certificates from {@code ./kvorum certs}
 * (each naming its node's id and the network alias its peers dial), an admin token and a read
 * token for the metrics scrape (which may read but not write). Quorum writes
 * and reads go over HTTPS with the token, a request without it is refused, the image's HEALTHCHECK
 * reports healthy over HTTPS, and a node killed and started again rejoins the mutual-TLS streams
 * and serves what was written while it was down.
 */
@Timeout(300)
class SecureClusterIT {

    @TempDir
    Path tmp;

    @RegisterExtension
    final ClusterExtension clusters = new ClusterExtension();

    @Test
    void aSecuredClusterServesQuorumRequestsAndARestartedNodeRejoins() throws Exception {
        Path pki = KvorumCerts.make(tmp.resolve("pki"), "n1", "n2", "n3");
        String token = "it-" + UUID.randomUUID();
        String scrapeToken = "it-read-" + UUID.randomUUID();
        Files.writeString(pki.resolve("tokens"), token + " admin operator\n" + scrapeToken + " read prometheus\n");
        readableByTheContainer(pki);
        KvorumCluster cluster = clusters.start(KvorumCluster.withNodes(3).secured(pki, token));
        ClusterNode n1 = cluster.node("n1");
        ClusterNode n2 = cluster.node("n2");
        ClusterNode n3 = cluster.node("n3");
        assertThat(n1.uri().getScheme()).isEqualTo("https");

        KvorumClient.Options all = KvorumClient.Options.quorum(3, 3);
        n1.client().put("secure-1", bytes("one"), all).get(20, TimeUnit.SECONDS);
        assertThat(n2.client().get("secure-1", KvorumClient.Options.quorum(2, 3)).get(20, TimeUnit.SECONDS))
                .hasValueSatisfying(v -> assertThat(v).isEqualTo(bytes("one")));

        try (KvorumClient anonymous = KvorumClient.builder().endpoints(n1.uri()).retryPolicy(RetryPolicy.NONE)
                .trustCertificates(pki.resolve("ca.pem")).build()) {
            assertThat(anonymous.put("secure-1", bytes("overwritten")))
                    .failsWithin(Duration.ofSeconds(20)).withThrowableOfType(java.util.concurrent.ExecutionException.class)
                    .havingCause().isInstanceOf(UnauthorizedException.class);
        }
        assertThat(n3.client().get("secure-1", all).get(20, TimeUnit.SECONDS)).as("untouched by the refused PUT")
                .hasValueSatisfying(v -> assertThat(v).isEqualTo(bytes("one")));

        // A metrics scrape with a read token, as docs/operations.md#tokens-and-roles tells operators to give Prometheus.
        HttpClient https = HttpClient.newBuilder().sslContext(TrustedCa.clientContext(pki.resolve("ca.pem"))).build();
        HttpResponse<String> scrape = https.send(HttpRequest.newBuilder(n2.uri().resolve("/metrics"))
                .header("Authorization", "Bearer " + scrapeToken).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(scrape.statusCode()).as("a scrape with the read token").isEqualTo(200);
        assertThat(scrape.body()).contains("kvorum_requests_total");
        try (KvorumClient readOnly = KvorumClient.builder().endpoints(n2.uri()).retryPolicy(RetryPolicy.NONE)
                .trustCertificates(pki.resolve("ca.pem")).bearerToken(scrapeToken).build()) {
            assertThat(readOnly.get("secure-1").get(20, TimeUnit.SECONDS)).as("a read with the read token").isPresent();
            assertThat(readOnly.put("secure-1", bytes("overwritten")))
                    .failsWithin(Duration.ofSeconds(20)).withThrowableOfType(java.util.concurrent.ExecutionException.class)
                    .havingCause().isInstanceOf(ForbiddenException.class);
        }
        assertThat(n3.client().get("secure-1", all).get(20, TimeUnit.SECONDS)).as("untouched by the forbidden PUT")
                .hasValueSatisfying(v -> assertThat(v).isEqualTo(bytes("one")));

        Await.until("the HEALTHCHECK to report healthy over HTTPS", Duration.ofSeconds(60),
                () -> n1.health().equals("healthy"), () -> "health: " + n1.health() + "\n" + n1.tail(20));

        n3.kill();
        n1.client().put("secure-2", bytes("two"), KvorumClient.Options.quorum(2, 3)).get(20, TimeUnit.SECONDS);
        n3.start();
        Await.until("n3 back in the mutual-TLS streams, serving the write it missed", Duration.ofSeconds(60), () -> {
            try {
                return n1.client().get("secure-2", all).get(20, TimeUnit.SECONDS).isPresent()
                        && n3.client().put("secure-3", bytes("three"), all).get(20, TimeUnit.SECONDS) == null;
            } catch (Exception e) {
                return false;
            }
        }, () -> n3.tail(30));
        assertThat(n3.logs()).as("no token in the logs").doesNotContain(token).doesNotContain(scrapeToken);
        assertThat(n2.logs()).as("no token in the logs").doesNotContain(token).doesNotContain(scrapeToken);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** The node runs as uid 10001: the test's key files (0600, root) must be readable to it in this throwaway copy. */
    private static void readableByTheContainer(Path dir) throws Exception {
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        try (var files = Files.list(dir)) {
            for (Path f : files.toList()) {
                Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-r--r--"));
            }
        }
    }
}
