package io.kvorum.node.http;

import static io.kvorum.node.http.EmbeddedConnection.HOST;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.node.http.EmbeddedConnection.Reply;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.kvorum.node.model.Entry;
import io.kvorum.node.model.EntryStream;
import io.kvorum.node.model.Record;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The gateway-wide bound on answers not yet sent ({@link ByteBudget}, {@link ConnectionHandler})
 * through the real pipeline, with clients that stop reading: an answer to a GET holds its body
 * until its client has read it or gone, one that does not fit is a 503 (a GET has no effect), and
 * the answers to writes are sent whatever the budget, since their effect has taken place. A
 * range holds its batches likewise, and is refused only before it has sent anything.
 */
class AnswerBudgetTest {

    private static final int BIG = 1000;
    private static final int SMALL = 100;

    private static final int RANGE_ENTRIES = 3;
    /** A range entry as sent: "kN\n" and its value. */
    private static final int RANGE_CHUNK = 3 + BIG;

    private final ByteBudget budget = new ByteBudget(1500);
    private final EmbeddedConnection first = EmbeddedConnection.answeringWithin(this::route, budget);
    private final EmbeddedConnection second = EmbeddedConnection.answeringWithin(this::route, budget);
    private final List<Batches> streams = new ArrayList<>();

    /** A range of {@code entries} values of BIG bytes, one per batch, each batch ready at once. */
    private final class Batches implements EntryStream {
        private int sent;
        private final int entries;
        boolean closed;

        Batches(int entries) {
            this.entries = entries;
            streams.add(this);
        }

        @Override
        public CompletableFuture<List<Entry>> next() {
            if (sent == entries) {
                return CompletableFuture.completedFuture(List.of());
            }
            sent++;
            byte[] key = ("k" + sent).getBytes(StandardCharsets.UTF_8);
            return CompletableFuture.completedFuture(
                    List.of(new Entry(key, Record.value(sent, "n1", new byte[BIG], Record.NEVER_EXPIRES))));
        }

        @Override
        public void close() {
            closed = true;
        }
    }

