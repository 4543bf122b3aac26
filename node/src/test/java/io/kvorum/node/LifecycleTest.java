package io.kvorum.node;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class LifecycleTest {

    private final List<String> stopped = new ArrayList<>();
    private final Lifecycle parts = new Lifecycle();

    @Test
    void partsStopInTheReverseOfTheOrderTheyWereAddedAndOnce() {
        parts.add("storage", graceful -> stopped.add("storage " + graceful));
        parts.add("transport", graceful -> stopped.add("transport " + graceful));
        parts.add("gateway", graceful -> stopped.add("gateway " + graceful));

        parts.stop(true);
        parts.stop(false); // idempotent

        assertThat(stopped).containsExactly("gateway true", "transport true", "storage true");
        assertThat(parts.isStopped()).isTrue();
    }

    @Test
    void aFailingPartDoesNotKeepTheOthersRunningAndAnInterruptIsKept() {
        parts.add("storage", graceful -> stopped.add("storage"));
        parts.add("interrupted", graceful -> {
            throw new InterruptedException();
        });
        parts.add("broken", graceful -> {
            throw new IllegalStateException("boom");
        });
        try {
            parts.stop(false);
            assertThat(Thread.currentThread().isInterrupted()).isTrue();
        } finally {
            Thread.interrupted();
        }
        assertThat(stopped).containsExactly("storage");
    }
}
