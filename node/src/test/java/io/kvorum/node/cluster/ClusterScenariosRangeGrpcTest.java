package io.kvorum.node.cluster;

/** {@link RangeScenarios} over gRPC. */
class ClusterScenariosRangeGrpcTest extends RangeScenarios {
    ClusterScenariosRangeGrpcTest() {
        super(MiniCluster.GRPC);
    }
}
