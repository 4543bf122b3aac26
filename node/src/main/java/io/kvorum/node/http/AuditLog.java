package io.kvorum.node.http;

import io.kvorum.node.security.BearerTokens;
import io.kvorum.node.security.Role;
import io.netty.handler.codec.http.HttpRequest;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The audit log (docs/operations.md#security): one INFO line on the logger {@value #LOGGER}, which
 * operators can route to a file of its own, for every administrative request this node received
 * (a membership change, repair or cleanup: the endpoints {@link EndpointRoles} gives {@code admin}),
 * answered or refused, once the status of its answer is known:
 *
 * <pre>
 * token=ops client=10.0.0.9:53122 "POST /v0/cluster/remove?id=n3 HTTP/1.1" 200 41ms
 * </pre>
 *
 * <p>{@code token} is the NAME of the request's token in the token file, or
 * {@value BearerAuthentication#NOBODY} when no token names it (the node has no token file, or the
 * request carried no valid token: its status is then 401). Never a token, and never a value:
 * administrative requests carry none, and the request line is cut to {@value #MAX_TARGET}
 * characters of target with every character outside printable ASCII, and the quote, escaped.
 */
final class AuditLog {

    static final String LOGGER = "kvorum.audit";
    static final int MAX_TARGET = 256;
    private static final Logger log = LoggerFactory.getLogger(LOGGER);

    private AuditLog() {
    }

    /** An administrative request waiting for the status of its answer. */
    record Entry(String name, String client, String requestLine, long startNanos) {

        /** Logs the request with the status of its answer. */
        void answered(int status) {
            log.info("token={} client={} \"{}\" {} {}ms", name, client, requestLine, status,
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos));
        }
    }

    /**
     * The entry of {@code request}, whose endpoint has {@code role} ({@link EndpointRoles#of}),
     * received at {@code startNanos} ({@link System#nanoTime}) from {@code client} with a token
     * named {@code name}; null when it is no administrative request.
     */
    static Entry of(Role role, HttpRequest request, String name, SocketAddress client, long startNanos) {
        if (!EndpointRoles.isAdministrative(role)) {
            return null;
        }
        return new Entry(name, address(client), request.method().name() + " " + escaped(request.uri()) + " "
                + request.protocolVersion().text(), startNanos);
    }

    /**
     * Logs {@code request} if it is administrative, answered {@code status} before it reached the
     * connection handler (the aggregator's refusals of an {@code Expect}), on a node that asks for
     * {@code tokens} (null: none).
     */
    static void answeredEarly(BearerTokens tokens, HttpRequest request, SocketAddress client, int status) {
        Role role = EndpointRoles.of(request);
        Entry entry = of(role, request, BearerAuthentication.admit(tokens, request, role).name(), client, System.nanoTime());
        if (entry != null) {
            entry.answered(status);
        }
    }

    private static String address(SocketAddress client) {
        if (client instanceof InetSocketAddress inet && inet.getAddress() != null) {
            return inet.getAddress().getHostAddress() + ":" + inet.getPort();
        }
        return client == null ? "-" : client.toString();
    }

    /** The target as printable ASCII that cannot end the quoted request line, cut to {@value #MAX_TARGET} characters. */
    private static String escaped(String target) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < target.length() && i < MAX_TARGET; i++) {
            char c = target.charAt(i);
            if (c <= 0x20 || c >= 0x7f || c == '"' || c == '\\') {
                out.append(c <= 0xff ? String.format("\\x%02x", (int) c) : String.format("\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        return target.length() > MAX_TARGET ? out + "..." : out.toString();
    }
}
