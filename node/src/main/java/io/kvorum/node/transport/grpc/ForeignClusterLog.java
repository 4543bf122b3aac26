package io.kvorum.node.transport.grpc;

import io.kvorum.proto.RequestHeader;
import io.kvorum.node.util.LogRateLimit;
import java.time.Duration;
import java.util.Set;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The log line of docs/operations.md#cluster-identity for traffic refused because it came from another cluster, at most once
 * a minute per sender and kind of traffic, since a foreign node keeps sending heartbeats and
 * requests. Thread-safe.
 */
final class ForeignClusterLog {

    private static final Logger log = LoggerFactory.getLogger(ForeignClusterLog.class);

    private final Supplier<String> clusterId;
    /** Keyed by what the sender names itself: bounded, since anyone who reaches the port chooses it. */
    private final LogRateLimit lines = new LogRateLimit(Duration.ofMinutes(1));

    ForeignClusterLog(String clusterId) {
        this(() -> clusterId);
    }

    /** @param clusterId this node's cluster identity as it is now (a joining node learns it) */
    ForeignClusterLog(Supplier<String> clusterId) {
        this.clusterId = clusterId;
    }

    /** Whether the header is of this cluster; logs (rate-limited) when it is not. */
    boolean accepts(String traffic, RequestHeader header) {
        String ours = clusterId.get();
        if (ours.equals(header.getClusterId())) {
            return true;
        }
        if (lines.admit(traffic + '\0' + header.getSender())) {
            log.warn("refusing {} from node '{}' of another cluster (its cluster id {}, ours {}): "
                    + "every node must be started with the same --cluster", traffic, header.getSender(),
                    header.getClusterId(), ours);
        }
        return false;
    }

    /**
     * Logs (rate-limited) traffic refused because its sender is not a member: at INFO for a node
     * this one saw leave or be removed (its calls in flight when it learned so: a normal leave
     * has some), at WARN for a node that is not known to have been a member since this one started.
     */
    void notAMember(String traffic, String sender, long epoch, boolean departed) {
        if (lines.admit(traffic + '\0' + sender + "\0member")) {
            if (departed) {
                log.info("refusing {} from node '{}': it left this cluster or was removed from it (epoch {}); it stops "
                        + "calling once it learns so", traffic, sender, epoch);
            } else {
                log.warn("refusing {} from node '{}': it is not a member of this cluster (epoch {}); a removed node "
                        + "must not come back with its old data: wipe its data dir and start it with --join", traffic,
                        sender, epoch);
            }
        }
    }

    /**
     * Logs (rate-limited per certificate subject) a call refused because the peer's certificate does
     * not name the member its header claims to be.
     */
    void impostor(String traffic, String sender, String subject, Set<String> names) {
        if (lines.admit(subject + "\0impostor")) {
            log.warn("refusing {} that claim to come from member '{}': the peer's certificate ({}) names {}; "
                    + "a member's certificate must name its id as CN or DNS name (./kvorum certs makes such "
                    + "certificates)", traffic, sender, subject, names.isEmpty() ? "no member" : String.join(", ", names));
        }
    }
}
