package io.kvorum.it;

import io.kvorum.testkit.Await;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A flood of idle connections against a node whose process may open 4096 files. Before
 * {@code --max-connections}, such a flood took every descriptor: the node stopped accepting
 * connections, health checks included, and LevelDB failed the writes of the connections already
 * open, as it could not open its next log. Now the node serves at most 4096 - 2560 = 1536 client
 * connections, answers or closes the others, and its store keeps working under the flood.
 */
@Timeout(180)
class ConnectionFloodIT {

    private static final int OPEN_FILE_LIMIT = 4096;
    private static final int SERVED = 1536;
    /** More connections than the node may open files. */
    private static final int FLOOD = 4200;
    /** 48 MiB in all: LevelDB starts three new logs and tables (a 16 MiB write buffer) during the flood. */
    private static final int VALUES = 192;
    private static final int VALUE_BYTES = 256 * 1024;
    private static final Duration BOUND = Duration.ofSeconds(60);

    @RegisterExtension
    final ClusterExtension clusters = new ClusterExtension();

    @Test
    void aFloodOfIdleConnectionsLeavesTheNodeServingAndItsStoreWriting() throws IOException {
        KvorumCluster cluster = clusters.start(KvorumCluster.withNodes(1).openFileLimit(OPEN_FILE_LIMIT));
        ClusterNode node = cluster.node("n1");
        assertThat(node.logs()).as("the lowered limit, said at start")
                .contains("serving at most " + SERVED + " client connections");
        InetSocketAddress address = node.directHttpAddress();

        List<Socket> flood = new ArrayList<>();
        try (Connection writer = Connection.open(address)) {
            assertThat(writer.send("GET", "/v0/status", null).status()).isEqualTo(200);
            for (int i = 0; i < FLOOD; i++) {
                flood.add(new Socket(address.getAddress(), address.getPort()));
            }
            Await.until("a new connection to be refused with 503", BOUND, () -> statusOnNewConnection(address) == 503);

            byte[] value = new byte[VALUE_BYTES];
            for (int i = 0; i < VALUES; i++) {
                Arrays.fill(value, (byte) i);
                Reply put = writer.send("PUT", "/v0/entity?id=flood-" + i, value);
                assertThat(put.status()).as("PUT %d during the flood: %s", i, put.text()).isEqualTo(201);
            }
        } finally {
            for (Socket s : flood) {
                s.close();
            }
        }

        Await.until("a new connection to be served once the flood is gone", BOUND,
                () -> statusOnNewConnection(address) == 200, () -> node.tail(20));
        try (Connection reader = Connection.open(address)) {
            for (int i = 0; i < VALUES; i++) {
                Reply get = reader.send("GET", "/v0/entity?id=flood-" + i, null);
                assertThat(get.status()).as("GET %d", i).isEqualTo(200);
                assertThat(get.body()).hasSize(VALUE_BYTES).containsOnly((byte) i);
            }
        }
        assertThat(node.logs()).as("no file was refused to the node").doesNotContain("Too many open files");
    }

    private static int statusOnNewConnection(InetSocketAddress address) {
        try (Connection c = Connection.open(address)) {
            Reply reply = c.send("GET", "/v0/status", null);
            if (reply.status() == 503) {
                assertThat(reply.text()).contains("limit of " + SERVED + " client connections");
            }
            return reply.status();
        } catch (IOException e) {
            return -1; // dropped unanswered: the node was answering 256 refusals already
        }
    }

    record Reply(int status, byte[] body) {
        String text() {
            return new String(body, StandardCharsets.UTF_8);
        }
    }

    /** HTTP/1.1 on one socket, answers framed by Content-Length: all that this test's requests get. */
    private record Connection(Socket socket, InputStream in, OutputStream out) implements AutoCloseable {

        static Connection open(InetSocketAddress address) throws IOException {
            Socket socket = new Socket();
            try {
                socket.connect(address, 5000);
                socket.setSoTimeout(20_000);
                return new Connection(socket, new BufferedInputStream(socket.getInputStream()), socket.getOutputStream());
            } catch (IOException e) {
                socket.close();
                throw e;
            }
        }

        Reply send(String method, String path, byte[] body) throws IOException {
            int length = body == null ? 0 : body.length;
            out.write((method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " + length + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            if (body != null) {
                out.write(body);
            }
            out.flush();
            String[] statusLine = line().split(" ", 3);
            int contentLength = 0;
            for (String header = line(); !header.isEmpty(); header = line()) {
                if (header.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
                    contentLength = Integer.parseInt(header.substring("content-length:".length()).trim());
                }
            }
            return new Reply(Integer.parseInt(statusLine[1]), in.readNBytes(contentLength));
        }

        private String line() throws IOException {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            for (int b = in.read(); b != '\n'; b = in.read()) {
                if (b < 0) {
                    throw new IOException("the connection closed in the middle of an answer");
                }
                if (b != '\r') {
                    bytes.write(b);
                }
            }
            return bytes.toString(StandardCharsets.US_ASCII);
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }
}
