package io.kvorum.node.transport.grpc;

import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.kvorum.proto.RequestHeader;

/**
 * The channel this node keeps to one peer, with the names every request on it carries: the peer
 * it goes to, this node as the sender, and the cluster both belong to. Shared by the replication,
 * range-scan, anti-entropy and liveness clients of that peer.
 */
public record PeerChannel(String peerId, String selfId, LocalIdentity identity, ManagedChannel channel) {

    /** A channel whose requests carry a fixed cluster id (tests). */
    public PeerChannel(String peerId, String selfId, String clusterId, ManagedChannel channel) {
        this(peerId, selfId, LocalIdentity.fixed(clusterId), channel);
    }

    /** A header from this node for a request that may take {@code timeoutMillis} (capped to an int). */
    RequestHeader.Builder header(long timeoutMillis) {
        return RequestHeader.newBuilder()
                .setClusterId(identity.clusterId())
                .setClusterName(identity.clusterName())
                .setEpoch(identity.epoch())
                .setSender(selfId)
                .setTimeoutMillis((int) Math.min(Integer.MAX_VALUE, timeoutMillis));
    }

    /** Has a channel whose last connection attempt failed try again now, not after its backoff. */
    void connectNow() {
        if (channel.getState(true) == ConnectivityState.TRANSIENT_FAILURE) {
            channel.resetConnectBackoff();
        }
    }
}
