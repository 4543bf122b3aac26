package io.kvorum.client;

import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.buffer.ByteBufUtil;
import java.time.Duration;

/** An aggregated answer, copied out of Netty's buffers. {@code retryAfter} is null unless given in seconds. */
record Response(int status, Duration retryAfter, byte[] body) {

    static Response of(FullHttpResponse r) {
        return new Response(r.status().code(), retryAfter(r), ByteBufUtil.getBytes(r.content()));
    }

    static Duration retryAfter(HttpResponse r) {
        HttpHeaders headers = r.headers();
        String value = headers.get(HttpHeaderNames.RETRY_AFTER);
        if (value == null) {
            return null;
        }
        try {
            long seconds = Long.parseLong(value.trim());
            return seconds >= 0 ? Duration.ofSeconds(seconds) : null;
        } catch (NumberFormatException e) {
            return null; // the HTTP-date form: the client's own backoff applies
        }
    }

    /** The refusal this answer stands for. */
    KvorumException refusal() {
        return KvorumException.of(status, body, retryAfter);
    }
}
