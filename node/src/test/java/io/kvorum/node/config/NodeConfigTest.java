package io.kvorum.node.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvorum.node.cluster.ClusterMember;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class NodeConfigTest {

    private static final String THREE = "n1=10.0.0.1:8080:9080,n2=10.0.0.2:8080:9080,n3=10.0.0.3:8080:9080";

    private static NodeConfig parse(Object... optionValuePairs) throws ConfigException {
        Map<NodeOption, String> raw = new EnumMap<>(NodeOption.class);
        for (int i = 0; i < optionValuePairs.length; i += 2) {
            raw.put((NodeOption) optionValuePairs[i], (String) optionValuePairs[i + 1]);
        }
        return NodeConfig.fromRaw(raw);
    }

    @Test
    void defaultsAreASingleNodeOnLoopback() {
        NodeConfig c = NodeConfig.defaults();
        assertThat(c.topology().members()).containsExactly(new ClusterMember("n1", "127.0.0.1", 8080, 9080));
        assertThat(c.self()).isEqualTo(new ClusterMember("n1", "127.0.0.1", 8080, 9080));
        assertThat(c.dataDir()).isEqualTo(Path.of("./data/n1"));
        assertThat(c.bindAddress()).isEqualTo("127.0.0.1");
        assertThat(c.replicationFactor()).isEqualTo(1);
        assertThat(c.fsync()).isFalse();
        assertThat(c.antiEntropyInterval()).isEqualTo(Duration.ofSeconds(60));
        assertThat(c.requestTimeout()).isEqualTo(Duration.ofSeconds(1));
        assertThat(c.maxValueBytes()).isEqualTo(4 * 1024 * 1024);
        assertThat(c.storageQueue()).isEqualTo(4096);
        assertThat(c.storageReaders()).isEqualTo(2);
        assertThat(c.httpThreads()).isZero();
        assertThat(c.purgeInterval()).isEqualTo(Duration.ofSeconds(60));
        assertThat(c.tombstoneGrace()).isEqualTo(Duration.ofDays(10));
    }

    @Test
    void anEmptyMapGivesTheDefaults() throws ConfigException {
        NodeConfig c = NodeConfig.fromRaw(Map.of());
        assertThat(c.self().id()).isEqualTo("n1");
        assertThat(c.requestTimeout()).isEqualTo(Duration.ofMillis(1000));
    }

    @Test
    void derivedDefaultsFollowTheClusterAndNodeId() throws ConfigException {
        NodeConfig c = parse(NodeOption.CLUSTER, THREE, NodeOption.NODE_ID, "n2");
        assertThat(c.self().id()).isEqualTo("n2");
        assertThat(c.dataDir()).isEqualTo(Path.of("./data/n2"));
        assertThat(c.bindAddress()).isEqualTo("10.0.0.2");
        assertThat(c.replicationFactor()).isEqualTo(3);
    }

    @Test
    void theSeedSaysWhichOfItsOptionsWereGivenRatherThanDerived() throws ConfigException {
        NodeConfig derived = parse(NodeOption.CLUSTER, THREE, NodeOption.NODE_ID, "n2");
        assertThat(derived.seed().membership().replicationFactor()).isEqualTo(3);
        assertThat(derived.seed().clusterGiven()).isTrue();
        assertThat(derived.seed().nameGiven()).isFalse();
        assertThat(derived.seed().replicationFactorGiven()).as("derived from --cluster").isFalse();

        NodeConfig explicit = parse(NodeOption.CLUSTER, THREE, NodeOption.NODE_ID, "n2",
                NodeOption.CLUSTER_NAME, "prod", NodeOption.REPLICATION_FACTOR, "3");
        assertThat(explicit.seed().nameGiven()).isTrue();
        assertThat(explicit.seed().replicationFactorGiven()).as("given, even though equal to the derived value").isTrue();
        assertThat(NodeConfig.defaults().seed().clusterGiven()).isFalse();
    }

    @Test
    void theOnlyEntryIsTheNodeWhenNoIdIsGiven() throws ConfigException {
        NodeConfig c = parse(NodeOption.CLUSTER, "solo=[::1]:7000:7001");
        assertThat(c.self().id()).isEqualTo("solo");
        assertThat(c.bindAddress()).isEqualTo("::1");
        assertThat(c.dataDir()).isEqualTo(Path.of("./data/solo"));
        assertThat(c.replicationFactor()).isEqualTo(1);
    }

    @Test
    void explicitValuesWinOverDerivedDefaults() throws ConfigException {
        NodeConfig c = parse(
                NodeOption.CLUSTER, THREE,
                NodeOption.NODE_ID, "n3",
                NodeOption.DATA_DIR, "/var/lib/kvorum",
                NodeOption.BIND, "0.0.0.0",
                NodeOption.REPLICATION_FACTOR, "2",
                NodeOption.FSYNC, "true",
                NodeOption.ANTI_ENTROPY_INTERVAL, "0",
                NodeOption.REQUEST_TIMEOUT, "250",
                NodeOption.MAX_VALUE_BYTES, "0",
                NodeOption.STORAGE_QUEUE, "1",
                NodeOption.STORAGE_READERS, "256",
                NodeOption.HTTP_THREADS, "3",
                NodeOption.PURGE_INTERVAL, "1",
                NodeOption.TOMBSTONE_GRACE, "1",
                NodeOption.HINT_MAX_AGE, "0");
        assertThat(c.self().id()).isEqualTo("n3");
        assertThat(c.dataDir()).isEqualTo(Path.of("/var/lib/kvorum"));
        assertThat(c.bindAddress()).isEqualTo("0.0.0.0");
        assertThat(c.replicationFactor()).isEqualTo(2);
        assertThat(c.fsync()).isTrue();
        assertThat(c.antiEntropyInterval()).isEqualTo(Duration.ZERO);
        assertThat(c.requestTimeout()).isEqualTo(Duration.ofMillis(250));
        assertThat(c.maxValueBytes()).isZero();
        assertThat(c.storageQueue()).isEqualTo(1);
        assertThat(c.storageReaders()).isEqualTo(256);
        assertThat(c.httpThreads()).isEqualTo(3);
        assertThat(c.purgeInterval()).isEqualTo(Duration.ofMillis(1));
        assertThat(c.tombstoneGrace()).isEqualTo(Duration.ofMillis(1));
        assertThat(c.hintedHandoff()).isFalse();
    }

    @Test
    void thePhiThresholdIsEightUnlessGivenAndMayHaveDecimals() throws ConfigException {
        assertThat(NodeConfig.defaults().phiConvictThreshold()).isEqualTo(8.0);
        assertThat(parse(NodeOption.PHI_CONVICT_THRESHOLD, " 12.5 ").phiConvictThreshold()).isEqualTo(12.5);
    }

    @Test
    void hintsMayLiveUpToJustBelowTheTombstoneGrace() throws ConfigException {
        NodeConfig c = parse(NodeOption.TOMBSTONE_GRACE, "60000", NodeOption.HINT_MAX_AGE, "59999");
        assertThat(c.hintMaxAge()).isEqualTo(Duration.ofMillis(59_999));
        assertThat(c.tombstoneGrace()).isEqualTo(Duration.ofMinutes(1));
    }

    @Test
    void booleansAndNumbersTolerateCaseAndSurroundingSpaces() throws ConfigException {
        assertThat(parse(NodeOption.FSYNC, " TRUE ").fsync()).isTrue();
        assertThat(parse(NodeOption.FSYNC, "False").fsync()).isFalse();
        assertThat(parse(NodeOption.REQUEST_TIMEOUT, " 42 ").requestTimeout()).isEqualTo(Duration.ofMillis(42));
    }

    @Test
    void replicationFactorMayBeTheClusterSize() throws ConfigException {
        assertThat(parse(NodeOption.CLUSTER, THREE, NodeOption.NODE_ID, "n1",
                NodeOption.REPLICATION_FACTOR, "3").replicationFactor()).isEqualTo(3);
    }

    /** A bad value for an option, with the rest of the configuration valid. */
    static Stream<Arguments> badValues() {
        return Stream.of(
                Arguments.of(NodeOption.CLUSTER, "n1=h:8080"),
                Arguments.of(NodeOption.CLUSTER, ""),
                Arguments.of(NodeOption.CLUSTER, "n1=h:1:2,n1=h:3:4"),
                Arguments.of(NodeOption.CLUSTER_NAME, ""),
                Arguments.of(NodeOption.CLUSTER_NAME, "-prod"),
                Arguments.of(NodeOption.CLUSTER_NAME, "my cluster"),
                Arguments.of(NodeOption.CLUSTER_NAME, "x".repeat(65)),
                Arguments.of(NodeOption.CLUSTER_NAME, "prod/eu"),
                Arguments.of(NodeOption.NODE_ID, "n9"),
                Arguments.of(NodeOption.NODE_ID, ""),
                Arguments.of(NodeOption.DATA_DIR, ""),
                Arguments.of(NodeOption.DATA_DIR, "  "),
                Arguments.of(NodeOption.BIND, ""),
                Arguments.of(NodeOption.REPLICATION_FACTOR, "0"),
                Arguments.of(NodeOption.REPLICATION_FACTOR, "2"),
                Arguments.of(NodeOption.REPLICATION_FACTOR, "-1"),
                Arguments.of(NodeOption.REPLICATION_FACTOR, "one"),
                Arguments.of(NodeOption.REPLICATION_FACTOR, ""),
                Arguments.of(NodeOption.FSYNC, "yes"),
                Arguments.of(NodeOption.FSYNC, "1"),
                Arguments.of(NodeOption.FSYNC, ""),
                Arguments.of(NodeOption.ANTI_ENTROPY_INTERVAL, "-1"),
                Arguments.of(NodeOption.ANTI_ENTROPY_INTERVAL, "1s"),
                Arguments.of(NodeOption.REQUEST_TIMEOUT, "0"),
                Arguments.of(NodeOption.REQUEST_TIMEOUT, "1.5"),
                Arguments.of(NodeOption.REQUEST_TIMEOUT, "99999999999999999999"),
                Arguments.of(NodeOption.MAX_VALUE_BYTES, "-1"),
                Arguments.of(NodeOption.MAX_VALUE_BYTES, "4MB"),
                Arguments.of(NodeOption.MAX_VALUE_BYTES, "2147483647"),
                Arguments.of(NodeOption.MIN_FREE_DISK, "1"),
                Arguments.of(NodeOption.MIN_FREE_DISK, String.valueOf((256L << 20) - 1)),
                Arguments.of(NodeOption.MIN_FREE_DISK, "-1"),
                Arguments.of(NodeOption.STORAGE_QUEUE, "0"),
                Arguments.of(NodeOption.STORAGE_QUEUE, String.valueOf((1 << 20) + 1)),
                Arguments.of(NodeOption.STORAGE_READERS, "0"),
                Arguments.of(NodeOption.STORAGE_READERS, "257"),
                Arguments.of(NodeOption.HTTP_THREADS, "-1"),
                Arguments.of(NodeOption.HTTP_THREADS, "257"),
                Arguments.of(NodeOption.PURGE_INTERVAL, "0"),
                Arguments.of(NodeOption.TOMBSTONE_GRACE, "-1"),
                Arguments.of(NodeOption.TOMBSTONE_GRACE, "ten days"),
                // a tombstone purged at once, or before a hint of its key expires, lets a deleted value come back
                Arguments.of(NodeOption.TOMBSTONE_GRACE, "0"),
                Arguments.of(NodeOption.TOMBSTONE_GRACE, "10800000"),
                Arguments.of(NodeOption.HINT_MAX_AGE, "864000000"),
                Arguments.of(NodeOption.PHI_CONVICT_THRESHOLD, "0"),
                Arguments.of(NodeOption.PHI_CONVICT_THRESHOLD, "-8"),
                Arguments.of(NodeOption.PHI_CONVICT_THRESHOLD, "NaN"),
                Arguments.of(NodeOption.PHI_CONVICT_THRESHOLD, "Infinity"),
                Arguments.of(NodeOption.PHI_CONVICT_THRESHOLD, "high"),
                Arguments.of(NodeOption.PHI_CONVICT_THRESHOLD, ""));
    }

    @ParameterizedTest(name = "{0}={1}")
    @MethodSource("badValues")
    void aBadFlagValueNamesTheFlag(NodeOption option, String value) {
        assertThatThrownBy(() -> NodeConfig.fromRaw(Map.of(option, value)))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining(option.flag())
                .hasMessageNotContaining(option.envVar())
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
    }

    @ParameterizedTest(name = "{0}={1}")
    @MethodSource("badValues")
    void aBadEnvironmentValueNamesTheVariable(NodeOption option, String value) {
        assertThatThrownBy(() -> NodeConfig.fromRaw(Map.of(option, value), Set.of(option)))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining(option.envVar())
                .hasMessageNotContaining(option.flag())
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
    }

    @Test
    void theDiskReserveIsOffOrEnoughForACompaction() throws ConfigException {
        assertThat(parse(NodeOption.MIN_FREE_DISK, "0").minFreeDisk()).isZero();
        assertThat(parse(NodeOption.MIN_FREE_DISK, String.valueOf(256L << 20)).minFreeDisk()).isEqualTo(256L << 20);
        assertThat(NodeConfig.defaults().minFreeDisk()).isEqualTo(NodeConfig.LEAST_MIN_FREE_DISK);
        assertThatThrownBy(() -> parse(NodeOption.MIN_FREE_DISK, "67108864"))
                .hasMessage("--min-free-disk must be 0 (no check) or at least 268435456 (256 MiB: LevelDB's compactions"
                        + " write up to about 200 MiB before they free anything, and a disk they fill crashes the node),"
                        + " got 67108864");
    }

    @Test
    void aBadValueMessageQuotesTheValue() {
        assertThatThrownBy(() -> parse(NodeOption.REQUEST_TIMEOUT, "soon"))
                .hasMessageContaining("'soon'");
        assertThatThrownBy(() -> parse(NodeOption.STORAGE_READERS, "300"))
                .hasMessageContaining("300")
                .hasMessageContaining("256");
    }

    @Test
    void aMultiNodeClusterNeedsANodeId() {
        assertThatThrownBy(() -> parse(NodeOption.CLUSTER, THREE))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("--node-id")
                .hasMessageContaining("required")
                .hasMessageContaining("3 nodes");
        assertThatThrownBy(() -> NodeConfig.fromRaw(Map.of(NodeOption.CLUSTER, THREE), Set.of(NodeOption.CLUSTER)))
                .hasMessageContaining("KVORUM_CLUSTER");
    }

    @Test
    void aNodeIdOutsideTheClusterIsNamed() {
        assertThatThrownBy(() -> parse(NodeOption.CLUSTER, THREE, NodeOption.NODE_ID, "n4"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("'n4'")
                .hasMessageContaining("--node-id")
                .hasMessageContaining("--cluster");
    }

    @Test
    void replicationFactorAboveTheClusterSizeIsRefused() {
        assertThatThrownBy(() -> parse(NodeOption.CLUSTER, THREE, NodeOption.NODE_ID, "n1",
                NodeOption.REPLICATION_FACTOR, "4"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("--replication-factor")
                .hasMessageContaining("between 1 and 3");
    }
}
