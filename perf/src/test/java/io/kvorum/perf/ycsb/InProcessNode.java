package io.kvorum.perf.ycsb;

import io.kvorum.node.KvorumNode;
import io.kvorum.node.config.NodeConfig;
import io.kvorum.node.config.NodeOption;
import io.kvorum.node.time.Clock;
import java.net.URI;
import java.nio.file.Path;
import java.util.Map;

/**
 * A real single-node Kvorum cluster in this JVM, on a free loopback port, with its data in a
 * test's temporary directory: the node the binding's tests talk to over HTTP.
 */
public final class InProcessNode implements AutoCloseable {

    private final KvorumNode node;
    private final URI uri;

    private InProcessNode(KvorumNode node) {
        this.node = node;
        this.uri = URI.create("http://127.0.0.1:" + node.httpAddress().getPort());
    }

    public static InProcessNode start(Path dataDir) throws Exception {
        NodeConfig config = NodeConfig.fromRaw(Map.of(
                NodeOption.DATA_DIR, dataDir.toString(),
                NodeOption.BIND, "127.0.0.1"));
        return new InProcessNode(KvorumNode.start(config, 0, Clock.SYSTEM));
    }

    public URI uri() {
        return uri;
    }

    @Override
    public void close() {
        node.close();
    }
}
