package io.kvorum.node.http;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import io.kvorum.node.antientropy.RepairIncompleteException;
import io.kvorum.node.error.RequestException;
import io.kvorum.node.util.Failures;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.charset.StandardCharsets;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Builds responses, and maps the core's failures to HTTP statuses, in one place. */
final class Responses {

    private static final Logger log = LoggerFactory.getLogger(Responses.class);
    static final String RETRY_AFTER_SECONDS = "1";
    /** For a refusal of this node's own that another node would not make: retry there, now. */
    static final String RETRY_ELSEWHERE_AT_ONCE = "0";
    /** Thread-safe. Node ids and messages are written as they are, without HTML escapes. */
    private static final Gson JSON = new GsonBuilder().disableHtmlEscaping().create();

    private Responses() {
    }

    static FullHttpResponse empty(HttpResponseStatus status) {
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, Unpooled.EMPTY_BUFFER);
        r.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, 0);
        return r;
    }

    static FullHttpResponse bytes(HttpResponseStatus status, ByteBuf body, CharSequence contentType) {
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, body);
        r.headers().set(HttpHeaderNames.CONTENT_TYPE, contentType);
        r.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
        return r;
    }

    /** A short plain-text answer; errors carry one line saying what was wrong. */
    static FullHttpResponse text(HttpResponseStatus status, String message) {
        ByteBuf body = Unpooled.copiedBuffer(message + "\n", StandardCharsets.UTF_8);
        return bytes(status, body, HttpHeaderValues.TEXT_PLAIN + "; charset=utf-8");
    }

    /** {@code body} as one line of JSON: records field by field in declaration order, nulls left out. */
    static FullHttpResponse json(HttpResponseStatus status, Object body) {
        return bytes(status, Unpooled.copiedBuffer(JSON.toJson(body) + "\n", StandardCharsets.UTF_8),
                HttpHeaderValues.APPLICATION_JSON);
    }

    static FullHttpResponse methodNotAllowed(String allow) {
        FullHttpResponse r = text(HttpResponseStatus.METHOD_NOT_ALLOWED, "method not allowed; use " + allow);
        r.headers().set(HttpHeaderNames.ALLOW, allow);
        return r;
    }

    static FullHttpResponse overloaded(String why) {
        FullHttpResponse r = text(HttpResponseStatus.SERVICE_UNAVAILABLE, "Overloaded: " + why + "; retry later");
        r.headers().set(HttpHeaderNames.RETRY_AFTER, RETRY_AFTER_SECONDS);
        return r;
    }

    static FullHttpResponse tooLarge(long limit) {
        return text(HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE, "request body is over the limit of " + limit + " bytes");
    }

    /** The answer for a request that failed with {@code error}. */
    static FullHttpResponse forFailure(Throwable error) {
        Throwable t = Failures.unwrap(error);
        if (!(t instanceof RequestException e)) {
            log.error("request failed unexpectedly", t);
            return text(HttpResponseStatus.INTERNAL_SERVER_ERROR, "internal error: " + t);
        }
        return switch (e.code()) {
            case BAD_REQUEST -> text(HttpResponseStatus.BAD_REQUEST, e.getMessage());
            case NOT_ENOUGH_REPLICAS -> text(HttpResponseStatus.GATEWAY_TIMEOUT, "Not Enough Replicas: " + e.getMessage());
            case REPAIR_INCOMPLETE -> text(HttpResponseStatus.GATEWAY_TIMEOUT, "Repair incomplete: " + e.getMessage()
                    + completedRounds(e));
            case OVERLOADED -> overloaded(e.getMessage());
            case CHANGE_IN_PROGRESS -> text(HttpResponseStatus.CONFLICT, e.getMessage());
            case MEMBER_UNREACHABLE -> unavailable(e.getMessage(), RETRY_AFTER_SECONDS);
            // Nothing to wait for: this node will not serve within a second (it is no member, or its
            // clock will not agree with its peers'), and another node does now.
            case NOT_A_MEMBER, CLOCK_OFFSET -> unavailable(e.getMessage(), RETRY_ELSEWHERE_AT_ONCE);
            case NOT_FOUND -> text(HttpResponseStatus.NOT_FOUND, e.getMessage());
        };
    }

    private static FullHttpResponse unavailable(String message, String retryAfterSeconds) {
        FullHttpResponse r = text(HttpResponseStatus.SERVICE_UNAVAILABLE, message);
        r.headers().set(HttpHeaderNames.RETRY_AFTER, retryAfterSeconds);
        return r;
    }

    /** After the peers a repair could not reach (the message), the summary of the rounds that completed. */
    private static String completedRounds(RequestException e) {
        return e instanceof RepairIncompleteException incomplete
                ? "; completed rounds: " + JSON.toJson(RepairSummary.of(incomplete.report()))
                : "";
    }
}
