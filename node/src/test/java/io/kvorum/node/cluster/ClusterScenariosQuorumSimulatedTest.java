package io.kvorum.node.cluster;

/** {@link QuorumScenarios} over the simulated network. */
class ClusterScenariosQuorumSimulatedTest extends QuorumScenarios {
    ClusterScenariosQuorumSimulatedTest() {
        super(MiniCluster.SIMULATED);
    }
}
