package io.kvorum.node.transport.grpc;

import io.kvorum.node.security.MemberCertificate;
import java.net.Socket;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.Set;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * The trust of a channel to one member (docs/operations.md#security): the CA's, and then the
 * answering peer's certificate must name the member this node dialled. A peer with another
 * member's certificate, or one for no member, fails the handshake, so nothing it answers is used.
 * Only the server side of a handshake is checked here; a channel never receives client certificates.
 */
final class ExpectedMemberTrust extends X509ExtendedTrustManager {

    private final X509ExtendedTrustManager ca;
    private final String memberId;

    ExpectedMemberTrust(X509ExtendedTrustManager ca, String memberId) {
        this.ca = ca;
        this.memberId = memberId;
    }

    /** A certificate that the CA signed for another member, or for none. */
    static final class OtherMemberException extends CertificateException {
        OtherMemberException(String expected, Set<String> names) {
            super("names " + (names.isEmpty() ? "no member" : String.join(", ", names)) + ", not member " + expected);
        }
    }

    private void requireMember(X509Certificate[] chain) throws CertificateException {
        Set<String> names = MemberCertificate.names(chain[0]);
        if (!names.contains(memberId)) {
            throw new OtherMemberException(memberId, names);
        }
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
        ca.checkServerTrusted(chain, authType, engine);
        requireMember(chain);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
        ca.checkServerTrusted(chain, authType, socket);
        requireMember(chain);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        ca.checkServerTrusted(chain, authType);
        requireMember(chain);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
        ca.checkClientTrusted(chain, authType, engine);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
        ca.checkClientTrusted(chain, authType, socket);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        ca.checkClientTrusted(chain, authType);
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
        return ca.getAcceptedIssuers();
    }
}
