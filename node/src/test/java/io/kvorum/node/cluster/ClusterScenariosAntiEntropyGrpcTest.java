package io.kvorum.node.cluster;

/** {@link AntiEntropyScenarios} over gRPC. */
class ClusterScenariosAntiEntropyGrpcTest extends AntiEntropyScenarios {
    ClusterScenariosAntiEntropyGrpcTest() {
        super(MiniCluster.GRPC);
    }
}
