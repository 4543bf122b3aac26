package io.kvorum.node.cluster;

/** {@link MembershipScenarios} over the simulated network. */
class ClusterScenariosMembershipSimulatedTest extends MembershipScenarios {
    ClusterScenariosMembershipSimulatedTest() {
        super(MiniCluster.SIMULATED);
    }
}
