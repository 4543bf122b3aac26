package io.kvorum.node.cluster;

/** {@link LivenessScenarios} over gRPC. */
class ClusterScenariosLivenessGrpcTest extends LivenessScenarios {
    ClusterScenariosLivenessGrpcTest() {
        super(MiniCluster.GRPC);
    }
}
