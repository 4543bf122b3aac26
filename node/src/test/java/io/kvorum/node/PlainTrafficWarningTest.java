package io.kvorum.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.node.config.NodeOption;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/operations.md#security: a node that serves plain HTTP and gRPC beyond loopback says so in a
 * WARN line at start; one on loopback has nothing to say.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class PlainTrafficWarningTest {

    @TempDir
    Path dir;

    @Test
    void aNodeWithoutTlsOnEveryAddressWarnsAtStartAndOneOnLoopbackDoesNot() throws Exception {
        LogCapture logs = new LogCapture();
        logs.attach();
        try {
            try (TestNode loopback = TestNode.start(dir.resolve("loopback"))) {
                assertThat(logs.problems()).as("on 127.0.0.1").noneMatch(l -> l.contains("plain HTTP"));
            }
            try (TestNode everywhere = TestNode.start(dir.resolve("everywhere"), Map.of(NodeOption.BIND, "0.0.0.0"))) {
                assertThat(logs.problems()).filteredOn(l -> l.contains("plain HTTP")).singleElement().asString()
                        .startsWith("WARN ").contains("0.0.0.0:" + everywhere.address().getPort())
                        .contains("plain gRPC on 0.0.0.0:").contains("--tls-cert");
            }
        } finally {
            logs.detach();
        }
    }
}
