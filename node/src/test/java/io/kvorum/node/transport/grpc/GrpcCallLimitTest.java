package io.kvorum.node.transport.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvorum.node.LogCapture;
import io.kvorum.node.TestNode;
import io.kvorum.node.config.NodeOption;
import io.kvorum.node.config.Tuning;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The node's gRPC port bounds the calls one connection holds open, so that a client that opens
 * streams and never sends on them cannot make the node keep state for ever more of them: the
 * server announces the bound in its HTTP/2 settings (gRPC clients queue calls past it, and Netty
 * refuses the streams of a client that ignores it). It bounds the connections of one address too.
 */
@Timeout(60)
class GrpcCallLimitTest {

    private static final int SETTINGS_MAX_CONCURRENT_STREAMS = 0x3;

    @TempDir
    Path dir;

    @Test
    void theServerAnnouncesItsBoundOnCallsPerConnection() throws Exception {
        try (TestNode node = TestNode.start(dir, Map.of(NodeOption.MAX_CONNECTIONS, "100"))) {
            Long announced = maxConcurrentStreams(node.node().config().self().grpcPort());

            assertThat(announced).as("a range scan per client connection, and room for the peers' own calls")
                    .isEqualTo((long) GrpcTransport.maxCallsPerConnection(100))
                    .isBetween(100L + 64, 100L + 4096);
        }
    }

    /**
     * docs/architecture.md#limits-of-the-peer-port: one address holds at most so many connections
     * to the gRPC port; one past them is closed before it can start a call, with a line in the
     * log, and once one of them closes a new one is served again.
     */
    @Test
    void anAddressPastItsConnectionCapIsRefusedUntilOneOfItsConnectionsCloses() throws Exception {
        int cap = Tuning.DEFAULTS.grpc().connectionsPerAddress();
        List<RawHttp2> held = new ArrayList<>();
        LogCapture logs = new LogCapture();
        try (TestNode node = TestNode.start(dir)) {
            int port = node.node().config().self().grpcPort();
            logs.attach();
            for (int i = 0; i < cap; i++) {
                RawHttp2 connection = RawHttp2.connect(port);
                held.add(connection);
                assertThat(connection.served()).as("connection %d of %d", i + 1, cap).isTrue();
            }
            try (RawHttp2 extra = RawHttp2.connect(port)) {
                assertThat(extra.served()).as("a connection past the cap").isFalse();
            }
            assertThat(held.get(cap - 1).served()).as("the connections within the cap stay served").isTrue();

            held.remove(0).close();
            await().atMost(Duration.ofSeconds(10)).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(50))
                    .until(() -> {
                        try (RawHttp2 again = RawHttp2.connect(port)) {
                            return again.served();
                        }
                    });
        } finally {
            logs.detach();
            for (RawHttp2 connection : held) {
                connection.close();
            }
        }
        assertThat(logs.problems()).as("what the node logged of the refusals").hasSize(1)
                .allSatisfy(line -> assertThat(line).contains("refused a connection to the gRPC port from 127.0.0.1")
                        .contains("it holds " + cap + " already"));
    }

    @Test
    void theBoundNeverOverflows() {
        assertThat(GrpcTransport.maxCallsPerConnection(Integer.MAX_VALUE)).isEqualTo(Integer.MAX_VALUE);
    }

    /** The server's first SETTINGS frame's SETTINGS_MAX_CONCURRENT_STREAMS; null if it omits the setting. */
    private static Long maxConcurrentStreams(int port) throws IOException {
        try (RawHttp2 h2 = RawHttp2.connect(port)) {
            while (true) {
                RawHttp2.Frame frame = h2.read();
                if (frame.type() == RawHttp2.SETTINGS && !frame.isAck()) { // not the ACK of ours
                    byte[] payload = frame.payload();
                    Long value = null;
                    for (int i = 0; i + 6 <= payload.length; i += 6) {
                        int id = ((payload[i] & 0xFF) << 8) | (payload[i + 1] & 0xFF);
                        long v = ((payload[i + 2] & 0xFFL) << 24) | ((payload[i + 3] & 0xFFL) << 16)
                                | ((payload[i + 4] & 0xFFL) << 8) | (payload[i + 5] & 0xFFL);
                        if (id == SETTINGS_MAX_CONCURRENT_STREAMS) {
                            value = v;
                        }
                    }
                    return value;
                }
            }
        }
    }
}
