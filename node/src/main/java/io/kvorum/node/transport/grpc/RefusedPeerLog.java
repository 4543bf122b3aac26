package io.kvorum.node.transport.grpc;

import java.net.Socket;
import java.security.cert.CertPathValidatorException;
import java.security.cert.CertPathValidatorException.BasicReason;
import java.security.cert.CertificateException;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;
import java.security.cert.X509Certificate;
import io.kvorum.node.util.LogRateLimit;
import java.time.Duration;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedTrustManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * docs/operations.md#security's log line for a peer connection refused because its security does not match this
 * node's: a certificate another CA signed, on either end of the connection (seen by the trust
 * manager of {@link #trusting}), or bytes that are not what this end speaks, such as plaintext to a
 * TLS node or TLS to a plain node (seen through grpc-netty's own java.util.logging records,
 * {@link #installGrpcLogHandlers}). At most one line a minute per kind and source. Never logs
 * certificate material beyond the subject's name, nor the bytes received.
 */
final class RefusedPeerLog {

    private static final Logger log = LoggerFactory.getLogger(RefusedPeerLog.class);
    /** Keyed by a peer's address and certificate subject: bounded, since a peer chooses both. */
    private static final LogRateLimit lines = new LogRateLimit(Duration.ofMinutes(1));
    /** Held, so that the settings made on them are not lost when java.util.logging drops unreferenced loggers. */
    private static final java.util.logging.Logger GRPC_SERVER_TRANSPORT =
            java.util.logging.Logger.getLogger("io.grpc.netty.NettyServerTransport");
    private static final java.util.logging.Logger GRPC_NEGOTIATORS =
            java.util.logging.Logger.getLogger("io.grpc.netty.ProtocolNegotiators");

    private RefusedPeerLog() {
    }

    /**
     * Routes two records of grpc-netty into one line of ours each: a plain server's "Transport
     * failed" (INFO, with a hex dump of the first bytes received, which could be a misdirected
     * client's request, token included), and a TLS server's "TLS negotiation failed" (FINE, with
     * the engine's details). Neither reaches the console any more. Idempotent.
     */
    static synchronized void installGrpcLogHandlers() {
        install(GRPC_SERVER_TRANSPORT, Level.INFO, "Transport failed");
        install(GRPC_NEGOTIATORS, Level.FINE, "TLS negotiation failed");
    }

    private static void install(java.util.logging.Logger logger, Level level, String messagePrefix) {
        for (Handler h : logger.getHandlers()) {
            if (h instanceof Replacement) {
                return;
            }
        }
        logger.setUseParentHandlers(false);
        logger.setLevel(level);
        logger.addHandler(new Replacement(level, messagePrefix));
    }

    private static void warn(String kind, String source, String message, Object... args) {
        if (lines.admit(kind + '\0' + source)) {
            log.warn(message, args);
        }
    }

    /** Turns the records of one grpc-netty logger that start with a prefix into our line; drops the rest. */
    private static final class Replacement extends Handler {
        private final Level level;
        private final String messagePrefix;

        Replacement(Level level, String messagePrefix) {
            this.level = level;
            this.messagePrefix = messagePrefix;
        }

        @Override
        public void publish(LogRecord record) {
            String message = record.getMessage();
            if (record.getLevel().intValue() < level.intValue() || message == null || !message.startsWith(messagePrefix)) {
                return;
            }
            Throwable root = record.getThrown() == null ? null : rootOf(record.getThrown());
            String why = root == null ? messagePrefix : root.getClass().getSimpleName();
            if (root instanceof Error) { // out of memory, say: this node's trouble, whatever the peer speaks
                warn("transport", why, "a peer connection failed on this node ({}), not for its security settings", why);
                return;
            }
            if (why.equals("SSLHandshakeException")) { // both ends spoke TLS, and one refused the other's certificate
                warn("transport", why, "refused a peer connection whose TLS handshake failed ({}): the peer did not "
                        + "accept this node's certificate (its --tls-ca is another CA) or this node did not accept its "
                        + "certificate", why);
                return;
            }
            // A negotiation that failed without a cause is seen both for a plaintext peer and for one of another CA.
            warn("transport", why, "refused a peer connection that does not speak this node's protocol ({}): "
                    + "a node with other TLS settings (plaintext to TLS, TLS to plaintext, or a certificate of another "
                    + "CA), or a client on the gRPC port", why);
        }

        /** The innermost cause; only its class is logged, as its message may quote the bytes received. */
        private static Throwable rootOf(Throwable thrown) {
            Throwable t = thrown;
            while (t.getCause() != null && t.getCause() != t) {
                t = t.getCause();
            }
            return t;
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    }

    /** Delegates every check; logs a refused certificate with the peer's address. */
    static final class Logging extends X509ExtendedTrustManager {
        private final X509ExtendedTrustManager delegate;

        Logging(X509ExtendedTrustManager delegate) {
            this.delegate = delegate;
        }

        private static void refused(X509Certificate[] chain, String peer, CertificateException e)
                throws CertificateException {
            X509Certificate leaf = chain != null && chain.length > 0 ? chain[0] : null;
            String subject = leaf != null ? leaf.getSubjectX500Principal().getName() : "none";
            warn("certificate", peer + '\0' + subject, "refused a peer connection with {}: its certificate ({}) {}",
                    peer, subject, why(leaf, e));
            throw e;
        }

        /**
         * Why the JDK refused a certificate, in words: the validity dates and the name are checked
         * apart from the signature, so a certificate of the right CA is not said to be of another.
         */
        static String why(X509Certificate leaf, CertificateException e) {
            for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
                if (t instanceof ExpectedMemberTrust.OtherMemberException) {
                    return t.getMessage();
                }
                if (t instanceof CertificateExpiredException
                        || t instanceof CertPathValidatorException v && v.getReason() == BasicReason.EXPIRED) {
                    return leaf != null ? "expired at " + leaf.getNotAfter().toInstant() : "has expired";
                }
                if (t instanceof CertificateNotYetValidException
                        || t instanceof CertPathValidatorException v && v.getReason() == BasicReason.NOT_YET_VALID) {
                    return (leaf != null ? "is not valid before " + leaf.getNotBefore().toInstant() : "is not valid yet")
                            + " (or a clock is wrong)";
                }
                String message = String.valueOf(t.getMessage());
                if (message.startsWith("No subject alternative") || message.startsWith("No name matching")) {
                    // The JDK's HostnameChecker: the name or address this node dialled is not in the certificate.
                    return "does not name the address it was reached at";
                }
            }
            return "is not signed by the CA of --tls-ca";
        }

        /** The peer's address as the engine knows it; a server's engine knows none. */
        private static String peerOf(SSLEngine engine) {
            return engine == null || engine.getPeerHost() == null ? "a peer"
                    : engine.getPeerHost() + ":" + engine.getPeerPort();
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
                throws CertificateException {
            try {
                delegate.checkClientTrusted(chain, authType, engine);
            } catch (CertificateException e) {
                refused(chain, peerOf(engine), e);
            }
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
                throws CertificateException {
            try {
                delegate.checkClientTrusted(chain, authType, socket);
            } catch (CertificateException e) {
                refused(chain, socket == null ? "a peer" : String.valueOf(socket.getRemoteSocketAddress()), e);
            }
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            try {
                delegate.checkClientTrusted(chain, authType);
            } catch (CertificateException e) {
                refused(chain, "a peer", e);
            }
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
                throws CertificateException {
            try {
                delegate.checkServerTrusted(chain, authType, engine);
            } catch (CertificateException e) {
                refused(chain, peerOf(engine), e);
            }
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
                throws CertificateException {
            try {
                delegate.checkServerTrusted(chain, authType, socket);
            } catch (CertificateException e) {
                refused(chain, socket == null ? "a peer" : String.valueOf(socket.getRemoteSocketAddress()), e);
            }
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            try {
                delegate.checkServerTrusted(chain, authType);
            } catch (CertificateException e) {
                refused(chain, "a peer", e);
            }
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return delegate.getAcceptedIssuers();
        }
    }
}
