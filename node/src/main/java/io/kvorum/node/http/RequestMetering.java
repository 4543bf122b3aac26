package io.kvorum.node.http;

import io.kvorum.node.metrics.NodeMetrics;
import io.netty.handler.codec.http.HttpRequest;
import java.util.function.Function;

/**
 * How the gateway counts the client requests it answers: which operation a request is (null for
 * one that is not counted) and where its status and latency go. {@link #NONE} counts nothing.
 *
 * @param operations the operation of a request, never throwing ({@link RequestRouter#operationOf})
 * @param metrics    where answered operations are counted; null only in {@link #NONE}
 */
record RequestMetering(Function<HttpRequest, NodeMetrics.Op> operations, NodeMetrics metrics) {

    /** Counts nothing (tests of the connection alone). */
    static final RequestMetering NONE = new RequestMetering(request -> null, null);

    static RequestMetering of(NodeMetrics metrics) {
        return new RequestMetering(RequestRouter::operationOf, metrics);
    }

    /** Counts an operation answered with {@code status}, {@code nanos} after it started; nothing for null. */
    void answered(NodeMetrics.Op op, int status, long nanos) {
        if (op != null) {
            metrics.requestAnswered(op, status, nanos);
        }
    }
}
