package io.kvorum.client;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * Trust in the certificates of one PEM file alone (a cluster's {@code --tls-ca}, the {@code ca.pem} of
 * {@code ./kvorum certs}), with the JDK's own classes: for {@code java.net.http} and other JDK clients.
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

    /** A client context that trusts the certificates of {@code pem} alone. */
    public static SSLContext clientContext(Path pem) throws IOException, GeneralSecurityException {
        TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trust.init(keyStore(pem));
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, trust.getTrustManagers(), null);
        return context;
    }
}
