package io.kvorum.client;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class KvorumExceptionTest {

    @Test
    void theMessageNamesTheStatus() {
        KvorumException e = new KvorumException(400, "bad ack");
        assertThat(e).hasMessage("HTTP 400: bad ack");
        assertThat(e.status()).isEqualTo(400);
    }

    @Test
    void only504IsNotEnoughReplicasAndOnly503IsOverloaded() {
        for (int status : new int[] {400, 404, 413, 500, 502, 503, 504}) {
            KvorumException e = new KvorumException(status, "x");
            assertThat(e.isNotEnoughReplicas()).as("%d is not enough replicas", status).isEqualTo(status == 504);
            assertThat(e.isOverloaded()).as("%d is overloaded", status).isEqualTo(status == 503);
        }
    }

    @Test
    void aBodyIsQuotedStrippedAndCutAt200Bytes() {
        assertThat(KvorumException.of(503, " Overloaded\n".getBytes(UTF_8))).hasMessage("HTTP 503: Overloaded");
        String long300 = "x".repeat(300);
        assertThat(KvorumException.of(400, long300.getBytes(UTF_8)))
                .hasMessage("HTTP 400: " + "x".repeat(200) + "...");
        assertThat(KvorumException.of(400, "x".repeat(200).getBytes(UTF_8))).hasMessage("HTTP 400: " + "x".repeat(200));
        assertThat(KvorumException.of(504, new byte[0])).hasMessage("HTTP 504: ");
    }

    /** A 2xx or 3xx where a refusal or another status was expected comes from something else than a node: its body may be a value. */
    @Test
    void anUnexpectedAnswerThatIsNotARefusalIsNotQuoted() {
        KvorumException e = KvorumException.of(200, "SECRET-VALUE".getBytes(UTF_8));
        assertThat(e).hasMessage("HTTP 200: unexpected answer (12 bytes, not shown)");
        assertThat(KvorumException.of(302, new byte[0])).hasMessage("HTTP 302: unexpected answer (0 bytes, not shown)");
    }
}
