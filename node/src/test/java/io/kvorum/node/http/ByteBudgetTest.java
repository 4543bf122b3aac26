package io.kvorum.node.http;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ByteBudgetTest {

    @Test
    void reservationsFitOrTakeNothing() {
        ByteBudget budget = new ByteBudget(100);
        assertThat(budget.tryReserve(60)).isTrue();
        assertThat(budget.tryReserve(41)).isFalse();
        assertThat(budget.held()).as("a refused reservation takes nothing").isEqualTo(60);
        assertThat(budget.tryReserve(40)).isTrue();
        assertThat(budget.tryReserve(0)).as("a request without a body always fits").isTrue();

        budget.release(60);
        assertThat(budget.held()).isEqualTo(40);
        assertThat(budget.tryReserve(60)).isTrue();
    }

    @Test
    void aProcessBudgetIsAQuarterOfItsMemoryAndAlwaysFitsTwoOfTheLargestBodies() {
        long heap = Runtime.getRuntime().maxMemory();
        assertThat(ByteBudget.forThisProcess(1024).limit()).isLessThanOrEqualTo(heap / 4).isPositive();

        int huge = (int) Math.min(Integer.MAX_VALUE, heap);
        assertThat(ByteBudget.forThisProcess(huge).limit()).isEqualTo(2L * huge);
    }
}
