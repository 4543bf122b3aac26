package io.kvorum.node.security;

import com.google.common.net.InetAddresses;
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
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The three PEM files of {@code --tls-cert}, {@code --tls-key} and {@code --tls-ca} (docs/operations.md#security). The
 * HTTP gateway and the gRPC transport build their TLS contexts on what {@link LiveTls} loads from
 * them; every context trusts only the CA file, never the JDK's default trust store.
 *
 * <p>{@link #material} reads and parses all three with the JDK alone and checks that the key is the
 * certificate's, so that a file that cannot be used is a bad option at start, not a failed
 * handshake later.
 */
public record TlsFiles(Path certificate, Path privateKey, Path authority) {

    /** TLS 1.3 first; 1.2 for clients that lack it. Nothing older (docs/operations.md#security). */
    public static final List<String> PROTOCOLS = List.of("TLSv1.3", "TLSv1.2");

    private static final Pattern PKCS8 = Pattern.compile(
            "-----BEGIN PRIVATE KEY-----([A-Za-z0-9+/=\\s]+)-----END PRIVATE KEY-----");
    private static final List<String> KEY_ALGORITHMS = List.of("RSA", "EC", "Ed25519", "Ed448");
    /** GeneralName types of X.509 subject alternative names (RFC 5280). */
    private static final int DNS_NAME = 2;
    private static final int IP_ADDRESS = 7;

    /** What the three files hold, parsed: this node's key, its certificate chain (its own first), and the CA's certificates. */
    public record Material(PrivateKey key, List<X509Certificate> chain, List<X509Certificate> authorities) {
        @Override
        public String toString() { // never the key
            return "Material[" + chain.get(0).getSubjectX500Principal() + "]";
        }
    }

    /**
     * Reads, parses and checks the three files as they are now.
     *
     * @throws InvalidTlsFileException naming the file that cannot be read or used, never its content
     */
    public Material material() throws InvalidTlsFileException {
        List<X509Certificate> chain = certificates(certificate, Role.CERTIFICATE);
        List<X509Certificate> authorities = certificates(authority, Role.AUTHORITY);
        PrivateKey key = privateKey(privateKey);
        if (!signsFor(key, chain.get(0))) {
            throw new InvalidTlsFileException(privateKey, Role.KEY, "is not the private key of the certificate");
        }
        return new Material(key, chain, authorities);
    }

    /**
     * What peers and clients will refuse in this node's own certificate, as of {@code now}: that it
     * expired or is not valid yet, or that it does not name {@code host}, the address the node's
     * entry in {@code --cluster} gives (peers check it: RFC 6125, as HTTPS clients do). Each
     * problem is one sentence; none when the certificate is fine. Reads the file again.
     */
    public List<String> ownCertificateProblems(String host, Instant now) {
        X509Certificate own;
        try {
            own = certificates(certificate, Role.CERTIFICATE).get(0);
        } catch (InvalidTlsFileException e) {
            return List.of("it " + e.getMessage());
        }
        List<String> problems = new ArrayList<>();
        if (now.isAfter(own.getNotAfter().toInstant())) {
            problems.add("it expired at " + own.getNotAfter().toInstant());
        } else if (now.isBefore(own.getNotBefore().toInstant())) {
            problems.add("it is not valid before " + own.getNotBefore().toInstant() + " (check this machine's clock)");
        }
        if (!names(own, host)) {
            problems.add("it does not name this node's address " + host + " (its subject alternative names: "
                    + subjectAlternativeNames(own) + ")");
        }
        return problems;
    }

    /** Whether the certificate's subject alternative names cover {@code host}: an IP address, or a DNS name. */
    static boolean names(X509Certificate certificate, String host) {
        byte[] ip = ipLiteral(host);
        for (List<?> san : sans(certificate)) {
            int type = (Integer) san.get(0);
            String value = String.valueOf(san.get(1));
            if (ip != null && type == IP_ADDRESS && Arrays.equals(ip, ipLiteral(value))) {
                return true;
            }
            if (ip == null && type == DNS_NAME && dnsMatches(value, host)) {
                return true;
            }
        }
        return false;
    }

    /** RFC 6125: equal ignoring case, or a wildcard for the whole leftmost label ({@code *.example.com}). */
    private static boolean dnsMatches(String pattern, String host) {
        String p = pattern.toLowerCase(Locale.ROOT);
        String h = host.toLowerCase(Locale.ROOT);
        if (p.startsWith("*.")) {
            int dot = h.indexOf('.');
            return dot > 0 && h.substring(dot).equals(p.substring(1));
        }
        return p.equals(h);
    }

    /** The address's bytes when {@code host} is an IPv4 or IPv6 literal (parsed, never looked up), else null. */
    private static byte[] ipLiteral(String host) {
        String h = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
        return InetAddresses.isInetAddress(h) ? InetAddresses.forString(h).getAddress() : null;
    }

    private static List<String> subjectAlternativeNames(X509Certificate certificate) {
        List<String> names = sans(certificate).stream().map(san -> String.valueOf(san.get(1))).toList();
        return names.isEmpty() ? List.of("none") : names;
    }

    /** The certificate's subject alternative names as the JDK lists them: [type, value] pairs; none when unreadable. */
    static Collection<List<?>> sans(X509Certificate certificate) {
        try {
            Collection<List<?>> all = certificate.getSubjectAlternativeNames();
            return all == null ? List.of() : all;
        } catch (CertificateParsingException e) {
            return List.of();
        }
    }

    private static List<X509Certificate> certificates(Path file, Role role) throws InvalidTlsFileException {
        String what = role == Role.AUTHORITY ? "CA certificate" : "certificate";
        requireReadable(file, role, what);
        try (InputStream in = Files.newInputStream(file)) {
            Collection<? extends Certificate> all = CertificateFactory.getInstance("X.509").generateCertificates(in);
            if (all.isEmpty()) {
                throw new InvalidTlsFileException(file, role, "holds no PEM " + what);
            }
            return all.stream().map(X509Certificate.class::cast).toList();
        } catch (IOException e) {
            throw new InvalidTlsFileException(file, role, "cannot be read");
        } catch (CertificateException e) {
            throw new InvalidTlsFileException(file, role, "is not a PEM " + what);
        }
    }

    private static PrivateKey privateKey(Path file) throws InvalidTlsFileException {
        requireReadable(file, Role.KEY, "private key");
        String pem;
        try {
            pem = Files.readString(file, StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new InvalidTlsFileException(file, Role.KEY, "cannot be read");
        }
        Matcher m = PKCS8.matcher(pem);
        if (!m.find()) {
            throw new InvalidTlsFileException(file, Role.KEY, "is not an unencrypted PEM PKCS#8 private key "
                    + "('BEGIN PRIVATE KEY'; convert with: openssl pkcs8 -topk8 -nocrypt)");
        }
        PKCS8EncodedKeySpec spec;
        try {
            spec = new PKCS8EncodedKeySpec(Base64.getMimeDecoder().decode(m.group(1)));
        } catch (IllegalArgumentException e) {
            throw new InvalidTlsFileException(file, Role.KEY, "is not valid PEM (bad base64)");
        }
        for (String algorithm : KEY_ALGORITHMS) {
            try {
                return KeyFactory.getInstance(algorithm).generatePrivate(spec);
            } catch (GeneralSecurityException e) {
                // not this algorithm: try the next
            }
        }
        throw new InvalidTlsFileException(file, Role.KEY, "holds a private key of no known algorithm (RSA, EC, Ed25519)");
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

    private static void requireReadable(Path file, Role role, String what) throws InvalidTlsFileException {
        if (!Files.exists(file)) {
            throw new InvalidTlsFileException(file, role, "cannot be read: it does not exist (the " + what + ")");
        }
        if (!Files.isRegularFile(file) || !Files.isReadable(file)) {
            throw new InvalidTlsFileException(file, role, "cannot be read (the " + what + ")");
        }
    }

    /** Which of the three files a fault is in: the same path may be given for two of them. */
    public enum Role { CERTIFICATE, KEY, AUTHORITY }

    /** A TLS file that cannot be used; the message names the fault, never the content. */
    public static final class InvalidTlsFileException extends Exception {
        private final transient Path file;
        private final Role role;

        InvalidTlsFileException(Path file, Role role, String fault) {
            super(fault, null, false, false);
            this.file = file;
            this.role = role;
        }

        public Path file() {
            return file;
        }

        /** Which file it is, as given. */
        public Role role() {
            return role;
        }
    }
}
