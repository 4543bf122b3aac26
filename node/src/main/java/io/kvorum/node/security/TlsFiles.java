package io.kvorum.node.security;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The three PEM files of {@code --tls-cert}, {@code --tls-key} and {@code --tls-ca} (SPEC §7). The
 * HTTP gateway and the gRPC transport build their TLS contexts from them; every context trusts only
 * the CA file, never the JDK's default trust store.
 *
 * <p>Use {@link #load} to get one: it reads and parses all three with the JDK alone and checks that
 * the key is the certificate's, so that a file that cannot be used is a bad option at start, not a
 * failed handshake later.
 */
public record TlsFiles(Path certificate, Path privateKey, Path authority) {

    /** TLS 1.3 first; 1.2 for clients that lack it. Nothing older (SPEC §7). */
    public static final List<String> PROTOCOLS = List.of("TLSv1.3", "TLSv1.2");

    private static final Pattern PKCS8 = Pattern.compile(
            "-----BEGIN PRIVATE KEY-----([A-Za-z0-9+/=\\s]+)-----END PRIVATE KEY-----");
    private static final List<String> KEY_ALGORITHMS = List.of("RSA", "EC", "Ed25519", "Ed448");

    /**
     * Reads and checks the three files.
     *
     * @throws InvalidTlsFileException naming the file that cannot be read or used, never its content
     */
    public static TlsFiles load(Path certificate, Path privateKey, Path authority) throws InvalidTlsFileException {
        X509Certificate own = certificates(certificate, "certificate").get(0);
        certificates(authority, "CA certificate");
        PrivateKey key = privateKey(privateKey);
        if (!signsFor(key, own)) {
            throw new InvalidTlsFileException(privateKey, "is not the private key of the certificate");
        }
        return new TlsFiles(certificate, privateKey, authority);
    }

    private static List<X509Certificate> certificates(Path file, String what) throws InvalidTlsFileException {
        requireReadable(file, what);
        try (InputStream in = Files.newInputStream(file)) {
            Collection<? extends Certificate> all = CertificateFactory.getInstance("X.509").generateCertificates(in);
            if (all.isEmpty()) {
                throw new InvalidTlsFileException(file, "holds no PEM " + what);
            }
            return all.stream().map(X509Certificate.class::cast).toList();
        } catch (IOException e) {
            throw new InvalidTlsFileException(file, "cannot be read");
        } catch (CertificateException e) {
            throw new InvalidTlsFileException(file, "is not a PEM " + what);
        }
    }

    private static PrivateKey privateKey(Path file) throws InvalidTlsFileException {
        requireReadable(file, "private key");
        String pem;
        try {
            pem = Files.readString(file, StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new InvalidTlsFileException(file, "cannot be read");
        }
        Matcher m = PKCS8.matcher(pem);
        if (!m.find()) {
            throw new InvalidTlsFileException(file, "is not an unencrypted PEM PKCS#8 private key "
                    + "('BEGIN PRIVATE KEY'; convert with: openssl pkcs8 -topk8 -nocrypt)");
        }
        PKCS8EncodedKeySpec spec;
        try {
            spec = new PKCS8EncodedKeySpec(Base64.getMimeDecoder().decode(m.group(1)));
        } catch (IllegalArgumentException e) {
            throw new InvalidTlsFileException(file, "is not valid PEM (bad base64)");
        }
        for (String algorithm : KEY_ALGORITHMS) {
            try {
                return KeyFactory.getInstance(algorithm).generatePrivate(spec);
            } catch (GeneralSecurityException e) {
                // not this algorithm: try the next
            }
        }
        throw new InvalidTlsFileException(file, "holds a private key of no known algorithm (RSA, EC, Ed25519)");
    }

    /** Whether a signature made with the key verifies with the certificate's public key. */
    private static boolean signsFor(PrivateKey key, X509Certificate certificate) {
        String algorithm = switch (key.getAlgorithm()) {
            case "RSA" -> "SHA256withRSA";
            case "EC" -> "SHA256withECDSA";
            default -> key.getAlgorithm(); // Ed25519, Ed448
        };
        byte[] probe = "kvorum key check".getBytes(StandardCharsets.US_ASCII);
        try {
            Signature signer = Signature.getInstance(algorithm);
            signer.initSign(key);
            signer.update(probe);
            byte[] signature = signer.sign();
            Signature verifier = Signature.getInstance(algorithm);
            verifier.initVerify(certificate.getPublicKey());
            verifier.update(probe);
            return verifier.verify(signature);
        } catch (GeneralSecurityException e) {
            return false;
        }
    }

    private static void requireReadable(Path file, String what) throws InvalidTlsFileException {
        if (!Files.exists(file)) {
            throw new InvalidTlsFileException(file, "cannot be read: it does not exist (the " + what + ")");
        }
        if (!Files.isRegularFile(file) || !Files.isReadable(file)) {
            throw new InvalidTlsFileException(file, "cannot be read (the " + what + ")");
        }
    }

    /** A TLS file that cannot be used; the message names the fault, never the content. */
    public static final class InvalidTlsFileException extends Exception {
        private final transient Path file;

        InvalidTlsFileException(Path file, String fault) {
            super(fault, null, false, false);
            this.file = file;
        }

        public Path file() {
            return file;
        }
    }
}
