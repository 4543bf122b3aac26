package io.kvorum.node.http;

import io.kvorum.node.security.BearerTokens;
import io.kvorum.node.security.Role;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.util.List;

/**
 * docs/operations.md#security's gate, asked from a request's headers alone: a request without one of
 * the {@link BearerTokens} is answered {@code 401} with {@code WWW-Authenticate: Bearer}, one whose
 * token lacks the role its endpoint needs ({@link EndpointRoles}) {@code 403}, and either never
 * reaches the router, so it has no effect. {@code GET /v0/status} stays open, for load balancers
 * and readiness probes. The {@link ConnectionHandler} asks before it routes a request, and
 * {@link BodyAdmissionHandler} before it reads a body. Answers name no token, neither a valid one
 * nor what the client sent.
 */
final class BearerAuthentication {

    static final String CHALLENGE = "Bearer realm=\"kvorum\"";
    /** How the audit log names a request that no token names: the node has no token file, or the request no valid token. */
    static final String NOBODY = "-";

    private static final Admission ANONYMOUS = new Admission(NOBODY, null);

    private BearerAuthentication() {
    }

    /**
     * Who sent a request and whether it may go on.
     *
     * @param name    the NAME of its token ({@link BearerTokens.Bearer}), or {@value #NOBODY}
     * @param refusal why it may not go on, or null when it may
     */
    record Admission(String name, Refusal refusal) {
    }

    /**
     * Why a request may not go on: no valid token ({@code forbidden} null: 401), or a token whose
     * role falls short ({@code forbidden} says so: 403).
     *
     * @param credentials how many {@code Authorization} headers the request carried (not what they said)
     */
    record Refusal(int credentials, String forbidden) {

        /** The answer: a 401 with the challenge, or a 403. */
        FullHttpResponse response() {
            return forbidden != null ? Responses.text(HttpResponseStatus.FORBIDDEN, forbidden) : unauthorized(credentials);
        }
    }

    /**
     * Whether {@code request} may go on, from its headers alone: {@code tokens} is null (an open
     * node), the request is open to all, or it carries one valid token whose role allows what the
     * request's endpoint ({@code role}, {@link EndpointRoles#of}) needs.
     */
    static Admission admit(BearerTokens tokens, HttpRequest request, Role role) {
        if (tokens == null || EndpointRoles.isOpen(request)) {
            return ANONYMOUS;
        }
        // Two credentials are none: which one a proxy or a server would read differs (RFC 9110 §5.3).
        List<String> credentials = request.headers().getAll(HttpHeaderNames.AUTHORIZATION);
        BearerTokens.Bearer bearer = credentials.size() == 1 ? tokens.bearer(credentials.get(0)) : null;
        if (bearer == null) {
            return new Admission(NOBODY, new Refusal(credentials.size(), null));
        }
        Role needed = EndpointRoles.needed(role);
        if (bearer.role().allows(needed)) {
            return new Admission(bearer.name(), null);
        }
        return new Admission(bearer.name(), new Refusal(1, "this token's role is '" + bearer.role() + "', and "
                + request.method() + " " + RequestRouter.pathOf(RequestRouter.originForm(request.uri())) + " needs '"
                + needed + "' (docs/operations.md#security)"));
    }

    /** {@link #admit(BearerTokens, HttpRequest, Role)} of a request's own endpoint. */
    static Admission admit(BearerTokens tokens, HttpRequest request) {
        return tokens == null ? ANONYMOUS : admit(tokens, request, EndpointRoles.of(request));
    }

    /** The {@code 401} for a request that carried {@code credentials} Authorization headers, none valid. */
    static FullHttpResponse unauthorized(int credentials) {
        boolean tokenPresented = credentials > 0;
        FullHttpResponse response = Responses.text(HttpResponseStatus.UNAUTHORIZED, credentials > 1
                ? "send one Authorization header, not " + credentials
                : tokenPresented ? "the bearer token is not valid"
                : "authentication required: send 'Authorization: Bearer <token>'");
        response.headers().set(HttpHeaderNames.WWW_AUTHENTICATE, tokenPresented
                ? CHALLENGE + ", error=\"invalid_token\"" : CHALLENGE);
        return response;
    }
}
