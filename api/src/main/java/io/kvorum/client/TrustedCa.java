package io.kvorum.client;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.Collection;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * Trust in the certificates of one PEM file alone (a cluster's {@code --tls-ca}, the {@code ca.pem} of
 * {@code ./kvorum certs}), with the JDK's own classes: for {@code java.net.http} and other JDK clients.
 * A {@link Swappable} trust changes under a TLS context already built: the driver's follows its
 * file ({@link #following}), a node's follows its {@code --tls-ca} with its certificate.
 */
public final class TrustedCa {

    private TrustedCa() {
    }

    /**
     * A key store whose trust anchors are the certificates of {@code pem}.
     *
     * @throws IOException              when the file does not exist or cannot be read
     * @throws GeneralSecurityException when it holds no PEM certificate
     */
    public static KeyStore keyStore(Path pem) throws IOException, GeneralSecurityException {
        KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
        store.load(null, null);
        int count = 0;
        try (InputStream in = Files.newInputStream(pem)) {
            for (Certificate certificate : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
                store.setCertificateEntry("ca-" + count++, certificate);
            }
        } catch (NoSuchFileException e) {
            throw new IOException("it does not exist", e);
        }
        if (count == 0) {
            throw new GeneralSecurityException("it holds no PEM certificate");
        }
        return store;
    }

    /** The JDK's checks (chain, dates, and the name when the engine asks for it) against exactly these CA certificates. */
    public static X509ExtendedTrustManager trustManager(Collection<? extends Certificate> authorities)
            throws GeneralSecurityException {
        KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
        try {
            store.load(null, null);
        } catch (IOException e) {
            throw new GeneralSecurityException("cannot create an empty key store", e);
        }
        int count = 0;
        for (Certificate authority : authorities) {
            store.setCertificateEntry("ca-" + count++, authority);
        }
        return trustManager(store);
    }

    private static X509ExtendedTrustManager trustManager(KeyStore store) throws GeneralSecurityException {
        TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        factory.init(store);
        for (TrustManager tm : factory.getTrustManagers()) {
            if (tm instanceof X509ExtendedTrustManager x509) {
                return x509;
            }
        }
        throw new GeneralSecurityException("no X.509 trust manager");
    }

    /**
     * Trust in the certificates of {@code pem} that follows the file: before a check, when the file
     * was last read at least {@code checkIntervalNanos} ago, it is read again, and its certificates
     * are trusted from then on. A file that is missing or holds no certificate for a moment keeps the
     * trust read before. Checks happen at handshakes, so a client that keeps its connections reads
     * the file seldom.
     *
     * @throws IOException              when the file does not exist or cannot be read now
     * @throws GeneralSecurityException when it holds no PEM certificate
     */
    public static X509ExtendedTrustManager following(Path pem, long checkIntervalNanos)
            throws IOException, GeneralSecurityException {
        FileFollower follower = new FileFollower(pem, checkIntervalNanos);
        Swappable trust = new Swappable(trustManager(keyStore(pem)), follower);
        follower.target = trust;
        return trust;
    }

    /** Reads the file again into its target when the last read is old enough. */
    private static final class FileFollower implements Runnable {
        private final Path pem;
        private final OncePer reads;
        private volatile Swappable target;

        FileFollower(Path pem, long intervalNanos) {
            this.pem = pem;
            this.reads = new OncePer(intervalNanos);
        }

        @Override
        public void run() {
            if (reads.due()) {
                try {
                    target.use(trustManager(keyStore(pem)));
                } catch (IOException | GeneralSecurityException e) {
                    // being replaced, or removed by mistake: keep the trust read before
                }
            }
        }
    }

    /** {@link #following(Path, long)}, reading the file at most once a second. */
    public static X509ExtendedTrustManager following(Path pem) throws IOException, GeneralSecurityException {
        return following(pem, TimeUnit.SECONDS.toNanos(1));
    }

    /**
     * A trust manager whose checks are those of the one {@linkplain #use last given}: TLS contexts
     * built on it once trust new CA certificates from their next handshake, with no new context.
     */
    public static final class Swappable extends X509ExtendedTrustManager {
        private final Runnable beforeCheck;
        private volatile X509ExtendedTrustManager delegate;

        public Swappable(X509ExtendedTrustManager initial) {
            this(initial, () -> { });
        }

        private Swappable(X509ExtendedTrustManager initial, Runnable beforeCheck) {
            this.delegate = initial;
            this.beforeCheck = beforeCheck;
        }

        /** Checks from now on are {@code next}'s. */
        public void use(X509ExtendedTrustManager next) {
            this.delegate = next;
        }

        private X509ExtendedTrustManager current() {
            beforeCheck.run();
            return delegate;
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
            current().checkClientTrusted(chain, authType, socket);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
            current().checkServerTrusted(chain, authType, socket);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
            current().checkClientTrusted(chain, authType, engine);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
            current().checkServerTrusted(chain, authType, engine);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            current().checkClientTrusted(chain, authType);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            current().checkServerTrusted(chain, authType);
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return delegate.getAcceptedIssuers();
        }
    }

    /** A client context that trusts the certificates of {@code pem} alone. */
    public static SSLContext clientContext(Path pem) throws IOException, GeneralSecurityException {
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, new TrustManager[] {trustManager(keyStore(pem))}, null);
        return context;
    }
}
