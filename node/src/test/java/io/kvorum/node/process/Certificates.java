package io.kvorum.node.process;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.client.TrustedCa;
import io.kvorum.testkit.KvorumCerts;
import java.io.IOException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.util.List;
import javax.net.ssl.SSLContext;

/**
 * Certificates for process tests, made the way the README tells operators to: {@code ./kvorum certs
 * DIR ID...} (openssl), so that the tests also check that command's output works with a node.
 */
final class Certificates {

    private Certificates() {
    }

    /** Runs {@code ./kvorum certs dir ids...}: {@code dir/ca.pem}, and {@code dir/ID.pem} + {@code dir/ID.key} per id. */
    static Path make(Path dir, String... ids) throws IOException, InterruptedException {
        KvorumCerts.make(dir, ids);
        for (String id : ids) {
            assertThat(dir.resolve(id + ".pem")).isRegularFile();
            assertThat(dir.resolve(id + ".key")).isRegularFile();
        }
        return dir;
    }

    /** A client context that trusts the CA of {@code dir/ca.pem} alone. */
    static SSLContext trusting(Path dir) throws IOException, GeneralSecurityException {
        return TrustedCa.clientContext(dir.resolve("ca.pem"));
    }

    /** TLS flags of a node: its certificate and key in {@code dir}, and the CA of {@code caDir}. */
    static List<String> flags(Path dir, String id, Path caDir) {
        return List.of("--tls-cert", dir.resolve(id + ".pem").toString(), "--tls-key", dir.resolve(id + ".key").toString(),
                "--tls-ca", caDir.resolve("ca.pem").toString());
    }
}
