package io.kvorum.node.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.node.RawHttp;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;

/** Checks shared by the HTTP tests. */
final class HttpAssertions {

    private HttpAssertions() {
    }

    /** docs/http-api.md: an error has the given status and a short, non-empty plain-text body saying what was wrong. */
    static void assertError(HttpResponse<byte[]> response, int status) {
        assertStatus(response, status);
        String what = response.request().method() + " " + abbreviate(response.uri().getRawPath()
                + (response.uri().getRawQuery() != null ? "?" + response.uri().getRawQuery() : ""));
        assertErrorParts(what, response.statusCode(), response.headers().firstValue("content-type").orElse(null),
                response.body());
    }

    static void assertError(String what, RawHttp.Response response, int status) {
        assertThat(response.status()).as("status of %s (body: %s)", what, abbreviate(response.bodyText()))
                .isEqualTo(status);
        assertErrorParts(what, response.status(), response.header("content-type"), response.body());
    }

    private static void assertErrorParts(String what, int actualStatus, String contentType, byte[] body) {
        String text = abbreviate(new String(body, StandardCharsets.UTF_8));
        assertThat(actualStatus).as("status of %s (body: %s)", what, text).isBetween(400, 599);
        assertThat(contentType).as("Content-Type of the %d answer to %s", actualStatus, what).startsWith("text/plain");
        assertThat(text.strip()).as("body of the %d answer to %s", actualStatus, what).isNotEmpty();
    }

    static void assertStatus(HttpResponse<byte[]> response, int status) {
        assertThat(response.statusCode())
                .as("status of %s %s (body: %s)", response.request().method(), abbreviate(response.uri().toString()),
                        abbreviate(new String(response.body(), StandardCharsets.UTF_8)))
                .isEqualTo(status);
    }

    /** Long keys and bodies would drown a failure message. */
    static String abbreviate(String s) {
        return s.length() <= 200 ? s : s.substring(0, 200) + "... (" + s.length() + " chars)";
    }
}
