package io.kvorum.client;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpUtil;
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
 * <p>The range holds one of its node's pooled connections, as other requests use them, from its
 * request until its answer's last entry arrived, when the connection serves other requests again
 * (a connection carrying a half-read stream cannot carry other requests meanwhile); a reader closed
 * before that closes the connection, and the node stops streaming. While the range holds it, the
 * connection reads only while fewer than {@value #LOW_WATER_BYTES} bytes of entries wait here, so a
 * slow reader slows the node down instead of filling memory.
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
    private final Exchange exchange;
    private final Duration readTimeout;
    private final LinkedBlockingQueue<Object> queue = new LinkedBlockingQueue<>(); // Entry, END or IOException
    private final AtomicLong buffered = new AtomicLong();
    private volatile boolean reading;
    private volatile boolean closed;
    private boolean finished;
    private IOException failure;

    private RangeReader(Channel channel, Exchange exchange, Duration readTimeout) {
        this.channel = channel;
        this.exchange = exchange;
        this.readTimeout = readTimeout;
    }

    /**
     * Asks {@code endpoint} for {@code target} on one of its pooled connections, and completes with
     * a reader once a 200 head arrived (exceptionally with the refusal or the connection failure).
     * When the returned future is completed from outside first (a deadline), the request is
     * abandoned and its connection, if it was sent, closed.
     */
    static CompletableFuture<RangeReader> open(Endpoint endpoint, String target, int maxEntryBytes, Duration readTimeout) {
        CompletableFuture<RangeReader> opened = new CompletableFuture<>();
        Answer answer = new Answer(endpoint, maxEntryBytes, readTimeout, opened);
        Exchange x = Exchange.streamed(target, answer);
        answer.exchange = x;
        opened.whenComplete((r, e) -> {
            if (e != null) {
                x.abort(e);
            }
        });
        endpoint.send(x).whenComplete((r, e) -> answer.ended(e == null ? null : Call.unwrap(e)));
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
     * Stops the range: when its answer has not all arrived, closes its connection, and the node
     * stops streaming. A reader that is not read to its end holds its connection until it is closed
     * (or the client is).
     */
    @Override
    public void close() {
        closed = true;
        exchange.abort(new KvorumConnectionException("the range reader was closed")); // nothing once its answer ended
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

    /**
     * Reads a range's answer as its connection hands it over ({@link ExchangeHandler#streams()}),
     * turning chunks into entries. Its methods run on the connection's event loop, but for {@link #ended}.
     */
    private static final class Answer implements Exchange.Stream {

        private final Endpoint endpoint;
        private final int maxEntryBytes;
        private final Duration readTimeout;
        private final CompletableFuture<RangeReader> opened;
        private Exchange exchange;
        private RangeReader reader;
        private HttpResponse refused;
        private ByteArrayOutputStream refusal;
        private boolean done;
        /** The answer's last part arrived. */
        private boolean last;

        Answer(Endpoint endpoint, int maxEntryBytes, Duration readTimeout, CompletableFuture<RangeReader> opened) {
            this.endpoint = endpoint;
            this.maxEntryBytes = maxEntryBytes;
            this.readTimeout = readTimeout;
            this.opened = opened;
        }

        // Synchronized: a reader closed, or a call's deadline, ends the exchange on their own thread.

        @Override
        public synchronized void read(ChannelHandlerContext ctx, HttpObject msg) {
            if (done) {
                return;
            }
            if (msg.decoderResult().isFailure()) {
                Throwable cause = msg.decoderResult().cause();
                stop(new IOException((reader == null ? "not an HTTP/1.1 answer: " : "malformed range stream: ")
                        + cause.getMessage(), cause));
                return;
            }
            if (msg instanceof HttpResponse head) {
                head(ctx, head);
            }
            if (msg instanceof HttpContent content && !done) {
                content(content);
            }
        }

        private void head(ChannelHandlerContext ctx, HttpResponse head) {
            if (head.status().code() != 200) {
                refused = head;
                refusal = new ByteArrayOutputStream();
            } else if (!HttpUtil.isTransferEncodingChunked(head)) {
                stop(new IOException("range answer is not chunked"));
            } else {
                reader = new RangeReader(ctx.channel(), exchange, readTimeout);
                if (!opened.complete(reader)) {
                    done = true; // the call failed first (its deadline): its listener abandons the exchange
                }
            }
        }

        private void content(HttpContent content) {
            ByteBuf bytes = content.content();
            if (reader == null) {
                int n = Math.min(bytes.readableBytes(), MAX_REFUSAL_BYTES - refusal.size());
                refusal.writeBytes(ByteBufUtil.getBytes(bytes, bytes.readerIndex(), n));
                last = content instanceof LastHttpContent; // the call learns of it once the connection is back: see ended
                return;
            }
            if (bytes.isReadable()) {
                if (bytes.readableBytes() > maxEntryBytes) {
                    stop(new ResponseTooLargeException("a range entry from " + endpoint.uri() + " is larger than "
                            + maxEntryBytes + " bytes (maxResponseBytes, plus a key of up to 1024 bytes)", null));
                    return;
                }
                int newline = bytes.indexOf(bytes.readerIndex(), bytes.writerIndex(), (byte) '\n');
                if (newline < 0) {
                    stop(new IOException("range chunk without a key separator"));
                    return;
                }
                byte[] key = ByteBufUtil.getBytes(bytes, bytes.readerIndex(), newline - bytes.readerIndex());
                byte[] value = ByteBufUtil.getBytes(bytes, newline + 1, bytes.writerIndex() - newline - 1);
                reader.buffered.addAndGet(key.length + value.length);
                reader.queue.add(new Entry(key, value));
            }
            if (content instanceof LastHttpContent) {
                last = true; // the reader learns the end once the connection is back in the pool: see ended
            }
        }

        @Override
        public synchronized void readComplete(ChannelHandlerContext ctx) {
            if (reader == null) {
                if (!done) {
                    ctx.read(); // still waiting for the head or the refusal's body
                }
            } else {
                reader.reading = false;
                reader.demand();
            }
        }

        /**
         * The exchange is over and its connection released: {@code cause} is null once the answer
         * was read to its end, else why it failed before (its connection could not be had, was lost,
         * or was closed: by the deadline, the reader, the client, or {@link #stop}).
         */
        synchronized void ended(Throwable cause) {
            if (cause != null) {
                lost(cause);
            } else if (last && !done) {
                done = true;
                if (reader != null) {
                    reader.queue.add(END);
                } else {
                    opened.completeExceptionally(KvorumException.of(refused.status().code(), refusal.toByteArray(),
                            Response.retryAfter(refused)));
                }
            }
        }

        private void lost(Throwable cause) {
            if (done) {
                return;
            }
            done = true;
            if (reader == null) {
                opened.completeExceptionally(cause);
            } else {
                reader.queue.add(cause instanceof KvorumConnectionException ? new TruncatedRangeException() : cause);
            }
        }

        /** The answer cannot be read on: fails the range with {@code cause} and closes the connection. */
        private void stop(IOException cause) {
            lost(cause);
            exchange.abort(cause);
        }
    }
}
