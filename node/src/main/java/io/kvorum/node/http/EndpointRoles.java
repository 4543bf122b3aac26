package io.kvorum.node.http;

import static java.util.Map.entry;

import io.kvorum.node.security.Role;
import io.netty.handler.codec.http.HttpRequest;
import java.util.Map;

/**
 * The role each request needs (docs/operations.md#security), and the one place that says it:
 * {@link BearerAuthentication} asks it of every request before the router sees it, and the audit
 * log takes the requests that need {@code admin} as the administrative ones. A request is looked up
 * by its method and path, as {@link RequestRouter} routes it.
 *
 * <p>Only {@code GET /v0/status} needs no token. A request that is no endpoint (an unknown path, or
 * a method its path does not allow) needs a valid token of any role: the router answers it 400 or
 * 405 and does nothing, so any token may be told so, and none may probe paths without one.
 */
final class EndpointRoles {

    /** The request that needs no token, for load balancers and readiness probes. */
    private static final String OPEN = "GET /v0/status";

    /** {@code METHOD path} to the least role that may make the request. */
    private static final Map<String, Role> NEEDED = Map.ofEntries(
            entry("GET /v0/entity", Role.READ),
            entry("PUT /v0/entity", Role.WRITE),
            entry("DELETE /v0/entity", Role.WRITE),
            entry("GET /v0/entities", Role.READ),
            entry("HEAD /v0/status", Role.READ),
            entry("GET /v0/cluster", Role.READ),
            entry("HEAD /v0/cluster", Role.READ),
            entry("GET /metrics", Role.READ),
            entry("HEAD /metrics", Role.READ),
            entry("POST /v0/cluster/leave", Role.ADMIN),
            entry("POST /v0/cluster/remove", Role.ADMIN),
            entry("POST /v0/cleanup", Role.ADMIN),
            entry("POST /v0/repair", Role.ADMIN),
            entry("POST /v0/backup", Role.ADMIN),
            entry("GET /v0/backup", Role.READ),
            entry("GET /v0/backup/ID", Role.READ),
            entry("POST /v0/restore", Role.ADMIN));

    /** What a request that is no endpoint needs: any valid token. */
    private static final Role NOT_AN_ENDPOINT = Role.READ;

    private EndpointRoles() {
    }

    /** Whether {@code request} needs no token at all. */
    static boolean isOpen(HttpRequest request) {
        return key(request).equals(OPEN);
    }

    /**
     * The role the table gives {@code request}'s endpoint, or null when it is no endpoint. The
     * endpoints that need {@code admin} are the administrative ones: membership changes, repair,
     * cleanup, backups and restore.
     */
    static Role of(HttpRequest request) {
        return NEEDED.get(key(request));
    }

    /** Whether a request whose endpoint has {@code role} ({@link #of}) is administrative: it needs {@code admin}. */
    static boolean isAdministrative(Role role) {
        return role == Role.ADMIN;
    }

    /** The least role that may make a request whose endpoint has {@code role} ({@link #of}; null: no endpoint). */
    static Role needed(Role role) {
        return role != null ? role : NOT_AN_ENDPOINT;
    }

    /** The table, {@code METHOD path} to role, for the tests that keep it and docs/operations.md in step. */
    static Map<String, Role> table() {
        return NEEDED;
    }

    private static String key(HttpRequest request) {
        return request.method().name() + " " + RequestRouter.routeOf(RequestRouter.pathOf(RequestRouter.originForm(request.uri())));
    }
}
