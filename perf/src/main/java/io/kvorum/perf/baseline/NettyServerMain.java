package io.kvorum.perf.baseline;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpServerKeepAliveHandler;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;

/**
 * The least the node's HTTP stack can do per request: Netty's HTTP codec on epoll event loops, one
 * per core and one acceptor (as the node's {@code EventLoops}), with the gateway's socket options,
 * answering every request 200 with a constant body and flushing each answer as the node does. No
 * storage, no hand-off to another thread, no metrics. {@link NettyServer} runs it in a JVM of its
 * own with the nodes' JVM flags; the gap between it and nginx is what the JVM and Netty cost, and
 * the gap between it and a node is what Kvorum's own request path costs.
 *
 * <p>Usage: {@code NettyServerMain PORT BODY_BYTES}; serves 127.0.0.1:PORT until the JVM is stopped.
 */
public final class NettyServerMain {

    private NettyServerMain() {
    }

    public static void main(String[] args) throws InterruptedException {
        if (args.length != 2) {
            System.err.println("usage: NettyServerMain PORT BODY_BYTES");
            System.exit(2);
        }
        int port = Integer.parseInt(args[0]);
        ConstantAnswer answer = new ConstantAnswer(Integer.parseInt(args[1]));
        int loops = Runtime.getRuntime().availableProcessors();
        boolean epoll = Epoll.isAvailable();
        EventLoopGroup acceptor = epoll ? new EpollEventLoopGroup(1) : new NioEventLoopGroup(1);
        EventLoopGroup io = epoll ? new EpollEventLoopGroup(loops) : new NioEventLoopGroup(loops);
        Channel server = new ServerBootstrap()
                .group(acceptor, io)
                .channel(epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class)
                .option(ChannelOption.SO_BACKLOG, 1024)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new HttpServerCodec(), new HttpServerKeepAliveHandler(), answer);
                    }
                })
                .bind("127.0.0.1", port).sync().channel();
        System.out.printf("listening on 127.0.0.1:%d, %d %s event loops%n", port, loops, epoll ? "epoll" : "nio");
        server.closeFuture().sync();
    }

    /**
     * Answers each request, whatever its method and path, with 200 and the body; drops request
     * bodies. A connection that fails (wrk resets its connections when it stops) is closed quietly.
     * The server holds one for its lifetime; {@link #close} frees the body (tests make many).
     */
    @ChannelHandler.Sharable
    static final class ConstantAnswer extends ChannelInboundHandlerAdapter implements AutoCloseable {

        private final ByteBuf body;

        ConstantAnswer(int bodyBytes) {
            this.body = Unpooled.directBuffer(bodyBytes).writeBytes("x".repeat(bodyBytes).getBytes(StandardCharsets.US_ASCII));
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            try {
                if (msg instanceof HttpRequest) {
                    FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK,
                            body.retainedDuplicate());
                    response.headers()
                            .set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_OCTET_STREAM)
                            .setInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
                    ctx.writeAndFlush(response);
                }
            } finally {
                ReferenceCountUtil.release(msg);
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }

        @Override
        public void close() {
            body.release();
        }
    }
}
