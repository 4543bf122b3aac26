package io.kvorum.node.cluster;

/** {@link BackupScenarios} over gRPC. */
class ClusterScenariosBackupGrpcTest extends BackupScenarios {
    ClusterScenariosBackupGrpcTest() {
        super(MiniCluster.GRPC);
    }
}
