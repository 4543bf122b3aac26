package io.kvorum.node.cluster;

/** {@link QuorumScenarios} over gRPC. */
class ClusterScenariosQuorumGrpcTest extends QuorumScenarios {
    ClusterScenariosQuorumGrpcTest() {
        super(MiniCluster.GRPC);
    }
}
