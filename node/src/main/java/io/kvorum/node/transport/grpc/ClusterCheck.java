package io.kvorum.node.transport.grpc;

import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Message;
import io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.kvorum.node.cluster.ClusterMember;
import io.kvorum.node.cluster.Membership;
import io.kvorum.node.cluster.MembershipResponder;
import io.kvorum.node.cluster.Topology;
import io.kvorum.node.security.MemberCertificate;
import io.kvorum.proto.ChangeRequest;
import io.kvorum.proto.GetMembershipRequest;
import io.kvorum.proto.ProposeRequest;
import io.kvorum.proto.RequestHeader;
import java.util.HashSet;
import java.util.Set;
import javax.net.ssl.SSLSession;

/**
 * Refuses traffic from a node of another cluster (docs/operations.md#cluster-identity), in one place for every service: the
 * first message of each call must carry a {@link RequestHeader} in field 1 with this
 * cluster's id, and a later message that carries one must agree. A refused call is closed with
 * {@code PERMISSION_DENIED} before its service sees anything, and logged ({@link ForeignClusterLog},
 * rate-limited). Services therefore never check the cluster id themselves.
 *
 * <p>One exception: a {@code JOIN} change comes from a new node that does not know the cluster's
 * identity yet, and is accepted when its header names this cluster's {@code --cluster-name}; and
 * such a node, until it is a member, accepts the proposal of its join's first epoch the same way.
 * A sender that is not a member (a removed node that came back with its old data) is refused
 * too, and logged, with this node's epoch in the trailer {@link #EPOCH_TRAILER}, except for what
 * such a node may still ask: the membership ({@code Get}), so that it learns it is no longer a
 * member ({@link NotAMemberRefusals}), and the one change it may still send
 * ({@link io.kvorum.node.cluster.MembershipChange#mayComeFromFormerMember}). The epoch of every
 * accepted header is reported to the node's membership, which fetches a newer one from the sender
 * (docs/operations.md#growing-and-shrinking-a-cluster).
 *
 * <p>With TLS, the peer's certificate must name the sender that each header claims
 * (docs/operations.md#security): a certificate the CA signed for another member, or for no member,
 * cannot speak for a member. The names are read from the call's TLS session once per call.
 * Refusals on the wire say what was refused and never this node's cluster id.
 */
final class ClusterCheck implements ServerInterceptor {

    /** The refusing node's epoch, on a call refused because its sender is not a member. */
    static final Metadata.Key<String> EPOCH_TRAILER = Metadata.Key.of("kvorum-epoch", Metadata.ASCII_STRING_MARSHALLER);

    private final ForeignClusterLog refusals;
    /** Null in tests that serve one service without a membership. */
    private final MembershipResponder membership;

    /** Guarded by this: the membership as of the last refusal of a non-member (or of the start). */
    private Membership lastSeen;
    /** Guarded by this: members that this node saw leave or be removed. */
    private final Set<String> departed = new HashSet<>();

    /** Whether the port speaks TLS, so that every sender must be named by its certificate. */
    private final boolean certifiedSenders;

    ClusterCheck(ForeignClusterLog refusals) {
        this(refusals, null, false);
    }

    ClusterCheck(ForeignClusterLog refusals, MembershipResponder membership) {
        this(refusals, membership, false);
    }

    /** @param certifiedSenders the port speaks TLS: a header's sender must be named by the peer's certificate */
    ClusterCheck(ForeignClusterLog refusals, MembershipResponder membership, boolean certifiedSenders) {
        this.refusals = refusals;
        this.membership = membership;
        this.certifiedSenders = certifiedSenders;
        this.lastSeen = membership == null ? null : membership.membership();
    }

    /**
     * Whether {@code sender} was a member since this node started: one that left or was removed,
     * whose calls in flight when it learned so are refused, not a stranger. Runs on refusals only,
     * so that the accepted traffic pays nothing for it.
     */
    private synchronized boolean wasMember(String sender, Membership now) {
        if (lastSeen != null && lastSeen.epoch() < now.epoch()) {
            for (ClusterMember m : lastSeen.topology().members()) {
                if (now.topology().member(m.id()) == null) {
                    departed.add(m.id());
                }
            }
            lastSeen = now;
        }
        return departed.contains(sender);
    }

