package io.kvorum.node.cluster;

/** {@link HintedHandoffScenarios} over the simulated network. */
class ClusterScenariosHintSimulatedTest extends HintedHandoffScenarios {
    ClusterScenariosHintSimulatedTest() {
        super(MiniCluster.SIMULATED);
    }
}