    /** GET /big and /small answer that many bytes, GET /range streams {@link #RANGE_ENTRIES} of BIG; a PUT is answered 201. */
    private Answer route(FullHttpRequest request) {
        if (request.uri().equals("/range")) {
            return new Answer.Streamed(new Batches(RANGE_ENTRIES));
        }
        if (!HttpMethod.GET.equals(request.method())) {
            return Answer.later(CompletableFuture.completedFuture(Responses.text(HttpResponseStatus.CREATED, "stored")));
        }
        int bytes = request.uri().equals("/big") ? BIG : SMALL;
        FullHttpResponse value = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK,
                Unpooled.wrappedBuffer(new byte[bytes]));
        value.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, bytes);
        return Answer.later(CompletableFuture.completedFuture(value));
    }

    private static String get(String path) {
        return "GET " + path + " HTTP/1.1\r\n" + HOST + "\r\n";
    }

    @AfterEach
    void close() {
        first.close();
        second.close();
    }

    @Test
    void anAnswerHoldsItsBodyUntilItsClientHasReadIt() {
        first.stopReading();
        first.send(get("/big") + get("/small"));
        assertThat(first.responses()).isEmpty();
        assertThat(budget.held()).as("the unread answer; the pipelined one waits for it").isEqualTo(BIG);

        second.send(get("/big"));
        Reply refused = second.response();
        assertThat(refused.status()).isEqualTo(503);
        assertThat(refused.headers().get(HttpHeaderNames.RETRY_AFTER)).isEqualTo("1");
        assertThat(refused.body()).isEqualTo("Overloaded: the answers not yet read by their clients reached this "
                + "node's limit of 1500 bytes; retry later\n");
        assertThat(second.isOpen()).as("the connection is kept").isTrue();

        second.send(get("/small"));
        assertThat(second.response().body()).hasSize(SMALL);
        assertThat(budget.held()).as("a sent answer gives its bytes back").isEqualTo(BIG);

        first.resumeReading();
        assertThat(first.responses()).extracting(r -> r.body().length()).containsExactly(BIG, SMALL);
        assertThat(budget.held()).isZero();

        second.send(get("/big"));
        assertThat(second.response().body()).hasSize(BIG);
        assertThat(budget.held()).isZero();
    }

    @Test
    void aClientThatGoesAwayGivesBackWhatItsAnswerHeld() {
        first.stopReading();
        first.send(get("/big"));
        first.responses();
        assertThat(budget.held()).isEqualTo(BIG);

        first.disconnect();
        assertThat(first.isOpen()).isFalse();
        assertThat(budget.held()).isZero();
    }

    @Test
    void aRangeHoldsEachBatchUntilItIsSentAndWaitsForRoomForTheNext() {
        ByteBudget rangeBudget = new ByteBudget(EmbeddedConnection.RANGE_PULL_BYTES + RANGE_CHUNK - 1);
        try (EmbeddedConnection reader = EmbeddedConnection.answeringWithin(this::route, rangeBudget);
             EmbeddedConnection another = EmbeddedConnection.answeringWithin(this::route, rangeBudget)) {
            reader.stopReading();
            reader.send(get("/range"));
            assertThat(reader.responses()).isEmpty();
            assertThat(rangeBudget.held()).as("the first batch, unsent; no room to read the next").isEqualTo(RANGE_CHUNK);
            assertThat(streams.get(0).sent).isEqualTo(1);

            another.send(get("/range"));
            assertThat(another.responses()).as("waiting for room for its first batch").isEmpty();
            for (int waited = 0; waited < RangeResponder.FIRST_BATCH_WAIT_MILLIS; waited += RangeResponder.RETRY_MILLIS) {
                another.advanceTimeBy(RangeResponder.RETRY_MILLIS, TimeUnit.MILLISECONDS);
            }
            Reply refused = another.response();
            assertThat(refused.status()).as("nothing of it was sent yet").isEqualTo(503);
            assertThat(refused.body()).startsWith("Overloaded: the answers not yet read by their clients");
            assertThat(streams.get(1).closed).isTrue();
            assertThat(another.isOpen()).isTrue();

            reader.resumeReading();
            assertThat(rangeBudget.held()).isZero();
            reader.advanceTimeBy(RangeResponder.RETRY_MILLIS, TimeUnit.MILLISECONDS);
            Reply range = reader.response();
            assertThat(range.status()).isEqualTo(200);
            assertThat(range.body()).hasSize(RANGE_ENTRIES * RANGE_CHUNK).startsWith("k1\n").contains("k2\n", "k3\n");
            assertThat(rangeBudget.held()).isZero();
        }
    }

    @Test
    void aRangeThatFindsNoRoomForItsFirstBatchWaitsBrieflyForIt() {
        ByteBudget rangeBudget = new ByteBudget(EmbeddedConnection.RANGE_PULL_BYTES + RANGE_CHUNK - 1);
        try (EmbeddedConnection reader = EmbeddedConnection.answeringWithin(this::route, rangeBudget);
             EmbeddedConnection another = EmbeddedConnection.answeringWithin(this::route, rangeBudget)) {
            reader.stopReading();
            reader.send(get("/range"));
            another.send(get("/range"));
            another.advanceTimeBy(RangeResponder.RETRY_MILLIS, TimeUnit.MILLISECONDS);
            assertThat(another.responses()).isEmpty();

            reader.resumeReading(); // its batch is sent: room for the other's, which tries again first
            another.advanceTimeBy(RangeResponder.RETRY_MILLIS, TimeUnit.MILLISECONDS);
            Reply served = another.response();
            assertThat(served.status()).isEqualTo(200);
            assertThat(served.body()).startsWith("k1\n").contains("k2\n", "k3\n");
            reader.advanceTimeBy(RangeResponder.RETRY_MILLIS, TimeUnit.MILLISECONDS);
            assertThat(reader.response().status()).as("and the first goes on").isEqualTo(200);
        }
    }

    @Test
    void aRangeWhoseClientGoesAwayGivesBackWhatItHeld() {
        ByteBudget rangeBudget = new ByteBudget(10 * EmbeddedConnection.RANGE_PULL_BYTES);
        try (EmbeddedConnection reader = EmbeddedConnection.answeringWithin(this::route, rangeBudget)) {
            reader.stopReading();
            reader.send(get("/range"));
            reader.responses();
            assertThat(rangeBudget.held()).as("every batch, unsent").isEqualTo(RANGE_ENTRIES * RANGE_CHUNK);

            reader.disconnect();
            assertThat(reader.isOpen()).isFalse();
            assertThat(streams.get(0).closed).isTrue();
            assertThat(rangeBudget.held()).isZero();
        }
    }

    @Test
    void theAnswersToWritesAreSentWhateverTheBudget() {
        ByteBudget full = new ByteBudget(BIG);
        try (EmbeddedConnection reader = EmbeddedConnection.answeringWithin(this::route, full);
             EmbeddedConnection writer = EmbeddedConnection.answeringWithin(this::route, full)) {
            reader.stopReading();
            reader.send(get("/big"));
            reader.responses();
            assertThat(full.held()).isEqualTo(BIG);

            writer.send("PUT /v0/entity?id=k HTTP/1.1\r\n" + HOST + "Content-Length: 1\r\n\r\nx");
            assertThat(writer.response().status()).as("the write took effect: its answer says so").isEqualTo(201);
            writer.send(get("/small"));
            assertThat(writer.response().status()).isEqualTo(503);
        }
    }
}
