package io.kvorum.node.security;

import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;

/**
 * The member ids a node certificate vouches for (docs/operations.md#security): its subject's common
 * names and its DNS subject alternative names. {@code ./kvorum certs} writes the id as both.
 */
public final class MemberCertificate {

    /** The type number of a DNS name among {@link X509Certificate#getSubjectAlternativeNames}. */
    private static final int DNS_NAME = 2;

    private MemberCertificate() {
    }

    /** The names {@code certificate} gives its holder: subject CNs and DNS SANs, sorted. */
    public static Set<String> names(X509Certificate certificate) {
        Set<String> names = new TreeSet<>();
        try {
            for (Rdn rdn : new LdapName(certificate.getSubjectX500Principal().getName()).getRdns()) {
                if (rdn.getType().equalsIgnoreCase("CN")) {
                    names.add(String.valueOf(rdn.getValue()));
                }
            }
        } catch (InvalidNameException e) {
            // a subject the JDK printed but cannot parse back: only the alternative names count
        }
        for (List<?> entry : TlsFiles.sans(certificate)) {
            if (entry.size() == 2 && Integer.valueOf(DNS_NAME).equals(entry.get(0)) && entry.get(1) instanceof String dns) {
                names.add(dns);
            }
        }
        return names;
    }

    /** Whether {@code certificate} names member {@code id}. */
    public static boolean names(X509Certificate certificate, String id) {
        return names(certificate).contains(id);
    }

    /**
     * The names the peer's certificate of a TLS session gives it, or an empty set when the session
     * has no peer certificate (or no session: plaintext).
     */
    public static Set<String> names(SSLSession session) {
        if (session == null) {
            return Set.of();
        }
        try {
            Certificate[] chain = session.getPeerCertificates();
            return chain.length > 0 && chain[0] instanceof X509Certificate leaf ? names(leaf) : Set.of();
        } catch (SSLPeerUnverifiedException e) {
            return Set.of();
        }
    }

    /** The subject of the peer's certificate in a TLS session, for log lines; "none" without one. */
    public static String subject(SSLSession session) {
        try {
            Certificate[] chain = session == null ? new Certificate[0] : session.getPeerCertificates();
            return chain.length > 0 && chain[0] instanceof X509Certificate leaf ? leaf.getSubjectX500Principal().getName() : "none";
        } catch (SSLPeerUnverifiedException e) {
            return "none";
        }
    }
}
