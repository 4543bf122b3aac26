package io.kvorum.client;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import org.junit.jupiter.api.Test;

/** Pairing answers with pipelined requests, without sockets. */
class ExchangeHandlerTest {

    private final HttpHeaders common = new DefaultHttpHeaders().set(HttpHeaderNames.HOST, "n1:8080");
    private final EmbeddedChannel channel = new EmbeddedChannel(new ExchangeHandler("n1:8080", 1 << 20));

    /** An exchange as {@link Endpoint#send} hands it over: with its node's headers. */
    private Exchange exchange(HttpMethod method, String target, byte[] body) {
        Exchange x = new Exchange(method, target, body);
        x.headers(common);
        return x;
    }

    private static FullHttpResponse response(int status, String body) {
        return new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.valueOf(status),
                Unpooled.copiedBuffer(body, UTF_8));
    }

    @Test
    void answersGoToTheRequestsInTheOrderTheyWereWritten() {
        Exchange first = exchange(HttpMethod.PUT, "/v0/entity?id=a", "va".getBytes(UTF_8));
        Exchange second = exchange(HttpMethod.GET, "/v0/entity?id=b", null);
        channel.writeOutbound(first, second);

        FullHttpRequest sentFirst = channel.readOutbound();
        FullHttpRequest sentSecond = channel.readOutbound();
        assertThat(sentFirst.uri()).isEqualTo("/v0/entity?id=a");
        assertThat(sentFirst.headers().get(HttpHeaderNames.HOST)).isEqualTo("n1:8080");
        assertThat(sentFirst.headers().getInt(HttpHeaderNames.CONTENT_LENGTH)).isEqualTo(2);
        assertThat(sentSecond.method()).isEqualTo(HttpMethod.GET);
        sentFirst.release();
        sentSecond.release();

        channel.writeInbound(response(201, ""));
        assertThat(first.result.join().status()).isEqualTo(201);
        assertThat(second.result).as("the second waits for its own answer").isNotDone();
        channel.writeInbound(response(200, "vb"));
        assertThat(second.result.join().body()).asString(UTF_8).isEqualTo("vb");
        assertThat(channel.isOpen()).isTrue();
        assertThat(channel.finishAndReleaseAll()).isFalse();
    }

    @Test
    void aClosedConnectionFailsEveryUnansweredRequest() {
        Exchange first = exchange(HttpMethod.GET, "/v0/entity?id=a", null);
        Exchange second = exchange(HttpMethod.GET, "/v0/entity?id=b", null);
        channel.writeOutbound(first, second);
        FullHttpResponse close = response(200, "va");
        close.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        channel.writeInbound(close);

        assertThat(first.result.join().body()).asString(UTF_8).isEqualTo("va");
        assertThat(channel.isOpen()).as("Connection: close is honoured").isFalse();
        assertThat(second.result).failsWithin(java.time.Duration.ZERO).withThrowableOfType(java.util.concurrent.ExecutionException.class)
                .withCauseInstanceOf(KvorumConnectionException.class);
        channel.finishAndReleaseAll();
    }

    @Test
    void anExchangeThatTimedOutBeforeItsTurnIsNotSent() {
        Exchange late = exchange(HttpMethod.GET, "/v0/entity?id=a", null);
        late.abort(new KvorumTimeoutException("deadline"));
        channel.writeOutbound(late);
        assertThat((Object) channel.readOutbound()).isNull();
        assertThat(late.result).isCompletedExceptionally();
        assertThat(channel.isOpen()).isTrue();
        channel.finishAndReleaseAll();
    }

    @Test
    void anAnswerNobodyAskedForClosesTheConnection() {
        channel.writeInbound(response(200, "stray"));
        assertThat(channel.isOpen()).isFalse();
        channel.finishAndReleaseAll();
    }
}
