package io.kvorum.client;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;

/**
 * Reads a range answer (docs/http-api.md (ranges)) entry by entry as the node streams it. Each HTTP chunk is one
 * entry, {@code <key>\n<value>}, and values may contain newlines, so the chunk boundaries are the
 * framing: Netty's decoder is set to hand over whole chunks only.
 *
 * <p>The range has a connection of its own, opened on the client's event loops and closed when
 * the range ends or the reader is closed (a connection held by a half-read stream cannot carry
 * other requests). The connection reads only while fewer than {@value #LOW_WATER_BYTES} bytes of
 * entries wait here, so a slow reader slows the node down instead of filling memory.
 *
 * <p>A stream that ends without its terminating zero-length chunk (a node failed mid-range)
 * raises {@link TruncatedRangeException}, so a short answer is never mistaken for a complete one.
 * {@link #next()} waits at most the client's request timeout for each entry. Not thread-safe
 * (one reader thread); close it to stop early, and the node stops reading.
 */
public final class RangeReader implements AutoCloseable, Iterable<RangeReader.Entry> {

    static final long LOW_WATER_BYTES = 256 * 1024;
    private static final int MAX_REFUSAL_BYTES = 64 * 1024;
    private static final Object END = new Object();

    private final Channel channel;
    private final Duration readTimeout;
    private final LinkedBlockingQueue<Object> queue = new LinkedBlockingQueue<>(); // Entry, END or IOException
    private final AtomicLong buffered = new AtomicLong();
    private volatile boolean reading;
    private volatile boolean closed;
    private boolean finished;
    private IOException failure;

    private RangeReader(Channel channel, Duration readTimeout) {
        this.channel = channel;
        this.readTimeout = readTimeout;
    }

    /**
     * Opens a connection to {@code endpoint}, asks for {@code target}, and completes with a reader
     * once a 200 head arrived (exceptionally with the refusal or the connection failure). When the
     * returned future is completed from outside first (a deadline), the connection is closed.
     */
    static CompletableFuture<RangeReader> open(Endpoint endpoint, String target, int maxEntryBytes, Duration readTimeout) {
        HttpHeaders headers;
        try {
            headers = endpoint.headers(false);
        } catch (RuntimeException e) { // the token source gave no token: nothing is sent
            return CompletableFuture.failedFuture(e);
        }
        CompletableFuture<RangeReader> opened = new CompletableFuture<>();
        ChannelFuture connect = endpoint.openStream(new ChannelInitializer<SocketChannel>() {
            @Override
            protected void initChannel(SocketChannel ch) {
                endpoint.secure(ch);
                ch.pipeline().addLast("codec", Endpoint.wholeChunkCodec(maxEntryBytes + 1))
                        .addLast("range", new StreamHandler(endpoint, headers, target, maxEntryBytes, readTimeout, opened));
            }
        });
        connect.addListener(f -> {
            if (!f.isSuccess()) {
                opened.completeExceptionally(Endpoint.connectFailure(endpoint.peer(), f.cause()));
            }
        });
        opened.whenComplete((r, e) -> {
            if (e != null) {
                connect.channel().close();
            }
        });
        return opened;
    }

