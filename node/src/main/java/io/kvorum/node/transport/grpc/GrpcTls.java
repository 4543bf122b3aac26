package io.kvorum.node.transport.grpc;

import io.grpc.ChannelCredentials;
import io.grpc.InsecureChannelCredentials;
import io.grpc.InsecureServerCredentials;
import io.grpc.ServerCredentials;
import io.grpc.TlsChannelCredentials;
import io.grpc.TlsServerCredentials;
import io.kvorum.client.TrustedCa;
import io.kvorum.node.security.TlsFiles;
import java.io.IOException;
import java.security.GeneralSecurityException;
import javax.net.ssl.TrustManager;

/**
 * Both ends of the gRPC transport's security (SPEC §7): plaintext without TLS files; with them,
 * mutual TLS where each side trusts only the CA file, and a channel checks that the peer's
 * certificate names the host it dialled.
 */
final class GrpcTls {

    private GrpcTls() {
    }

    /** The server's credentials: with TLS, a peer must present a certificate that the CA signed. */
    static ServerCredentials server(TlsFiles files) throws IOException {
        RefusedPeerLog.installGrpcLogHandlers();
        if (files == null) {
            return InsecureServerCredentials.create();
        }
        return TlsServerCredentials.newBuilder()
                .keyManager(files.certificate().toFile(), files.privateKey().toFile())
                .trustManager(trustingTheCa(files))
                .clientAuth(TlsServerCredentials.ClientAuth.REQUIRE)
                .build();
    }

    /** Trust in the certificates of the CA file alone; what it refuses is logged ({@link RefusedPeerLog}). */
    private static TrustManager trustingTheCa(TlsFiles files) throws IOException {
        try {
            return RefusedPeerLog.trusting(TrustedCa.keyStore(files.authority()));
        } catch (GeneralSecurityException e) {
            throw new IOException("cannot use the CA of --tls-ca: " + e.getMessage(), e);
        }
    }

    /** A channel's credentials: this node's certificate, and trust in the CA alone. */
    static ChannelCredentials client(TlsFiles files) throws IOException {
        if (files == null) {
            return InsecureChannelCredentials.create();
        }
        return TlsChannelCredentials.newBuilder()
                .keyManager(files.certificate().toFile(), files.privateKey().toFile())
                .trustManager(trustingTheCa(files))
                .build();
    }
}
