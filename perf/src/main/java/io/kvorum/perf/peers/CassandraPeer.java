package io.kvorum.perf.peers;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.metadata.Node;
import com.datastax.oss.driver.api.core.metadata.NodeState;
import io.kvorum.testkit.Ports;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Apache Cassandra 5.0 as {@code perf peers} runs it: N nodes, each a JVM of its own on its own
 * loopback address (127.0.0.1, .2, .3: Cassandra's nodes tell each other apart by address), started
 * one after another from the jars Maven resolved (perf/peers/cassandra/pom.xml), configured by
 * {@link CassandraSettings}. The table is {@code kvorum_peers.kv (k blob PRIMARY KEY, v blob)} with
 * replication factor = nodes; the Java driver reads and writes it with prepared statements at QUORUM,
 * token-aware (each request goes to a replica of its key).
 */
public final class CassandraPeer implements PeerCluster {

    /** A node's start on this 2-core machine takes 20-60 s; beyond this it is stuck. */
    static final Duration START_TIMEOUT = Duration.ofMinutes(4);
    static final Duration MEMBERSHIP_TIMEOUT = Duration.ofSeconds(60);
    static final String KEYSPACE = "kvorum_peers";

    private final PeerProcesses processes;
    private final int nodes;
    private final int nativePort;

    private CassandraPeer(PeerProcesses processes, int nodes, int nativePort) {
        this.processes = processes;
        this.nodes = nodes;
        this.nativePort = nativePort;
    }

    /**
     * Starts the nodes one by one (each once its CQL port answers), then makes the table.
     *
     * @param classpath the server's class path, as Maven wrote it (entries separated by ':')
     * @param runDir    where each node's configuration and log go (cassandra-n1.log ...)
     */
    public static CassandraPeer start(int nodes, String classpath, String heap, Path runDir)
            throws IOException, InterruptedException {
        if (nodes < 1 || nodes > 254) {
            throw new IllegalArgumentException("Cassandra runs 1 to 254 nodes on loopback addresses, not " + nodes);
        }
        Files.createDirectories(runDir);
        int[] ports = Ports.freePorts(2);
        int storagePort = ports[0];
        int nativePort = ports[1];
        PeerProcesses processes = new PeerProcesses(Files.createTempDirectory("kvorum-perf-cassandra-"));
        CassandraPeer cluster = new CassandraPeer(processes, nodes, nativePort);
        try {
            Path jamm = Arrays.stream(classpath.split(":")).map(Path::of)
                    .filter(p -> p.getFileName().toString().startsWith("jamm-")).findFirst().orElse(null);
            Path java = Path.of(System.getProperty("java.home"), "bin", "java");
            for (int i = 1; i <= nodes; i++) {
                String id = "n" + i;
                String address = address(i);
                Path home = processes.dataRoot().resolve(id);
                CassandraSettings.Folders folders = CassandraSettings.Folders.under(home);
                Files.createDirectories(home);
                Path yaml = runDir.resolve("cassandra-" + id + ".yaml");
                Files.writeString(yaml, CassandraSettings.yaml(address, address(1), storagePort, nativePort, folders),
                        StandardCharsets.UTF_8);
                Path logback = runDir.resolve("cassandra-" + id + "-logback.xml");
                Path log = runDir.resolve("cassandra-" + id + ".log");
                Files.writeString(logback, CassandraSettings.logback(log), StandardCharsets.UTF_8);
                List<String> command = new ArrayList<>();
                command.add(java.toString());
                command.addAll(CassandraSettings.jvmOptions(heap, yaml, logback, home, jamm));
                command.add("-Dcassandra.logdir=" + runDir.toAbsolutePath());
                Path triggers = Files.createDirectories(home.resolve("triggers"));
                command.add("-Dcassandra.triggers_dir=" + triggers);
                command.addAll(List.of("-cp", classpath, "org.apache.cassandra.service.CassandraDaemon"));
                Path out = runDir.resolve("cassandra-" + id + ".out");
                List<String> shown = new ArrayList<>(command);
                shown.set(shown.indexOf(classpath), "\"$CASSANDRA_CLASSPATH\""); // 99 jars: PeersReport says what it is
                Process p = processes.start(id, jemalloc().map(lib -> Map.of("LD_PRELOAD", lib.toString())).orElse(Map.of()),
                        command, shown, out);
                PeerProcesses.awaitPort(p, "Cassandra " + id, address, nativePort, START_TIMEOUT, List.of(out, log));
            }
            cluster.makeTable();
            return cluster;
        } catch (IOException | InterruptedException | RuntimeException e) {
            cluster.close();
            throw e;
        }
    }

    /**
     * Debian's jemalloc (libjemalloc2), which Cassandra's own launcher preloads where it finds it, for
     * the native memory Cassandra allocates (off-heap memtables, caches); empty when not installed.
     */
    static Optional<Path> jemalloc() {
        return JEMALLOC_PATHS.stream().map(Path::of).filter(Files::isReadable).findFirst();
    }

    private static final List<String> JEMALLOC_PATHS = List.of("/usr/lib/x86_64-linux-gnu/libjemalloc.so.2",
            "/usr/lib/aarch64-linux-gnu/libjemalloc.so.2", "/usr/lib64/libjemalloc.so.2", "/usr/lib/libjemalloc.so.2");

    /** The loopback address of node {@code n} (1-based). */
    static String address(int n) {
        return "127.0.0." + n;
    }

    private CqlSession session() {
        DriverConfigLoader config = DriverConfigLoader.programmaticBuilder()
                .withDuration(DefaultDriverOption.REQUEST_TIMEOUT, KvorumPeer.REQUEST_TIMEOUT)
                .withString(DefaultDriverOption.REQUEST_CONSISTENCY, "QUORUM")
                // The driver's defaults otherwise: one connection per node, 1024 requests on it at once,
                // token-aware routing for bound statements, no retry of a non-idempotent write.
                .build();
        return CqlSession.builder().addContactPoint(new InetSocketAddress(address(1), nativePort))
                .withLocalDatacenter(CassandraSettings.DATA_CENTER).withConfigLoader(config).build();
    }

    /** Waits until the driver sees every node up, then creates the keyspace (RF = nodes) and the table. */
    private void makeTable() throws IOException, InterruptedException {
        try (CqlSession session = session()) {
            long deadline = System.nanoTime() + MEMBERSHIP_TIMEOUT.toNanos();
            while (!allUp(session.getMetadata().getNodes().values())) {
                if (System.nanoTime() > deadline) {
                    throw new IOException("the Cassandra driver did not see " + nodes + " nodes up within "
                            + MEMBERSHIP_TIMEOUT.toSeconds() + " s: " + session.getMetadata().getNodes().values());
                }
                Thread.sleep(250); // the poll interval of a bounded wait
            }
            session.execute(String.format(Locale.ROOT, "CREATE KEYSPACE IF NOT EXISTS %s WITH replication = "
                    + "{'class': 'NetworkTopologyStrategy', '%s': %d}", KEYSPACE, CassandraSettings.DATA_CENTER, nodes));
            session.execute("CREATE TABLE IF NOT EXISTS " + KEYSPACE + ".kv (k blob PRIMARY KEY, v blob)");
            if (!session.checkSchemaAgreement()) {
                throw new IOException("the Cassandra nodes do not agree on the schema after creating " + KEYSPACE + ".kv");
            }
        }
    }

    private boolean allUp(Collection<Node> known) {
        return known.size() == nodes && known.stream().allMatch(n -> n.getState() == NodeState.UP);
    }

    @Override
    public List<Long> pids() {
        return processes.pids();
    }

    @Override
    public List<String> commandLines() {
        return processes.commandLines();
    }

    @Override
    public KeyValueTarget connect() {
        CqlSession session = session();
        PreparedStatement insert = session.prepare("INSERT INTO " + KEYSPACE + ".kv (k, v) VALUES (?, ?)");
        PreparedStatement select = session.prepare("SELECT v FROM " + KEYSPACE + ".kv WHERE k = ?");
        return new KeyValueTarget() {
            @Override
            public CompletableFuture<?> put(byte[] key, byte[] value) {
                return session.executeAsync(insert.bind(ByteBuffer.wrap(key), ByteBuffer.wrap(value))).toCompletableFuture();
            }

            @Override
            public CompletableFuture<?> get(byte[] key) {
                return session.executeAsync(select.bind(ByteBuffer.wrap(key))).toCompletableFuture()
                        .thenApply(rows -> rows.one());
            }

            @Override
            public void close() {
                session.close();
            }
        };
    }

    @Override
    public void close() {
        processes.close();
    }
}
