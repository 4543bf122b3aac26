package io.kvorum.node.http;

import io.kvorum.node.security.BearerTokens;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.util.List;
import java.util.function.Function;

/**
 * docs/operations.md#security's gate in front of the router: a request without one of the {@link BearerTokens} is
 * answered {@code 401} with {@code WWW-Authenticate: Bearer} and never reaches the router, so it
 * has no effect. {@code GET /v0/status} stays open, for load balancers and readiness probes.
 * The answer names no token, neither a valid one nor what the client sent.
 */
final class BearerAuthentication implements Function<FullHttpRequest, Answer> {

    static final String CHALLENGE = "Bearer realm=\"kvorum\"";

    private final BearerTokens tokens;
    private final Function<FullHttpRequest, Answer> router;

    private BearerAuthentication(BearerTokens tokens, Function<FullHttpRequest, Answer> router) {
        this.tokens = tokens;
        this.router = router;
    }

    /** The router itself when {@code tokens} is null (an open node), else the router behind the gate. */
    static Function<FullHttpRequest, Answer> guard(BearerTokens tokens, Function<FullHttpRequest, Answer> router) {
        return tokens == null ? router : new BearerAuthentication(tokens, router);
    }

    @Override
    public Answer apply(FullHttpRequest request) {
        if (admits(tokens, request)) {
            return router.apply(request);
        }
        return Answer.now(unauthorized(request.headers().getAll(HttpHeaderNames.AUTHORIZATION).size()));
    }

    /**
     * Whether {@code request} may go on, from its headers alone: {@code tokens} is null (an open
     * node), the request is open to all, or it carries a valid token. The gateway also asks this
     * of a request's headers before reading its body ({@link BodyAdmissionHandler}).
     */
    static boolean admits(BearerTokens tokens, HttpRequest request) {
        if (tokens == null || isOpen(request)) {
            return true;
        }
        // Two credentials are none: which one a proxy or a server would read differs (RFC 9110 §5.3).
        List<String> credentials = request.headers().getAll(HttpHeaderNames.AUTHORIZATION);
        return credentials.size() == 1 && tokens.accepts(credentials.get(0));
    }

    /** {@code GET /v0/status}, and nothing else (docs/operations.md#security: not even its {@code HEAD}). */
    private static boolean isOpen(HttpRequest request) {
        return request.method().equals(HttpMethod.GET)
                && RequestRouter.pathOf(RequestRouter.originForm(request.uri())).equals("/v0/status");
    }

    /** The {@code 401} for a request that {@link #admits} refused, which carried {@code credentials} Authorization headers. */
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
