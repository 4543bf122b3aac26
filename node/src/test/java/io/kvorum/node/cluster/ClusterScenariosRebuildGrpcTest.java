package io.kvorum.node.cluster;

/** {@link RebuildScenarios} over gRPC. */
class ClusterScenariosRebuildGrpcTest extends RebuildScenarios {
    ClusterScenariosRebuildGrpcTest() {
        super(MiniCluster.GRPC);
    }
}
