package io.kvorum.node.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.NullSource;
import org.junit.jupiter.params.provider.ValueSource;

class TopologyTest {

    @Test
    void parsesAList() throws InvalidTopologyException {
        Topology t = Topology.parse("n1=127.0.0.1:8080:9080,n2=10.0.0.2:8081:9081,n3=db-3.example:80:81");
        assertThat(t.size()).isEqualTo(3);
        assertThat(t.members()).containsExactly(
                new ClusterMember("n1", "127.0.0.1", 8080, 9080),
                new ClusterMember("n2", "10.0.0.2", 8081, 9081),
                new ClusterMember("n3", "db-3.example", 80, 81));
    }

    @Test
    void parsesASingleNode() throws InvalidTopologyException {
        Topology t = Topology.parse("solo=localhost:1:65535");
        assertThat(t.members()).containsExactly(new ClusterMember("solo", "localhost", 1, 65535));
    }

    @Test
    void toleratesSpacesAroundEntries() throws InvalidTopologyException {
        Topology t = Topology.parse(" n1=h:1:2 , n2=h:3:4 ");
        assertThat(t.members()).extracting(ClusterMember::id).containsExactly("n1", "n2");
    }

    @Test
    void parsesIpv6InBrackets() throws InvalidTopologyException {
        Topology t = Topology.parse("a=[::1]:8080:9080,b=[2001:db8::7]:8081:9081");
        assertThat(t.member("a")).isEqualTo(new ClusterMember("a", "::1", 8080, 9080));
        assertThat(t.member("b")).isEqualTo(new ClusterMember("b", "2001:db8::7", 8081, 9081));
        assertThat(t.member("b").toString()).isEqualTo("b=[2001:db8::7]:8081:9081");
    }

    @Test
    void membersDoNotDependOnTheOrderOfTheList() throws InvalidTopologyException {
        Topology forward = Topology.parse("n1=h:1:2,n2=h:3:4,n3=h:5:6");
        Topology shuffled = Topology.parse("n3=h:5:6,n1=h:1:2,n2=h:3:4");
        assertThat(shuffled.members()).isEqualTo(forward.members());
        assertThat(shuffled.members()).extracting(ClusterMember::id).containsExactly("n1", "n2", "n3");
    }

    @Test
    void memberLooksUpById() throws InvalidTopologyException {
        Topology t = Topology.parse("n1=h:1:2,n2=h:3:4");
        assertThat(t.member("n2").httpPort()).isEqualTo(3);
        assertThat(t.member("n9")).isNull();
    }

    @Test
    void membersCannotBeModified() throws InvalidTopologyException {
        Topology t = Topology.parse("n1=h:1:2");
        assertThatThrownBy(() -> t.members().clear()).isInstanceOf(UnsupportedOperationException.class);
    }

    @ParameterizedTest
    @NullSource
    @ValueSource(strings = {"", "   "})
    void rejectsAnEmptyList(String spec) {
        assertThatThrownBy(() -> Topology.parse(spec))
                .isInstanceOf(InvalidTopologyException.class)
                .hasMessageContaining("--cluster")
                .hasMessageContaining("empty");
    }

    @ParameterizedTest
    @ValueSource(strings = {"n1127.0.0.1:8080:9080", "=127.0.0.1:8080:9080", "n1:127.0.0.1:8080:9080"})
    void rejectsAnEntryWithoutIdEquals(String spec) {
        assertThatThrownBy(() -> Topology.parse(spec))
                .isInstanceOf(InvalidTopologyException.class)
                .hasMessageContaining("malformed --cluster entry '" + spec + "'")
                .hasMessageContaining("ID=HOST:HTTP:GRPC");
    }

    @ParameterizedTest
    @ValueSource(strings = {"n 1", "-n1", ".n1", "n1/2", "n1:x", "ü"})
    void rejectsABadNodeId(String id) {
        assertThatThrownBy(() -> Topology.parse(id + "=h:1:2"))
                .isInstanceOf(InvalidTopologyException.class)
                .hasMessageContaining("node id");
    }

    @Test
    void nodeIdsMayHaveUpTo64Characters() throws InvalidTopologyException {
        String longest = "n" + "x".repeat(63);
        assertThat(Topology.parse(longest + "=h:1:2").member(longest)).isNotNull();
        assertThatThrownBy(() -> Topology.parse(longest + "x=h:1:2"))
                .isInstanceOf(InvalidTopologyException.class)
                .hasMessageContaining("node id");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "n1=h:0:9080     | 0",
            "n1=h:65536:9080 | 65536",
            "n1=h:8080:99999 | 99999",
            "n1=h:abc:9080   | abc",
            "n1=h:-1:9080    | -1",
            "n1=h:8080:      | ''",
            "n1=h::9080      | ''",
            "n1=h:8080:90 80 | 90 80",
    })
    void rejectsBadPorts(String spec, String port) {
        assertThatThrownBy(() -> Topology.parse(spec))
                .isInstanceOf(InvalidTopologyException.class)
                .hasMessageContaining("port '" + port + "'")
                .hasMessageContaining("1..65535");
    }

    @ParameterizedTest
    @ValueSource(strings = {"n1=h:8080", "n1=h", "n1=8080:9080", "n1=:8080:9080", "n1=[::1:8080:9080",
            "n1=[]:8080:9080", "n1=h:1:2,", "n1=h:1:2,,n2=h:3:4"})
    void rejectsAMalformedAddress(String spec) {
        assertThatThrownBy(() -> Topology.parse(spec))
                .isInstanceOf(InvalidTopologyException.class)
                .hasMessageContaining("malformed --cluster entry");
    }

    @Test
    void rejectsTheSameHttpAndGrpcPort() {
        assertThatThrownBy(() -> Topology.parse("n1=h:8080:8080"))
                .isInstanceOf(InvalidTopologyException.class)
                .hasMessageContaining("n1=h:8080:8080")
                .hasMessageContaining("must differ");
    }

    @Test
    void rejectsADuplicateId() {
        assertThatThrownBy(() -> Topology.parse("n1=h:1:2,n2=h:3:4,n1=h:5:6"))
                .isInstanceOf(InvalidTopologyException.class)
                .hasMessageContaining("'n1'")
                .hasMessageContaining("twice");
    }

    @Test
    void rejectsADuplicateEndpoint() {
        assertThatThrownBy(() -> Topology.parse("n1=h:8080:9080,n2=h:8080:9081"))
                .isInstanceOf(InvalidTopologyException.class)
                .hasMessageContaining("h:8080")
                .hasMessageContaining("twice");
        // One node's gRPC port is another's HTTP port on the same host.
        assertThatThrownBy(() -> Topology.parse("n1=h:8080:9080,n2=h:9080:9081"))
                .isInstanceOf(InvalidTopologyException.class)
                .hasMessageContaining("h:9080")
                .hasMessageContaining("twice");
    }

    @Test
    void theSamePortsOnDifferentHostsAreFine() throws InvalidTopologyException {
        Topology t = Topology.parse("n1=10.0.0.1:8080:9080,n2=10.0.0.2:8080:9080");
        assertThat(t.size()).isEqualTo(2);
    }
}
