package io.kvorum.node.http;

import io.kvorum.node.security.BearerTokens;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseDecoder;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.nio.channels.ClosedChannelException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * One connection through the gateway's real pipeline ({@link GatewayChannelInitializer}) on an
 * {@link EmbeddedChannel}: raw request bytes in, decoded responses out. Everything runs on the
 * test's thread: the event loop's pending tasks (answers completed by futures) run when
 * {@link #responses} or {@link #isOpen} is called.
 */
final class EmbeddedConnection implements AutoCloseable {

    static final int MAX_VALUE_BYTES = 1024;
    /** What a pull of a range reserves in the budget of answers. */
    static final int RANGE_PULL_BYTES = 2 * MAX_VALUE_BYTES;
    static final String HOST = "Host: 127.0.0.1\r\n";

    final InFlightRequests inFlight = new InFlightRequests();
    final InFlightRequests arriving = new InFlightRequests();
    private final EmbeddedChannel server;
    private final SocketBuffer socket = new SocketBuffer();
    private final EmbeddedChannel client = new EmbeddedChannel(new HttpResponseDecoder(),
            new HttpObjectAggregator(1 << 20));

    /** A response as the client read it; the body as text. */
    record Reply(int status, HttpHeaders headers, String body) {
    }

    EmbeddedConnection(Function<FullHttpRequest, Answer> router) {
        this(router, unbounded(), unbounded(), null, new ConnectionLimit(1000, 0));
    }

    /** A connection to {@code router}, which also refuses requests before their body as the gateway asks it to. */
    EmbeddedConnection(RequestRouter router) {
        this(router::route, router::refusalBeforeBody, unbounded(), unbounded(), null, new ConnectionLimit(1000, 0));
    }

    /**
     * A connection whose bodies count in {@code bodyBudget}, which other connections may share, on
     * a node that asks for {@code tokens} (null: none; requests then reach the router only as the gateway lets them).
     */
    EmbeddedConnection(Function<FullHttpRequest, Answer> router, ByteBudget bodyBudget, BearerTokens tokens) {
        this(router, bodyBudget, unbounded(), tokens, new ConnectionLimit(1000, 0));
    }

    /** A connection that counts in {@code connections}, which other connections may share. */
    EmbeddedConnection(Function<FullHttpRequest, Answer> router, ConnectionLimit connections) {
        this(router, unbounded(), unbounded(), null, connections);
    }

    /** A connection whose unsent answers count in {@code answerBudget}, which other connections may share. */
    static EmbeddedConnection answeringWithin(Function<FullHttpRequest, Answer> router, ByteBudget answerBudget) {
        return new EmbeddedConnection(router, unbounded(), answerBudget, null, new ConnectionLimit(1000, 0));
    }

    private EmbeddedConnection(Function<FullHttpRequest, Answer> router, ByteBudget bodyBudget,
                               ByteBudget answerBudget, BearerTokens tokens, ConnectionLimit connections) {
        this(router, head -> null, bodyBudget, answerBudget, tokens, connections);
    }

    private EmbeddedConnection(Function<FullHttpRequest, Answer> router,
                               Function<HttpRequest, FullHttpResponse> refusalBeforeBody, ByteBudget bodyBudget,
                               ByteBudget answerBudget, BearerTokens tokens, ConnectionLimit connections) {
        server = new EmbeddedChannel(new GatewayChannelInitializer(router,
                refusalBeforeBody, inFlight, arriving,
                RequestMetering.NONE, MAX_VALUE_BYTES, bodyBudget, answerBudget, RANGE_PULL_BYTES, tokens,
                new DefaultChannelGroup(GlobalEventExecutor.INSTANCE), connections, null));
        server.pipeline().addFirst("socket", socket);
    }

    private static ByteBudget unbounded() {
        return new ByteBudget(1L << 30);
    }

    /** Bytes from the client, as they would arrive on the socket. */
    void send(String raw) {
        server.writeInbound(Unpooled.copiedBuffer(raw, StandardCharsets.ISO_8859_1));
    }

    /** The complete responses written since the last call, in the order written. */
    List<Reply> responses() {
        server.runPendingTasks();
        ByteBuf written;
        while ((written = server.readOutbound()) != null) {
            client.writeInbound(written);
        }
        List<Reply> replies = new ArrayList<>();
        FullHttpResponse response;
        while ((response = client.readInbound()) != null) {
            replies.add(new Reply(response.status().code(), response.headers().copy(),
                    response.content().toString(StandardCharsets.UTF_8)));
            response.release();
        }
        return replies;
    }

    /**
     * The bytes written since the last call, as text, for answers that the client's decoder cannot
     * frame without knowing their requests (to a HEAD). Not to be mixed with {@link #responses}.
     */
    String rawOutput() {
        server.runPendingTasks();
        StringBuilder text = new StringBuilder();
        ByteBuf written;
        while ((written = server.readOutbound()) != null) {
            text.append(written.toString(StandardCharsets.ISO_8859_1));
            written.release();
        }
        return text.toString();
    }

    /** The only response written since the last call. */
    Reply response() {
        List<Reply> replies = responses();
        if (replies.size() != 1) {
            throw new AssertionError("expected one response, got " + replies);
        }
        return replies.get(0);
    }

    boolean isOpen() {
        server.runPendingTasks();
        return server.isOpen();
    }

    /** Moves the connection's clock (its scheduled tasks: timeouts) forward and runs what is due. */
    void advanceTimeBy(long amount, TimeUnit unit) {
        server.advanceTimeBy(amount, unit);
        server.runScheduledPendingTasks();
    }

    /**
     * The client stops reading: what the node writes from now on stays unsent, as in a full socket
     * buffer, and its writes do not complete until {@link #resumeReading}.
     */
    void stopReading() {
        socket.full = true;
    }

    /** The client reads again: what was held is sent. */
    void resumeReading() {
        socket.drain();
        server.runPendingTasks();
    }

    /** The client goes away. */
    void disconnect() {
        server.close();
    }

    @Override
    public void close() {
        server.finishAndReleaseAll();
        client.finishAndReleaseAll();
    }

    /** The socket's send buffer, at the head of the pipeline: it can fill up. Closing fails what it holds, as Netty does. */
    private static final class SocketBuffer extends ChannelOutboundHandlerAdapter {
        private final ArrayDeque<Object> messages = new ArrayDeque<>();
        private final ArrayDeque<ChannelPromise> promises = new ArrayDeque<>();
        private ChannelHandlerContext ctx;
        boolean full;

        @Override
        public void handlerAdded(ChannelHandlerContext ctx) {
            this.ctx = ctx;
        }

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            if (full) {
                messages.add(msg);
                promises.add(promise);
            } else {
                ctx.write(msg, promise);
            }
        }

        @Override
        public void flush(ChannelHandlerContext ctx) {
            if (!full) {
                ctx.flush();
            }
        }

        @Override
        public void close(ChannelHandlerContext ctx, ChannelPromise promise) {
            Object msg;
            while ((msg = messages.poll()) != null) {
                ReferenceCountUtil.release(msg);
                promises.poll().tryFailure(new ClosedChannelException());
            }
            ctx.close(promise);
        }

        void drain() {
            full = false;
            while (!messages.isEmpty()) {
                ctx.write(messages.poll(), promises.poll());
            }
            ctx.flush();
        }
    }
}
