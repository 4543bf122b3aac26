package io.kvorum.node;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.node.time.Clock;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node restarted with its wall clock set back (a virtual machine restored, a time source that
 * stepped at boot) still orders its new writes after what it stored before (docs/operations.md#how-replicas-converge): last write
 * wins by timestamp, and a write stamped below the stored version would be acknowledged and lost.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ClockSetBackTest {

    /** The system clock, an hour behind. */
    private static final Clock AN_HOUR_BEHIND = new Clock() {
        @Override
        public long currentTimeMillis() {
            return System.currentTimeMillis() - TimeUnit.HOURS.toMillis(1);
        }

        @Override
        public long nanoTime() {
            return System.nanoTime();
        }
    };

    @Test
    void aWriteAfterARestartWithTheClockAnHourBackReplacesTheValueWrittenBefore(@TempDir Path dir) throws Exception {
        try (TestNode node = TestNode.start(dir)) {
            assertThat(node.put("/v0/entity?id=k", "before".getBytes(UTF_8)).statusCode()).isEqualTo(201);
        }
        try (TestNode node = TestNode.start(dir, Map.of(), AN_HOUR_BEHIND)) {
            assertThat(node.put("/v0/entity?id=k", "after".getBytes(UTF_8)).statusCode()).isEqualTo(201);
            assertThat(new String(node.get("/v0/entity?id=k").body(), UTF_8)).isEqualTo("after");
            assertThat(node.delete("/v0/entity?id=k").statusCode()).isEqualTo(202);
            assertThat(node.get("/v0/entity?id=k").statusCode()).isEqualTo(404);
        }
    }
}