    /**
     * The next entry, or null after the last one.
     *
     * @throws IllegalStateException after {@link #close()} stopped the range early
     */
    public Entry next() throws IOException {
        if (failure != null) {
            throw failure;
        }
        if (finished) {
            return null;
        }
        if (closed) {
            throw new IllegalStateException("the range reader is closed");
        }
        Object o;
        try {
            o = queue.poll(Call.nanos(readTimeout), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            close();
            throw new InterruptedIOException("interrupted while waiting for a range entry");
        }
        if (o == null) {
            close();
            failure = new KvorumTimeoutException("no range entry within " + readTimeout.toMillis() + " ms");
            throw failure;
        }
        if (o instanceof Entry e) {
            if (buffered.addAndGet(-(e.key.length + e.value.length)) < LOW_WATER_BYTES && !reading) {
                try {
                    channel.eventLoop().execute(this::demand);
                } catch (RejectedExecutionException clientClosed) {
                    // The client's event loops are gone: nothing more will be read. What is queued
                    // before this is still returned; a failure the connection queued comes first.
                    queue.add(new TruncatedRangeException());
                }
            }
            return e;
        }
        if (o == END) {
            finished = true;
            close();
            return null;
        }
        failure = (IOException) o;
        close();
        throw failure;
    }

    /** On the event loop: read more if few entries wait. */
    private void demand() {
        if (!reading && buffered.get() < LOW_WATER_BYTES && channel.isActive()) {
            reading = true;
            channel.read();
        }
    }

    /**
     * Iterates the remaining entries; I/O failures, truncation included, surface as
     * {@link UncheckedIOException}.
     */
    @Override
    public Iterator<Entry> iterator() {
        return new Iterator<>() {
            private Entry next;

            @Override
            public boolean hasNext() {
                if (next == null) {
                    try {
                        next = RangeReader.this.next();
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                }
                return next != null;
            }

            @Override
            public Entry next() {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                Entry e = next;
                next = null;
                return e;
            }
        };
    }

    /** The remaining entries as a sequential stream that closes this reader when it is closed. */
    public Stream<Entry> stream() {
        return StreamSupport.stream(Spliterators.spliteratorUnknownSize(iterator(), Spliterator.ORDERED | Spliterator.NONNULL),
                false).onClose(this::close);
    }

    /**
     * Closes the connection; the node stops streaming. A reader that is not read to its end holds
     * its connection until it is closed (or the client is).
     */
    @Override
    public void close() {
        closed = true;
        channel.close();
    }

    /** One entry of a range. */
    public record Entry(byte[] key, byte[] value) {

        public String keyString() {
            return new String(key, StandardCharsets.UTF_8);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Entry e && Arrays.equals(key, e.key) && Arrays.equals(value, e.value);
        }

        @Override
        public int hashCode() {
            return 31 * Arrays.hashCode(key) + Arrays.hashCode(value);
        }

        @Override
        public String toString() {
            return keyString() + " (" + value.length + " bytes)";
        }
    }

    /** The range stream ended without its terminating chunk: a node failed mid-range. */
    public static final class TruncatedRangeException extends IOException {
        public TruncatedRangeException() {
            super("range stream was truncated: its connection closed before the range ended (a node failed, "
                    + "or the client was closed)");
        }
    }

    /** The range connection's last stage: sends the request, then turns chunks into entries. Event-loop confined. */
    private static final class StreamHandler extends SimpleChannelInboundHandler<HttpObject> {

        private final Endpoint endpoint;
        private final HttpHeaders headers;
        private final String target;
        private final int maxEntryBytes;
        private final Duration readTimeout;
        private final CompletableFuture<RangeReader> opened;
        private RangeReader reader;
        private HttpResponse refused;
        private ByteArrayOutputStream refusal;
        private boolean done;
        private Throwable error;

        StreamHandler(Endpoint endpoint, HttpHeaders headers, String target, int maxEntryBytes, Duration readTimeout,
                      CompletableFuture<RangeReader> opened) {
            this.endpoint = endpoint;
            this.headers = headers;
            this.target = target;
            this.maxEntryBytes = maxEntryBytes;
            this.readTimeout = readTimeout;
            this.opened = opened;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            FullHttpRequest request = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, target);
            request.headers().set(headers).set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
            ctx.writeAndFlush(request).addListener(f -> {
                if (!f.isSuccess()) {
                    stop(ctx, Endpoint.sendFailure(endpoint.peer(), f.cause()));
                }
            });
            ctx.read();
            ctx.fireChannelActive();
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, HttpObject msg) {
            if (done) {
                return;
            }
            if (msg.decoderResult().isFailure()) {
                Throwable cause = msg.decoderResult().cause();
                stop(ctx, new IOException((reader == null ? "not an HTTP/1.1 answer: " : "malformed range stream: ")
                        + cause.getMessage(), cause));
                return;
            }
            if (msg instanceof HttpResponse head) {
                head(ctx, head);
            }
            if (msg instanceof HttpContent content && !done) {
                content(ctx, content);
            }
        }

        private void head(ChannelHandlerContext ctx, HttpResponse head) {
            if (head.status().code() != 200) {
                refused = head;
                refusal = new ByteArrayOutputStream();
            } else if (!HttpUtil.isTransferEncodingChunked(head)) {
                stop(ctx, new IOException("range answer is not chunked"));
            } else {
                reader = new RangeReader(ctx.channel(), readTimeout);
                if (!opened.complete(reader)) {
                    done = true;
                    ctx.close();
                }
            }
        }

        private void content(ChannelHandlerContext ctx, HttpContent content) {
            ByteBuf bytes = content.content();
            if (reader == null) {
                int n = Math.min(bytes.readableBytes(), MAX_REFUSAL_BYTES - refusal.size());
                refusal.writeBytes(ByteBufUtil.getBytes(bytes, bytes.readerIndex(), n));
                if (content instanceof LastHttpContent) {
                    done = true;
                    opened.completeExceptionally(KvorumException.of(refused.status().code(), refusal.toByteArray(),
                            Response.retryAfter(refused)));
                    ctx.close();
                }
                return;
            }
            if (bytes.isReadable()) {
                if (bytes.readableBytes() > maxEntryBytes) {
                    stop(ctx, new ResponseTooLargeException("a range entry from " + endpoint.uri() + " is larger than "
                            + maxEntryBytes + " bytes (maxResponseBytes, plus a key of up to 1024 bytes)", null));
                    return;
                }
                int newline = bytes.indexOf(bytes.readerIndex(), bytes.writerIndex(), (byte) '\n');
                if (newline < 0) {
                    stop(ctx, new IOException("range chunk without a key separator"));
                    return;
                }
                byte[] key = ByteBufUtil.getBytes(bytes, bytes.readerIndex(), newline - bytes.readerIndex());
                byte[] value = ByteBufUtil.getBytes(bytes, newline + 1, bytes.writerIndex() - newline - 1);
                reader.buffered.addAndGet(key.length + value.length);
                reader.queue.add(new Entry(key, value));
            }
            if (content instanceof LastHttpContent) {
                done = true;
                reader.queue.add(END);
            }
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            if (reader == null) {
                if (!done) {
                    ctx.read(); // still waiting for the head or the refusal's body
                }
            } else {
                reader.reading = false;
                reader.demand();
            }
            ctx.fireChannelReadComplete();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (!done) {
                stop(ctx, reader == null
                        ? new KvorumConnectionException("connection to " + endpoint.peer() + " closed before the range answer", error)
                        : new TruncatedRangeException());
            }
            ctx.fireChannelInactive();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            error = cause;
            ctx.close();
        }

        private void stop(ChannelHandlerContext ctx, IOException cause) {
            if (done) {
                return;
            }
            done = true;
            if (reader == null) {
                opened.completeExceptionally(cause);
            } else {
                reader.queue.add(cause);
            }
            ctx.close();
        }
    }
}
