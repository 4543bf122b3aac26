package io.kvorum.node.cluster;

/** {@link ReadRepairScenarios} over the simulated network. */
class ClusterScenariosReadRepairSimulatedTest extends ReadRepairScenarios {
    ClusterScenariosReadRepairSimulatedTest() {
        super(MiniCluster.SIMULATED);
    }
}
