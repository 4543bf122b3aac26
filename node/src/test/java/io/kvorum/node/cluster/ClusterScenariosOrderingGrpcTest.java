package io.kvorum.node.cluster;

/** {@link OrderingScenarios} over gRPC. */
class ClusterScenariosOrderingGrpcTest extends OrderingScenarios {
    ClusterScenariosOrderingGrpcTest() {
        super(MiniCluster.GRPC);
    }
}
