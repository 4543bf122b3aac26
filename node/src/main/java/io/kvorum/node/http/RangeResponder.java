package io.kvorum.node.http;

import io.kvorum.node.model.EntryStream;
import io.kvorum.node.model.Entry;
import io.kvorum.node.util.Failures;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Streams a range answer (docs/http-api.md (ranges)): one chunk per entry, {@code <key>\n<value>}, with
 * backpressure. The next batch is pulled from the {@link EntryStream} only while the channel is
 * writable, so a slow reader holds at most one batch plus Netty's high-water mark in memory.
 *
 * <p>Over all connections, batches count in the gateway's {@link ByteBudget} of answers: a pull
 * first reserves the most a batch may hold, the batch then holds its actual size until its last
 * chunk has been sent. A batch that does not fit waits and tries again every {@value #RETRY_MILLIS}
 * ms; the first one waits up to {@value #FIRST_BATCH_WAIT_MILLIS} ms, then the range is answered 503
 * (nothing was sent). Each pull reserves {@code --max-value-bytes} and more however small its batch
 * turns out, so ranges that start together may not all fit at once: without the wait, 16 clients
 * reading one-entry ranges from a node with a 256 MiB heap got 503s on an idle cluster.
 *
 * <p>Failure before the first chunk is an ordinary error answer; after it, the connection is
 * closed without the terminating zero-length chunk, so the client sees a truncated stream, never a
 * silently short one. When the client goes away, {@link #abort()} closes the stream, which
 * releases what it holds (upstream calls; a storage stream holds an iterator only while it reads a
 * batch). Confined to the channel's event loop.
 */
final class RangeResponder {

    private static final Logger log = LoggerFactory.getLogger(RangeResponder.class);
    private static final long TRUNCATION_LOG_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(10);
    /** When a truncation was last logged, over all ranges: a damaged store could cut every range short. */
    private static final AtomicLong lastTruncationLog = new AtomicLong(System.nanoTime() - TRUNCATION_LOG_INTERVAL_NANOS - 1);

    static final int RETRY_MILLIS = 10;
    /** How long a range waits for room for its first batch before it is refused: a short wait in line. */
    static final int FIRST_BATCH_WAIT_MILLIS = 250;

    private final ChannelHandlerContext ctx;
    private final EntryStream stream;
    private final ConnectionHandler connection;
    private final ByteBudget answers;
    private final long pullBytes;
    private boolean headersSent;
    private int firstBatchTries;
    private boolean waitingForWritability;
    private boolean over;

    /** @param pullBytes the most one batch of {@code stream} may hold: reserved in {@code answers} before each pull */
    RangeResponder(ChannelHandlerContext ctx, EntryStream stream, ConnectionHandler connection, ByteBudget answers,
                   long pullBytes) {
        this.ctx = ctx;
        this.stream = stream;
        this.connection = connection;
        this.answers = answers;
        this.pullBytes = pullBytes;
    }

    void start() {
        pull();
    }

    private void pull() {
        if (!answers.tryReserve(pullBytes)) {
            if (headersSent || ++firstBatchTries * RETRY_MILLIS < FIRST_BATCH_WAIT_MILLIS) {
                ctx.executor().schedule(this::pullWhenWritable, RETRY_MILLIS, TimeUnit.MILLISECONDS);
            } else {
                over = true;
                stream.close();
                connection.respond(ctx, connection.answersOverloaded());
            }
            return;
        }
        stream.next().whenCompleteAsync(this::onBatch, ctx.executor());
    }

    private void pullWhenWritable() {
        if (over) {
            return;
        }
        if (ctx.channel().isWritable()) {
            pull();
        } else {
            waitingForWritability = true;
        }
    }

    /** Holds {@link #pullBytes} of the budget on entry. */
    private void onBatch(List<Entry> batch, Throwable error) {
        if (over || error != null || batch.isEmpty()) {
            answers.release(pullBytes);
        }
        if (over) {
            return; // the client went away while this batch was read
        }
        if (error != null) {
            over = true;
            stream.close();
            if (headersSent) {
                long now = System.nanoTime();
                long last = lastTruncationLog.get();
                if (now - last > TRUNCATION_LOG_INTERVAL_NANOS && lastTruncationLog.compareAndSet(last, now)) {
                    log.warn("a range was cut short after its first chunk, so its client sees it truncated (at most one"
                            + " such line every 10 s): {}", Failures.unwrap(error).getMessage());
                }
                ctx.close(); // truncate: no terminating chunk
            } else {
                connection.respond(ctx, Responses.forFailure(error));
            }
            return;
        }
        if (!headersSent) {
            HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
            head.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_OCTET_STREAM);
            HttpUtil.setTransferEncodingChunked(head, true);
            connection.respondStreaming(ctx, head);
            headersSent = true;
        }
        if (batch.isEmpty()) {
            over = true;
            stream.close();
            ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT).addListener(f -> connection.finished(ctx));
            return;
        }
        long written = 0;
        ChannelFuture lastWrite = null;
        for (Entry e : batch) {
            if (containsNewline(e.key())) {
                continue; // cannot be framed; served by the entity API only (docs/http-api.md (ranges))
            }
            byte[] value = e.record().value();
            ByteBuf chunk = ctx.alloc().buffer(e.key().length + 1 + value.length);
            chunk.writeBytes(e.key()).writeByte('\n').writeBytes(value);
            written += chunk.readableBytes();
            lastWrite = ctx.write(new DefaultHttpContent(chunk));
        }
        answers.resize(pullBytes, written);
        if (lastWrite != null) {
            long held = written;
            lastWrite.addListener(f -> answers.release(held)); // writes complete in order, failed ones too
        }
        ctx.flush();
        if (ctx.channel().isWritable()) {
            pull();
        } else {
            waitingForWritability = true;
        }
    }

    void onWritabilityChanged() {
        if (waitingForWritability && !over && ctx.channel().isWritable()) {
            waitingForWritability = false;
            pull();
        }
    }

    /** Whether its status line has been sent: from then on it can only end whole or truncated. */
    boolean begun() {
        return headersSent;
    }

    /** The connection closed: release everything, read nothing more. */
    void abort() {
        over = true;
        stream.close();
    }

    private static boolean containsNewline(byte[] key) {
        for (byte b : key) {
            if (b == '\n') {
                return true;
            }
        }
        return false;
    }
}