    @Override
    public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(ServerCall<ReqT, RespT> call, Metadata headers,
                                                                 ServerCallHandler<ReqT, RespT> next) {
        String traffic = call.getMethodDescriptor().getFullMethodName() + " calls";
        return new SimpleForwardingServerCallListener<>(next.startCall(call, headers)) {
            private boolean first = true; // gRPC delivers a call's messages one at a time
            private boolean refused;
            /** The names of the peer's certificate, read at the call's first header (TLS only). */
            private Set<String> certified;

            @Override
            public void onMessage(ReqT message) {
                if (refused) {
                    return;
                }
                RequestHeader header = headerOf(message);
                if (header != null && !Topology.isNodeId(header.getSender())) {
                    // Checked before the sender is used anywhere, a log line or a map key included.
                    refuse(Status.INVALID_ARGUMENT.withDescription("the sender is not a member id"), new Metadata());
                    return;
                }
                if (header != null && certifiedSenders && !certifies(header.getSender())) {
                    refuse(Status.PERMISSION_DENIED.withDescription("the certificate presented does not name "
                            + header.getSender()), new Metadata());
                    return;
                }
                boolean join = header != null && (isJoin(message, header) || isProposalToJoiner(message, header));
                if (!join && membership != null && !membership.isMember()) {
                    // Members that adopted this node's join before it heard the answer: not another cluster.
                    refuse(Status.UNAVAILABLE.withDescription("this node is joining and does not serve yet"),
                            new Metadata());
                    return;
                }
                boolean accepted = header == null ? !first : join || refusals.accepts(traffic, header);
                first = false;
                if (!accepted) {
                    refuse(Status.PERMISSION_DENIED.withDescription("refused: not a request of this node's cluster"),
                            new Metadata());
                    return;
                }
                if (header != null && !join && membership != null) {
                    Membership known = membership.membership();
                    if (known.topology().member(header.getSender()) == null
                            && !(message instanceof GetMembershipRequest) && !isOwnMovedAskedAgain(message, header)) {
                        refusals.notAMember(traffic, header.getSender(), known.epoch(),
                                wasMember(header.getSender(), known));
                        Metadata trailers = new Metadata();
                        trailers.put(EPOCH_TRAILER, Long.toString(known.epoch()));
                        refuse(Status.PERMISSION_DENIED.withDescription(header.getSender()
                                + " is not a member of this cluster (epoch " + known.epoch() + ")"), trailers);
                        return;
                    }
                    if (header.getEpoch() > 0 && known.topology().member(header.getSender()) != null) {
                        // Only a member's epoch is followed: a stranger asking for the membership moves nothing.
                        membership.sawEpoch(header.getSender(), header.getEpoch());
                    }
                }
                super.onMessage(message);
            }

            /** Whether the peer's certificate names {@code sender}; logs (rate-limited) when it does not. */
            private boolean certifies(String sender) {
                SSLSession session = call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION);
                if (certified == null) {
                    certified = MemberCertificate.names(session);
                }
                if (certified.contains(sender)) {
                    return true;
                }
                refusals.impostor(traffic, sender, MemberCertificate.subject(session), certified);
                return false;
            }

            private void refuse(Status status, Metadata trailers) {
                refused = true;
                call.close(status, trailers);
            }

            @Override
            public void onHalfClose() {
                if (!refused) {
                    super.onHalfClose();
                }
            }
        };
    }

    /** A new node's request to join, naming this cluster's name. */
    private boolean isJoin(Object message, RequestHeader header) {
        return membership != null && message instanceof ChangeRequest change
                && change.getKind() == ChangeRequest.Kind.JOIN
                && header.getClusterName().equals(membership.membership().clusterName());
    }

    /**
     * The first epoch of this node's join, proposed to it while it is not a member yet, naming this
     * cluster's name: the membership checks the rest ({@code ClusterMembership#adoptOwnJoin}).
     */
    private boolean isProposalToJoiner(Object message, RequestHeader header) {
        return membership != null && message instanceof ProposeRequest && !membership.isMember()
                && header.getClusterName().equals(membership.membership().clusterName());
    }

    /** A former member's {@code MOVED} of its own leave: it lost the answer and asks again. */
    private static boolean isOwnMovedAskedAgain(Object message, RequestHeader header) {
        return message instanceof ChangeRequest change && change.getKind() == ChangeRequest.Kind.MOVED
                && MembershipProtoUtils.changeOf(change).mayComeFromFormerMember(header.getSender());
    }

    /** The header in field 1 of an internal request, or null when the message carries none. */
    private static RequestHeader headerOf(Object message) {
        if (message instanceof Message m) {
            FieldDescriptor field = m.getDescriptorForType().findFieldByNumber(1);
            if (field != null && field.getType() == FieldDescriptor.Type.MESSAGE && m.hasField(field)
                    && m.getField(field) instanceof RequestHeader header) {
                return header;
            }
        }
        return null;
    }
}
