package io.kvorum.client;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.ssl.SslContext;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A stand-in node on 127.0.0.1 that speaks HTTP/1.1 with keep-alive and pipelining (answers in
 * order, as a node does), records every request and answers as the test's {@link Script} says:
 * with a response, with {@link #SILENCE} (never), or with {@link #HANG_UP} (closes the connection). Scripts make a
 * new response for each request.
 */
final class FakeNode implements AutoCloseable {

    /** What a request gets; {@code n} counts the requests this node has seen, from 0. */
    interface Script {
        FullHttpResponse answer(FullHttpRequest request, int n);
    }

    static final FullHttpResponse SILENCE = answer(599, "silence");
    static final FullHttpResponse HANG_UP = answer(598, "hang up");

    record Seen(String method, String uri, String authorization, byte[] body, long nanos) {
    }

    private final EventLoopGroup group = new NioEventLoopGroup(1, new DefaultThreadFactory("fake-node", true));
    private final Channel server;
    final List<Seen> seen = new CopyOnWriteArrayList<>();
    final AtomicInteger connections = new AtomicInteger();
    /** Connections open now. */
    final AtomicInteger openConnections = new AtomicInteger();
    private final java.util.concurrent.atomic.AtomicBoolean closed = new java.util.concurrent.atomic.AtomicBoolean();

    private final SslContext tls;

    private FakeNode(int port, Script script) throws InterruptedException {
        this(port, script, null);
    }

    /** @param tls with a context, the node serves HTTPS only */
    private FakeNode(int port, Script script, SslContext tls) throws InterruptedException {
        this.tls = tls;
        AtomicInteger counter = new AtomicInteger();
        server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        connections.incrementAndGet();
                        openConnections.incrementAndGet();
                        ch.closeFuture().addListener(f -> openConnections.decrementAndGet());
                        if (tls != null) {
                            ch.pipeline().addLast(tls.newHandler(ch.alloc()));
                        }
                        ch.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(1 << 20),
                                new SimpleChannelInboundHandler<FullHttpRequest>() {
                                    @Override
                                    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest r) {
                                        seen.add(new Seen(r.method().name(), r.uri(), r.headers().get(HttpHeaderNames.AUTHORIZATION),
                                                ByteBufUtil.getBytes(r.content()), System.nanoTime()));
                                        FullHttpResponse answer = script.answer(r, counter.getAndIncrement());
                                        if (answer == HANG_UP) {
                                            ctx.close();
                                        } else if (answer != SILENCE) {
                                            ctx.writeAndFlush(answer); // a fresh answer per request: the write releases it
                                        }
                                    }
                                });
                    }
                })
                .bind(new InetSocketAddress("127.0.0.1", port)).sync().channel();
    }

    static FakeNode start(Script script) throws InterruptedException {
        return new FakeNode(0, script);
    }

    static FakeNode start(int port, Script script) throws InterruptedException {
        return new FakeNode(port, script);
    }

    /** A node that serves HTTPS with {@code tls}; its {@link #uri()} is {@code https://127.0.0.1:port}. */
    static FakeNode startHttps(SslContext tls, Script script) throws InterruptedException {
        return new FakeNode(0, script, tls);
    }

    static FullHttpResponse answer(int status, String body, String... headerNamesAndValues) {
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.valueOf(status),
                Unpooled.copiedBuffer(body, StandardCharsets.UTF_8));
        r.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, r.content().readableBytes());
        for (int i = 0; i < headerNamesAndValues.length; i += 2) {
            r.headers().set(headerNamesAndValues[i], headerNamesAndValues[i + 1]);
        }
        return r;
    }

    int port() {
        return ((InetSocketAddress) server.localAddress()).getPort();
    }

    URI uri() {
        return URI.create((tls != null ? "https" : "http") + "://127.0.0.1:" + port());
    }

    @Override
    public void close() {
        if (closed.getAndSet(true)) {
            return;
        }
        server.close().syncUninterruptibly();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }
}
