package io.kvorum.node.transport.grpc;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.turbo.TurboFilter;
import ch.qos.logback.core.spi.FilterReply;
import org.slf4j.Marker;

/**
 * Drops grpc-netty's WARN "Stream Error" for writes to a stream its peer has cancelled: a node
 * answering a range (or any streamed call) for a coordinator whose client went away has messages
 * queued when the cancellation arrives, and Netty fails them with "Stream closed before write
 * could take place". It is the expected end of such a call, not a fault, yet each came with a
 * 37-line stack trace: 100 clients that left mid-range wrote about 3,700 lines into a peer's log.
 * Any other stream error still logs. Installed by {@code logback.xml}.
 */
public final class CancelledStreamLogFilter extends TurboFilter {

    static final String LOGGER = "io.grpc.netty.NettyServerHandler";
    static final String CANCELLED_WRITE = "Stream closed before write could take place";

    @Override
    public FilterReply decide(Marker marker, Logger logger, Level level, String format, Object[] params, Throwable t) {
        if (t == null || !"Stream Error".equals(format) || !LOGGER.equals(logger.getName())) {
            return FilterReply.NEUTRAL;
        }
        String message = t.getMessage();
        return message != null && message.startsWith(CANCELLED_WRITE) ? FilterReply.DENY : FilterReply.NEUTRAL;
    }
}
