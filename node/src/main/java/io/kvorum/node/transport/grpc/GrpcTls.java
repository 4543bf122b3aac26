package io.kvorum.node.transport.grpc;

import io.grpc.ChannelCredentials;
import io.grpc.InsecureChannelCredentials;
import io.grpc.InsecureServerCredentials;
import io.grpc.ServerCredentials;
import io.grpc.TlsChannelCredentials;
import io.grpc.TlsServerCredentials;
import io.kvorum.node.security.LiveTls;

/**
 * Both ends of the gRPC transport's security (docs/operations.md#security): plaintext without TLS files; with them,
 * mutual TLS where each side trusts only the CA file, and a channel checks that the peer's
 * certificate names the host it dialled and the member it is for ({@link ExpectedMemberTrust}); the
 * server side checks each call's sender against its certificate in {@link ClusterCheck}. Both ends
 * use the node's {@link LiveTls}: a certificate or CA renewed in its files is used from the next
 * handshake on.
 */
final class GrpcTls {

    private GrpcTls() {
    }

    /** The server's credentials: with TLS, a peer must present a certificate that the CA signed. */
    static ServerCredentials server(LiveTls tls) {
        RefusedPeerLog.installGrpcLogHandlers();
        if (tls == null) {
            return InsecureServerCredentials.create();
        }
        return TlsServerCredentials.newBuilder()
                .keyManager(tls.keyManager())
                .trustManager(new RefusedPeerLog.Logging(tls.trustManager()))
                .clientAuth(TlsServerCredentials.ClientAuth.REQUIRE)
                .build();
    }

    /**
     * The credentials of a channel to member {@code memberId}: this node's certificate, and trust in
     * a certificate of the CA that names that member; what it refuses is logged ({@link RefusedPeerLog}).
     */
    static ChannelCredentials client(LiveTls tls, String memberId) {
        if (tls == null) {
            return InsecureChannelCredentials.create();
        }
        return TlsChannelCredentials.newBuilder()
                .keyManager(tls.keyManager())
                .trustManager(new RefusedPeerLog.Logging(new ExpectedMemberTrust(tls.trustManager(), memberId)))
                .build();
    }
}
