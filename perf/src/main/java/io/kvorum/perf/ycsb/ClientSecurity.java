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
 * file of the CA that signed the nodes' certificates; {@code https://} URLs), {@value #TOKEN_FILE}
 * (a file whose first line is the bearer token, so that no command line or properties file holds
 * the token itself: a {@code write} token, as YCSB loads and updates records) and
 * {@value #ALLOW_INSECURE} ({@code true} to send that token over plain {@code http://} beyond
 * loopback, which the driver refuses otherwise). All optional.
 *
 * @param ca            null: the JDK's default trust for {@code https://} URLs
 * @param tokenFile     null: no token
 * @param allowInsecure the token may go to plain {@code http://} URLs beyond loopback
 */
record ClientSecurity(Path ca, Path tokenFile, boolean allowInsecure) {

    static final String CA = "kvorum.ca";
    static final String TOKEN_FILE = "kvorum.token.file";
    static final String ALLOW_INSECURE = "kvorum.allow.insecure";
    static final ClientSecurity NONE = new ClientSecurity(null, null, false);

    /** @throws IllegalArgumentException when {@value #ALLOW_INSECURE} is neither {@code true} nor {@code false} */
    static ClientSecurity from(Properties p) {
        String ca = p.getProperty(CA, "").trim();
        String token = p.getProperty(TOKEN_FILE, "").trim();
        String insecure = p.getProperty(ALLOW_INSECURE, "false").trim();
        if (!insecure.equals("true") && !insecure.equals("false")) {
            throw new IllegalArgumentException(ALLOW_INSECURE + " is true or false, not '" + insecure + "'");
        }
        return new ClientSecurity(ca.isEmpty() ? null : Path.of(ca), token.isEmpty() ? null : Path.of(token),
                insecure.equals("true"));
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
        if (allowInsecure) {
            p.put(ALLOW_INSECURE, "true");
        }
        return p;
    }

    /**
     * A client of one node with this trust and token, no retries (YCSB counts each failure).
     *
     * @throws IllegalArgumentException when the CA or the token file cannot be used
     * @throws IllegalStateException    when the token would go over plain {@code http://} beyond loopback
     *                                  without {@value #ALLOW_INSECURE}
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
        if (allowInsecure) {
            builder.allowInsecure();
            return builder.build();
        }
        try {
            return builder.build();
        } catch (IllegalStateException e) { // the driver names its builder's method; a YCSB user sets a property
            throw new IllegalStateException(e.getMessage() + "; with YCSB, set " + ALLOW_INSECURE + "=true", e);
        }
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
