package io.kvorum.node.cluster;

/** {@link ReadRepairScenarios} over gRPC. */
class ClusterScenariosReadRepairGrpcTest extends ReadRepairScenarios {
    ClusterScenariosReadRepairGrpcTest() {
        super(MiniCluster.GRPC);
    }
}
