package io.kvorum.node.http;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A request past which the node reads nothing more on its connection, as RFC 9112 asks: its HTTP
 * version is not 1.x, or the length of its body cannot be told for sure from its headers.
 * Guessing the length would read the rest of the body as the next request, or the next request as
 * the rest of the body; behind a proxy that framed the body the other way, that is request
 * smuggling. Such a request fails to
 * decode with this as its cause (in {@link BodyAdmissionHandler}, or in {@link GatewayHttpCodec}
 * for what Netty's decoder would otherwise settle by itself); the connection handler answers it
 * with {@link #status()} and closes the connection, and nothing after it on the connection is read.
 */
final class UnreadableRequestException extends RuntimeException {

    private static final String CHUNKED = "chunked";

    private final HttpResponseStatus status;

    private UnreadableRequestException(HttpResponseStatus status, String message) {
        super(message, null, false, false);
        this.status = status;
    }

    HttpResponseStatus status() {
        return status;
    }

    /** RFC 9112 §6.1: a request with both may be refused, and its connection must close after the answer. */
    static UnreadableRequestException lengthAndTransferEncoding() {
        return new UnreadableRequestException(HttpResponseStatus.BAD_REQUEST,
                "a request may not have both Content-Length and Transfer-Encoding: its body's length is ambiguous");
    }

    /** Why the node will not read {@code request}'s body, or null if it can: its version and Transfer-Encoding. */
    static UnreadableRequestException of(HttpRequest request) {
        HttpVersion version = request.protocolVersion();
        if (version.majorVersion() != 1) {
            return new UnreadableRequestException(HttpResponseStatus.HTTP_VERSION_NOT_SUPPORTED,
                    version.text() + " is not supported; this node speaks HTTP/1.1 and HTTP/1.0");
        }
        if (!request.headers().contains(HttpHeaderNames.TRANSFER_ENCODING)) {
            return null; // most requests: no list to build
        }
        return ofTransferCodings(codings(request.headers().getAll(HttpHeaderNames.TRANSFER_ENCODING)));
    }

    /**
     * RFC 9112 §6.3: a request whose last transfer coding is not chunked has no knowable length
     * (400, and the connection closes); §6.1: chunked at most once; and a coding the node does not
     * implement before it (gzip, deflate, ...) is 501.
     */
    private static UnreadableRequestException ofTransferCodings(List<String> codings) {
        String named = String.join(", ", codings);
        int last = codings.size() - 1;
        if (!codings.get(last).equals(CHUNKED) || codings.indexOf(CHUNKED) != last) {
            return new UnreadableRequestException(HttpResponseStatus.BAD_REQUEST, "Transfer-Encoding '" + named
                    + "' does not end in a single chunked, so the body's length cannot be known; send the body"
                    + " with Content-Length or Transfer-Encoding: chunked");
        }
        if (last > 0) {
            return new UnreadableRequestException(HttpResponseStatus.NOT_IMPLEMENTED, "Transfer-Encoding '" + named
                    + "' is not supported; of the transfer codings this node reads only chunked");
        }
        return null;
    }

    /**
     * The elements of the fields' comma-separated lists, in order, trimmed and in lower case. An
     * empty element, or one with parameters ({@code chunked;x=1}), stays as it is, so it is not
     * chunked: Netty's decoder would not read such a body as chunked either.
     */
    private static List<String> codings(List<String> fields) {
        List<String> codings = new ArrayList<>();
        for (String field : fields) {
            for (String coding : field.split(",", -1)) {
                codings.add(coding.strip().toLowerCase(Locale.ROOT));
            }
        }
        return codings;
    }
}
