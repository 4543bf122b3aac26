package io.kvorum.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvorum.client.KvorumClient.Options;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class OptionsTest {

    @Test
    void theDefaultLeavesAckFromAndTtlToTheNode() {
        assertThat(Options.DEFAULT).isEqualTo(new Options(0, 0, null));
        assertThat(Options.DEFAULT).hasToString("Options{ack=0, from=0}");
    }

    @Test
    void aQuorumHasNoTtlAndATtlKeepsTheQuorum() {
        Options q = Options.quorum(2, 3);
        assertThat(q).isEqualTo(new Options(2, 3, null));
        Options withTtl = q.withTtl(Duration.ofMinutes(5));
        assertThat(withTtl).isEqualTo(new Options(2, 3, Duration.ofMinutes(5)));
        assertThat(withTtl).hasToString("Options{ack=2, from=3, ttl=PT5M}");
        assertThat(q.ttl()).as("withTtl returns a new Options").isNull();
    }

    @Test
    void negativeAckOrFromIsRefused() {
        assertThatThrownBy(() -> Options.quorum(-1, 3)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("ack and from must be positive, or 0 for the default");
        assertThatThrownBy(() -> Options.quorum(1, -3)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Options(-1, 0, Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void whatTheNodeWouldRefuseIsRefusedHere() {
        assertThatThrownBy(() -> Options.quorum(3, 2)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("ack=3 is more than from=2");
        assertThat(Options.quorum(3, 0)).as("from left to the node: only the node knows it").isNotNull();
        assertThatThrownBy(() -> Options.DEFAULT.withTtl(Duration.ofNanos(500_000))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("ttl must be at least 1 ms");
        assertThatThrownBy(() -> Options.DEFAULT.withTtl(Duration.ofSeconds(-5))).isInstanceOf(IllegalArgumentException.class);
        assertThat(Options.DEFAULT.withTtl(Duration.ofMillis(1)).ttl()).isEqualTo(Duration.ofMillis(1));
    }

    @Test
    void aKeyIsItsUtf8BytesAndALoneSurrogateHasNone() {
        assertThat(KvorumClient.utf8("é😀")).isEqualTo("é😀".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        assertThatThrownBy(() -> KvorumClient.utf8("\uD800x")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lone surrogate at index 0");
        assertThatThrownBy(() -> KvorumClient.utf8("x\uDC00")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("index 1");
        assertThatThrownBy(() -> KvorumClient.utf8(null)).isInstanceOf(NullPointerException.class).hasMessage("key");
    }
}
