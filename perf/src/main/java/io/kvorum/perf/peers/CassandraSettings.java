package io.kvorum.perf.peers;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * How {@code perf peers} configures Apache Cassandra 5.0: one cassandra.yaml per node and the JVM's
 * flags. Everything not named here is Cassandra 5.0's default (its conf/cassandra.yaml); each choice
 * is explained where it is made, and in perf/README.md ("Peers").
 */
public final class CassandraSettings {

    /** The data center SimpleSnitch puts every node in; the driver's local one. */
    public static final String DATA_CENTER = "datacenter1";

    /**
     * Reads and writes served at once. Cassandra's guidance is 16 x data drives for reads and
     * 8 x cores for writes: 16 each on this 2-core, one-disk machine.
     */
    static final int CONCURRENT_READS = 16;
    static final int CONCURRENT_WRITES = 16;

    /** Cassandra 4.0's and later default, with the allocator that spreads them for RF 3. */
    static final int NUM_TOKENS = 16;

    /** One node's folders, under the run's data folder. */
    public record Folders(Path data, Path commitLog, Path savedCaches, Path hints, Path cdcRaw) {
        public static Folders under(Path root) {
            return new Folders(root.resolve("data"), root.resolve("commitlog"), root.resolve("saved_caches"),
                    root.resolve("hints"), root.resolve("cdc_raw"));
        }
    }

    private CassandraSettings() {}

    /**
     * The cassandra.yaml of one node.
     *
     * @param address     the node's loopback address (127.0.0.N), for gossip and clients
     * @param seed        the first node's address: the seed every node starts from
     * @param storagePort the internode port, the same on every node (each has its own address)
     * @param nativePort  the CQL port, likewise
     */
    public static String yaml(String address, String seed, int storagePort, int nativePort, Folders folders) {
        return String.join("\n",
                "cluster_name: kvorum-peers",
                "num_tokens: " + NUM_TOKENS,
                "allocate_tokens_for_local_replication_factor: 3",
                // A new cluster has no data to stream: nodes join without bootstrapping, one after another.
                "auto_bootstrap: false",
                "partitioner: org.apache.cassandra.dht.Murmur3Partitioner",
                "endpoint_snitch: SimpleSnitch",
                "seed_provider:",
                "  - class_name: org.apache.cassandra.locator.SimpleSeedProvider",
                "    parameters:",
                "      - seeds: \"" + seed + ":" + storagePort + "\"",
                "listen_address: " + address,
                "rpc_address: " + address,
                "storage_port: " + storagePort,
                "native_transport_port: " + nativePort,
                "data_file_directories:",
                "  - " + folders.data().toAbsolutePath(),
                "commitlog_directory: " + folders.commitLog().toAbsolutePath(),
                "saved_caches_directory: " + folders.savedCaches().toAbsolutePath(),
                "hints_directory: " + folders.hints().toAbsolutePath(),
                "cdc_raw_directory: " + folders.cdcRaw().toAbsolutePath(),
                // The default durability: the commit log is written for every mutation and synced to disk
                // every 10 s, so a write acknowledged in the last 10 s is lost if every replica loses power.
                "commitlog_sync: periodic",
                "commitlog_sync_period: 10000ms",
                "concurrent_reads: " + CONCURRENT_READS,
                "concurrent_writes: " + CONCURRENT_WRITES,
                "concurrent_counter_writes: " + CONCURRENT_WRITES,
                // Loopback and no password, as Kvorum's local cluster: no authentication or authorization.
                "authenticator: AllowAllAuthenticator",
                "authorizer: AllowAllAuthorizer",
                "")
                ;
    }

