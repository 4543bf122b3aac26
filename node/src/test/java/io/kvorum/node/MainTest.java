package io.kvorum.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvorum.node.config.ConfigException;
import io.kvorum.node.config.NodeConfig;
import io.kvorum.node.config.NodeOption;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class MainTest {

    private static final String THREE = "n1=127.0.0.1:8081:9081,n2=127.0.0.1:8082:9082,n3=127.0.0.1:8083:9083";

    private final ByteArrayOutputStream outBytes = new ByteArrayOutputStream();
    private final PrintStream out = new PrintStream(outBytes, true, StandardCharsets.UTF_8);

    private NodeConfig parse(Map<String, String> env, String... args) throws ConfigException {
        return Main.parse(args, env, out);
    }

    private NodeConfig parse(String... args) throws ConfigException {
        return parse(Map.of(), args);
    }

    private String printed() {
        return outBytes.toString(StandardCharsets.UTF_8);
    }

    @Test
    void noArgumentsGiveTheBuiltInDefaults() throws ConfigException {
        NodeConfig c = parse();
        NodeConfig d = NodeConfig.defaults();
        assertThat(c.topology().members()).isEqualTo(d.topology().members());
        assertThat(c.self()).isEqualTo(d.self());
        assertThat(c.dataDir()).isEqualTo(Path.of("./data/n1"));
        assertThat(c.bindAddress()).isEqualTo("127.0.0.1");
        assertThat(c.replicationFactor()).isEqualTo(1);
        assertThat(c.fsync()).isFalse();
        assertThat(c.requestTimeout()).isEqualTo(d.requestTimeout());
        assertThat(printed()).isEmpty();
    }

    @Test
    void anUnknownOrEmptyLogLevelIsRefusedRatherThanTakenForDebug() throws ConfigException {
        for (String bad : new String[] {"verbose", ""}) {
            assertThatThrownBy(() -> parse(Map.of("KVORUM_LOG_LEVEL", bad)))
                    .isInstanceOf(ConfigException.class)
                    .hasMessage("KVORUM_LOG_LEVEL must be one of TRACE, DEBUG, INFO, WARN, ERROR, got '" + bad + "'");
        }
        assertThat(parse(Map.of("KVORUM_LOG_LEVEL", "warn"))).isNotNull();
    }

    @Test
    void flagsAreParsedInBothForms() throws ConfigException {
        NodeConfig c = parse("--cluster", THREE, "--node-id=n2", "--data-dir", "/tmp/x",
                "--replication-factor=2", "--request-timeout", "300", "--bind=0.0.0.0");
        assertThat(c.self().id()).isEqualTo("n2");
        assertThat(c.dataDir()).isEqualTo(Path.of("/tmp/x"));
        assertThat(c.replicationFactor()).isEqualTo(2);
        assertThat(c.requestTimeout()).isEqualTo(Duration.ofMillis(300));
        assertThat(c.bindAddress()).isEqualTo("0.0.0.0");
    }

    @Test
    void everyOptionCanComeFromTheEnvironment() throws ConfigException {
        NodeConfig c = parse(Map.of(
                "KVORUM_CLUSTER", THREE,
                "KVORUM_NODE_ID", "n3",
                "KVORUM_DATA_DIR", "/tmp/env",
                "KVORUM_BIND", "::",
                "KVORUM_REPLICATION_FACTOR", "2",
                "KVORUM_FSYNC", "true",
                "KVORUM_ANTI_ENTROPY_INTERVAL", "0",
                "KVORUM_REQUEST_TIMEOUT", "700",
                "KVORUM_MAX_VALUE_BYTES", "1024",
                "KVORUM_STORAGE_QUEUE", "8"));
        assertThat(c.self().id()).isEqualTo("n3");
        assertThat(c.dataDir()).isEqualTo(Path.of("/tmp/env"));
        assertThat(c.bindAddress()).isEqualTo("::");
        assertThat(c.replicationFactor()).isEqualTo(2);
        assertThat(c.fsync()).isTrue();
        assertThat(c.antiEntropyInterval()).isEqualTo(Duration.ZERO);
        assertThat(c.requestTimeout()).isEqualTo(Duration.ofMillis(700));
        assertThat(c.maxValueBytes()).isEqualTo(1024);
        assertThat(c.storageQueue()).isEqualTo(8);
    }

    @Test
    void aFlagWinsOverItsVariable() throws ConfigException {
        NodeConfig c = parse(Map.of("KVORUM_REQUEST_TIMEOUT", "700", "KVORUM_NODE_ID", "n1", "KVORUM_CLUSTER", THREE),
                "--request-timeout", "900", "--node-id", "n2");
        assertThat(c.requestTimeout()).isEqualTo(Duration.ofMillis(900));
        assertThat(c.self().id()).isEqualTo("n2");
        assertThat(c.topology().size()).as("the variable still counts where no flag is given").isEqualTo(3);
    }

    @Test
    void aBadVariableIsIgnoredWhenItsFlagIsGiven() throws ConfigException {
        NodeConfig c = parse(Map.of("KVORUM_REQUEST_TIMEOUT", "never"), "--request-timeout", "5");
        assertThat(c.requestTimeout()).isEqualTo(Duration.ofMillis(5));
    }

    @Test
    void fsyncIsASwitch() throws ConfigException {
        assertThat(parse().fsync()).isFalse();
        assertThat(parse("--fsync").fsync()).isTrue();
        assertThat(parse("--fsync=true").fsync()).isTrue();
        assertThat(parse("--fsync=false").fsync()).isFalse();
        assertThat(parse(Map.of("KVORUM_FSYNC", "true")).fsync()).isTrue();
        assertThat(parse(Map.of("KVORUM_FSYNC", "false")).fsync()).isFalse();
        assertThat(parse(Map.of("KVORUM_FSYNC", "false"), "--fsync").fsync()).isTrue();
        assertThat(parse(Map.of("KVORUM_FSYNC", "true"), "--fsync=false").fsync()).isFalse();
    }

    @Test
    void aBadFsyncVariableNamesTheVariable() {
        assertThatThrownBy(() -> parse(Map.of("KVORUM_FSYNC", "yes")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("KVORUM_FSYNC")
                .hasMessageContaining("'yes'");
        assertThatThrownBy(() -> parse("--fsync=maybe"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("--fsync")
                .hasMessageContaining("'maybe'");
    }

    @Test
    void aBadValueNamesTheFlagOrTheVariableItCameFrom() {
        assertThatThrownBy(() -> parse("--replication-factor", "0"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("--replication-factor")
                .hasMessageNotContaining("KVORUM_");
        assertThatThrownBy(() -> parse(Map.of("KVORUM_REPLICATION_FACTOR", "0")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("KVORUM_REPLICATION_FACTOR")
                .hasMessageNotContaining("--replication-factor");
        assertThatThrownBy(() -> parse(Map.of("KVORUM_CLUSTER", "n1=h:1")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("KVORUM_CLUSTER")
                .hasMessageNotContaining("--cluster");
        assertThatThrownBy(() -> parse("--cluster", THREE, "--node-id", "n9"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("--node-id 'n9'");
    }

    @Test
    void anUnknownFlagIsRefusedOnOneLine() {
        assertThatThrownBy(() -> parse("--bogus"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("--bogus")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
        assertThatThrownBy(() -> parse("--node-id", "n1", "--nodeid=n1"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("--nodeid");
    }

    @Test
    void aStrayArgumentIsRefused() {
        assertThatThrownBy(() -> parse("n1=127.0.0.1:8080:9080"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("n1=127.0.0.1:8080:9080")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
    }

    @Test
    void aFlagWithoutItsValueIsRefused() {
        assertThatThrownBy(() -> parse("--node-id"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("--node-id")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
    }

    @Test
    void aFlagGivenTwiceIsRefused() {
        assertThatThrownBy(() -> parse("--request-timeout", "5", "--request-timeout", "6"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("--request-timeout");
    }

    @Test
    void unrelatedEnvironmentVariablesAreIgnored() throws ConfigException {
        NodeConfig c = parse(Map.of("PATH", "/usr/bin", "HOME", "/root", "CLUSTER", "garbage"));
        assertThat(c.self().id()).isEqualTo("n1");
    }

    @ParameterizedTest
    @ValueSource(strings = {"--help", "-h"})
    void helpPrintsUsageAndReturnsNull(String flag) throws ConfigException {
        assertThat(parse(flag)).isNull();
        String usage = printed();
        assertThat(usage).contains("kvorum-node");
        for (NodeOption o : NodeOption.values()) {
            assertThat(usage).contains(o.flag()).contains(o.envVar());
        }
        assertThat(usage).contains("n1=127.0.0.1:8080:9080");
    }

    @Test
    void helpWinsOverOtherwiseBadOptions() throws ConfigException {
        assertThat(parse(Map.of("KVORUM_REQUEST_TIMEOUT", "never"), "--help")).isNull();
        assertThat(printed()).contains("--request-timeout");
    }

    @Test
    void versionPrintsAndReturnsNull() throws ConfigException {
        assertThat(parse("--version")).isNull();
        assertThat(printed()).contains("kvorum-node");
    }
}
