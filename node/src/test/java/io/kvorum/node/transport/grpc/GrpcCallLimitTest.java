package io.kvorum.node.transport.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.node.TestNode;
import io.kvorum.node.config.NodeOption;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The node's gRPC port bounds the calls one connection holds open, so that a client that opens
 * streams and never sends on them cannot make the node keep state for ever more of them: the
 * server announces the bound in its HTTP/2 settings (gRPC clients queue calls past it, and Netty
 * refuses the streams of a client that ignores it).
 */
@Timeout(60)
class GrpcCallLimitTest {

    private static final int SETTINGS_FRAME = 0x4;
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

    @Test
    void theBoundNeverOverflows() {
        assertThat(GrpcTransport.maxCallsPerConnection(Integer.MAX_VALUE)).isEqualTo(Integer.MAX_VALUE);
    }

    /** Speaks HTTP/2 (RFC 9113 §3.4) just far enough to read the server's first SETTINGS frame; null if it omits the setting. */
    private static Long maxConcurrentStreams(int port) throws IOException {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            out.write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            out.write(new byte[] {0, 0, 0, SETTINGS_FRAME, 0, 0, 0, 0, 0}); // an empty SETTINGS frame
            out.flush();
            DataInputStream in = new DataInputStream(socket.getInputStream());
            while (true) {
                int length = (in.readUnsignedByte() << 16) | in.readUnsignedShort();
                int type = in.readUnsignedByte();
                int flags = in.readUnsignedByte();
                in.readInt(); // stream id
                byte[] payload = in.readNBytes(length);
                if (type == SETTINGS_FRAME && (flags & 0x1) == 0) { // not the ACK of ours
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
