package io.kvorum.node;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import io.kvorum.client.KvorumClient;
import io.kvorum.node.config.NodeConfig;
import io.kvorum.node.config.NodeOption;
import io.kvorum.node.time.Clock;
import io.kvorum.testkit.Await;
import io.kvorum.testkit.Ports;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import org.slf4j.LoggerFactory;

/**
 * One in-process Kvorum node for HTTP tests: a single-node cluster on an ephemeral loopback port
 * with its data in a test's temporary directory.
 *
 * <p>It offers three ways in: the {@link KvorumClient} (the product's own client), a raw
 * {@link HttpClient} for exact status, header and body checks, and {@link RawHttp} for byte-level
 * checks on a fresh socket. {@link #close()} always stops the node, and then fails if Netty's
 * leak detector (paranoid in the surefire configuration) reported a leaked buffer at any point
 * since the first node of this JVM started: a leak is a bug, not log noise.
 */
public final class TestNode implements AutoCloseable {

    /** Upper bound on any single HTTP exchange in tests; a hang fails the test instead of stalling it. */
    public static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);

    private final KvorumNode node;
    private final URI baseUri;
    private final KvorumClient client;
    private final HttpClient http;

    private TestNode(KvorumNode node) {
        this.node = node;
        InetSocketAddress address = node.httpAddress();
        this.baseUri = URI.create("http://127.0.0.1:" + address.getPort());
        this.client = KvorumClient.create(baseUri, REQUEST_TIMEOUT);
        this.http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5))
                .build();
    }

    /** A node with the default options. */
    public static TestNode start(Path dataDir) throws Exception {
        return start(dataDir, Map.of());
    }

    /** A node with {@code options} on top of the defaults (data dir and loopback binding are set here). */
    public static TestNode start(Path dataDir, Map<NodeOption, String> options) throws Exception {
        return start(dataDir, options, Clock.SYSTEM);
    }

    /** The gRPC port of each data dir's node, for restarts. */
    private static final Map<Path, Integer> GRPC_PORTS = new java.util.concurrent.ConcurrentHashMap<>();

    public static TestNode start(Path dataDir, Map<NodeOption, String> options, Clock clock) throws Exception {
        LeakWatcher.install();
        Map<NodeOption, String> raw = new EnumMap<>(NodeOption.class);
        raw.put(NodeOption.DATA_DIR, dataDir.resolve("node").toString());
        raw.put(NodeOption.BIND, "127.0.0.1");
        // A single node listens for peers too (it may grow); a free gRPC port keeps test nodes apart,
        // and a node started again on the same data keeps its port, as its stored membership says.
        int grpcPort = GRPC_PORTS.computeIfAbsent(dataDir.toAbsolutePath().normalize(), d -> Ports.freePorts(1)[0]);
        raw.put(NodeOption.CLUSTER, "n1=127.0.0.1:8080:" + grpcPort);
        raw.putAll(options);
        NodeConfig config = NodeConfig.fromRaw(raw);
        return new TestNode(KvorumNode.start(config, 0, clock));
    }

    public KvorumNode node() {
        return node;
    }

    public InetSocketAddress address() {
        return new InetSocketAddress("127.0.0.1", node.httpAddress().getPort());
    }

    public URI baseUri() {
        return baseUri;
    }

    /** {@code pathAndQuery} (already encoded, e.g. {@code /v0/entity?id=a%20b}) on this node. */
    public URI uri(String pathAndQuery) {
        return URI.create(baseUri + pathAndQuery);
    }

    public KvorumClient client() {
        return client;
    }

    public HttpClient http() {
        return http;
    }

    /** Sends one request with the raw HTTP client and waits for the whole answer. */
    public HttpResponse<byte[]> send(String method, String pathAndQuery, byte[] body) {
        return sendAsync(method, pathAndQuery, body).join();
    }

    public CompletableFuture<HttpResponse<byte[]>> sendAsync(String method, String pathAndQuery, byte[] body) {
        HttpRequest.BodyPublisher publisher = body == null
                ? HttpRequest.BodyPublishers.noBody()
                : HttpRequest.BodyPublishers.ofByteArray(body);
        HttpRequest request = HttpRequest.newBuilder(uri(pathAndQuery))
                .timeout(REQUEST_TIMEOUT)
                .method(method, publisher)
                .build();
        return http.sendAsync(request, HttpResponse.BodyHandlers.ofByteArray());
    }

    public HttpResponse<byte[]> get(String pathAndQuery) {
        return send("GET", pathAndQuery, null);
    }

    public HttpResponse<byte[]> put(String pathAndQuery, byte[] body) {
        return send("PUT", pathAndQuery, body);
    }

    public HttpResponse<byte[]> delete(String pathAndQuery) {
        return send("DELETE", pathAndQuery, null);
    }

    /**
     * Asserts that the node answers {@code GET /v0/status} with 200 on a brand-new connection, the
     * way a new client would see it (the pooled connections of {@link #http()} could hide a node
     * that stopped accepting).
     */
    public void assertServesNewConnections() throws IOException {
        try (RawHttp raw = RawHttp.connect(address())) {
            raw.write("GET /v0/status HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
            RawHttp.Response response = raw.readResponse();
            assertThat(response.status()).as("GET /v0/status on a new connection").isEqualTo(200);
        }
    }

    /** {@link Await#until(String, Duration, BooleanSupplier)}, in the order the node's tests call it. */
    public static void awaitUntil(Duration timeout, BooleanSupplier condition, String what) {
        Await.until(what, timeout, condition);
    }

    @Override
    public void close() {
        node.close();
        LeakWatcher.assertNoLeaks();
    }

    /**
     * Collects the reports of Netty's {@link ResourceLeakDetector}, which go to its logger. The
     * detector reports a leaked buffer only after it was garbage-collected and a later buffer was
     * allocated, so {@link #assertNoLeaks()} first collects garbage and allocates a few buffers.
     */
    static final class LeakWatcher extends AppenderBase<ILoggingEvent> {
        private static final List<String> LEAKS = new ArrayList<>();
        private static boolean installed;

        static synchronized void install() {
            if (installed) {
                return;
            }
            installed = true;
            Logger logger = (Logger) LoggerFactory.getLogger(ResourceLeakDetector.class);
            LeakWatcher watcher = new LeakWatcher();
            watcher.setContext(logger.getLoggerContext());
            watcher.setName("netty-leak-watcher");
            watcher.start();
            logger.addAppender(watcher);
        }

        @Override
        protected void append(ILoggingEvent event) {
            if (event.getLevel().isGreaterOrEqual(Level.ERROR) && event.getFormattedMessage().contains("LEAK")) {
                synchronized (LeakWatcher.class) {
                    LEAKS.add(event.getFormattedMessage());
                }
            }
        }

        static void assertNoLeaks() {
            for (int round = 0; round < 3; round++) {
                System.gc();
                for (int i = 0; i < 64; i++) {
                    ByteBuf pooled = PooledByteBufAllocator.DEFAULT.buffer(16);
                    pooled.release();
                    ByteBuf unpooled = UnpooledByteBufAllocator.DEFAULT.directBuffer(16);
                    unpooled.release();
                }
            }
            synchronized (LeakWatcher.class) {
                if (!LEAKS.isEmpty()) {
                    String first = LEAKS.get(0);
                    int count = LEAKS.size();
                    LEAKS.clear();
                    throw new AssertionError("Netty reported " + count + " leaked buffer(s); the first:\n" + first);
                }
            }
        }
    }
}
