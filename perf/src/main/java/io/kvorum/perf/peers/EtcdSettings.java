package io.kvorum.perf.peers;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * How {@code perf peers} runs etcd 3.4: the flags of one member. Everything not named here is etcd's
 * default, fsync of the write-ahead log before every commit among them (etcd offers no weaker
 * durability in 3.4's supported flags); perf/README.md ("Peers") explains each choice.
 */
public final class EtcdSettings {

    /**
     * The MVCC history is compacted every 5 minutes, as Kubernetes' API server has etcd do: without
     * compaction every overwrite is kept and a long run fills the backend quota.
     */
    static final String COMPACTION_RETENTION = "5m";
    /** etcd's largest suggested backend size (8 GiB), so that no run is stopped by the space alarm. */
    static final long QUOTA_BACKEND_BYTES = 8L * 1024 * 1024 * 1024;

    /** One member's name and URLs. */
    public record Member(String name, int clientPort, int peerPort) {
        String clientUrl() {
            return "http://127.0.0.1:" + clientPort;
        }

        String peerUrl() {
            return "http://127.0.0.1:" + peerPort;
        }
    }

    private EtcdSettings() {}

    /** The command line of {@code self}, one of {@code members}, with its data in {@code dataDir}. */
    public static List<String> command(String etcd, Member self, List<Member> members, Path dataDir) {
        List<String> initialCluster = new ArrayList<>();
        for (Member m : members) {
            initialCluster.add(m.name() + "=" + m.peerUrl());
        }
        return List.of(etcd,
                "--name=" + self.name(),
                "--data-dir=" + dataDir.toAbsolutePath(),
                "--listen-client-urls=" + self.clientUrl(),
                "--advertise-client-urls=" + self.clientUrl(),
                "--listen-peer-urls=" + self.peerUrl(),
                "--initial-advertise-peer-urls=" + self.peerUrl(),
                "--initial-cluster=" + String.join(",", initialCluster),
                "--initial-cluster-token=kvorum-peers",
                "--initial-cluster-state=new",
                "--auto-compaction-mode=periodic",
                "--auto-compaction-retention=" + COMPACTION_RETENTION,
                "--quota-backend-bytes=" + QUOTA_BACKEND_BYTES,
                // zap, the logger 3.5 keeps; warnings and errors only, as the other systems log at INFO rarely.
                "--logger=zap",
                "--log-level=warn");
    }
}
