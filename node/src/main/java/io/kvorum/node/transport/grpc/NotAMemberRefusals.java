package io.kvorum.node.transport.grpc;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall.SimpleForwardingClientCall;
import io.grpc.ForwardingClientCallListener.SimpleForwardingClientCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.kvorum.node.cluster.MembershipResponder;

/**
 * How a node that was removed while it was down learns it (docs/operations.md#growing-and-shrinking-a-cluster: a node that was down during a
 * change learns the newer membership from its peers when it returns). The members no longer send
 * it anything, and refuse what it sends them with the epoch they know ({@link ClusterCheck#EPOCH_TRAILER});
 * this interceptor, on the node's channel to one peer, reports that epoch to the node's membership
 * as seen from that peer, and the membership fetches it there. Once it has, the node knows it is
 * not a member and sends its clients to the members.
 */
final class NotAMemberRefusals implements ClientInterceptor {

    private final String peerId;
    private final MembershipResponder membership;

    NotAMemberRefusals(String peerId, MembershipResponder membership) {
        this.peerId = peerId;
        this.membership = membership;
    }

    @Override
    public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(MethodDescriptor<ReqT, RespT> method,
                                                               CallOptions options, Channel next) {
        return new SimpleForwardingClientCall<>(next.newCall(method, options)) {
            @Override
            public void start(Listener<RespT> listener, Metadata headers) {
                super.start(new SimpleForwardingClientCallListener<>(listener) {
                    @Override
                    public void onClose(Status status, Metadata trailers) {
                        if (status.getCode() == Status.Code.PERMISSION_DENIED) {
                            report(trailers.get(ClusterCheck.EPOCH_TRAILER));
                        }
                        super.onClose(status, trailers);
                    }
                }, headers);
            }
        };
    }

    private void report(String epoch) {
        if (epoch == null) {
            return; // refused for another reason: another cluster, say
        }
        try {
            membership.sawEpoch(peerId, Long.parseLong(epoch));
        } catch (NumberFormatException e) {
            // not from a Kvorum node of this version; nothing to learn
        }
    }
}
