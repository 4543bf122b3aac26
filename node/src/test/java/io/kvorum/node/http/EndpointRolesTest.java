package io.kvorum.node.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.node.TestNode;
import io.kvorum.node.config.NodeOption;
import io.kvorum.node.security.Role;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/operations.md#security's roles on a running node: every endpoint asked with a {@code read},
 * a {@code write}, an {@code admin} and a bare (no role: admin) token, and with none. A token
 * without the role an endpoint needs is answered {@code 403} and the request has no effect; what
 * is not an endpoint (an unknown path, a method a path does not allow) answers any valid token as
 * it always did (400, 405), and no token {@code 401}.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class EndpointRolesTest {

    /** Who sends a request: the token's line in the file, or nobody. */
    enum Who {
        NOBODY(null, null), READ("reader-token", "reader-token read prometheus"),
        WRITE("writer-token", "writer-token write app"), ADMIN("admin-token", "admin-token admin ops"),
        BARE("bare-token", "bare-token");

        final String token;
        final String line;

        Who(String token, String line) {
            this.token = token;
            this.line = line;
        }
    }

    /** The tokens refused a request that needs {@code read}, {@code write} or {@code admin}. */
    private static final Set<Who> NEEDS_READ = EnumSet.noneOf(Who.class);
    private static final Set<Who> NEEDS_WRITE = EnumSet.of(Who.READ);
    private static final Set<Who> NEEDS_ADMIN = EnumSet.of(Who.READ, Who.WRITE);

    /** A request, and the tokens that may not make it (403). */
    record Row(String method, String target, Set<Who> forbidden) {
        String path() {
            int q = target.indexOf('?');
            return RequestRouter.routeOf(q < 0 ? target : target.substring(0, q)); // one backup's path: its route
        }
    }

    /**
     * Every endpoint of docs/http-api.md, then requests that are none. Membership changes name a
     * member that does not exist, so that the admin's are refused too and change nothing.
     */
    static final List<Row> ENDPOINTS = List.of(
            new Row("GET", "/v0/entity?id=absent", NEEDS_READ),
            new Row("PUT", "/v0/entity?id=table", NEEDS_WRITE),
            new Row("DELETE", "/v0/entity?id=absent", NEEDS_WRITE),
            new Row("GET", "/v0/entities?start=a&end=b", NEEDS_READ),
            new Row("GET", "/v0/status", NEEDS_READ),
            new Row("HEAD", "/v0/status", NEEDS_READ),
            new Row("GET", "/v0/cluster", NEEDS_READ),
            new Row("HEAD", "/v0/cluster", NEEDS_READ),
            new Row("POST", "/v0/cluster/leave?id=n9", NEEDS_ADMIN),
            new Row("POST", "/v0/cluster/remove?id=n9", NEEDS_ADMIN),
            new Row("POST", "/v0/cleanup", NEEDS_ADMIN),
            new Row("POST", "/v0/repair", NEEDS_ADMIN),
            new Row("POST", "/v0/backup", NEEDS_ADMIN),
            new Row("GET", "/v0/backup", NEEDS_READ),
            new Row("GET", "/v0/backup/20200101-000000-000000", NEEDS_READ),
            new Row("POST", "/v0/restore", NEEDS_ADMIN),
            new Row("GET", "/metrics", NEEDS_READ),
            new Row("HEAD", "/metrics", NEEDS_READ));
    static final List<Row> NOT_ENDPOINTS = List.of(
            new Row("GET", "/v0/nothing", NEEDS_READ),
            new Row("POST", "/v0/nothing", NEEDS_READ),
            new Row("DELETE", "/v0/cluster/remove", NEEDS_READ),
            new Row("PATCH", "/v0/entity?id=k", NEEDS_READ),
            new Row("GET", "/v0/repair", NEEDS_READ),
            new Row("PUT", "/metrics", NEEDS_READ));

    @TempDir
    Path dir;

    private TestNode start() throws Exception {
        List<String> lines = new ArrayList<>();
        for (Who who : Who.values()) {
            if (who.line != null) {
                lines.add(who.line);
            }
        }
        Path tokens = Files.write(dir.resolve("tokens"), lines);
        return TestNode.start(dir.resolve("data"), Map.of(NodeOption.AUTH_TOKEN_FILE, tokens.toString()));
    }

    static HttpResponse<String> send(TestNode node, String method, String target, String body, Who who) {
        HttpRequest.Builder request = HttpRequest.newBuilder(node.uri(target)).timeout(TestNode.REQUEST_TIMEOUT)
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(body));
        if (who.token != null) {
            request.header("Authorization", "Bearer " + who.token);
        }
        return node.http().sendAsync(request.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8)).join();
    }

    @Test
    void eachTokenGets403ExactlyWhereItsRoleFallsShortAndOtherwiseTheAdminsAnswer() throws Exception {
        List<String> wrong = new ArrayList<>();
        try (TestNode node = start()) {
            List<Row> rows = new ArrayList<>(ENDPOINTS);
            rows.addAll(NOT_ENDPOINTS);
            for (Row row : rows) {
                String body = row.method().equals("PUT") ? "v" : null;
                int adminStatus = send(node, row.method(), row.target(), body, Who.ADMIN).statusCode();
                if (adminStatus == 401 || adminStatus == 403) {
                    wrong.add(row + ": the admin got " + adminStatus);
                }
                for (Who who : Who.values()) {
                    int expected = who == Who.NOBODY
                            ? (row.method().equals("GET") && row.path().equals("/v0/status") ? 200 : 401)
                            : row.forbidden().contains(who) ? 403 : adminStatus;
                    int status = send(node, row.method(), row.target(), body, who).statusCode();
                    if (status == 409 && expected == 202 && row.target().equals("/v0/backup")) {
                        continue; // the backup the admin started may still run: one at a time
                    }
                    if (status != expected) {
                        wrong.add(row.method() + " " + row.target() + " by " + who + ": " + status + ", expected " + expected);
                    }
                }
            }
        }
        assertThat(wrong).as("answers that differ from the table").isEmpty();
    }

    @Test
    void theRowsAreEveryEndpointOfTheRoleTableAndForbidWhatItsRolesDoNotAllow() {
        Map<String, Role> table = EndpointRoles.table();
        List<String> rows = new ArrayList<>();
        for (Row row : ENDPOINTS) {
            String request = row.method() + " " + row.path();
            rows.add(request);
            if (request.equals("GET /v0/status")) {
                assertThat(row.forbidden()).as("open to all").isEmpty();
                continue;
            }
            Set<Who> forbidden = EnumSet.noneOf(Who.class);
            for (Role role : Role.values()) {
                if (!role.allows(table.get(request))) {
                    forbidden.add(Who.valueOf(role.name()));
                }
            }
            assertThat(row.forbidden()).as("the tokens refused %s", request).isEqualTo(forbidden);
        }
        List<String> endpoints = new ArrayList<>(table.keySet());
        endpoints.add("GET /v0/status");
        assertThat(rows).as("a row for each endpoint").containsExactlyInAnyOrderElementsOf(endpoints);
    }

    @Test
    void a403HasNoEffect() throws Exception {
        try (TestNode node = start()) {
            assertThat(send(node, "PUT", "/v0/entity?id=k", "from-a-reader", Who.READ).statusCode()).isEqualTo(403);
            assertThat(send(node, "GET", "/v0/entity?id=k", null, Who.READ).statusCode()).as("never written")
                    .isEqualTo(404);

            assertThat(send(node, "PUT", "/v0/entity?id=k", "written", Who.WRITE).statusCode()).isEqualTo(201);
            assertThat(send(node, "DELETE", "/v0/entity?id=k", null, Who.READ).statusCode()).isEqualTo(403);
            assertThat(send(node, "GET", "/v0/entity?id=k", null, Who.READ).body()).as("not deleted").isEqualTo("written");

            for (String change : List.of("/v0/cluster/leave?id=n1", "/v0/cluster/remove?id=n1")) {
                assertThat(send(node, "POST", change, null, Who.WRITE).statusCode()).as(change).isEqualTo(403);
            }
            assertThat(send(node, "GET", "/v0/status", null, Who.NOBODY).statusCode()).as("still a member").isEqualTo(200);
            assertThat(send(node, "GET", "/v0/cluster", null, Who.READ).body()).contains("\"n1\"");
        }
    }
}
