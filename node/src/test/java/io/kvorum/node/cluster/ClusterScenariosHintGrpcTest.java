package io.kvorum.node.cluster;

/** {@link HintedHandoffScenarios} over gRPC. */
class ClusterScenariosHintGrpcTest extends HintedHandoffScenarios {
    ClusterScenariosHintGrpcTest() {
        super(MiniCluster.GRPC);
    }
}
