package io.kvorum.node.cluster;

/** {@link FailureScenarios} over the simulated network. */
class ClusterScenariosFailureSimulatedTest extends FailureScenarios {
    ClusterScenariosFailureSimulatedTest() {
        super(MiniCluster.SIMULATED);
    }
}
