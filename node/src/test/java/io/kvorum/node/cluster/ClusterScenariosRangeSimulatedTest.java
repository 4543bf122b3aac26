package io.kvorum.node.cluster;

/** {@link RangeScenarios} over the simulated network. */
class ClusterScenariosRangeSimulatedTest extends RangeScenarios {
    ClusterScenariosRangeSimulatedTest() {
        super(MiniCluster.SIMULATED);
    }
}
