package io.kvorum.perf;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class BackupCommandTest {

    @Test
    void theMedianOfTheRoundsIsTheMiddleP99OrTheMeanOfTheTwoMiddleOnes() {
        assertThat(BackupCommand.median(new double[] {31.5, 22.2, 51.1})).isEqualTo(31.5);
        assertThat(BackupCommand.median(new double[] {40.0, 10.0, 30.0, 20.0})).isEqualTo(25.0);
        assertThat(BackupCommand.median(new double[] {7.0})).isEqualTo(7.0);
    }
}
