package io.kvorum.node.cluster;

/** {@link RebuildScenarios} over the simulated network. */
class ClusterScenariosRebuildSimulatedTest extends RebuildScenarios {
    ClusterScenariosRebuildSimulatedTest() {
        super(MiniCluster.SIMULATED);
    }
}
