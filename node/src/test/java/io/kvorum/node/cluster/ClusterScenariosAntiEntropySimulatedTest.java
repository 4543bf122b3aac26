package io.kvorum.node.cluster;

/** {@link AntiEntropyScenarios} over the simulated network. */
class ClusterScenariosAntiEntropySimulatedTest extends AntiEntropyScenarios {
    ClusterScenariosAntiEntropySimulatedTest() {
        super(MiniCluster.SIMULATED);
    }
}
