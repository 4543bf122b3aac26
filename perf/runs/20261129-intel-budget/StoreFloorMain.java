package io.kvorum.node.storage;

import io.kvorum.node.model.Record;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.*;
import io.netty.channel.epoll.*;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.*;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The store floor (perf/README.md, 2026-11-29): Netty's HTTP codec on epoll, as the Netty floor, and
 * the node's {@link LevelDbStore} opened as a 1-node Kvorum opens it (64 MiB cache, no fsync, no bucket
 * index), written ({@code PUT}: one put per request) or read ({@code GET}) inline on the event loop.
 * Nothing else of the node: no routing, quorum, hand-off, metrics or budgets. A measurement, not
 * product code: {@code StoreFloorMain PORT DIR}.
 */
public final class StoreFloorMain {
    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        LevelDbStore store = LevelDbStore.open(Path.of(args[1]), false, 64L << 20, false);
        AtomicLong clock = new AtomicLong(System.currentTimeMillis() * 1000);
        int loops = Runtime.getRuntime().availableProcessors();
        EventLoopGroup acceptor = new EpollEventLoopGroup(1);
        EventLoopGroup io = new EpollEventLoopGroup(loops);
        Channel server = new ServerBootstrap().group(acceptor, io).channel(EpollServerSocketChannel.class)
                .option(ChannelOption.SO_BACKLOG, 1024).childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new HttpServerCodec(), new HttpServerKeepAliveHandler(),
                                new HttpObjectAggregator(1 << 20), new SimpleChannelInboundHandler<FullHttpRequest>() {
                            @Override
                            protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
                                String uri = req.uri();
                                int at = uri.indexOf("id=");
                                int end = uri.indexOf('&', at);
                                byte[] key = uri.substring(at + 3, end < 0 ? uri.length() : end).getBytes(StandardCharsets.US_ASCII);
                                FullHttpResponse response;
                                if (req.method() == HttpMethod.PUT) {
                                    byte[] value = ByteBufUtil.getBytes(req.content());
                                    store.apply(List.of(new Mutation.Put(key, new Record(clock.incrementAndGet(), "floor", false, 0, value))));
                                    response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.CREATED, Unpooled.EMPTY_BUFFER);
                                    response.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, 0);
                                } else {
                                    Record r = store.get(key);
                                    ByteBuf body = r == null ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(r.value());
                                    response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, r == null ? HttpResponseStatus.NOT_FOUND : HttpResponseStatus.OK, body);
                                    response.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_OCTET_STREAM)
                                            .setInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
                                }
                                ctx.writeAndFlush(response);
                            }
                            @Override
                            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) { ctx.close(); }
                        });
                    }
                }).bind("127.0.0.1", port).sync().channel();
        System.out.println("listening " + port);
        server.closeFuture().sync();
    }
}
