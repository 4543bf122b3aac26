package io.kvorum.perf.cluster;

import io.kvorum.client.TrustedCa;
import io.kvorum.testkit.KvorumCerts;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

/**
 * What a measured cluster asks of its clients (docs/operations.md#security), for {@code --tls} and {@code --token}: a
 * throwaway CA and one certificate for every node (they all run on 127.0.0.1), made by
 * {@code ./kvorum certs} in the run folder, and a random token in a file there. Everything perf
 * sends then speaks HTTPS, trusting that CA, and carries the token: the load tool through the file
 * named by {@value #TOKEN_FILE_VARIABLE} (so that no report prints the token), the Java clients
 * through {@link #authorize}.
 */
public final class ClusterSecurity {

    /** Read by perf/wrk/lib/kvorum.lua and preload.lua: the file whose first line is the token. */
    public static final String TOKEN_FILE_VARIABLE = "KVORUM_TOKEN_FILE";
    /** The one certificate every node presents; it names 127.0.0.1 and localhost. */
    private static final String NODE = "node";

    private final Path certificates;
    private final Path tokenFile;
    private final String token;

    private ClusterSecurity(Path certificates, Path tokenFile, String token) {
        this.certificates = certificates;
        this.tokenFile = tokenFile;
        this.token = token;
    }

    /** A plain, open cluster. */
    public static ClusterSecurity none() {
        return new ClusterSecurity(null, null, null);
    }

    /**
     * Makes what {@code tls} and {@code token} ask for under {@code runDir/security}.
     *
     */
    public static ClusterSecurity create(Path runDir, boolean tls, boolean token)
            throws IOException, InterruptedException {
        if (!tls && !token) {
            return none();
        }
        Path dir = Files.createDirectories(runDir.resolve("security"));
        Path certificates = null;
        if (tls) {
            certificates = dir.resolve("pki");
            KvorumCerts.make(certificates, NODE);
        }
        Path tokenFile = null;
        String secret = null;
        if (token) {
            byte[] bytes = new byte[24];
            new SecureRandom().nextBytes(bytes);
            secret = HexFormat.of().formatHex(bytes);
            tokenFile = Files.writeString(dir.resolve("tokens"), secret + "\n");
        }
        return new ClusterSecurity(certificates, tokenFile, secret);
    }

    public boolean tls() {
        return certificates != null;
    }

    public boolean tokens() {
        return token != null;
    }

    /** "tls+token", "tls", "token" or "none": what the report records. */
    public String describe() {
        return tls() && tokens() ? "tls+token" : tls() ? "tls" : tokens() ? "token" : "none";
    }

    /** The CA's certificate (PEM), or null without TLS. */
    public Path caFile() {
        return tls() ? certificates.resolve("ca.pem") : null;
    }

    /** The file whose first line is the token, or null without one. */
    public Path tokenFile() {
        return tokenFile;
    }

    public String scheme() {
        return tls() ? "https" : "http";
    }

    /** The node flags that turn this on; the same for every node. */
    public List<String> nodeOptions() {
        List<String> flags = new ArrayList<>();
        if (tls()) {
            flags.addAll(List.of("--tls-cert", certificates.resolve(NODE + ".pem").toString(),
                    "--tls-key", certificates.resolve(NODE + ".key").toString(),
                    "--tls-ca", certificates.resolve("ca.pem").toString()));
        }
        if (tokens()) {
            flags.addAll(List.of("--auth-token-file", tokenFile.toString()));
        }
        return flags;
    }

    /** What the load tool's scripts need in their environment. */
    public Map<String, String> toolEnvironment() {
        return tokens() ? Map.of(TOKEN_FILE_VARIABLE, tokenFile.toString()) : Map.of();
    }

    /** An HTTP client that trusts the cluster's CA (or a plain one). */
    public HttpClient.Builder httpClient() {
        HttpClient.Builder builder = HttpClient.newBuilder();
        if (!tls()) {
            return builder;
        }
        try {
            return builder.sslContext(TrustedCa.clientContext(certificates.resolve("ca.pem")));
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalStateException("cannot trust the CA perf made in " + certificates, e);
        }
    }

    /** Adds the bearer token to a request, when there is one. */
    public HttpRequest.Builder authorize(HttpRequest.Builder request) {
        return tokens() ? request.header("Authorization", "Bearer " + token) : request;
    }

    @Override
    public String toString() { // never the token
        return describe();
    }
}
