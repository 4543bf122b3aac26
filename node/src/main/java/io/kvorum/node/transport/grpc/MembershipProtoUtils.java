package io.kvorum.node.transport.grpc;

import io.kvorum.node.cluster.ClusterMember;
import io.kvorum.node.cluster.MemberState;
import io.kvorum.node.cluster.Membership;
import io.kvorum.node.cluster.MembershipChange;
import io.kvorum.node.cluster.Topology;
import io.kvorum.proto.ChangeRequest;
import io.kvorum.proto.MemberProto;
import io.kvorum.proto.MembershipProto;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Converts memberships and changes between the core and {@code membership.proto}. */
final class MembershipProtoUtils {

    private MembershipProtoUtils() {
    }

    static MembershipProto toProto(Membership m) {
        MembershipProto.Builder b = MembershipProto.newBuilder()
                .setName(m.clusterName())
                .setIdentity(m.identity())
                .setEpoch(m.epoch())
                .setReplicationFactor(m.replicationFactor())
                .setReadsFromComing(m.readsFromComing());
        for (ClusterMember member : m.topology().members()) {
            b.addMembers(toProto(member, m.state(member.id())));
        }
        return b.build();
    }

    static MemberProto toProto(ClusterMember m, MemberState state) {
        return MemberProto.newBuilder().setId(m.id()).setHost(m.host()).setHttp(m.httpPort()).setGrpc(m.grpcPort())
                .setState(state.jsonName()).build();
    }

    /** @throws IllegalArgumentException when the message is not a valid membership */
    static Membership membershipOf(MembershipProto p) {
        List<ClusterMember> members = new ArrayList<>();
        Map<String, MemberState> states = new HashMap<>();
        for (MemberProto m : p.getMembersList()) {
            members.add(member(m));
            states.put(m.getId(), MemberState.ofJson(m.getState()));
        }
        return new Membership(p.getName(), p.getIdentity(), p.getEpoch(), new Topology(members), states,
                p.getReplicationFactor(), p.getReadsFromComing());
    }

    static ClusterMember member(MemberProto m) {
        return new ClusterMember(m.getId(), m.getHost(), m.getHttp(), m.getGrpc());
    }

    static ChangeRequest.Kind toProto(MembershipChange.Kind kind) {
        return ChangeRequest.Kind.valueOf(kind.name());
    }

    /** @throws IllegalArgumentException for a kind this version does not know */
    static MembershipChange changeOf(ChangeRequest request) {
        MembershipChange.Kind kind = switch (request.getKind()) {
            case JOIN -> MembershipChange.Kind.JOIN;
            case LEAVE -> MembershipChange.Kind.LEAVE;
            case REMOVE -> MembershipChange.Kind.REMOVE;
            case MOVED -> MembershipChange.Kind.MOVED;
            default -> throw new IllegalArgumentException("unknown change kind " + request.getKind());
        };
        return new MembershipChange(kind, member(request.getMember()));
    }
}
