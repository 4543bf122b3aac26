package io.kvorum.perf.driver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvorum.client.KvorumClient;
import io.kvorum.client.RetryPolicy;
import io.kvorum.perf.load.Workload;
import io.kvorum.perf.load.WrkOutput;
import io.kvorum.perf.ycsb.InProcessNode;
import io.kvorum.testkit.Ports;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DriverLoadTest {

    private static final Duration DRAIN = Duration.ofSeconds(10);

    @TempDir
    Path tmp;

    @Test
    void aPutLoadWritesTheKeySpaceAndCountsEveryAnswer() throws Exception {
        try (InProcessNode node = InProcessNode.start(tmp.resolve("data"));
             KvorumClient client = KvorumClient.builder().endpoints(node.uri()).connectionsPerEndpoint(2).build()) {
            // Loads of 1.5 s until 600 puts were made in all, however slow the machine (bounded):
            // 600 uniform puts over 20 keys miss one with p < 1e-12.
            DriverLoad.Result result = null;
            long puts = 0;
            for (int round = 0; round < 20 && puts <= 600; round++) {
                result = new DriverLoad(client, new DriverLoad.Spec(Workload.PUT, 20, 32, 0, 0, 0, 8))
                        .run(Duration.ofMillis(1500), DRAIN);
                assertThat(result.failures()).isEmpty();
                assertThat(result.latencyNs().getTotalCount()).isEqualTo(result.requests());
                puts += result.requests();
            }
            assertThat(puts).as("puts in 20 loads of 1.5 s").isGreaterThan(600);
            for (int i = 0; i < 20; i++) {
                Optional<byte[]> value = client.sync().get("key" + i);
                assertThat(value).as("key%d", i).isPresent();
                assertThat(value.get()).hasSize(32);
            }
            WrkOutput out = DriverOutput.of(result);
            assertThat(out.requests()).isEqualTo(result.requests());
            assertThat(out.errors()).isZero();
            assertThat(out.latencyAt(50).getAsDouble()).isPositive().isLessThanOrEqualTo(out.latencyAt(99).getAsDouble());
            assertThat(out.spectrum()).isNotEmpty();
        }
    }

    @Test
    void aMixedLoadReadsWhatItWrote() throws Exception {
        try (InProcessNode node = InProcessNode.start(tmp.resolve("data"));
             KvorumClient client = KvorumClient.builder().endpoints(node.uri()).build()) {
            DriverLoad.Result result = new DriverLoad(client, new DriverLoad.Spec(Workload.MIXED, 5, 8, 0.5, 1, 1, 4))
                    .run(Duration.ofMillis(800), DRAIN);

            assertThat(result.failures()).isEmpty();
            assertThat(result.requests()).isPositive();
        }
    }

    @Test
    void aNodeThatRefusesEveryRequestAtOnceIsCountedNotRecursedInto() throws Exception {
        URI nobody = URI.create("http://127.0.0.1:" + Ports.freePort());
        try (KvorumClient client = KvorumClient.builder().endpoints(nobody).retryPolicy(RetryPolicy.NONE).build()) {
            DriverLoad.Result result = new DriverLoad(client, new DriverLoad.Spec(Workload.GET, 10, 0, 0, 0, 0, 4))
                    .run(Duration.ofMillis(500), DRAIN);

            assertThat(result.requests()).isPositive();
            assertThat(result.failureCount()).isEqualTo(result.requests());
            assertThat(DriverOutput.of(result).errors()).isEqualTo(result.requests());
        }
    }

    @Test
    void deletesAndNonsenseAreRefused() {
        assertThatThrownBy(() -> new DriverLoad.Spec(Workload.DELETE, 10, 1, 0, 0, 0, 1)).hasMessageContaining("delete");
        assertThatThrownBy(() -> new DriverLoad.Spec(Workload.PUT, 10, 1, 0, 0, 0, 0)).hasMessageContaining("in-flight");
    }
}
