package io.kvorum.node.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.kvorum.client.TrustedCa;
import io.kvorum.node.TestNode;
import io.kvorum.node.config.NodeOption;
import io.kvorum.testkit.KvorumCerts;
import java.io.InputStream;
import java.math.BigInteger;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Map;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Certificates renewed in their files are served without a restart (operations.md, "Rotating certificates"). */
@Timeout(180)
class LiveTlsTest {

    @TempDir
    Path pki;
    @TempDir
    Path live;

    @BeforeEach
    void certificates() throws Exception {
        KvorumCerts.make(pki, "n1");
        install("n1.pem", "n1.pem");
        install("n1.key", "n1.key");
        install("ca.pem", "ca.pem");
    }

    @Test
    void aRenewedCertificateIsTakenOnceItsKeyAgreesAndAHalfWayRotationKeepsTheOneBefore() throws Exception {
        LiveTls tls = LiveTls.open(files());
        BigInteger first = servedSerial(tls);
        assertThat(first).isEqualTo(serialOf(live.resolve("n1.pem")));
        assertThat(tls.refresh()).as("unchanged files").isFalse();

        KvorumCerts.make(pki, "n1"); // the same CA signs a new certificate with a new key
        install("n1.key", "n1.key");
        assertThat(tls.refresh()).as("the new key without its certificate").isFalse();
        assertThat(servedSerial(tls)).isEqualTo(first);
        assertThat(tls.refresh()).as("still half-way: nothing new to try").isFalse();

        install("n1.pem", "n1.pem");
        assertThat(tls.refresh()).isTrue();
        assertThat(tls.certificateExpiry()).isEqualTo(certificate(pki.resolve("n1.pem")).getNotAfter().toInstant());
        BigInteger renewed = servedSerial(tls);
        assertThat(renewed).isNotEqualTo(first).isEqualTo(serialOf(pki.resolve("n1.pem")));

        Files.delete(live.resolve("n1.pem"));
        assertThat(tls.refresh()).as("a file missing for a moment").isFalse();
        assertThat(servedSerial(tls)).isEqualTo(renewed);
    }

    @Test
    void aNewCaIsTrustedFromTheNextHandshakeAndTheOldOneNoLongerOnceItLeavesTheFile(@TempDir Path other) throws Exception {
        KvorumCerts.make(other, "n2");
        LiveTls tls = LiveTls.open(files());
        X509Certificate[] ours = {certificate(live.resolve("n1.pem"))};
        X509Certificate[] theirs = {certificate(other.resolve("n2.pem"))};
        tls.trustManager().checkClientTrusted(ours, "UNKNOWN");
        assertThatThrownBy(() -> tls.trustManager().checkClientTrusted(theirs, "UNKNOWN"))
                .isInstanceOf(CertificateException.class);

        // The move to another CA: both in the file while the nodes' certificates are replaced ...
        Files.writeString(live.resolve("ca.pem"), Files.readString(pki.resolve("ca.pem")) + Files.readString(other.resolve("ca.pem")));
        assertThat(tls.refresh()).isTrue();
        tls.trustManager().checkClientTrusted(ours, "UNKNOWN");
        tls.trustManager().checkClientTrusted(theirs, "UNKNOWN");

        // ... then the new one alone (this node's own certificate is not checked against its CA file).
        install(other, "ca.pem", "ca.pem");
        assertThat(tls.refresh()).isTrue();
        tls.trustManager().checkClientTrusted(theirs, "UNKNOWN");
        assertThatThrownBy(() -> tls.trustManager().checkClientTrusted(ours, "UNKNOWN"))
                .isInstanceOf(CertificateException.class);
    }

    @Test
    void aRunningNodeServesItsRenewedCertificateToNewConnections(@TempDir Path data) throws Exception {
        try (TestNode node = TestNode.start(data, Map.of(
                NodeOption.TLS_CERT, live.resolve("n1.pem").toString(),
                NodeOption.TLS_KEY, live.resolve("n1.key").toString(),
                NodeOption.TLS_CA, live.resolve("ca.pem").toString()))) {
            int port = node.address().getPort();
            BigInteger first = handshakeSerial(port);
            assertThat(first).isEqualTo(serialOf(live.resolve("n1.pem")));
            assertThat(metricsOver(port)).as("the expiry on /metrics").contains(
                    "kvorum_tls_certificate_expiry_timestamp_seconds " + (double) certificate(live.resolve("n1.pem"))
                            .getNotAfter().toInstant().getEpochSecond());

            KvorumCerts.make(pki, "n1");
            install("n1.key", "n1.key.next");
            install("n1.pem", "n1.pem.next");
            Files.move(live.resolve("n1.key.next"), live.resolve("n1.key"), StandardCopyOption.ATOMIC_MOVE);
            Files.move(live.resolve("n1.pem.next"), live.resolve("n1.pem"), StandardCopyOption.ATOMIC_MOVE);
            BigInteger renewed = serialOf(live.resolve("n1.pem"));
            assertThat(renewed).isNotEqualTo(first);
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
                    .untilAsserted(() -> assertThat(handshakeSerial(port)).isEqualTo(renewed));
        }
    }

    private TlsFiles files() {
        return new TlsFiles(live.resolve("n1.pem"), live.resolve("n1.key"), live.resolve("ca.pem"));
    }

    private void install(String from, String to) throws Exception {
        install(pki, from, to);
    }

    private void install(Path dir, String from, String to) throws Exception {
        Files.copy(dir.resolve(from), live.resolve(to), StandardCopyOption.REPLACE_EXISTING);
    }

    /** The serial number of the certificate the key manager would present now. */
    private static BigInteger servedSerial(LiveTls tls) {
        String alias = tls.keyManager().chooseEngineServerAlias("EC", null, null);
        return tls.keyManager().getCertificateChain(alias)[0].getSerialNumber();
    }

    /** The serial number of the certificate a new HTTPS connection to the node is shown. */
    private BigInteger handshakeSerial(int port) throws Exception {
        try (SSLSocket socket = (SSLSocket) TrustedCa.clientContext(live.resolve("ca.pem")).getSocketFactory()
                .createSocket("127.0.0.1", port)) {
            socket.setSoTimeout(5_000);
            socket.startHandshake();
            return ((X509Certificate) socket.getSession().getPeerCertificates()[0]).getSerialNumber();
        }
    }

    private String metricsOver(int port) throws Exception {
        HttpClient https = HttpClient.newBuilder().sslContext(TrustedCa.clientContext(live.resolve("ca.pem"))).build();
        HttpResponse<String> answer = https.send(HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + port + "/metrics"))
                .build(), HttpResponse.BodyHandlers.ofString());
        assertThat(answer.statusCode()).isEqualTo(200);
        return answer.body();
    }

    private static BigInteger serialOf(Path pem) throws Exception {
        return certificate(pem).getSerialNumber();
    }

    private static X509Certificate certificate(Path pem) throws Exception {
        try (InputStream in = Files.newInputStream(pem)) {
            return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
        }
    }
}
