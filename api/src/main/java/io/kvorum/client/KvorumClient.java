package io.kvorum.client;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * An asynchronous client for one Kvorum node's HTTP API (any node coordinates any request).
 * Thread-safe; share one instance. Built on {@code java.net.http.HttpClient}, so it has no
 * dependencies.
 *
 * <pre>{@code
 * try (KvorumClient kv = KvorumClient.create(URI.create("http://127.0.0.1:8080"))) {
 *     kv.put("user:1", "Ada".getBytes(UTF_8)).join();
 *     Optional<byte[]> v = kv.get("user:1").join();
 *     kv.put("session:9", token, Options.quorum(2, 3).withTtl(Duration.ofMinutes(5))).join();
 * }
 * }</pre>
 *
 * <p>Every call completes exceptionally with a {@link KvorumException} carrying the HTTP status
 * when the node refuses it (400, 413, 503, 504), and with an {@link IOException} when the node
 * cannot be reached.
 */
public final class KvorumClient implements AutoCloseable {

    private final URI base;
    private final HttpClient http;
    private final Duration requestTimeout;

    private KvorumClient(URI base, HttpClient http, Duration requestTimeout) {
        this.base = base;
        this.http = http;
        this.requestTimeout = requestTimeout;
    }

    /** A client of the node at {@code baseUri} (e.g. {@code http://127.0.0.1:8080}). */
    public static KvorumClient create(URI baseUri) {
        return create(baseUri, Duration.ofSeconds(30));
    }

