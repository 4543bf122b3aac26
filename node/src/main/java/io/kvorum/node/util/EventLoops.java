package io.kvorum.node.util;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.util.concurrent.TimeUnit;

/**
 * The node's network threads: one acceptor and {@code threads} I/O event loops (epoll where the
 * kernel has it), shared by the HTTP gateway, the gRPC server and the gRPC channels to peers, and
 * one loop for the connections that carry this node's heartbeats ({@link #liveness}).
 *
 * <p>Why shared: a replicated request crosses HTTP and gRPC several times. With a group of loops
 * each (HTTP, gRPC server, gRPC client: ten threads on two cores) every crossing woke another
 * thread, and context switches were the largest single item of a 3-node profile. On shared loops
 * a message written to a peer channel on the writing thread's own loop is queued without a wake-up
 * and flushed with the others written in the same pass of the loop. Nothing that runs on these
 * threads may block: gRPC handlers run with a direct executor and only enqueue storage work.
 */
public final class EventLoops implements AutoCloseable {

    private final boolean epoll;
    private final EventLoopGroup acceptor;
    private final EventLoopGroup io;
    private final EventLoopGroup liveness;

    private EventLoops(boolean epoll, EventLoopGroup acceptor, EventLoopGroup io, EventLoopGroup liveness) {
        this.epoll = epoll;
        this.acceptor = acceptor;
        this.io = io;
        this.liveness = liveness;
    }

    /** @param threads I/O event loops; 0 means one per core */
    public static EventLoops create(int threads) {
        int n = threads > 0 ? threads : Runtime.getRuntime().availableProcessors();
        boolean epoll = Epoll.isAvailable();
        return epoll
                ? new EventLoops(true, new EpollEventLoopGroup(1, new NamedThreadFactory("net-accept")),
                        new EpollEventLoopGroup(n, new NamedThreadFactory("net-io")),
                        new EpollEventLoopGroup(1, new NamedThreadFactory("net-liveness")))
                : new EventLoops(false, new NioEventLoopGroup(1, new NamedThreadFactory("net-accept")),
                        new NioEventLoopGroup(n, new NamedThreadFactory("net-io")),
                        new NioEventLoopGroup(1, new NamedThreadFactory("net-liveness")));
    }

    /** Accepts connections of the node's listening sockets. */
    public EventLoopGroup acceptor() {
        return acceptor;
    }

    /** Reads and writes every connection. */
    public EventLoopGroup io() {
        return io;
    }

    /**
     * Runs the connections this node opens for its heartbeats alone: a heartbeat's answer is read
     * here, not behind the data traffic of the shared {@link #io} loops (which serve the HTTP
     * gateway too). Pings are a few small messages a second, so one thread does.
     */
    public EventLoopGroup liveness() {
        return liveness;
    }

    public Class<? extends ServerChannel> serverChannel() {
        return epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
    }

    public Class<? extends SocketChannel> clientChannel() {
        return epoll ? EpollSocketChannel.class : NioSocketChannel.class;
    }

    /** Stops the loops, after whatever used them has closed its channels. */
    @Override
    public void close() throws InterruptedException {
        var livenessStopped = liveness.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        io.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(2, TimeUnit.SECONDS);
        livenessStopped.await(2, TimeUnit.SECONDS);
        acceptor.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(2, TimeUnit.SECONDS);
    }
}
