package io.kvorum.node.cluster;

/** {@link LivenessScenarios} over the simulated network. */
class ClusterScenariosLivenessSimulatedTest extends LivenessScenarios {
    ClusterScenariosLivenessSimulatedTest() {
        super(MiniCluster.SIMULATED);
    }
}
