package io.kvorum.node.process;

import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** An HTTP/1.1 client for the process tests, whose failures to get an answer fail the test. */
final class Http {

    private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(2)).build();

    /** Sends with a timeout of 10 s. */
    HttpResponse<String> send(HttpRequest.Builder request) {
        return send(request.timeout(Duration.ofSeconds(10)).build());
    }

    HttpResponse<String> send(HttpRequest request) {
        try {
            return client.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new AssertionError(request.method() + " " + request.uri() + " failed", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    /** The client itself, for a caller that handles failures its own way. */
    HttpClient client() {
        return client;
    }
}
