package io.kvorum.node.security;

import java.nio.file.Path;

/**
 * What a node asks of those who talk to it (docs/operations.md#security): TLS material, or null for plain HTTP and gRPC;
 * a bearer-token file, or null for no authentication.
 */
public record Security(LiveTls tls, Path tokenFile) {

    /** An open node, as without the security options. */
    public static final Security NONE = new Security(null, null);

    public boolean tlsEnabled() {
        return tls != null;
    }

    public boolean tokensRequired() {
        return tokenFile != null;
    }
}
