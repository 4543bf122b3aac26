package io.kvorum.node.cluster;

import io.kvorum.client.KvorumClient;
import io.kvorum.node.KvorumNode;
import io.kvorum.node.config.ConfigException;
import io.kvorum.node.config.NodeConfig;
import io.kvorum.node.config.NodeOption;
import io.kvorum.node.time.Clock;
import io.kvorum.node.transport.memory.SimulatedNetwork;
import io.kvorum.testkit.Ports;
import io.kvorum.testkit.Readiness;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * N Kvorum nodes in one JVM, for multi-node scenario tests (after Ratis
 * {@code MiniRaftCluster}).
 *
 * <p>Topology: nodes {@code n1..nN} on 127.0.0.1, each with an HTTP and a gRPC port allocated up
 * front (the {@code --cluster} spec is static, so every port must be known before the first node
 * starts), and each with its own data directory under one temporary directory. The ports and the
 * data directory of a node never change, so {@link #restart} brings back the same node with the
 * same data.
 *
 * <p>Lifecycle: use {@link #runWithNewCluster}, which starts every node, waits until each answers
 * {@code /v0/status}, runs the test, and always tears everything down (killing the nodes still up
 * and deleting the data). When the test fails it logs which nodes were up and where, then rethrows.
 *
 * <p>Per node: {@link #stop} (graceful {@link KvorumNode#close()}), {@link #kill} (abrupt
 * {@link KvorumNode#kill()}), {@link #restart}, {@link #wipe} (delete the data of a node that is
 * down), {@link #client}, {@link #isUp}, and {@link #clock} to skew its wall clock. Requests use a short {@code --request-timeout}
 * ({@link #DEFAULT_REQUEST_TIMEOUT}) unless the test gives {@link NodeOption#REQUEST_TIMEOUT}.
 *
 * <p>Not thread-safe for lifecycle calls (start, stop, kill, restart, wipe): call them from the
 * test thread. {@link #client} may be used from any thread.
 */
public final class MiniCluster implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(MiniCluster.class);

    /** The request timeout of a test cluster unless the test sets {@link NodeOption#REQUEST_TIMEOUT}. */
    public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofMillis(500);
    /** How long a started node may take to answer {@code /v0/status}. */
    private static final Duration READY_WITHIN = Duration.ofSeconds(20);
    /** The client's own timeout: far above any node's request timeout, so the node always answers first. */
    private static final Duration CLIENT_TIMEOUT = Duration.ofSeconds(20);
    /** Another process may take a port between allocation and bind; then the cluster starts again on new ports. */
    private static final int START_ATTEMPTS = 3;
    private static final String HOST = "127.0.0.1";

    /** A test body that may throw. */
    @FunctionalInterface
    public interface ThrowingConsumer<T> {
        void accept(T t) throws Exception;
    }

    /**
     * Starts one node from its configuration: the seam through which a scenario is bound to a
     * transport: {@link #GRPC} as in production, or {@link #SIMULATED} in memory.
     */
    @FunctionalInterface
    public interface NodeLauncher {
        /**
         * Starts the node on the HTTP port of its {@code --cluster} entry, with {@code clock} as its
         * time; {@code network} is the cluster's simulated network, for launchers that use it.
         */
        KvorumNode start(NodeConfig config, Clock clock, SimulatedNetwork network) throws KvorumNode.StartupException;
    }

    /** Nodes that replicate over gRPC, as in production. */
    public static final NodeLauncher GRPC =
            (config, clock, network) -> KvorumNode.start(config, config.self().httpPort(), clock);

    /** Nodes that replicate over the cluster's {@link SimulatedNetwork}, whose links a test may break. */
    public static final NodeLauncher SIMULATED =
            (config, clock, network) -> KvorumNode.start(config, config.self().httpPort(), clock, network);

    /**
     * The seed of each cluster's {@link SimulatedNetwork}: {@code -Dkvorum.seed=N} replays one,
     * otherwise each cluster draws its own and logs it.
     */
    private static long networkSeed() {
        String fixed = System.getProperty("kvorum.seed");
        return fixed != null ? Long.parseLong(fixed) : new java.util.Random().nextLong();
    }

    /**
     * A node's wall clock: the system's, shifted by a skew that a test may change at any time, as
     * the clocks of real machines disagree. All nodes of one JVM otherwise share one clock, which
     * orders their writes by itself and hides what the hybrid logical clock must do. Monotonic time
     * (deadlines) is not shifted.
     */
    public static final class SkewedClock implements Clock {
        private final AtomicLong skewMillis = new AtomicLong();

        @Override
        public long currentTimeMillis() {
            return System.currentTimeMillis() + skewMillis.get();
        }

        @Override
        public long nanoTime() {
            return System.nanoTime();
        }

        public void setSkew(Duration skew) {
            skewMillis.set(skew.toMillis());
        }
    }

    private final NodeLauncher launcher;
    private final SimulatedNetwork network;
    private final long seed;
    private final Path root;
    private final Topology topology;
    private final Placement placement;
    private final Duration requestTimeout;
    private final Map<NodeOption, String> extraOptions;
    private final Map<String, NodeConfig> configs = new LinkedHashMap<>();
    private final Map<String, SkewedClock> clocks = new LinkedHashMap<>();
    private final Map<String, KvorumNode> running = new ConcurrentHashMap<>();
    private final Map<String, KvorumClient> clients = new ConcurrentHashMap<>();
    private final List<KvorumNode> outsiders = new ArrayList<>();

    private MiniCluster(NodeLauncher launcher, Path root, int n, Map<NodeOption, String> extraOptions, long seed)
            throws InvalidTopologyException, ConfigException {
        this.launcher = launcher;
        this.network = new SimulatedNetwork(seed);
        this.seed = seed;
        this.root = root;
        this.extraOptions = Map.copyOf(extraOptions);
        int[] ports = Ports.freePorts(2 * n);
        List<String> entries = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            entries.add("n" + (i + 1) + "=" + HOST + ":" + ports[2 * i] + ":" + ports[2 * i + 1]);
        }
        String spec = String.join(",", entries);
        this.topology = Topology.parse(spec);
        this.placement = new Placement(topology);
        for (ClusterMember m : topology.members()) {
            configs.put(m.id(), NodeConfig.fromRaw(options(m.id(), spec, false)));
            clocks.put(m.id(), new SkewedClock());
        }
        this.requestTimeout = configs.values().iterator().next().requestTimeout();
    }

    private Map<NodeOption, String> options(String id, String spec, boolean join) {
        Map<NodeOption, String> raw = new EnumMap<>(NodeOption.class);
        raw.put(NodeOption.REQUEST_TIMEOUT, Long.toString(DEFAULT_REQUEST_TIMEOUT.toMillis()));
        raw.put(NodeOption.HTTP_THREADS, "2"); // N nodes share two cores; one loop per core each is plenty
        raw.putAll(extraOptions);
        raw.put(NodeOption.CLUSTER, spec);
        raw.put(NodeOption.NODE_ID, id);
        raw.put(NodeOption.DATA_DIR, root.resolve(id).toString());
        if (join) {
            raw.put(NodeOption.JOIN, "true");
        }
        return raw;
    }

    /** {@link #runWithNewCluster(NodeLauncher, int, Map, ThrowingConsumer)} over gRPC. */
    public static void runWithNewCluster(int n, Map<NodeOption, String> extraOptions,
                                         ThrowingConsumer<MiniCluster> test) throws Exception {
        runWithNewCluster(GRPC, n, extraOptions, test);
    }

    /**
     * Starts {@code n} nodes with {@code extraOptions} added to each one's configuration, waits until
     * all are ready, runs {@code test}, and tears the cluster down whatever happens. On failure it
     * logs the cluster's state before rethrowing.
     */
    public static void runWithNewCluster(NodeLauncher launcher, int n, Map<NodeOption, String> extraOptions,
                                         ThrowingConsumer<MiniCluster> test) throws Exception {
        runWithNewCluster(launcher, n, extraOptions, networkSeed(), test);
    }

    /** As above, with the seed of the cluster's {@link SimulatedNetwork} given (seeded fault schedules). */
    public static void runWithNewCluster(NodeLauncher launcher, int n, Map<NodeOption, String> extraOptions,
                                         long networkSeed, ThrowingConsumer<MiniCluster> test) throws Exception {
        Path root = Files.createTempDirectory("kvorum-minicluster-");
        MiniCluster cluster = startWithRetries(launcher, root, n, extraOptions, networkSeed);
        try {
            test.accept(cluster);
        } catch (Throwable t) {
            log.error("test failed on {}", cluster.describe());
            throw t;
        } finally {
            cluster.close();
        }
    }

    private static MiniCluster startWithRetries(NodeLauncher launcher, Path root, int n,
                                                Map<NodeOption, String> extraOptions, long seed) throws Exception {
        for (int attempt = 1; ; attempt++) {
            MiniCluster cluster = new MiniCluster(launcher, root, n, extraOptions, seed);
            try {
                for (String id : cluster.ids()) {
                    cluster.startNode(id);
                }
                for (String id : cluster.ids()) {
                    cluster.awaitReady(id);
                }
                return cluster;
            } catch (KvorumNode.StartupException e) {
                cluster.close();
                if (attempt == START_ATTEMPTS || !e.getMessage().contains("already in use")) {
                    throw e;
                }
                log.warn("starting a test cluster failed ({}); retrying on new ports", e.getMessage());
            } catch (Throwable t) {
                cluster.close();
                throw t;
            }
        }
    }

    private void startNode(String id) throws KvorumNode.StartupException {
        if (running.containsKey(id)) {
            throw new IllegalStateException(id + " is already up");
        }
        running.put(id, launcher.start(config(id), clocks.get(id), network));
    }

    /**
     * The network of this cluster's nodes when they were started with {@link #SIMULATED}: its links
     * can be cut, delayed and healed at any time. Unused by nodes started over gRPC.
     */
    public SimulatedNetwork network() {
        return network;
    }

    /** Node ids, {@code n1..nN}. */
    public List<String> ids() {
        return List.copyOf(configs.keySet());
    }

    public int size() {
        return configs.size();
    }

    /** The ids of the nodes that are up. */
    public List<String> upNodes() {
        return ids().stream().filter(this::isUp).toList();
    }

    public boolean isUp(String id) {
        return running.containsKey(checked(id));
    }

    public NodeConfig config(String id) {
        return configs.get(checked(id));
    }

    /** The node's clock (kept across restarts); see {@link SkewedClock}. */
    public SkewedClock clock(String id) {
        return clocks.get(checked(id));
    }

    public ClusterMember member(String id) {
        return config(id).self();
    }

    /** The {@code --cluster} value every node was started with. */
    public String clusterSpec() {
        return topology.members().stream().map(ClusterMember::toString).collect(Collectors.joining(","));
    }

    public Duration requestTimeout() {
        return requestTimeout;
    }

    public URI httpUri(String id) {
        ClusterMember m = member(id);
        return URI.create("http://" + m.host() + ":" + m.httpPort());
    }

    /** A client of this node (cached; it keeps working across a restart, as the port is the same). */
    public KvorumClient client(String id) {
        return clients.computeIfAbsent(checked(id), i -> KvorumClient.create(httpUri(i), CLIENT_TIMEOUT));
    }

    /** The ids of the key's first {@code from} replicas, in preference order (docs/operations.md#how-replicas-converge). */
    public List<String> replicasOf(String key, int from) {
        return placement.replicasFor(key.getBytes(StandardCharsets.UTF_8), from).stream()
                .map(ClusterMember::id).toList();
    }

    /** The key's whole preference list. */
    public List<String> preferenceList(String key) {
        return replicasOf(key, size());
    }

    /**
     * The first key {@code prefix + i} (i = 0, 1, ...) whose preference list starts with
     * {@code leading}, in that order. Rendezvous hashing spreads keys evenly, so this takes a
     * handful of tries.
     */
    public String keyWhosePreferenceStartsWith(String prefix, List<String> leading) {
        for (int i = 0; i < 100_000; i++) {
            String key = prefix + i;
            if (replicasOf(key, leading.size()).equals(leading)) {
                return key;
            }
        }
        throw new IllegalStateException("no key with prefix " + prefix + " has preference " + leading);
    }

    /**
     * Starts a new node, {@code n<N+1>}, with {@code --join} and {@code --cluster} naming itself and
     * {@code seeds} (docs/operations.md#growing-and-shrinking-a-cluster); returns its id once it answers {@code /v0/status}, that is once the
     * cluster has accepted it as joining. It is a node of this cluster from then on ({@link #ids}).
     */
    public String join(List<String> seeds) throws Exception {
        return join(seeds, UnaryOperator.identity());
    }

    /** As {@link #join(List)}, with the new node's configuration changed by {@code adjust} (tuning). */
    public String join(List<String> seeds, UnaryOperator<NodeConfig> adjust) throws Exception {
        String id = "n" + (configs.size() + 1);
        int[] ports = portsNoMemberWasGiven(2);
        List<String> entries = new ArrayList<>();
        entries.add(id + "=" + HOST + ":" + ports[0] + ":" + ports[1]);
        seeds.forEach(seed -> entries.add(member(seed).toString()));
        configs.put(id, adjust.apply(NodeConfig.fromRaw(options(id, String.join(",", entries), true))));
        clocks.put(id, new SkewedClock());
        startNode(id);
        awaitReady(id);
        return id;
    }

    /**
     * Starts a node with {@code --join} whose own {@code --cluster} entry is {@code selfEntry}
     * ({@code id=host:http:grpc}) beside {@code seeds}: for a join the cluster refuses, whose start
     * throws. The node, if it starts, is the caller's to close; it is no node of this cluster.
     */
    public KvorumNode startJoiner(String selfEntry, List<String> seeds) throws Exception {
        String id = selfEntry.substring(0, selfEntry.indexOf('='));
        List<String> entries = new ArrayList<>();
        entries.add(selfEntry);
        seeds.forEach(seed -> entries.add(member(seed).toString()));
        return launcher.start(NodeConfig.fromRaw(options(id, String.join(",", entries), true)), new SkewedClock(), network);
    }

    /**
     * {@code count} free loopback ports that no node of this cluster was given. A free port is not
     * enough: over the simulated transport a member's gRPC port is never bound, so the kernel may
     * hand it out again, and the new node's {@code --cluster} would then name one address twice.
     */
    public int[] portsNoMemberWasGiven(int count) {
        Set<Integer> given = configs.values().stream().map(NodeConfig::self)
                .flatMap(m -> Stream.of(m.httpPort(), m.grpcPort())).collect(Collectors.toSet());
        for (int attempt = 0; attempt < 100; attempt++) {
            int[] ports = Ports.freePorts(count);
            if (Arrays.stream(ports).noneMatch(given::contains)) {
                return ports;
            }
        }
        throw new IllegalStateException("no " + count + " free ports apart from the members' " + given);
    }

    /** Graceful shutdown of a node ({@link KvorumNode#close()}); its data stays. */
    public void stop(String id) {
        node(id).close();
        running.remove(id);
    }

    /** Abrupt stop ({@link KvorumNode#kill()}): no grace for requests in progress; its data stays. */
    public void kill(String id) {
        node(id).kill();
        running.remove(id);
    }

    /**
     * Starts a node that is down again, with the same configuration and data directory, and waits
     * until it is ready. Nothing more: docs/operations.md#how-replicas-converge promises that from then on its peers serve it and it
     * serves them, and every scenario that restarts a node checks that promise by what it does next.
     */
    public void restart(String id) throws KvorumNode.StartupException {
        startNode(checked(id));
        awaitReady(id);
    }

    /**
     * Starts a node that is down again, as {@link #restart}, without waiting for it to be ready:
     * for a node whose {@code /v0/status} may never answer 200 (one that was removed while down).
     * Its HTTP port is bound when this returns.
     */
    public void restartUnready(String id) throws KvorumNode.StartupException {
        startNode(checked(id));
    }

    /** Deletes the data directory of a node that is down, as if its disk were replaced. */
    public void wipe(String id) {
        if (isUp(id)) {
            throw new IllegalStateException(id + " is up; stop or kill it before wiping its data");
        }
        deleteRecursively(config(id).dataDir());
    }

    /** Polls {@code GET /v0/status} until it answers 200, for at most {@link #READY_WITHIN}. */
    public void awaitReady(String id) {
        Readiness.awaitStatus200(id, URI.create(httpUri(id) + "/v0/status"), READY_WITHIN, () -> { }, () -> "");
    }

    /**
     * Starts a node that is not a member of this cluster, with its own {@code --cluster}
     * ({@code clusterSpec}, which must name {@code nodeId}) and data directory; it is killed with the
     * cluster. For tests of what this cluster does with traffic from a foreign node.
     */
    public KvorumNode startOutsider(String nodeId, String clusterSpec) throws Exception {
        Map<NodeOption, String> raw = new EnumMap<>(NodeOption.class);
        raw.put(NodeOption.CLUSTER, clusterSpec);
        raw.put(NodeOption.NODE_ID, nodeId);
        raw.put(NodeOption.DATA_DIR, root.resolve("outsider-" + outsiders.size() + "-" + nodeId).toString());
        raw.put(NodeOption.REQUEST_TIMEOUT, Long.toString(requestTimeout.toMillis()));
        raw.put(NodeOption.HTTP_THREADS, "2");
        KvorumNode node = launcher.start(NodeConfig.fromRaw(raw), Clock.SYSTEM, network);
        outsiders.add(node);
        return node;
    }

    /** One line per node: id, up or down, ports, data directory. */
    public String describe() {
        StringBuilder sb = new StringBuilder("MiniCluster of ").append(size()).append(" nodes, request timeout ")
                .append(requestTimeout.toMillis()).append(" ms, data under ").append(root)
                .append(", simulated network seed ").append(seed).append(" (replay: -Dkvorum.seed=").append(seed)
                .append(')');
        for (String id : ids()) {
            ClusterMember m = member(id);
            sb.append(System.lineSeparator()).append("  ").append(id).append(isUp(id) ? " UP  " : " DOWN")
                    .append(" http=").append(m.httpPort()).append(" grpc=").append(m.grpcPort());
        }
        for (KvorumNode o : outsiders) {
            sb.append(System.lineSeparator()).append("  outsider ").append(o.config().self())
                    .append(" of --cluster ").append(o.config().topology().members());
        }
        return sb.toString();
    }

    /** Kills every node still up (tests need no grace at teardown) and deletes all data. */
    @Override
    public void close() {
        for (String id : List.copyOf(running.keySet())) {
            KvorumNode node = running.remove(id);
            if (node != null) {
                node.kill();
            }
        }
        outsiders.forEach(KvorumNode::kill);
        outsiders.clear();
        network.close();
        deleteRecursively(root);
    }

    private KvorumNode node(String id) {
        KvorumNode node = running.get(checked(id));
        if (node == null) {
            throw new IllegalStateException(id + " is down");
        }
        return node;
    }

    private String checked(String id) {
        if (!configs.containsKey(id)) {
            throw new IllegalArgumentException("no node " + id + " in " + ids());
        }
        return id;
    }

    private static void deleteRecursively(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete " + dir, e);
        }
    }
}
