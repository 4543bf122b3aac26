package io.kvorum.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.kvorum.client.RangeReader.Entry;
import io.kvorum.client.RangeReader.TruncatedRangeException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** docs/http-api.md (ranges)'s range framing, one chunk per entry, read against a scripted stand-in node. */
@Timeout(30)
class RangeReaderTest {

    private static final String CHUNKED_200 = "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
            + "Transfer-Encoding: chunked\r\n\r\n";

    /** One chunk of {@code key\nvalue}, as the node frames an entry. */
    private static String chunk(String key, String value) {
        String entry = key + "\n" + value;
        return Integer.toHexString(entry.getBytes(StandardCharsets.ISO_8859_1).length) + "\r\n" + entry + "\r\n";
    }

    private static Entry entry(String key, String value) {
        return new Entry(key.getBytes(StandardCharsets.UTF_8), value.getBytes(StandardCharsets.UTF_8));
    }

    private final List<KvorumClient> clients = new ArrayList<>();

    @AfterEach
    void closeClients() {
        clients.forEach(KvorumClient::close);
    }

    private RangeReader range(OneShotServer server, String start, String end) throws IOException {
        KvorumClient client = KvorumClient.create(server.base(), Duration.ofSeconds(5));
        clients.add(client);
        return client.range(start, end);
    }

    @Test
    void eachChunkIsOneEntryAndValuesMayHoldNewlines() throws Exception {
        try (OneShotServer server = OneShotServer.answering(CHUNKED_200 + chunk("a", "1") + chunk("b", "two\nlines\n")
                + chunk("c", "") + "0\r\n\r\n");
             RangeReader reader = range(server, "a", "d")) {
            assertThat(reader.next()).isEqualTo(entry("a", "1"));
            assertThat(reader.next()).isEqualTo(entry("b", "two\nlines\n"));
            assertThat(reader.next()).isEqualTo(entry("c", ""));
            assertThat(reader.next()).as("after the terminating chunk").isNull();
            assertThat(reader.next()).as("and it stays finished").isNull();
        }
    }

    @Test
    void aReaderClosedEarlyReadsNoMore() throws Exception {
        try (OneShotServer server = OneShotServer.answering(CHUNKED_200 + chunk("a", "1") + chunk("b", "2") + "0\r\n\r\n");
             RangeReader reader = range(server, "a", null)) {
            assertThat(reader.next()).isEqualTo(entry("a", "1"));
            reader.close();
            assertThatThrownBy(reader::next).isInstanceOf(IllegalStateException.class).hasMessage("the range reader is closed");
        }
    }

    /**
     * KvorumClient.close(): "Open RangeReaders end with TruncatedRangeException", after what they
     * hold: more than the reader buffers before it stops reading, so that taking entries asks the
     * (gone) event loop for more.
     */
    @Test
    void aReaderWhoseClientWasClosedReturnsWhatItHoldsThenIsTruncated() throws Exception {
        String value = "v".repeat(8 * 1024);
        StringBuilder answer = new StringBuilder(CHUNKED_200);
        int entries = (int) (4 * RangeReader.LOW_WATER_BYTES / value.length());
        for (int i = 0; i < entries; i++) {
            answer.append(chunk(String.format("k%04d", i), value));
        }
        try (OneShotServer server = OneShotServer.answering(answer.toString());
             RangeReader reader = range(server, "k", null)) {
            assertThat(reader.next()).isEqualTo(entry("k0000", value));
            clients.get(0).close(); // its event loops are gone when it returns

            List<Entry> rest = new ArrayList<>();
            Throwable end = catchThrowable(() -> {
                for (Entry e = reader.next(); e != null; e = reader.next()) {
                    rest.add(e);
                }
            });
            assertThat(end).as("how the range ended").isInstanceOf(TruncatedRangeException.class);
            for (int i = 0; i < rest.size(); i++) {
                assertThat(rest.get(i)).as("entry %d after the first", i).isEqualTo(entry(String.format("k%04d", i + 1), value));
            }
        }
    }

    @Test
    void theBlockingViewReadsRangesToo() throws Exception {
        try (OneShotServer server = OneShotServer.answering(CHUNKED_200 + chunk("a", "1") + "0\r\n\r\n")) {
            KvorumClient client = KvorumClient.create(server.base(), Duration.ofSeconds(5));
            clients.add(client);
            try (RangeReader reader = client.sync().range("a", null)) {
                assertThat(reader.next()).isEqualTo(entry("a", "1"));
                assertThat(reader.next()).isNull();
            }
        }
    }

    @Test
    void chunkExtensionsAreIgnored() throws Exception {
        String entry = "k\nv";
        try (OneShotServer server = OneShotServer.answering(CHUNKED_200 + "3;name=x\r\n" + entry + "\r\n0\r\n\r\n");
             RangeReader reader = range(server, "k", null)) {
            assertThat(reader.next()).isEqualTo(entry("k", "v"));
            assertThat(reader.next()).isNull();
        }
    }

