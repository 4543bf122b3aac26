package io.kvorum.perf.cluster;

import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.util.List;

/**
 * A stand-in for the node jar in tests: parses --cluster and --node-id as the node does, answers
 * GET /v0/status with 200 on its HTTP port until killed. With --fail-fast it prints a line and exits 3,
 * as a node with a bad option does.
 */
public final class FakeNode {
    public static void main(String[] args) throws Exception {
        List<String> list = List.of(args);
        if (list.contains("--fail-fast")) {
            System.err.println("fake node: refusing to start on purpose");
            System.exit(3);
        }
        String cluster = list.get(list.indexOf("--cluster") + 1);
        String id = list.get(list.indexOf("--node-id") + 1);
        int port = -1;
        for (String entry : cluster.split(",")) {
            String[] idAndAddress = entry.split("=");
            if (idAndAddress[0].equals(id)) {
                port = Integer.parseInt(idAndAddress[1].split(":")[1]);
            }
        }
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 16);
        server.createContext("/v0/status", exchange -> {
            byte[] body = ("{\"node\":\"" + id + "\"}").getBytes();
            exchange.sendResponseHeaders(200, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        server.start();
        System.out.println("fake node " + id + " serving on " + port);
    }
}
