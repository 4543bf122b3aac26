package io.kvorum.node.coordinator;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

class HedgeBudgetTest {

    private final Counter withheld = Counter.builder("withheld").register(new SimpleMeterRegistry());
    private final HedgeBudget budget = new HedgeBudget(withheld);

    @Test
    void aFullReserveAllowsThatManyHedgesThenATenthOfTheReads() {
        for (int i = 0; i < HedgeBudget.RESERVE; i++) {
            assertThat(budget.tryHedge()).as("hedge %d of the reserve", i).isTrue();
        }
        assertThat(budget.tryHedge()).as("the reserve is spent").isFalse();
        assertThat(withheld.count()).isEqualTo(1);

        for (int i = 0; i < 9; i++) {
            budget.onRead();
        }
        assertThat(budget.tryHedge()).as("nine reads are not worth a hedge").isFalse();
        budget.onRead();
        assertThat(budget.tryHedge()).as("ten are").isTrue();
        assertThat(budget.tryHedge()).isFalse();
        assertThat(withheld.count()).isEqualTo(3);
    }

    @Test
    void readsRefillTheReserveNoFurther() {
        for (int i = 0; i < 10 * HedgeBudget.RESERVE; i++) {
            budget.onRead(); // the reserve is full: these deposit nothing
        }
        int allowed = 0;
        while (budget.tryHedge()) {
            allowed++;
        }
        assertThat(allowed).isEqualTo(HedgeBudget.RESERVE);
    }
}
