package io.kvorum.testkit;

import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.stream.Collectors;
import sun.misc.Signal;

/**
 * A stand-in for the node in tests of what launches nodes ({@link NodeJvm}, perf's local cluster),
 * so that they run without the node jar, in a JVM that starts fast: takes {@code --cluster} and
 * {@code --node-id} as the node does and answers {@code GET /v0/status} with 200 on its HTTP port
 * until stopped. Other node flags are ignored.
 *
 * <ul>
 *   <li>{@code --fail-fast}: writes a line to stderr and exits 3, as a node with a bad option does</li>
 *   <li>{@code --lines N}: writes N numbered lines to stdout and exits 0</li>
 *   <li>{@code --ignore-sigterm}: only SIGKILL ends it</li>
 * </ul>
 * On start it writes the names (never the values) of its {@code KVORUM_*} variables to stdout.
 */
public final class StandInNode {
    public static void main(String[] args) throws Exception {
        List<String> list = List.of(args);
        if (list.contains("--fail-fast")) {
            System.err.println("stand-in node: refusing to start on purpose");
            System.exit(3);
        }
        if (list.contains("--lines")) {
            int n = Integer.parseInt(list.get(list.indexOf("--lines") + 1));
            for (int i = 1; i <= n; i++) {
                System.out.println("line " + i);
            }
            System.exit(0);
        }
        System.out.println("variables: " + System.getenv().keySet().stream()
                .filter(k -> k.startsWith("KVORUM_")).sorted().collect(Collectors.joining(",")));
        if (list.contains("--ignore-sigterm")) {
            Signal.handle(new Signal("TERM"), signal -> System.out.println("ignoring SIGTERM"));
        }
        String cluster = list.get(list.indexOf("--cluster") + 1);
        String id = list.get(list.indexOf("--node-id") + 1);
        int port = -1;
        for (String member : cluster.split(",")) {
            String[] idAndAddress = member.split("=");
            if (idAndAddress[0].equals(id)) {
                port = Integer.parseInt(idAndAddress[1].split(":")[1]);
            }
        }
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 16);
        server.createContext("/v0/status", exchange -> {
            exchange.sendResponseHeaders(200, -1);
            exchange.close();
        });
        server.start();
        System.out.println("stand-in node " + id + " serving on " + port);
    }
}
