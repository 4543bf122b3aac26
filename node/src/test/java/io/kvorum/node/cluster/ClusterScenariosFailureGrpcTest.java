package io.kvorum.node.cluster;

/** {@link FailureScenarios} over gRPC. */
class ClusterScenariosFailureGrpcTest extends FailureScenarios {
    ClusterScenariosFailureGrpcTest() {
        super(MiniCluster.GRPC);
    }
}
