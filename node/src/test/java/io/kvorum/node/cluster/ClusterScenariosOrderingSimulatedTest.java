package io.kvorum.node.cluster;

/** {@link OrderingScenarios} over the simulated network. */
class ClusterScenariosOrderingSimulatedTest extends OrderingScenarios {
    ClusterScenariosOrderingSimulatedTest() {
        super(MiniCluster.SIMULATED);
    }
}
