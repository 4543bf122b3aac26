package io.kvorum.perf.ycsb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvorum.client.KvorumClient;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The binding's token goes over plain {@code http://} beyond loopback only with
 * {@code kvorum.allow.insecure=true}, as the driver sends it only with {@code allowInsecure()}
 * (docs/operations.md#security).
 */
class ClientSecurityTest {

    private static final URI PLAIN_REMOTE = URI.create("http://10.0.0.1:8080");

    @TempDir
    Path dir;

    private Properties withToken() throws Exception {
        Properties p = new Properties();
        p.setProperty(ClientSecurity.TOKEN_FILE, Files.writeString(dir.resolve("token"), "s3cret-t0ken\n").toString());
        return p;
    }

    @Test
    void aTokenForAPlainRemoteUrlNeedsTheProperty() throws Exception {
        Properties p = withToken();
        assertThatThrownBy(() -> ClientSecurity.from(p).client(PLAIN_REMOTE, Duration.ofSeconds(1)))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining(PLAIN_REMOTE.toString())
                .hasMessageEndingWith("set kvorum.allow.insecure=true").hasMessageNotContaining("s3cret-t0ken");

        p.setProperty(ClientSecurity.ALLOW_INSECURE, "true");
        ClientSecurity allowed = ClientSecurity.from(p);
        assertThat(allowed.properties()).containsEntry(ClientSecurity.ALLOW_INSECURE, "true");
        try (KvorumClient client = allowed.client(PLAIN_REMOTE, Duration.ofSeconds(1))) {
            assertThat(client.endpoints()).containsExactly(PLAIN_REMOTE);
        }

        p.setProperty(ClientSecurity.ALLOW_INSECURE, "yes");
        assertThatThrownBy(() -> ClientSecurity.from(p)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("kvorum.allow.insecure is true or false");
    }
}
