package io.kvorum.perf.baseline;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpServerKeepAliveHandler;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class NettyServerMainTest {

    private NettyServerMain.ConstantAnswer answer;

    /** The handler under test; its body is freed after each test (Netty's leak detector reports it otherwise). */
    private NettyServerMain.ConstantAnswer answer(int bodyBytes) {
        answer = new NettyServerMain.ConstantAnswer(bodyBytes);
        return answer;
    }

    @AfterEach
    void freeTheBody() {
        if (answer != null) {
            answer.close();
        }
    }

    @Test
    void answersEveryRequestOnAConnectionWithTheConstantBody() {
        EmbeddedChannel channel = new EmbeddedChannel(new HttpServerCodec(), new HttpServerKeepAliveHandler(), answer(5));

        channel.writeInbound(ascii("GET /v0/entity?id=key1 HTTP/1.1\r\nHost: a\r\n\r\n"
                + "PUT /v0/entity?id=key2 HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc"));

        String written = drainOutbound(channel);
        assertThat(written.split("HTTP/1.1 200 OK\r\n", -1)).hasSize(3);
        assertThat(written).contains("content-length: 5\r\n").endsWith("\r\n\r\nxxxxx")
                .doesNotContain("connection: close");
        assertThat(channel.isOpen()).isTrue();
        assertThat(channel.finishAndReleaseAll()).isFalse();
    }

    @Test
    void closesTheConnectionWhenTheClientAsksTo() {
        EmbeddedChannel channel = new EmbeddedChannel(new HttpServerCodec(), new HttpServerKeepAliveHandler(), answer(0));

        channel.writeInbound(ascii("GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"));

        assertThat(drainOutbound(channel)).startsWith("HTTP/1.1 200 OK\r\n").contains("content-length: 0\r\n");
        assertThat(channel.isOpen()).isFalse();
    }

    @Test
    void closesAConnectionThatFailed() {
        EmbeddedChannel channel = new EmbeddedChannel(new HttpServerCodec(), new HttpServerKeepAliveHandler(), answer(0));

        channel.pipeline().fireExceptionCaught(new IOException("Connection reset by peer"));

        assertThat(channel.isOpen()).isFalse();
    }

    private static ByteBuf ascii(String text) {
        return Unpooled.copiedBuffer(text, StandardCharsets.US_ASCII);
    }

    private static String drainOutbound(EmbeddedChannel channel) {
        StringBuilder out = new StringBuilder();
        ByteBuf chunk;
        while ((chunk = channel.readOutbound()) != null) {
            out.append(chunk.toString(StandardCharsets.US_ASCII));
            chunk.release();
        }
        return out.toString();
    }
}
