package io.kvorum.client.placement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvorum.client.placement.ClusterView.Member;
import java.net.URI;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ClusterViewTest {

    /** As docs/http-api.md shows it, with a field from some later version. */
    private static final String THREE_NODES = """
            {"name":"kvorum","epoch":1,"members":[
              {"id":"n1","host":"127.0.0.1","http":8080,"grpc":9080,"state":"normal"},
              {"id":"n2","host":"::1","http":8081,"grpc":9081,"state":"joining"},
              {"id":"n3","host":"kv-3.example","http":8082,"grpc":9082,"state":"normal","zone":"b"}],
             "replicationFactor":3}
            """;

    @Test
    void readsTheBodyOfGetCluster() {
        ClusterView view = ClusterView.parse(THREE_NODES);

        assertThat(view).isEqualTo(new ClusterView("kvorum", 1, List.of(
                new Member("n1", "127.0.0.1", 8080, 9080, "normal"),
                new Member("n2", "::1", 8081, 9081, "joining"),
                new Member("n3", "kv-3.example", 8082, 9082, "normal")), 3));
        assertThat(view.members()).extracting(Member::isNormal).containsExactly(true, false, true);
    }

    @Test
    void aMembersEndpointBracketsAnIpv6Host() {
        List<Member> members = ClusterView.parse(THREE_NODES).members();

        assertThat(members.get(0).httpUri("http")).isEqualTo(URI.create("http://127.0.0.1:8080"));
        assertThat(members.get(1).httpUri("http")).isEqualTo(URI.create("http://[::1]:8081"));
        assertThat(members.get(2).httpUri("https")).isEqualTo(URI.create("https://kv-3.example:8082"));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            "name":"kvorum",                   | 'name' is missing
            "epoch":1,                         | 'epoch' is missing
            ,"replicationFactor":3             | 'replicationFactor' is missing
            "id":"n1",                         | 'members[0].id' is missing
            "host":"127.0.0.1",                | 'members[0].host' is missing
            "http":8080,                       | 'members[0].http' is missing
            "grpc":9080,                       | 'members[0].grpc' is missing
            ,"state":"normal"                  | 'members[0].state' is missing
            """)
    void aMissingFieldIsNamed(String removed, String problem) {
        String json = """
                {"name":"kvorum","epoch":1,"members":[{"id":"n1","host":"127.0.0.1","http":8080,"grpc":9080,\
                "state":"normal"}],"replicationFactor":3}""";
        assertThat(json).contains(removed);

        assertThatThrownBy(() -> ClusterView.parse(json.replace(removed, "")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("cluster view: " + problem);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            [1,2]                                                                  | cluster view: not a JSON object
            {"name":"kvorum","epoch":1,"members":[                                 | cluster view: not valid JSON
            {"name":"kvorum","epoch":1,"members":{},"replicationFactor":1}         | cluster view: 'members' is not an array
            {"name":"kvorum","epoch":1,"members":[],"replicationFactor":1}         | cluster view: 'members' is missing or empty
            {"name":"kvorum","epoch":1,"members":[7],"replicationFactor":1}        | cluster view: members[0] is not an object
            {"name":7,"epoch":1,"members":[],"replicationFactor":1}                | cluster view: 'name' is not a string
            {"name":"kvorum","epoch":"1","members":[],"replicationFactor":1}       | cluster view: 'epoch' is not a number
            {"name":"kvorum","epoch":1.5,"members":[],"replicationFactor":1}       | cluster view: 'epoch' is not an integer
            {"name":"kvorum","epoch":1,"members":[],"replicationFactor":4294967297} | cluster view: 'replicationFactor' is out of range
            {"name":"kvorum","epoch":1,"members":[{"id":"n1","host":"h","http":1,"grpc":2,"state":"normal"}],"replicationFactor":0} | cluster view: 'replicationFactor' is not a positive integer
            """)
    void aMalformedBodyIsRefusedSayingWhy(String json, String problem) {
        assertThatThrownBy(() -> ClusterView.parse(json))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith(problem);
    }

    @Test
    void aMemberOutOfRangeOrTwiceIsRefused() {
        assertThatThrownBy(() -> new Member("n1", "h", 0, 9080, "normal"))
                .hasMessage("cluster view: member 'n1': 'http' is not a port: 0");
        assertThatThrownBy(() -> new Member("n1", "h", 8080, 65536, "normal"))
                .hasMessage("cluster view: member 'n1': 'grpc' is not a port: 65536");
        Member n1 = new Member("n1", "h", 8080, 9080, "normal");
        assertThatThrownBy(() -> new ClusterView("kvorum", 1, List.of(n1, n1), 1))
                .hasMessage("cluster view: member id 'n1' appears twice");
    }
}
