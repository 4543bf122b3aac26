package io.kvorum.node.http;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import io.kvorum.node.LogCapture;
import io.kvorum.node.TestNode;
import io.kvorum.node.config.NodeOption;
import io.kvorum.node.security.BearerTokens;
import io.kvorum.node.security.Role;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;

/**
 * docs/operations.md#security's audit log: a line on {@code kvorum.audit} for each administrative
 * request, answered or refused, with the NAME of its token, the request line and the status, and
 * for nothing else; no token and no value in any line any logger writes meanwhile.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class AuditLogTest {

    private static final String ADMIN = "admin-s3cret-token";
    private static final String WRITER = "writer-s3cret-token";
    private static final String READER = "reader-s3cret-token";
    private static final String WRONG = "wrong-s3cret-token";
    private static final String VALUE = "value-s3cret";

    @TempDir
    Path dir;
    private final LogCapture audit = new LogCapture(AuditLog.LOGGER).atInfo(AuditLog.LOGGER);
    private final LogCapture everything = new LogCapture(Logger.ROOT_LOGGER_NAME).at(Level.DEBUG, "io.kvorum");

    @BeforeEach
    void attach() {
        audit.attach();
        everything.attach();
    }

    @AfterEach
    void detach() {
        everything.detach();
        audit.detach();
    }

    /** The messages of the audit log, in order. */
    private List<String> auditLines() {
        String prefix = " " + AuditLog.LOGGER + ": ";
        return audit.lines(Level.INFO).stream().map(l -> l.substring(l.indexOf(prefix) + prefix.length())).toList();
    }

    private static HttpResponse<String> send(TestNode node, String method, String target, String body, String token) {
        HttpRequest.Builder request = HttpRequest.newBuilder(node.uri(target)).timeout(TestNode.REQUEST_TIMEOUT)
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        return node.http().sendAsync(request.build(), HttpResponse.BodyHandlers.ofString()).join();
    }

    /** What the audit line of a request answered {@code status} says, the client's port and the time aside. */
    private static Pattern line(String name, String method, String target, int status) {
        return Pattern.compile("token=" + Pattern.quote(name) + " client=127\\.0\\.0\\.1:\\d+ \""
                + Pattern.quote(method + " " + target + " HTTP/1.1") + "\" " + status + " \\d+ms");
    }

    @Test
    void eachAdministrativeRequestIsLoggedWithItsTokensNameAndStatusAndNoOtherRequestIs() throws Exception {
        Path tokens = Files.writeString(dir.resolve("tokens"), ADMIN + " admin ops\n" + WRITER + " write app\n"
                + READER + " read\n");
        String readerName = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                .digest(READER.getBytes(StandardCharsets.UTF_8)), 0, 4);
        record Sent(String name, String method, String target, String body, String token) {
        }
        List<Sent> administrative = List.of(
                new Sent("ops", "POST", "/v0/repair", null, ADMIN),
                new Sent("ops", "POST", "/v0/cleanup", null, ADMIN),
                new Sent("ops", "POST", "/v0/cluster/leave?id=n9", null, ADMIN),
                new Sent("ops", "POST", "/v0/cluster/remove?id=n9", null, ADMIN),
                new Sent("app", "POST", "/v0/repair", null, WRITER),
                new Sent(readerName, "POST", "/v0/cleanup", "a body, refused unread", READER),
                new Sent("-", "POST", "/v0/repair", null, WRONG),
                new Sent("-", "POST", "/v0/cluster/remove?id=n1", null, null));
        List<Pattern> expected = new ArrayList<>();
        try (TestNode node = TestNode.start(dir.resolve("data"), Map.of(NodeOption.AUTH_TOKEN_FILE, tokens.toString()))) {
            assertThat(send(node, "PUT", "/v0/entity?id=k", VALUE, WRITER).statusCode()).isEqualTo(201);
            assertThat(send(node, "GET", "/v0/entity?id=k", null, READER).body()).isEqualTo(VALUE);
            assertThat(send(node, "GET", "/metrics", null, READER).statusCode()).isEqualTo(200);
            assertThat(send(node, "GET", "/v0/cluster", null, READER).statusCode()).isEqualTo(200);
            assertThat(send(node, "GET", "/v0/repair", null, ADMIN).statusCode()).as("no endpoint").isEqualTo(405);
            assertThat(auditLines()).as("no administrative request yet").isEmpty();

            for (Sent s : administrative) {
                int status = send(node, s.method(), s.target(), s.body(), s.token()).statusCode();
                expected.add(line(s.name(), s.method(), s.target(), status));
            }
        }
        List<String> lines = auditLines();
        assertThat(lines).as("one line each, in order").hasSameSizeAs(expected);
        for (int i = 0; i < lines.size(); i++) {
            assertThat(lines.get(i)).matches(expected.get(i));
        }
        assertThat(lines).extracting(l -> l.replaceAll(".*\" (\\d+) .*", "$1"))
                .containsExactly("200", "200", "400", "400", "403", "403", "401", "401");
        assertThat(everything.lines(Level.DEBUG)).as("every line logged").isNotEmpty()
                .noneMatch(l -> l.contains(ADMIN) || l.contains(WRITER) || l.contains(READER) || l.contains(WRONG)
                        || l.contains(VALUE));
    }

    @Test
    void onANodeWithoutTokensTheLineNamesNobody() throws Exception {
        try (TestNode node = TestNode.start(dir.resolve("data"))) {
            int status = send(node, "POST", "/v0/cleanup", null, null).statusCode();
            assertThat(auditLines()).singleElement().asString().matches(line("-", "POST", "/v0/cleanup", status));
        }
    }

    @Test
    void aRequestWhoseClientLeftIsLoggedOnceItsAnswerIsKnown() throws Exception {
        Path tokens = Files.writeString(dir.resolve("tokens"), ADMIN + " admin ops\n");
        CompletableFuture<FullHttpResponse> repair = new CompletableFuture<>();
        try (EmbeddedConnection connection = new EmbeddedConnection(request -> Answer.later(repair),
                new ByteBudget(1 << 20), BearerTokens.load(tokens))) {
            connection.send("POST /v0/repair HTTP/1.1\r\n" + EmbeddedConnection.HOST + "Authorization: Bearer " + ADMIN
                    + "\r\n\r\n");
            assertThat(connection.responses()).isEmpty();
            connection.disconnect();
            assertThat(auditLines()).as("not answered yet").isEmpty();

            repair.complete(Responses.text(HttpResponseStatus.GATEWAY_TIMEOUT, "a peer did not answer"));
            assertThat(connection.isOpen()).isFalse(); // runs the event loop's tasks
            assertThat(auditLines()).singleElement().asString()
                    .matches("token=ops client=\\S+ \"POST /v0/repair HTTP/1\\.1\" 504 \\d+ms");
        }
    }

    @Test
    void theRequestLineIsEscapedAndCut() {
        String target = "/v0/repair?x=\"\u001b[31m\\\u00e9" + "a".repeat(AuditLog.MAX_TARGET);
        AuditLog.of(Role.ADMIN,
                new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, target), "ops", null, System.nanoTime())
                .answered(400);

        String expected = "/v0/repair?x=\\x22\\x1b[31m\\x5c\\xe9";
        assertThat(auditLines()).singleElement().asString()
                .startsWith("token=ops client=- \"POST " + expected + "a")
                .contains("a".repeat(AuditLog.MAX_TARGET - 21) + "... HTTP/1.1\" 400 ")
                .doesNotContain("\u001b").doesNotContain("a".repeat(AuditLog.MAX_TARGET - 20));
    }
}
