package io.kvorum.node.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvorum.node.coordinator.Quorum;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class RequestParamsTest {

    private static final int CLUSTER = 5;

    private static Quorum quorum(String query, int rf) {
        return RequestParams.parse(query).quorum(rf, CLUSTER);
    }

    private static void assertBadQuorum(String query, String messagePart) {
        assertThatThrownBy(() -> quorum(query, 3))
                .as(query)
                .isInstanceOf(BadRequestException.class)
                .hasMessageContaining(messagePart);
    }

    @Test
    void theKeyIsTheDecodedId() {
        assertThat(RequestParams.parse("id=hello+world%21").key()).isEqualTo("hello world!".getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void aMissingIdIsABadRequest() {
        RequestParams p = RequestParams.parse("ack=1");
        assertThatThrownBy(p::key).isInstanceOf(BadRequestException.class).hasMessageContaining("'id' is missing");
        assertThatThrownBy(() -> RequestParams.parse(null).key()).isInstanceOf(BadRequestException.class);
    }

    @ParameterizedTest
    @ValueSource(strings = {"id=", "id", "id=&x=1", "ack=", "from=", "replicas=", "ttl=", "start=", "end="})
    void anEmptyKnownParameterIsABadRequest(String query) {
        assertThatThrownBy(() -> RequestParams.parse(query))
                .isInstanceOf(BadRequestException.class)
                .hasMessageContaining("is empty");
    }

    @ParameterizedTest
    @ValueSource(strings = {"id=a&id=b", "id=a&id=a", "id=a&ack=1&ack=1", "from=1&id=a&from=2", "ttl=1&ttl=2",
            "start=a&start=b", "id=a&replicas=1/1&replicas=1/1", "id=a&id="})
    void aKnownParameterGivenTwiceIsABadRequest(String query) {
        assertThatThrownBy(() -> RequestParams.parse(query))
                .isInstanceOf(BadRequestException.class)
                .hasMessageContaining("more than once");
    }

    @Test
    void unknownParametersAreIgnoredEvenIfEmptyOrRepeated() {
        RequestParams p = RequestParams.parse("foo=&id=k&bar&foo=1&foo=2&ID=x&Ack=0");
        assertThat(p.key()).isEqualTo("k".getBytes(StandardCharsets.UTF_8));
        assertThat(p.has("foo")).isFalse();
        assertThat(p.quorum(3, CLUSTER)).isEqualTo(new Quorum(2, 3));
    }

    @Test
    void aKeyOf1024BytesIsAcceptedAnd1025IsNot() {
        String e1024 = "%C3%A9".repeat(512); // 512 two-byte characters
        assertThat(RequestParams.parse("id=" + e1024).key()).hasSize(1024);
        assertThat(RequestParams.parse("id=" + "k".repeat(1024)).key()).hasSize(1024);

        RequestParams tooLong = RequestParams.parse("id=" + e1024 + "k");
        assertThatThrownBy(tooLong::key).isInstanceOf(BadRequestException.class)
                .hasMessageContaining("1025")
                .hasMessageContaining("1024");
        assertThatThrownBy(() -> RequestParams.parse("id=" + "k".repeat(1025)).key())
                .isInstanceOf(BadRequestException.class);
    }

    @Test
    void rangeBoundsAreKeys() {
        RequestParams p = RequestParams.parse("start=a&end=b");
        assertThat(p.keyParam("start")).isEqualTo("a".getBytes(StandardCharsets.UTF_8));
        assertThat(p.optionalKeyParam("end")).isEqualTo("b".getBytes(StandardCharsets.UTF_8));
        RequestParams open = RequestParams.parse("start=a");
        assertThat(open.optionalKeyParam("end")).isNull();
        assertThatThrownBy(() -> RequestParams.parse("end=b").keyParam("start"))
                .isInstanceOf(BadRequestException.class).hasMessageContaining("'start' is missing");
        assertThatThrownBy(() -> RequestParams.parse("start=a&end=" + "z".repeat(1025)).optionalKeyParam("end"))
                .isInstanceOf(BadRequestException.class).hasMessageContaining("'end'");
    }

    @ParameterizedTest
    @CsvSource({"1, 1", "2, 2", "3, 2", "4, 3", "5, 3"})
    void defaultsAreFromRfAndAMajorityAck(int rf, int ack) {
        assertThat(quorum("id=k", rf)).isEqualTo(new Quorum(ack, rf));
    }

    @ParameterizedTest
    @CsvSource({"1, 1", "2, 2", "3, 2", "4, 3", "5, 3"})
    void aGivenFromDefaultsAckToItsMajority(int from, int ack) {
        assertThat(quorum("id=k&from=" + from, 1)).isEqualTo(new Quorum(ack, from));
    }

    @Test
    void aGivenAckUsesTheDefaultFrom() {
        assertThat(quorum("id=k&ack=1", 3)).isEqualTo(new Quorum(1, 3));
        assertThat(quorum("id=k&ack=3", 3)).isEqualTo(new Quorum(3, 3));
    }

    @Test
    void ackAndFromAreTaken() {
        assertThat(quorum("ack=1&from=5", 3)).isEqualTo(new Quorum(1, 5));
        assertThat(quorum("from=2&ack=2", 3)).isEqualTo(new Quorum(2, 2));
    }

    @Test
    void ackAboveFromIsABadRequest() {
        assertBadQuorum("ack=3&from=2", "ack=3 is more than from=2");
        assertBadQuorum("ack=4", "ack=4 is more than from=3");
    }

    @Test
    void fromAboveTheClusterIsABadRequest() {
        assertBadQuorum("from=6", "from=6 is more than the 5 nodes");
        assertBadQuorum("ack=1&from=6", "5 nodes");
        assertBadQuorum("replicas=1/6", "5 nodes");
    }

    @Test
    void aReplicationFactorAboveTheClusterIsABadRequestThatSaysSo() {
        // After members left: the request named no from, so the message must not quote one as if it had.
        assertThatThrownBy(() -> RequestParams.parse("id=k").quorum(CLUSTER + 1, CLUSTER))
                .isInstanceOf(BadRequestException.class)
                .hasMessageContaining("the replication factor " + (CLUSTER + 1) + ", the default from,")
                .hasMessageContaining("name a from of at most " + CLUSTER);
    }

    @ParameterizedTest
    @ValueSource(strings = {"x", "0", "-1", "+1", "1.0", "1e3", "%201", "1%20", "0x2", "2147483648",
            "99999999999999999999999", "１"})
    void ackAndFromMustBePositiveIntegers(String bad) {
        assertBadQuorum("ack=" + bad, "ack");
        assertBadQuorum("from=" + bad, "from");
        assertBadQuorum("ack=1&from=" + bad, "from");
    }

    @Test
    void replicasMeansTheSameAsAckAndFrom() {
        for (int from = 1; from <= CLUSTER; from++) {
            for (int ack = 1; ack <= from; ack++) {
                assertThat(quorum("replicas=" + ack + "/" + from, 3))
                        .isEqualTo(quorum("ack=" + ack + "&from=" + from, 3))
                        .isEqualTo(new Quorum(ack, from));
            }
        }
        assertThat(quorum("replicas=2%2F3", 1)).isEqualTo(new Quorum(2, 3));
    }

    @Test
    void replicasTogetherWithAckOrFromIsABadRequest() {
        assertBadQuorum("replicas=2/3&ack=2", "not both");
        assertBadQuorum("from=3&replicas=2/3", "not both");
        assertBadQuorum("ack=2&from=3&replicas=2/3", "not both");
    }

    @ParameterizedTest
    @ValueSource(strings = {"2", "2/", "/3", "2/3/4", "a/b", "0/3", "2/0", "-1/3", "2:3", "2/3x", "3/2", "2/9",
            "2%2C3", "%2F"})
    void malformedReplicasIsABadRequest(String replicas) {
        assertThatThrownBy(() -> quorum("id=k&replicas=" + replicas, 3))
                .as(replicas)
                .isInstanceOf(BadRequestException.class);
    }

    @Test
    void ttlIsOptionalAndPositive() {
        assertThat(RequestParams.parse("id=k").ttlMillis()).isZero();
        assertThat(RequestParams.parse("id=k&ttl=1500").ttlMillis()).isEqualTo(1500);
        assertThat(RequestParams.parse("id=k&ttl=3000000000").ttlMillis()).isEqualTo(3_000_000_000L);
        assertThat(RequestParams.parse("id=k&ttl=0000000000000000000007").ttlMillis()).as("leading zeros").isEqualTo(7);
        for (String bad : new String[] {"0", "-5", "1s", "1.5"}) {
            assertThatThrownBy(() -> RequestParams.parse("id=k&ttl=" + bad).ttlMillis())
                    .as(bad)
                    .isInstanceOf(BadRequestException.class)
                    .hasMessageContaining("ttl must be a positive integer");
        }
        for (String large : new String[] {"9223372036854775806", "99999999999999999999"}) {
            assertThatThrownBy(() -> RequestParams.parse("id=k&ttl=" + large).ttlMillis())
                    .as(large)
                    .isInstanceOf(BadRequestException.class)
                    .hasMessageContaining("ttl is too large")
                    .hasMessageContaining("at most 18");
        }
    }

    @Test
    void hasReportsOnlyKnownParametersThatWereGiven() {
        RequestParams p = RequestParams.parse("id=k&ttl=5&other=1");
        assertThat(p.has("id")).isTrue();
        assertThat(p.has("ttl")).isTrue();
        assertThat(p.has("ack")).isFalse();
        assertThat(p.has("other")).isFalse();
    }
}
