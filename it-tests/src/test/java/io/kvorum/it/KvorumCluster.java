package io.kvorum.it;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.model.Network;
import io.kvorum.client.KvorumClient;
import io.kvorum.client.KvorumException;
import io.kvorum.testkit.Await;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * N containers of the node image forming one static Kvorum cluster, for tests that break it the
 * way production breaks: see {@link ClusterNode} for the per-node faults.
 *
 * <p>Two Docker networks per cluster, both created here: a private <em>peer</em> network on which
 * each node has its id as network alias and a fixed address, and which carries the gRPC traffic
 * between nodes ({@code KVORUM_CLUSTER=n1=n1:8080:9080,...}); and a <em>front</em> network with
 * inter-container traffic disabled, which only carries the node's published HTTP port to
 * {@code 127.0.0.1}. A partition removes a node from the peer network alone, so tests can still
 * talk to the node on the far side of it.
 *
 * <p>Cleanup is guaranteed by {@link #close()} (which {@link ClusterExtension} calls after every
 * test, passed or failed), by a shutdown hook, and by {@link Docker}'s removal of leftovers of
 * dead JVMs; there is no Ryuk.
 */
public final class KvorumCluster implements AutoCloseable {

    /** The key the fixture reads (never writes) to see that every node reaches every other. */
    static final String PROBE_KEY = "kvorum-it-probe";
    /**
     * The JVM of every test container, in place of the image's ZGC and 1 GiB heap: C1 only and a
     * small serial heap, since up to five nodes share a 2-core machine and must start in seconds.
     */
    static final String TEST_JVM_OPTIONS = "-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xms32m -Xmx256m "
            + "-XX:+ExitOnOutOfMemoryError";
    private static final Duration CONNECT_BOUND = Duration.ofSeconds(60);
    private static final Set<KvorumCluster> OPEN = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> OPEN.forEach(KvorumCluster::close), "kvorum-it-cleanup"));
    }

    private final DockerClient docker;
    private final Spec spec;
    private final String id;
    private final String image;
    private final List<ClusterNode> nodes = new ArrayList<>();
    /** Nodes taken out by {@link #retire}: stopped, kept for their logs until {@link #close}. */
    private final List<ClusterNode> retired = new ArrayList<>();
    private String frontNetworkId;
    private String peerNetworkId;
    private String subnetPrefix;

    /** What to start: the number of nodes and the node options they share. */
    public static final class Spec {
        private final int size;
        private Duration requestTimeout = Duration.ofMillis(1000);
        private final Map<String, String> env = new LinkedHashMap<>();
        private Path tlsDir;
        private String token;
        private boolean imageJvm;
        private int openFileLimit;
        private long dataTmpfsBytes;
        private final Map<String, String> volumes = new LinkedHashMap<>();

        private Spec(int size) {
            if (size < 1 || size > 9) {
                throw new IllegalArgumentException("1 to 9 nodes, not " + size);
            }
            this.size = size;
        }

        /** The coordinator's {@code --request-timeout} (default 1000 ms, the node's default). */
        public Spec requestTimeout(Duration timeout) {
            this.requestTimeout = timeout;
            return this;
        }

        /** Any other node option, as its {@code KVORUM_*} variable. */
        public Spec env(String name, String value) {
            env.put(name, value);
            return this;
        }

        /**
         * docs/operations.md#security: every node serves HTTPS and mutual TLS with the certificates of {@code tlsDir}
         * ({@code ./kvorum certs tlsDir n1 ... nN}: {@code ca.pem}, {@code nI.pem}, {@code nI.key},
         * readable by the container's user) and asks for {@code token}. The directory is mounted
         * read-only at {@code /tls} in every container.
         */
        public Spec secured(Path tlsDir, String token) {
            this.tlsDir = tlsDir.toAbsolutePath();
            this.token = token;
            return this;
        }

        /** The image's own JVM options (ZGC, 1 GiB heap) instead of the tests' small serial heap. */
        public Spec imageJvm() {
            this.imageJvm = true;
            return this;
        }

        /** Each node's process may open at most {@code files} files ({@code docker run --ulimit nofile}). */
        public Spec openFileLimit(int files) {
            this.openFileLimit = files;
            return this;
        }

        public int size() {
            return size;
        }

        /**
         * Each node keeps its data in a tmpfs of {@code bytes} instead of a volume, so that a test can
         * fill its file system; the data does not survive a stop.
         */
        public Spec dataTmpfs(long bytes) {
            this.dataTmpfsBytes = bytes;
            return this;
        }

        /**
         * Mounts the named volume {@code volume}, which the test creates and removes, at {@code target}
         * in every node: a volume shared by the nodes that outlives the cluster (their backups, say).
         */
        public Spec volume(String volume, String target) {
            volumes.put(target, volume);
            return this;
        }

        /** The volumes of {@link #volume}, by mount point. */
        public Map<String, String> volumes() {
            return Map.copyOf(volumes);
        }

        /** The size of {@link #dataTmpfs}, or 0 for a volume. */
        public long dataTmpfsBytes() {
            return dataTmpfsBytes;
        }

        /** The limit of {@link #openFileLimit}, or 0 for Docker's default. */
        public int openFileLimit() {
            return openFileLimit;
        }

        public Duration requestTimeout() {
            return requestTimeout;
        }

        public boolean isSecured() {
            return tlsDir != null;
        }

        /** The directory of {@link #secured}, or null. */
        public Path tlsDir() {
            return tlsDir;
        }

        /** The token of {@link #secured}, or null. */
        public String token() {
            return token;
        }
    }

    /** A cluster of {@code size} nodes, ids {@code n1}..{@code nN}. */
    public static Spec withNodes(int size) {
        return new Spec(size);
    }

    private KvorumCluster(DockerClient docker, Spec spec, String image) {
        this.docker = docker;
        this.spec = spec;
        this.image = image;
        this.id = String.format("%06x", ThreadLocalRandom.current().nextInt(1 << 24));
    }

    /**
     * Creates the networks, volumes and containers, starts every node, and returns once every node
     * serves and reaches every other. On failure everything created is removed and the exception
     * carries the nodes' last log lines.
     */
    public static KvorumCluster start(Spec spec) {
        DockerClient docker = Docker.client();
        KvorumCluster cluster = new KvorumCluster(docker, spec, NodeImage.name());
        OPEN.add(cluster);
        try {
            cluster.create();
            cluster.startNodes(cluster.nodes);
            cluster.awaitFullyConnected();
            return cluster;
        } catch (RuntimeException | AssertionError e) {
            String logs = cluster.nodes.stream().map(n -> "--- " + n.id() + " ---\n" + safeTail(n))
                    .collect(Collectors.joining("\n"));
            cluster.close();
            throw new IllegalStateException("cluster of " + spec.size + " did not start: " + e.getMessage() + "\n" + logs, e);
        }
    }

    private static String safeTail(ClusterNode n) {
        try {
            return n.tail(30);
        } catch (RuntimeException e) {
            return "(no logs: " + e + ")";
        }
    }

    private void create() {
        frontNetworkId = docker.createNetworkCmd().withName(frontNetworkName()).withDriver("bridge")
                .withLabels(Docker.labels(id))
                .withOptions(Map.of("com.docker.network.bridge.enable_icc", "false"))
                .exec().getId();
        createPeerNetwork();
        String topology = nodeIds().stream()
                .map(n -> n + "=" + n + ":" + ClusterNode.HTTP_PORT + ":" + ClusterNode.GRPC_PORT)
                .collect(Collectors.joining(","));
        for (int i = 1; i <= spec.size; i++) {
            List<String> env = nodeEnv(i);
            env.add("KVORUM_CLUSTER=" + topology);
            ClusterNode node = new ClusterNode(docker, this, "n" + i, subnetPrefix + (10 + i), env);
            nodes.add(node);
            node.create();
        }
    }

    /** The environment of node {@code n<i>}, but its --cluster. */
    private List<String> nodeEnv(int i) {
        List<String> env = new ArrayList<>();
        env.add("KVORUM_NODE_ID=n" + i);
        env.add("KVORUM_REQUEST_TIMEOUT=" + spec.requestTimeout.toMillis());
        if (!spec.imageJvm) {
            env.add("JDK_JAVA_OPTIONS=" + TEST_JVM_OPTIONS);
            // For the same reason, no warm-up: its compiled code would be C1's alone here, and five
            // nodes warming at once on two cores take tens of seconds (docs/operations.md).
            env.add("KVORUM_WARM_UP=0");
        }
        spec.env.forEach((k, v) -> env.add(k + "=" + v));
        if (spec.isSecured()) {
            env.add("KVORUM_TLS_CERT=" + ClusterNode.TLS_MOUNT + "/n" + i + ".pem");
            env.add("KVORUM_TLS_KEY=" + ClusterNode.TLS_MOUNT + "/n" + i + ".key");
            env.add("KVORUM_TLS_CA=" + ClusterNode.TLS_MOUNT + "/ca.pem");
            env.add("KVORUM_AUTH_TOKEN_FILE=" + ClusterNode.TLS_MOUNT + "/tokens");
        }
        return env;
    }

    /**
     * Starts a new node, {@code n<N+1>} on a fresh volume, with {@code --join} through n1 (docs/operations.md#growing-and-shrinking-a-cluster),
     * and returns it once it serves: once the cluster has accepted it as joining. Plain clusters only
     * (a secured one has certificates for its first nodes alone).
     */
    public ClusterNode join() {
        if (spec.isSecured()) {
            throw new IllegalStateException("join() makes no certificate for the new node");
        }
        int i = nodes.size() + retired.size() + 1; // a new id: a retired node's container keeps its name
        String id = "n" + i;
        List<String> env = nodeEnv(i);
        env.add("KVORUM_JOIN=true");
        env.add("KVORUM_CLUSTER=" + id + "=" + id + ":" + ClusterNode.HTTP_PORT + ":" + ClusterNode.GRPC_PORT
                + ",n1=n1:" + ClusterNode.HTTP_PORT + ":" + ClusterNode.GRPC_PORT);
        ClusterNode node = new ClusterNode(docker, this, id, subnetPrefix + (10 + i), env);
        nodes.add(node);
        node.create();
        startNodes(List.of(node));
        return node;
    }

    /**
     * Takes a node that is no longer a member (it left, or was removed) out of the fixture: its
     * container is stopped and removed (its logs are kept for the report), and {@link #nodes} no
     * longer lists it.
     */
    public void retire(ClusterNode node) {
        if (node.isRunning()) {
            node.stop();
        }
        nodes.remove(node);
        retired.add(node);
    }

    /** The peer network needs a subnet of its own so that a reconnected node keeps its address. */
    private void createPeerNetwork() {
        RuntimeException last = null;
        for (int attempt = 0; attempt < 20; attempt++) {
            ThreadLocalRandom random = ThreadLocalRandom.current();
            String prefix = "172." + (18 + random.nextInt(14)) + "." + random.nextInt(256) + ".";
            try {
                peerNetworkId = docker.createNetworkCmd().withName(namePrefix() + "-peer").withDriver("bridge")
                        .withLabels(Docker.labels(id))
                        .withIpam(new Network.Ipam().withConfig(new Network.Ipam.Config().withSubnet(prefix + "0/24")))
                        .exec().getId();
                subnetPrefix = prefix;
                return;
            } catch (RuntimeException e) {
                if (!String.valueOf(e.getMessage()).toLowerCase().contains("overlap")) {
                    throw e;
                }
                last = e;
            }
        }
        throw new IllegalStateException("no free subnet for the peer network", last);
    }

    private List<String> nodeIds() {
        List<String> ids = new ArrayList<>();
        for (int i = 1; i <= spec.size; i++) {
            ids.add("n" + i);
        }
        return ids;
    }

    // ---- access ---------------------------------------------------------------------------------

    public List<ClusterNode> nodes() {
        return List.copyOf(nodes);
    }

    /** The node with this id ({@code n1}..{@code nN}). */
    public ClusterNode node(String nodeId) {
        return nodes.stream().filter(n -> n.id().equals(nodeId)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no node " + nodeId + " in " + nodeIds()));
    }

    public int size() {
        return spec.size;
    }

    /** The default write and read quorum: a majority of the cluster. */
    public int majority() {
        return spec.size / 2 + 1;
    }

    public Spec spec() {
        return spec;
    }

    /** The nodes that are up, unpaused and on the network. */
    public List<ClusterNode> liveNodes() {
        return nodes.stream().filter(ClusterNode::isLive).toList();
    }

    String id() {
        return id;
    }

    String image() {
        return image;
    }

    String namePrefix() {
        return "kvorum-it-" + id;
    }

    String frontNetworkName() {
        return namePrefix() + "-front";
    }

    String peerNetworkId() {
        return peerNetworkId;
    }

    /**
     * Starts stopped or killed nodes together (faster than one by one on a small machine) and
     * waits until each serves; then see {@link #awaitFullyConnected()}.
     */
    public void startNodes(List<ClusterNode> toStart) {
        toStart.forEach(ClusterNode::startContainer);
        toStart.forEach(ClusterNode::awaitServing);
    }

    // ---- conditions -----------------------------------------------------------------------------

    /**
     * Waits until every node, as coordinator, gets an answer from all N replicas: a read of
     * {@link #PROBE_KEY} with {@code ack=N&from=N}. A node serving {@code /v0/status} may still be
     * reconnecting to its peers; this is the fixture's "the whole cluster is back".
     */
    public void awaitFullyConnected() {
        for (ClusterNode node : nodes) {
            KvorumClient client = node.client(Duration.ofSeconds(3));
            Await.until(node.id() + " to reach all " + spec.size + " replicas", CONNECT_BOUND,
                    () -> readsFromAll(client), () -> node.tail(20));
        }
    }

    private boolean readsFromAll(KvorumClient client) {
        try {
            client.get(PROBE_KEY, KvorumClient.Options.quorum(spec.size, spec.size)).get(5, TimeUnit.SECONDS);
            return true;
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof KvorumException k && !k.isNotEnoughReplicas() && !k.isOverloaded()) {
                throw new AssertionError("probe read answered " + k.getMessage(), k);
            }
            return false;
        } catch (java.util.concurrent.TimeoutException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    // ---- reports and cleanup --------------------------------------------------------------------

    /** Writes each node's full log to {@code dir/<node>.log}; returns the files. */
    public List<Path> writeLogs(Path dir) throws IOException {
        Files.createDirectories(dir);
        List<Path> files = new ArrayList<>();
        for (ClusterNode n : java.util.stream.Stream.concat(nodes.stream(), retired.stream()).toList()) {
            Path file = dir.resolve(n.id() + ".log");
            Files.writeString(file, n.logs(), StandardCharsets.UTF_8);
            files.add(file);
        }
        return files;
    }

    /** Removes every container, volume and network of this cluster. Idempotent. */
    @Override
    public void close() {
        if (!OPEN.remove(this)) {
            return;
        }
        nodes.forEach(ClusterNode::remove);
        retired.forEach(ClusterNode::remove);
        for (String net : new String[] {peerNetworkId, frontNetworkId}) {
            if (net != null) {
                Docker.quietly(() -> docker.removeNetworkCmd(net).exec());
            }
        }
    }

    @Override
    public String toString() {
        return "cluster " + id + " " + nodes;
    }
}
