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
 * {@code ./kvorum certs} in the run folder, and two random tokens in files there, each with the
 * least role its user needs: a {@code write} token for the load (the load tool through the file
 * named by {@value #TOKEN_FILE_VARIABLE}, so that no report prints the token, and the Java
 * clients), and a {@code read} token for what perf reads of the nodes besides, their metrics and
 * status ({@link #authorize}). Everything perf sends then speaks HTTPS, trusting that CA.
 */
public final class ClusterSecurity {

    /** Read by perf/wrk/lib/kvorum.lua and preload.lua: the file whose first line is the token. */
    public static final String TOKEN_FILE_VARIABLE = "KVORUM_TOKEN_FILE";
    /** The one certificate every node presents; it names 127.0.0.1 and localhost. */
    private static final String NODE = "node";

    private final Path certificates;
    /** The nodes' {@code --auth-token-file}: both tokens, with their roles. */
    private final Path nodeTokenFile;
    /** The load's token alone. */
    private final Path tokenFile;
    /** The token of perf's own reads: metrics and status. */
    private final String readToken;

    private ClusterSecurity(Path certificates, Path nodeTokenFile, Path tokenFile, String readToken) {
        this.certificates = certificates;
        this.nodeTokenFile = nodeTokenFile;
        this.tokenFile = tokenFile;
        this.readToken = readToken;
    }

    /** A plain, open cluster. */
    public static ClusterSecurity none() {
        return new ClusterSecurity(null, null, null, null);
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
        if (!token) {
            return new ClusterSecurity(certificates, null, null, null);
        }
        String load = secret();
        String read = secret();
        Path nodeTokens = Files.writeString(dir.resolve("tokens"), load + " write perf-load\n" + read + " read perf-metrics\n");
        return new ClusterSecurity(certificates, nodeTokens, Files.writeString(dir.resolve("load.token"), load + "\n"), read);
    }

    private static String secret() {
        byte[] bytes = new byte[24];
        new SecureRandom().nextBytes(bytes);
        return HexFormat.of().formatHex(bytes);
    }

    public boolean tls() {
        return certificates != null;
    }

    public boolean tokens() {
        return tokenFile != null;
    }

    /** "tls+token", "tls", "token" or "none": what the report records. */
    public String describe() {
        return tls() && tokens() ? "tls+token" : tls() ? "tls" : tokens() ? "token" : "none";
    }

    /** The CA's certificate (PEM), or null without TLS. */
    public Path caFile() {
        return tls() ? certificates.resolve("ca.pem") : null;
    }

    /** The file whose first line is the load's token ({@code write}), or null without one. */
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
            flags.addAll(List.of("--auth-token-file", nodeTokenFile.toString()));
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

    /** Adds the {@code read} token to a request that reads metrics or status, when there are tokens. */
    public HttpRequest.Builder authorize(HttpRequest.Builder request) {
        return tokens() ? request.header("Authorization", "Bearer " + readToken) : request;
    }

    @Override
    public String toString() { // never the token
        return describe();
    }
}
