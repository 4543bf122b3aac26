package io.kvorum.node.process;

import static io.kvorum.testkit.NodeJvm.clusterMember;
import static io.kvorum.testkit.NodeJvm.loopbackUri;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.testkit.NodeJvm;
import io.kvorum.testkit.Ports;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * A cluster of node processes ({@link NodeJvm}) on 127.0.0.1, nodes {@code n1..nN}, each with its own ports
 * and data directory for the whole test, so that a node can be stopped and started again as the
 * same member with the same data. Nodes are numbered from 0 here ({@code node(0)} is {@code n1}).
 */
final class ProcessCluster {

    /** The bound from SIGTERM to exit (docs/operations.md#signals-and-durability). */
    static final Duration SIGTERM_EXIT = Duration.ofSeconds(10);

    private final NodeProcesses nodes;
    private final int size;
    private final int[] http;
    private final String spec;
    private final List<List<String>> args = new ArrayList<>();
    private final NodeJvm[] current;
    private final List<List<NodeJvm>> history = new ArrayList<>();

    /** @param extraArgs given to every node, after {@code --cluster}, {@code --node-id} and {@code --data-dir} */
    ProcessCluster(NodeProcesses nodes, Path dir, int size, String... extraArgs) {
        this(nodes, dir, size, size, extraArgs);
    }

    /**
     * A cluster of {@code members} nodes, and {@code size - members} more that join it when started
     * ({@code --join}, through {@code n1}).
     *
     * @param extraArgs given to every node, after {@code --cluster}, {@code --node-id} and {@code --data-dir}
     */
    ProcessCluster(NodeProcesses nodes, Path dir, int size, int members, String... extraArgs) {
        this.nodes = nodes;
        this.size = size;
        int[] ports = Ports.freePorts(2 * size);
        this.http = new int[size];
        List<String> entries = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            http[i] = ports[2 * i];
            entries.add(clusterMember(id(i), ports[2 * i], ports[2 * i + 1]));
        }
        this.spec = String.join(",", entries.subList(0, members));
        for (int i = 0; i < size; i++) {
            String cluster = i < members ? spec : entries.get(i) + "," + entries.get(0);
            List<String> a = new ArrayList<>(List.of("--cluster", cluster, "--node-id", id(i),
                    "--data-dir", dir.resolve(id(i)).toString()));
            if (i >= members) {
                a.add("--join");
            }
            a.addAll(List.of(extraArgs));
            args.add(List.copyOf(a));
        }
        this.current = new NodeJvm[size];
        for (int i = 0; i < size; i++) {
            history.add(new ArrayList<>());
        }
    }

    int size() {
        return size;
    }

    static String id(int node) {
        return "n" + (node + 1);
    }

    /** The {@code --cluster} value every member is started with (joiners name themselves and {@code n1}). */
    String spec() {
        return spec;
    }

    int http(int node) {
        return http[node];
    }

    /** {@code /v0/entity?id=KEY&QUERY} on the node; the key must need no escaping. */
    URI entity(int node, String key, String query) {
        return URI.create(loopbackUri(http[node]) + "/v0/entity?id=" + key + (query.isEmpty() ? "" : "&" + query));
    }

    /**
     * Starts the node's process without waiting for it. The first start is named after the node
     * ({@code n2}), later ones {@code n2-restart1}, ... (the names of their log files).
     */
    NodeJvm start(int node) {
        return start(node, new String[0]);
    }

    /** As {@link #start(int)}, with options for the JVM (a test hook's system property, say). */
    NodeJvm start(int node, String... jvmOptions) {
        assertThat(current[node] == null || !current[node].isAlive()).as("%s is not running", id(node)).isTrue();
        int starts = history.get(node).size();
        String name = starts == 0 ? id(node) : id(node) + "-restart" + starts;
        current[node] = nodes.launch(name).jvmOptions(jvmOptions).args(args.get(node)).start();
        history.get(node).add(current[node]);
        return current[node];
    }

    /** Starts the node and waits until its {@code GET /v0/status} answers 200. */
    NodeJvm startReady(int node) {
        return start(node).awaitReady(http[node]);
    }

    /** Starts the nodes together (each JVM launched before waiting for any) and waits until each is ready. */
    void startAllReady(int... which) {
        for (int node : which) {
            start(node);
        }
        for (int node : which) {
            current[node].awaitReady(http[node]);
        }
    }

    void startAllReady() {
        startAllReady(IntStream.range(0, size).toArray());
    }

    /** SIGTERM, then asserts that the node exits 0 within {@link #SIGTERM_EXIT} (docs/operations.md#starting-nodes). */
    void stop(int node) {
        NodeJvm p = current[node];
        p.terminate();
        assertThat(p.awaitExit(SIGTERM_EXIT)).as("exit status of %s after SIGTERM\n%s", p, p.describe()).isZero();
    }

    NodeJvm process(int node) {
        return current[node];
    }

    /** Every process started for the node, in order. */
    List<NodeJvm> processes(int node) {
        return List.copyOf(history.get(node));
    }

    /** Every node's current process, with its logs, for failure messages. */
    String describe() {
        return IntStream.range(0, size).filter(i -> current[i] != null)
                .mapToObj(i -> current[i].describe()).collect(Collectors.joining("\n"));
    }
}
