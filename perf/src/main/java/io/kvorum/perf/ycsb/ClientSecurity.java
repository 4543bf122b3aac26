package io.kvorum.perf.ycsb;

import io.kvorum.client.KvorumClient;
import io.kvorum.client.RetryPolicy;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;

/**
 * How the binding reaches a secured cluster (docs/operations.md#security), from the properties {@value #CA} (the PEM
 * file of the CA that signed the nodes' certificates; {@code https://} URLs) and {@value #TOKEN_FILE}
 * (a file whose first line is the bearer token, so that no command line or properties file holds
 * the token itself). Both optional.
 *
 * @param ca        null: the JDK's default trust for {@code https://} URLs
 * @param tokenFile null: no token
 */
record ClientSecurity(Path ca, Path tokenFile) {

    static final String CA = "kvorum.ca";
    static final String TOKEN_FILE = "kvorum.token.file";
    static final ClientSecurity NONE = new ClientSecurity(null, null);

    static ClientSecurity from(Properties p) {
        String ca = p.getProperty(CA, "").trim();
        String token = p.getProperty(TOKEN_FILE, "").trim();
        return new ClientSecurity(ca.isEmpty() ? null : Path.of(ca), token.isEmpty() ? null : Path.of(token));
    }

    /** The properties that give this to the binding. */
    Map<String, String> properties() {
        Map<String, String> p = new LinkedHashMap<>();
        if (ca != null) {
            p.put(CA, ca.toString());
        }
        if (tokenFile != null) {
            p.put(TOKEN_FILE, tokenFile.toString());
        }
        return p;
    }

    /**
     * A client of one node with this trust and token, no retries (YCSB counts each failure).
     *
     * @throws IllegalArgumentException when the CA or the token file cannot be used
     */
    KvorumClient client(URI url, Duration timeout) {
        KvorumClient.Builder builder = KvorumClient.builder().endpoints(url).requestTimeout(timeout)
                .retryPolicy(RetryPolicy.NONE);
        if (ca != null) {
            builder.trustCertificates(ca);
        }
        if (tokenFile != null) {
            builder.bearerToken(token());
        }
        return builder.build();
    }

    private String token() {
        try {
            String first = Files.readAllLines(tokenFile, StandardCharsets.UTF_8).stream().map(String::strip)
                    .filter(l -> !l.isEmpty()).findFirst().orElse("");
            if (first.isEmpty()) {
                throw new IllegalArgumentException(TOKEN_FILE + " " + tokenFile + " holds no token");
            }
            return first;
        } catch (IOException e) {
            throw new IllegalArgumentException(TOKEN_FILE + " " + tokenFile + " cannot be read", e);
        }
    }
}
