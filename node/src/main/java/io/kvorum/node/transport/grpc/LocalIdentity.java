package io.kvorum.node.transport.grpc;

import io.kvorum.node.cluster.Membership;
import io.kvorum.node.cluster.MembershipResponder;

/**
 * What every request of this node says about its cluster: the identity and name, and the epoch of
 * the membership it knows, read afresh for each request since a membership change moves the epoch
 * (and gives a joining node its identity).
 */
interface LocalIdentity {

    String clusterId();

    String clusterName();

    long epoch();

    /** A fixed identity at epoch 0 (tests that run one service). */
    static LocalIdentity fixed(String clusterId) {
        return new LocalIdentity() {
            @Override
            public String clusterId() {
                return clusterId;
            }

            @Override
            public String clusterName() {
                return "";
            }

            @Override
            public long epoch() {
                return 0;
            }
        };
    }

    /** The node's membership as it is when asked. */
    static LocalIdentity of(MembershipResponder node) {
        return new LocalIdentity() {
            @Override
            public String clusterId() {
                return node.membership().identity();
            }

            @Override
            public String clusterName() {
                return node.membership().clusterName();
            }

            @Override
            public long epoch() {
                Membership m = node.membership();
                return m.epoch();
            }
        };
    }
}
