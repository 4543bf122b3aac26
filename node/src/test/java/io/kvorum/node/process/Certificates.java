package io.kvorum.node.process;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.client.TrustedCa;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
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
        Path script = repositoryRoot().resolve("kvorum");
        List<String> command = new ArrayList<>(List.of(script.toString(), "certs", dir.toString()));
        command.addAll(List.of(ids));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output;
        try (InputStream in = p.getInputStream()) {
            output = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("./kvorum certs ended").isTrue();
        assertThat(p.exitValue()).as("./kvorum certs: %s", output).isZero();
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

    private static Path repositoryRoot() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isRegularFile(dir.resolve("kvorum")) && Files.isDirectory(dir.resolve("node"))) {
                return dir;
            }
        }
        throw new AssertionError("no ./kvorum above " + Path.of("").toAbsolutePath());
    }
}
