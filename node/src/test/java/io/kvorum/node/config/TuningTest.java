package io.kvorum.node.config;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.node.util.ProcessMemory;
import org.junit.jupiter.api.Test;

class TuningTest {

    private static final long MEMORY = ProcessMemory.smallerOfHeapAndDirect();

    @Test
    void aMemoryShareIsTheFixedSizeOrTheShareOfMemoryWhicheverIsLess() {
        assertThat(Tuning.memoryShare(Long.MAX_VALUE, 8)).isEqualTo(MEMORY / 8);
        assertThat(Tuning.memoryShare(1 << 20, 8)).isEqualTo(Math.min(1 << 20, MEMORY / 8));
    }

    @Test
    void valuesHeldOnTheirWayElsewhereAreBoundedByTheNodesMemory() {
        assertThat(Tuning.DEFAULTS.hints().queueBytes()).isEqualTo(Math.min(64L << 20, MEMORY / 16));
        assertThat(Tuning.DEFAULTS.grpc().maxInFlightBytesPerPeer()).isEqualTo(Math.min(256L << 20, MEMORY / 8));
        assertThat(Tuning.DEFAULTS.grpc().unsentAnswerBytes()).isEqualTo(Math.min(256L << 20, MEMORY / 8));
    }
}