    @Test
    void theRequestTargetsTheEntitiesResourceWithEncodedBounds() throws Exception {
        try (OneShotServer server = OneShotServer.answering(CHUNKED_200 + "0\r\n\r\n");
             RangeReader reader = range(server, "a b", "z/é")) {
            assertThat(reader.next()).isNull();
            assertThat(server.requestHead()).startsWith("GET /v0/entities?start=a%20b&end=z%2F%C3%A9 HTTP/1.1\r\n")
                    .containsIgnoringCase("\r\nHost: 127.0.0.1:")
                    .as("a pooled connection, kept for other requests once the range ended")
                    .doesNotContainIgnoringCase("Connection: close");
        }
    }

    @Test
    void withoutAnEndTheRequestHasNoEndParameter() throws Exception {
        try (OneShotServer server = OneShotServer.answering(CHUNKED_200 + "0\r\n\r\n");
             RangeReader reader = range(server, "a", null)) {
            assertThat(reader.next()).isNull();
            assertThat(server.requestHead()).startsWith("GET /v0/entities?start=a HTTP/1.1\r\n");
        }
    }

    @Test
    void aStreamThatEndsWithoutItsTerminatingChunkIsTruncated() throws Exception {
        try (OneShotServer server = OneShotServer.answering(CHUNKED_200 + chunk("a", "1"));
             RangeReader reader = range(server, "a", null)) {
            assertThat(reader.next()).isEqualTo(entry("a", "1"));
            assertThatThrownBy(reader::next).isInstanceOf(TruncatedRangeException.class);
        }
    }

    @Test
    void aStreamThatEndsInsideAChunkIsTruncated() throws Exception {
        try (OneShotServer server = OneShotServer.answering(CHUNKED_200 + "10\r\nkey\nshort");
             RangeReader reader = range(server, "a", null)) {
            assertThatThrownBy(reader::next).isInstanceOf(TruncatedRangeException.class);
        }
    }

    @Test
    void theIteratorReportsTruncationUnchecked() throws Exception {
        try (OneShotServer server = OneShotServer.answering(CHUNKED_200 + chunk("a", "1"));
             RangeReader reader = range(server, "a", null)) {
            List<Entry> seen = new ArrayList<>();
            assertThatThrownBy(() -> reader.forEach(seen::add))
                    .isInstanceOf(UncheckedIOException.class).hasCauseInstanceOf(TruncatedRangeException.class);
            assertThat(seen).containsExactly(entry("a", "1"));
        }
    }

    @Test
    void theIteratorEndsAfterTheLastEntry() throws Exception {
        try (OneShotServer server = OneShotServer.answering(CHUNKED_200 + chunk("a", "1") + chunk("b", "2")
                + "0\r\n\r\n");
             RangeReader reader = range(server, "a", null)) {
            List<Entry> seen = new ArrayList<>();
            reader.forEach(seen::add);
            assertThat(seen).containsExactly(entry("a", "1"), entry("b", "2"));
        }
    }

    @Test
    void aRefusalIsAKvorumExceptionWithItsStatusAndBody() throws Exception {
        try (OneShotServer server = OneShotServer.answering("HTTP/1.1 504 Gateway Timeout\r\nContent-Length: 19\r\n\r\n"
                + "Not Enough Replicas")) {
            assertThatThrownBy(() -> range(server, "a", null))
                    .isInstanceOfSatisfying(KvorumException.class, e -> {
                        assertThat(e.status()).isEqualTo(504);
                        assertThat(e.isNotEnoughReplicas()).isTrue();
                        assertThat(e).hasMessage("HTTP 504: Not Enough Replicas");
                    });
        }
    }

    @Test
    void anAnswerThatIsNotChunkedIsRefused() throws Exception {
        try (OneShotServer server = OneShotServer.answering("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\na\nb")) {
            assertThatThrownBy(() -> range(server, "a", null)).isInstanceOf(IOException.class)
                    .hasMessage("range answer is not chunked");
        }
    }

    @Test
    void anAnswerThatIsNotHttpIsRefused() throws Exception {
        try (OneShotServer server = OneShotServer.answering("SSH-2.0-OpenSSH\r\n\r\n")) {
            assertThatThrownBy(() -> range(server, "a", null)).isInstanceOf(IOException.class)
                    .hasMessageStartingWith("not an HTTP/1.1 answer");
        }
    }

    @Test
    void aChunkWithoutAKeySeparatorIsRefused() throws Exception {
        try (OneShotServer server = OneShotServer.answering(CHUNKED_200 + "3\r\nabc\r\n0\r\n\r\n");
             RangeReader reader = range(server, "a", null)) {
            assertThatThrownBy(reader::next).isInstanceOf(IOException.class)
                    .hasMessage("range chunk without a key separator");
        }
    }

    @Test
    void aBadChunkSizeLineIsRefused() throws Exception {
        try (OneShotServer server = OneShotServer.answering(CHUNKED_200 + "zz\r\nabc\r\n");
             RangeReader reader = range(server, "a", null)) {
            assertThatThrownBy(reader::next).isInstanceOf(IOException.class).hasMessageStartingWith("malformed range stream: ");
        }
    }
}
