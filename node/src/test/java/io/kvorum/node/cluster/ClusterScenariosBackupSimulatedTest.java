package io.kvorum.node.cluster;

/** {@link BackupScenarios} over the simulated network. */
class ClusterScenariosBackupSimulatedTest extends BackupScenarios {
    ClusterScenariosBackupSimulatedTest() {
        super(MiniCluster.SIMULATED);
    }
}