    /**
     * The JVM's flags, after Cassandra 5.0's conf/jvm-server.options and jvm17-server.options: G1 as
     * Cassandra ships it, the heap of Kvorum's nodes (1 GiB unless --heap), and the module exports
     * and openings Cassandra and its libraries (Chronicle, jamm, Netty) need on Java 17.
     *
     * @param jammJar the jamm agent jar from the class path, or null (Cassandra then measures objects
     *                without the agent, more slowly)
     */
    public static List<String> jvmOptions(String heap, Path yaml, Path logback, Path storageDir, Path jammJar) {
        List<String> o = new ArrayList<>(List.of(
                "-Xms" + heap, "-Xmx" + heap,
                "-XX:+UseG1GC", "-XX:+ParallelRefProcEnabled", "-XX:MaxTenuringThreshold=1", "-XX:G1HeapRegionSize=16m",
                "-XX:G1RSetUpdatingPauseTimePercent=5", "-XX:MaxGCPauseMillis=300", "-XX:InitiatingHeapOccupancyPercent=70",
                "-XX:+AlwaysPreTouch", "-XX:+UseTLAB", "-XX:+ResizeTLAB", "-XX:+PerfDisableSharedMem",
                "-XX:+UseThreadPriorities", "-Xss256k", "-XX:StringTableSize=1000003", "-Djava.net.preferIPv4Stack=true",
                // As Kvorum's nodes: a node out of memory exits (Cassandra's own files dump the heap and crash).
                "-XX:+ExitOnOutOfMemoryError",
                "-Djdk.attach.allowAttachSelf=true",
                "-Dio.netty.tryReflectionSetAccessible=true",
                "-Dio.netty.allocator.useCacheForAllThreads=true",
                "-Dio.netty.allocator.maxOrder=11",
                "-Dcassandra-foreground=yes",
                "-Dcassandra.config=" + yaml.toAbsolutePath().toUri(),
                "-Dcassandra.storagedir=" + storageDir.toAbsolutePath(),
                "-Dlogback.configurationFile=" + logback.toAbsolutePath(),
                // A new cluster: no need to wait for gossip to settle before serving clients.
                "-Dcassandra.skip_wait_for_gossip_to_settle=0"));
        for (String export : List.of("java.base/jdk.internal.misc", "java.management.rmi/com.sun.jmx.remote.internal.rmi",
                "java.rmi/sun.rmi.registry", "java.rmi/sun.rmi.server", "java.sql/java.sql", "java.base/java.lang.ref",
                "jdk.unsupported/sun.misc", "jdk.compiler/com.sun.tools.javac.file", "jdk.attach/sun.tools.attach",
                "java.base/jdk.internal.ref", "java.base/sun.nio.ch")) {
            o.add("--add-exports=" + export + "=ALL-UNNAMED");
        }
        for (String open : List.of("java.base/java.lang.module", "java.base/jdk.internal.loader", "java.base/jdk.internal.ref",
                "java.base/jdk.internal.reflect", "java.base/jdk.internal.math", "java.base/jdk.internal.module",
                "java.base/jdk.internal.util.jar", "jdk.management/com.sun.management.internal", "java.base/sun.nio.ch",
                "java.base/java.io", "java.base/java.lang.reflect", "jdk.compiler/com.sun.tools.javac",
                "java.base/java.lang", "java.base/java.util", "java.base/java.nio", "java.base/java.util.concurrent",
                "java.base/java.util.concurrent.atomic", "java.base/java.math", "java.base/java.net")) {
            o.add("--add-opens=" + open + "=ALL-UNNAMED");
        }
        if (jammJar != null) {
            o.add("-javaagent:" + jammJar.toAbsolutePath());
        }
        return o;
    }

    /** Logback's configuration: Cassandra's log at INFO into one file per node, in the run folder. */
    public static String logback(Path logFile) {
        return """
                <configuration scan="false">
                  <appender name="FILE" class="ch.qos.logback.core.FileAppender">
                    <file>%s</file>
                    <encoder><pattern>%%-5level [%%thread] %%date{ISO8601} %%F:%%L - %%msg%%n</pattern></encoder>
                  </appender>
                  <root level="INFO"><appender-ref ref="FILE"/></root>
                </configuration>
                """.formatted(logFile.toAbsolutePath());
    }
}
