package io.kvorum.node.security;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.testkit.KvorumCerts;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** What a node says at start of its own certificate: what its peers would refuse (operations.md, "Security"). */
@Timeout(120)
class TlsFilesTest {

    @TempDir
    static Path pki;
    private static TlsFiles n1;
    private static X509Certificate certificate;

    @BeforeAll
    static void certificates() throws Exception {
        KvorumCerts.make(pki, "n1", "n2=db2.example.com");
        n1 = new TlsFiles(pki.resolve("n1.pem"), pki.resolve("n1.key"), pki.resolve("ca.pem"));
        n1.material(); // the files load
        try (InputStream in = Files.newInputStream(pki.resolve("n1.pem"))) {
            certificate = (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
        }
    }

    @Test
    void aCertificateInItsDatesThatNamesTheNodesAddressHasNoProblem() {
        assertThat(n1.ownCertificateProblems("127.0.0.1", Instant.now())).isEmpty();
        assertThat(n1.ownCertificateProblems("localhost", Instant.now())).isEmpty();
        assertThat(n1.ownCertificateProblems("LOCALHOST", Instant.now())).as("DNS names ignore case").isEmpty();
        assertThat(n1.ownCertificateProblems("n1", Instant.now())).isEmpty();
    }

    @Test
    void anExpiredOrNotYetValidCertificateIsSaidSoWithItsDate() {
        Instant after = certificate.getNotAfter().toInstant().plus(Duration.ofDays(1));
        Instant before = certificate.getNotBefore().toInstant().minus(Duration.ofDays(1));

        assertThat(n1.ownCertificateProblems("127.0.0.1", after))
                .containsExactly("it expired at " + certificate.getNotAfter().toInstant());
        assertThat(n1.ownCertificateProblems("127.0.0.1", before)).singleElement().asString()
                .startsWith("it is not valid before " + certificate.getNotBefore().toInstant());
    }

    @Test
    void aCertificateThatDoesNotNameTheNodesAddressIsSaidSoWithTheNamesItHas() {
        assertThat(n1.ownCertificateProblems("10.0.0.7", Instant.now())).singleElement().asString()
                .isEqualTo("it does not name this node's address 10.0.0.7 (its subject alternative names: "
                        + "[n1, localhost, 127.0.0.1])");
        assertThat(n1.ownCertificateProblems("db1.example.com", Instant.now())).hasSize(1);
        assertThat(n1.ownCertificateProblems("127.0.0.2", Instant.now())).as("an address, not a prefix").hasSize(1);
        assertThat(n1.ownCertificateProblems("999.0.0.1", Instant.now())).as("not an address: a name, never looked up").hasSize(1);
        assertThat(n1.ownCertificateProblems("::1", Instant.now())).as("IPv6").hasSize(1);
    }

    @Test
    void dnsNamesMatchExactlyOrByAWildcardForOneLabel() throws Exception {
        TlsFiles n2 = new TlsFiles(pki.resolve("n2.pem"), pki.resolve("n2.key"), pki.resolve("ca.pem"));

        assertThat(n2.ownCertificateProblems("db2.example.com", Instant.now())).isEmpty();
        assertThat(n2.ownCertificateProblems("db2.example.co", Instant.now())).hasSize(1);
        assertThat(n2.ownCertificateProblems("x.db2.example.com", Instant.now())).hasSize(1);
    }
}
