package io.kvorum.node.security;

import io.kvorum.client.TrustedCa;
import java.io.IOException;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509ExtendedTrustManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The TLS material of {@code --tls-cert}, {@code --tls-key} and {@code --tls-ca}, read again while
 * the node runs, so that a certificate is renewed, or the cluster moved to another CA, without a
 * restart (docs/operations.md#security asks it of tokens; operators of Cassandra and etcd expect it of certificates).
 *
 * <p>Every TLS context of the node (HTTPS, the gRPC server and the channels to peers) is built once
 * on {@link #keyManager()} and {@link #trustManager()}, which answer with the material last loaded:
 * a handshake after a {@link #refresh} that loaded new files uses them; a connection already set up
 * keeps the certificates it was set up with until it closes.
 *
 * <p>{@link #refresh} (every {@value #REFRESH_SECONDS} s) compares the files' bytes with those it last
 * saw; new bytes are taken only when all three load as at start ({@link TlsFiles#material}: parsed,
 * and the key is the certificate's). So a rotation caught half-way (the certificate replaced, the
 * key not yet) keeps the material before, with one warning, until the files agree again. Neither
 * the files' content nor the key ever reaches a log line.
 */
public final class LiveTls {

    /** How often the files are compared with those last seen. */
    public static final int REFRESH_SECONDS = 2;

    private static final Logger log = LoggerFactory.getLogger(LiveTls.class);

    private final TlsFiles files;
    private final SwappableKeys keys;
    private final TrustedCa.Swappable trust;
    /** The three files' bytes as last seen, whether or not they loaded; guarded by this. */
    private List<byte[]> seen;

    private LiveTls(TlsFiles files, TlsFiles.Material material, List<byte[]> seen) throws GeneralSecurityException {
        this.files = files;
        this.seen = seen;
        this.trust = new TrustedCa.Swappable(TrustedCa.trustManager(material.authorities()));
        this.keys = new SwappableKeys(material);
    }

    /**
     * Loads the files as they are now.
     *
     * @throws TlsFiles.InvalidTlsFileException naming the file that cannot be read or used
     */
    public static LiveTls open(TlsFiles files) throws TlsFiles.InvalidTlsFileException {
        List<byte[]> bytes = bytesOf(files);
        TlsFiles.Material material = files.material();
        try {
            return new LiveTls(files, material, bytes);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("the JDK cannot trust the CA certificates of " + files.authority(), e);
        }
    }

    public TlsFiles files() {
        return files;
    }

    /** This node's certificate and key, as last loaded. */
    public X509ExtendedKeyManager keyManager() {
        return keys;
    }

    /** Trust in the certificates of the CA file alone, as last loaded (never the JDK's default trust store). */
    public X509ExtendedTrustManager trustManager() {
        return trust;
    }

    /**
     * Reads the files again and, when they changed and load, uses them for the handshakes from now
     * on. Returns whether new material was taken. Never throws: a failure keeps the material before.
     */
    public synchronized boolean refresh() {
        List<byte[]> bytes;
        try {
            bytes = bytesOf(files);
        } catch (TlsFiles.InvalidTlsFileException e) {
            if (seen != null) { // one warning until the files can be read again
                log.warn("{} {}; TLS keeps the certificates loaded before", name(e), e.getMessage());
            }
            seen = null;
            return false;
        }
        if (seen != null && sameBytes(bytes, seen)) {
            return false;
        }
        seen = bytes;
        try {
            TlsFiles.Material material = files.material();
            X509ExtendedTrustManager trusted = TrustedCa.trustManager(material.authorities());
            keys.use(material);
            trust.use(trusted);
            X509Certificate own = material.chain().get(0);
            log.info("TLS files changed: new connections use the certificate {} (valid until {}) and {} CA certificate(s)",
                    own.getSubjectX500Principal().getName(), own.getNotAfter().toInstant(), material.authorities().size());
            return true;
        } catch (TlsFiles.InvalidTlsFileException e) {
            log.warn("{} {}; TLS keeps the certificates loaded before until the files agree", name(e), e.getMessage());
        } catch (GeneralSecurityException e) {
            log.warn("--tls-ca '{}' cannot be trusted ({}); TLS keeps the certificates loaded before",
                    files.authority(), e.getClass().getSimpleName());
        }
        return false;
    }

    /** The certificate this node presents, as last loaded. */
    public X509Certificate certificate() {
        return keys.current.chain[0];
    }

    /** When the certificate this node presents, as last loaded, expires. */
    public Instant certificateExpiry() {
        return keys.current.chain[0].getNotAfter().toInstant();
    }

    private static String name(TlsFiles.InvalidTlsFileException e) {
        String option = switch (e.role()) {
            case CERTIFICATE -> "--tls-cert";
            case KEY -> "--tls-key";
            case AUTHORITY -> "--tls-ca";
        };
        return option + " '" + e.file() + "'";
    }

    private static List<byte[]> bytesOf(TlsFiles files) throws TlsFiles.InvalidTlsFileException {
        List<byte[]> bytes = new ArrayList<>(3);
        bytes.add(read(files.certificate(), TlsFiles.Role.CERTIFICATE));
        bytes.add(read(files.privateKey(), TlsFiles.Role.KEY));
        bytes.add(read(files.authority(), TlsFiles.Role.AUTHORITY));
        return bytes;
    }

    private static byte[] read(Path file, TlsFiles.Role role) throws TlsFiles.InvalidTlsFileException {
        try {
            return Files.readAllBytes(file);
        } catch (IOException e) {
            throw new TlsFiles.InvalidTlsFileException(file, role, "cannot be read now");
        }
    }

    private static boolean sameBytes(List<byte[]> a, List<byte[]> b) {
        for (int i = 0; i < a.size(); i++) {
            if (!Arrays.equals(a.get(i), b.get(i))) {
                return false;
            }
        }
        return true;
    }

    /**
     * This node's key and certificate chain as last loaded, under an alias that names the load: an
     * engine asks for the alias, then for its chain and key, and a swap between those calls must
     * not pair the new certificate with the old key. So the load before stays known by its alias.
     */
    private static final class SwappableKeys extends X509ExtendedKeyManager {
        private record Identity(String alias, PrivateKey key, X509Certificate[] chain) {
        }

        private volatile Identity current;
        private volatile Identity previous;
        private int loads; // guarded by LiveTls.this, through refresh()

        SwappableKeys(TlsFiles.Material material) {
            use(material);
        }

        void use(TlsFiles.Material material) {
            previous = current;
            current = new Identity("node-" + loads++, material.key(), material.chain().toArray(new X509Certificate[0]));
        }

        private Identity identity(String alias) {
            Identity now = current;
            if (now.alias.equals(alias)) {
                return now;
            }
            Identity before = previous;
            return before != null && before.alias.equals(alias) ? before : null;
        }

        @Override
        public X509Certificate[] getCertificateChain(String alias) {
            Identity identity = identity(alias);
            return identity == null ? null : identity.chain.clone();
        }

        @Override
        public PrivateKey getPrivateKey(String alias) {
            Identity identity = identity(alias);
            return identity == null ? null : identity.key;
        }

        @Override
        public String[] getClientAliases(String keyType, Principal[] issuers) {
            return new String[] {current.alias};
        }

        @Override
        public String chooseClientAlias(String[] keyTypes, Principal[] issuers, Socket socket) {
            return current.alias;
        }

        @Override
        public String chooseEngineClientAlias(String[] keyTypes, Principal[] issuers, SSLEngine engine) {
            return current.alias;
        }

        @Override
        public String[] getServerAliases(String keyType, Principal[] issuers) {
            return new String[] {current.alias};
        }

        @Override
        public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
            return current.alias;
        }

        @Override
        public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
            return current.alias;
        }
    }
}
