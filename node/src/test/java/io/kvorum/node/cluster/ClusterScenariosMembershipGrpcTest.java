package io.kvorum.node.cluster;

/** {@link MembershipScenarios} over gRPC. */
class ClusterScenariosMembershipGrpcTest extends MembershipScenarios {
    ClusterScenariosMembershipGrpcTest() {
        super(MiniCluster.GRPC);
    }
}
