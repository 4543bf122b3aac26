package io.kvorum.node.transport.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.node.LogCapture;
import io.kvorum.node.util.Failures;
import io.netty.handler.ssl.NotSslRecordException;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.Test;

/** What a node logs of a peer connection refused for its security (operations.md, "Security"). */
class RefusedPeerLogTest {

    private static void negotiationFailed(Throwable thrown) {
        LogRecord r = new LogRecord(Level.FINE, "TLS negotiation failed for new client.");
        r.setThrown(thrown);
        Logger.getLogger("io.grpc.netty.ProtocolNegotiators").log(r);
    }

    @Test
    void aHandshakeBetweenTwoTlsNodesIsNotCalledPlaintext() {
        RefusedPeerLog.installGrpcLogHandlers();
        LogCapture logs = new LogCapture();
        logs.attach();
        try {
            negotiationFailed(null); // what a member saw of a joiner of another CA, and of a plaintext peer
            negotiationFailed(new SSLHandshakeException("Received fatal alert: certificate_unknown"));
            negotiationFailed(new RuntimeException(new NotSslRecordException("not an SSL/TLS record: 474554")));
            negotiationFailed(new RuntimeException(new OutOfMemoryError("Cannot reserve 2097152 bytes of direct buffer memory")));
        } finally {
            logs.detach();
        }
        assertThat(logs.problems()).hasSize(4);
        assertThat(logs.problems().get(3)).as("not blamed on TLS settings")
                .contains("a peer connection failed on this node (OutOfMemoryError)").doesNotContain("TLS settings (");
        assertThat(logs.problems().get(0)).as("no cause: a plaintext peer or one of another CA")
                .contains("does not speak this node's protocol").contains("a certificate of another CA");
        assertThat(logs.problems().get(1)).contains("whose TLS handshake failed").contains("--tls-ca is another CA")
                .doesNotContain("plaintext");
        assertThat(logs.problems().get(2)).contains("does not speak this node's protocol (NotSslRecordException)")
                .as("never the bytes received").doesNotContain("474554");
    }

    @Test
    void aTlsReasonIsTheValidatorsNotTheEnginesNorGrpcs() {
        SSLHandshakeException engine = new SSLHandshakeException("General OpenSslEngine problem");
        engine.initCause(new java.security.cert.CertPathValidatorException("unable to find valid certification path"));
        Exception chain = io.grpc.Status.UNAVAILABLE.withDescription("io exception").withCause(engine).asRuntimeException();

        assertThat(Failures.tlsReason(chain)).isEqualTo("; TLS handshake failed: unable to find valid certification path");
        assertThat(Failures.tlsReason(new java.io.IOException("Connection refused"))).isEmpty();
        assertThat(Failures.tlsReason(null)).isEmpty();
    }

    @Test
    void aCertificateOfTheRightCaIsRefusedForItsDatesOrNameNotForItsSigner() {
        java.security.cert.CertificateException expired = new java.security.cert.CertificateException("validity check failed",
                new java.security.cert.CertPathValidatorException("validity check failed", null, null, -1,
                        java.security.cert.CertPathValidatorException.BasicReason.EXPIRED));
        java.security.cert.CertificateException notYet = new java.security.cert.CertificateException(
                new java.security.cert.CertificateNotYetValidException("NotBefore: Sun Dec 01 00:00:00 UTC 2030"));
        java.security.cert.CertificateException wrongName = new java.security.cert.CertificateException(
                "No subject alternative names matching IP address 127.0.0.1 found");
        java.security.cert.CertificateException otherCa = new java.security.cert.CertificateException(
                new java.security.cert.CertPathValidatorException("Path does not chain with any of the trust anchors"));

        assertThat(RefusedPeerLog.Logging.why(null, expired)).isEqualTo("has expired");
        assertThat(RefusedPeerLog.Logging.why(null, notYet)).startsWith("is not valid yet");
        assertThat(RefusedPeerLog.Logging.why(null, wrongName)).isEqualTo("does not name the address it was reached at");
        assertThat(RefusedPeerLog.Logging.why(null, otherCa)).isEqualTo("is not signed by the CA of --tls-ca");
    }
}
