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
}
