package io.kvorum.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code ./kvorum certs}, the operators' way to a CA and node certificates (docs/deployment.md, "Securing a cluster"). */
@Timeout(120)
class KvorumCertsTest {

    @TempDir
    Path tmp;

    @Test
    void aBadArgumentAnywhereWritesNothing() {
        Path dir = tmp.resolve("pki");

        assertThatThrownBy(() -> KvorumCerts.make(dir, "n1", "n2", "n/3"))
                .isInstanceOf(IOException.class).hasMessageContaining("'n/3' is not a node id").hasMessageContaining("nothing written");
        assertThatThrownBy(() -> KvorumCerts.make(dir, "n1", "n2=not a host"))
                .isInstanceOf(IOException.class).hasMessageContaining("is not a host name or IP address");

        assertThat(dir).as("not even the CA: the arguments are checked first").doesNotExist();
    }

    @Test
    void runningItAgainKeepsTheCaAndReissuesTheNodesNamed() throws Exception {
        Path dir = KvorumCerts.make(tmp.resolve("pki"), "n1", "n2");
        String ca = Files.readString(dir.resolve("ca.pem"));
        String n1Key = Files.readString(dir.resolve("n1.key"));
        String n2Key = Files.readString(dir.resolve("n2.key"));

        KvorumCerts.make(dir, "n1", "n3");

        assertThat(Files.readString(dir.resolve("ca.pem"))).as("the CA is reused").isEqualTo(ca);
        assertThat(Files.readString(dir.resolve("n1.key"))).as("n1 renewed with a new key").isNotEqualTo(n1Key);
        assertThat(Files.readString(dir.resolve("n2.key"))).as("a node not named is left alone").isEqualTo(n2Key);
        assertThat(dir.resolve("n3.pem")).isRegularFile();
        assertThat(dir.resolve("n3.key")).isRegularFile();
    }

    @Test
    void aNodeCanBeNamedByEveryHostItIsReachedBy() throws Exception {
        Path dir = KvorumCerts.make(tmp.resolve("pki"), "kvorum-0=kvorum-0.kvorum,kvorum-client,10.0.0.5,localhost");

        X509Certificate cert;
        try (InputStream in = Files.newInputStream(dir.resolve("kvorum-0.pem"))) {
            cert = (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
        }
        List<String> names = cert.getSubjectAlternativeNames().stream().map(san -> String.valueOf(san.get(1))).toList();
        assertThat(names).as("the id, the loopback names, and each host given once")
                .containsExactly("kvorum-0", "localhost", "127.0.0.1", "kvorum-0.kvorum", "kvorum-client", "10.0.0.5");

        assertThatThrownBy(() -> KvorumCerts.make(tmp.resolve("other"), "n1=a,,b"))
                .isInstanceOf(IOException.class).hasMessageContaining("'a,,b' is not a host name or IP address");
    }

    @Test
    void helpPrintsTheUsageAndAnOptionIsNotTakenForTheDirectory() throws Exception {
        Process help = new ProcessBuilder(KvorumCerts.script().toString(), "certs", "--help").directory(tmp.toFile())
                .redirectErrorStream(true).start();
        String output = new String(help.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(help.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(help.exitValue()).isZero();
        assertThat(output).startsWith("usage: ./kvorum certs DIR");

        assertThatThrownBy(() -> KvorumCerts.make(tmp.resolve("-x").getFileName()))
                .isInstanceOf(IOException.class).hasMessageContaining("'-x' is not a directory name");
        try (var written = Files.list(tmp)) {
            assertThat(written).as("nothing written, not even a directory named --help").isEmpty();
        }
    }
}