    /** A client whose requests fail with an {@code HttpTimeoutException} after {@code requestTimeout}. */
    public static KvorumClient create(URI baseUri, Duration requestTimeout) {
        HttpClient http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5))
                .build();
        String s = baseUri.toString();
        return new KvorumClient(URI.create(s.endsWith("/") ? s.substring(0, s.length() - 1) : s), http, requestTimeout);
    }

    public URI baseUri() {
        return base;
    }

    /** The value of a key, or empty when it is absent, deleted or expired. */
    public CompletableFuture<java.util.Optional<byte[]>> get(String key) {
        return get(key, Options.DEFAULT);
    }

    public CompletableFuture<java.util.Optional<byte[]>> get(String key, Options options) {
        return get(utf8(key), options);
    }

    /** As {@link #get(String, Options)}, for a key given as its UTF-8 bytes. */
    public CompletableFuture<java.util.Optional<byte[]>> get(byte[] key, Options options) {
        HttpRequest request = request(entityUri(key, options, false)).GET().build();
        return send(request).thenApply(r -> {
            if (r.statusCode() == 200) {
                return java.util.Optional.of(r.body());
            }
            if (r.statusCode() == 404) {
                return java.util.Optional.empty();
            }
            throw KvorumException.of(r.statusCode(), r.body());
        });
    }

    public CompletableFuture<Void> put(String key, byte[] value) {
        return put(key, value, Options.DEFAULT);
    }

    public CompletableFuture<Void> put(String key, byte[] value, Options options) {
        return put(utf8(key), value, options);
    }

    /** Writes a value; completes once {@code ack} replicas stored it. */
    public CompletableFuture<Void> put(byte[] key, byte[] value, Options options) {
        HttpRequest request = request(entityUri(key, options, true))
                .PUT(HttpRequest.BodyPublishers.ofByteArray(value)).build();
        return send(request).thenApply(r -> expect(r, 201));
    }

    public CompletableFuture<Void> delete(String key) {
        return delete(key, Options.DEFAULT);
    }

    public CompletableFuture<Void> delete(String key, Options options) {
        return delete(utf8(key), options);
    }

    /** Deletes a key (writes a tombstone); completes once {@code ack} replicas stored it. */
    public CompletableFuture<Void> delete(byte[] key, Options options) {
        HttpRequest request = request(entityUri(key, options, false)).DELETE().build();
        return send(request).thenApply(r -> expect(r, 202));
    }

    /**
     * The entries with {@code start <= key < end} ({@code end == null}: to the last key), read
     * while the node streams them. Blocking; close the reader to stop early.
     *
     * @throws KvorumException when the node refuses the range (400, 503, 504)
     */
    public RangeReader range(String start, String end) throws IOException {
        StringBuilder uri = new StringBuilder(base + "/v0/entities?start=").append(encode(utf8(start)));
        if (end != null) {
            uri.append("&end=").append(encode(utf8(end)));
        }
        return RangeReader.open(URI.create(uri.toString()), (int) Math.min(Integer.MAX_VALUE, requestTimeout.toMillis()));
    }

    /** Whether the node answers {@code GET /v0/status} with 200. */
    public CompletableFuture<Boolean> isReady() {
        HttpRequest request = request(URI.create(base + "/v0/status")).GET().build();
        return send(request).handle((r, e) -> e == null && r.statusCode() == 200);
    }

    private HttpRequest.Builder request(URI uri) {
        return HttpRequest.newBuilder(uri).timeout(requestTimeout);
    }

    private CompletableFuture<HttpResponse<byte[]>> send(HttpRequest request) {
        return http.sendAsync(request, HttpResponse.BodyHandlers.ofByteArray());
    }

    private URI entityUri(byte[] key, Options options, boolean allowTtl) {
        Objects.requireNonNull(options, "options");
        StringBuilder uri = new StringBuilder(base + "/v0/entity?id=").append(encode(key));
        if (options.from() > 0) {
            uri.append("&from=").append(options.from());
        }
        if (options.ack() > 0) {
            uri.append("&ack=").append(options.ack());
        }
        if (options.ttl() != null) {
            if (!allowTtl) {
                throw new IllegalArgumentException("ttl applies to put only");
            }
            uri.append("&ttl=").append(options.ttl().toMillis());
        }
        return URI.create(uri.toString());
    }

    private static Void expect(HttpResponse<byte[]> r, int status) {
        if (r.statusCode() != status) {
            throw KvorumException.of(r.statusCode(), r.body());
        }
        return null;
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** Percent-encodes every byte that is not unreserved, so any key bytes survive the trip. */
    static String encode(byte[] key) {
        StringBuilder sb = new StringBuilder(key.length * 3);
        for (byte b : key) {
            int c = b & 0xff;
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || c == '-' || c == '_' || c == '.' || c == '~') {
                sb.append((char) c);
            } else {
                sb.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
                        .append(Character.toUpperCase(Character.forDigit(c & 0xf, 16)));
            }
        }
        return sb.toString();
    }

    @Override
    public void close() {
        // java.net.http.HttpClient has no close() before JDK 21; its threads are daemons and its
        // connections time out when idle. Nothing to release on JDK 17.
    }

    /**
     * Per-request replication options. {@code ack}/{@code from} of 0 mean the node's defaults
     * ({@code from} = replication factor, {@code ack} = a majority of {@code from}).
     */
    public record Options(int ack, int from, Duration ttl) {
        public static final Options DEFAULT = new Options(0, 0, null);

        public Options {
            if (ack < 0 || from < 0) {
                throw new IllegalArgumentException("ack and from must be positive, or 0 for the default");
            }
        }

        /** Ask {@code from} replicas, succeed once {@code ack} answered. */
        public static Options quorum(int ack, int from) {
            return new Options(ack, from, null);
        }

        /** The value expires {@code ttl} after the node receives the write. */
        public Options withTtl(Duration ttl) {
            return new Options(ack, from, ttl);
        }

        @Override
        public String toString() {
            return "Options{ack=" + ack + ", from=" + from + (ttl != null ? ", ttl=" + ttl : "") + "}";
        }
    }

    /** Bytes as a readable string for messages. */
    static String preview(byte[] body) {
        String s = new String(body, 0, Math.min(body.length, 200), StandardCharsets.UTF_8).strip();
        return body.length > 200 ? s + "..." : s;
    }
}
