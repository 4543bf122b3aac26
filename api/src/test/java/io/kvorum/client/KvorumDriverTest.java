package io.kvorum.client;

import static io.kvorum.client.FakeNode.answer;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.kvorum.client.KvorumClient.Options;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The driver's transport, failover, retries, deadlines and lifecycle, against {@link FakeNode}s:
 * in-process Netty HTTP/1.1 servers that answer as each test scripts them.
 */
@Timeout(60)
class KvorumDriverTest {

    private final OpenedInTest opened = new OpenedInTest();

    @AfterEach
    void closeAll() throws Exception {
        opened.close();
    }

    private <T extends AutoCloseable> T closing(T resource) {
        return opened.add(resource);
    }

    private FakeNode node(FakeNode.Script script) throws InterruptedException {
        return closing(FakeNode.start(script));
    }

    private KvorumClient client(KvorumClient.Builder builder) {
        return closing(builder.build());
    }

    /** A port nothing listens on (it was free a moment ago). */
    static int closedPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private static Throwable failure(CompletableFuture<?> f) {
        assertThatThrownBy(f::join).isInstanceOf(CompletionException.class);
        return f.handle((v, e) -> e instanceof CompletionException c ? c.getCause() : e).join();
    }

    /** Echoes the key as the value, so that a test can see each answer went to its own request. */
    private static FakeNode.Script echo() {
        return (r, n) -> answer(200, r.uri().substring(r.uri().indexOf("id=") + 3));
    }

    @Test
    void aThousandConcurrentRequestsOverTwoConnectionsEachGetTheirOwnAnswer() throws Exception {
        FakeNode node = node(echo());
        KvorumClient kv = client(KvorumClient.builder().endpoints(node.uri()).connectionsPerEndpoint(2));
        List<CompletableFuture<Optional<byte[]>>> calls = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            calls.add(kv.get("k" + i));
        }
        for (int i = 0; i < 1000; i++) {
            assertThat(new String(calls.get(i).join().orElseThrow(), UTF_8)).isEqualTo("k" + i);
        }
        assertThat(node.seen).hasSize(1000);
        assertThat(node.connections.get()).as("connections opened").isBetween(1, 2);
    }

    @Test
    void aFullPoolFailsFastWithALocalOverload() throws Exception {
        FakeNode node = node((r, n) -> FakeNode.SILENCE);
        KvorumClient kv = client(KvorumClient.builder().endpoints(node.uri()).connectionsPerEndpoint(1)
                .maxPendingPerConnection(2).requestTimeout(Duration.ofSeconds(30)));
        kv.get("a");
        kv.get("b");
        Throwable refused = failure(kv.get("c"));
        assertThat(refused).isInstanceOfSatisfying(OverloadedException.class, e -> {
            assertThat(e.isLocal()).isTrue();
            assertThat(e.isOverloaded()).isTrue();
        });
        await().atMost(Duration.ofSeconds(10)).until(() -> node.seen.size() == 2);
        assertThat(node.seen).extracting(FakeNode.Seen::uri).containsExactly("/v0/entity?id=a", "/v0/entity?id=b");
    }

    @Test
    void refusalsAreTypedByStatus() throws Exception {
        FakeNode node = node((r, n) -> {
            String id = r.uri().substring(r.uri().indexOf("id=") + 3);
            int status = Integer.parseInt(id);
            return status == 503 ? answer(503, "Overloaded", "Retry-After", "2") : answer(status, "because " + id);
        });
        KvorumClient kv = KvorumClient.create(node.uri(), Duration.ofSeconds(10));
        closing(kv);
        assertThat(failure(kv.get("400"))).isInstanceOf(BadRequestException.class).hasMessage("HTTP 400: because 400");
        assertThat(failure(kv.get("405"))).isInstanceOf(BadRequestException.class);
        assertThat(failure(kv.put("413", new byte[1]))).isInstanceOfSatisfying(BadRequestException.class,
                e -> assertThat(e.status()).isEqualTo(413));
        assertThat(failure(kv.get("401"))).isInstanceOf(UnauthorizedException.class);
        assertThat(failure(kv.put("403", new byte[1]))).isInstanceOf(ForbiddenException.class)
                .hasMessage("HTTP 403: because 403");
        assertThat(failure(kv.delete("504"))).isInstanceOfSatisfying(NotEnoughReplicasException.class,
                e -> assertThat(e.isNotEnoughReplicas()).isTrue());
        assertThat(failure(kv.get("503"))).isInstanceOfSatisfying(OverloadedException.class, e -> {
            assertThat(e.retryAfter()).hasValue(Duration.ofSeconds(2));
            assertThat(e.isLocal()).isFalse();
        });
        assertThat(failure(kv.get("500"))).isExactlyInstanceOf(KvorumException.class)
                .satisfies(e -> assertThat(((KvorumException) e).status()).isEqualTo(500));
        assertThat(node.seen).as("create() clients send each call once").hasSize(8);
        assertThat(kv.get("504").handle((v, e) -> e).join()).as("stages see the failure wrapped, as from any dependent stage")
                .isInstanceOf(CompletionException.class).hasCauseInstanceOf(NotEnoughReplicasException.class);
    }

    @Test
    void theBearerTokenIsSentWithEveryRequestAndShownNowhere() throws Exception {
        FakeNode node = node((r, n) -> answer(r.method().name().equals("PUT") ? 201 : 200, "v"));
        KvorumClient.Builder builder = KvorumClient.builder().endpoints(node.uri()).bearerToken("s3cr3t-t0ken");
        KvorumClient kv = client(builder);
        kv.put("k", new byte[] {1}).join();
        kv.get("k").join();
        assertThat(node.seen).extracting(FakeNode.Seen::authorization).containsOnly("Bearer s3cr3t-t0ken");
        assertThat(kv.settings().toString()).doesNotContain("s3cr3t");
        assertThatThrownBy(() -> KvorumClient.builder().bearerToken("two words"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageNotContaining("two words");
    }

    @Test
    void aTokenSourceIsAskedAsEachRequestIsSentAndStatusProbesNeedNone() throws Exception {
        FakeNode node = node((r, n) -> answer(r.method().name().equals("PUT") ? 201 : 200, "v"));
        AtomicReference<String> current = new AtomicReference<>("first-t0ken");
        KvorumClient kv = client(KvorumClient.builder().endpoints(node.uri()).bearerToken(current::get));
        kv.put("k", new byte[] {1}).join();
        current.set("second-t0ken");
        kv.get("k").join();
        assertThat(node.seen).extracting(FakeNode.Seen::authorization)
                .containsExactly("Bearer first-t0ken", "Bearer second-t0ken");

        current.set("s3cret with a space");
        assertThat(failure(kv.get("k"))).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("bearer token source").hasMessageNotContaining("s3cret");
        current.set(null);
        assertThat(failure(kv.delete("k"))).isInstanceOf(IllegalStateException.class);
        assertThat(node.seen).as("a call without a valid token is not sent").hasSize(2);

        assertThat(kv.isReady().join()).as("GET /v0/status needs no token (docs/operations.md#security)").isTrue();
        assertThat(node.seen.get(2).uri()).isEqualTo("/v0/status");
        assertThat(node.seen.get(2).authorization()).isNull();
    }

    @Test
    void aTokenFileIsReadAgainAsItChangesAndABadRewriteKeepsTheTokenBefore(@TempDir Path dir) throws Exception {
        FakeNode node = node((r, n) -> answer(200, "v"));
        Path file = dir.resolve("token");
        Files.writeString(file, "\n  old-t0ken  \n\n");
        KvorumClient kv = client(KvorumClient.builder().endpoints(node.uri())
                .bearerToken(BearerTokens.fromFile(file, 0))); // read again for every request
        kv.get("k").join();
        replace(file, "new-t0ken\n");
        kv.get("k").join();
        for (String unusable : List.of("", "two tokens\n", "one\nanother\n")) {
            replace(file, unusable);
            kv.get("k").join();
        }
        Files.delete(file);
        kv.get("k").join();
        assertThat(node.seen).extracting(FakeNode.Seen::authorization).containsExactly("Bearer old-t0ken",
                "Bearer new-t0ken", "Bearer new-t0ken", "Bearer new-t0ken", "Bearer new-t0ken", "Bearer new-t0ken");
    }

    @Test
    void aTokenFileThatHoldsNoSingleTokenIsRefusedWithoutQuotingIt(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("token");
        assertThatThrownBy(() -> KvorumClient.builder().bearerTokenFile(file))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(file.toString());
        for (String bad : List.of("", "\n\n", "s3cret with-space", "s3cret\nother-s3cret", "x".repeat(70_000))) {
            Files.writeString(file, bad);
            assertThatThrownBy(() -> KvorumClient.builder().bearerTokenFile(file)).as("%.20s", bad)
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("exactly one token")
                    .hasMessageNotContaining("s3cret");
        }
        Files.writeString(file, "s3cret-t0ken\r\n");
        FakeNode node = node((r, n) -> answer(200, "v"));
        KvorumClient kv = client(KvorumClient.builder().endpoints(node.uri()).bearerTokenFile(file));
        kv.get("k").join();
        assertThat(node.seen).extracting(FakeNode.Seen::authorization).containsExactly("Bearer s3cret-t0ken");
        assertThat(kv.settings().toString()).doesNotContain("s3cret");
    }

    /** Replaces {@code file} as the builder's documentation asks: another file renamed over it. */
    private static void replace(Path file, String content) throws IOException {
        Path next = file.resolveSibling(file.getFileName() + ".next");
        Files.writeString(next, content);
        Files.move(next, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    @Test
    void aDownEndpointIsSkippedAndProbedUntilItReturns() throws Exception {
        int downPort = closedPort();
        FakeNode up = node(echo());
        URI down = URI.create("http://127.0.0.1:" + downPort);
        KvorumClient kv = client(KvorumClient.builder().endpoints(down, up.uri())
                .probeInterval(Duration.ofMillis(100)).retryPolicy(new RetryPolicy(2, Duration.ofMillis(1), Duration.ofMillis(5))));
        for (int i = 0; i < 20; i++) {
            assertThat(kv.get("k" + i).join()).as("call %d", i).isPresent();
        }
        assertThat(up.seen).hasSize(20);
        assertThat(kv.routing().endpoints().get(0).healthy()).as("the refusing endpoint is marked down").isFalse();

        FakeNode back = closing(FakeNode.start(downPort, echo()));
        await().atMost(Duration.ofSeconds(10)).until(() -> kv.routing().endpoints().get(0).healthy());
        assertThat(back.seen).extracting(FakeNode.Seen::uri).contains("/v0/status");
        for (int i = 0; i < 20; i++) {
            kv.get("again" + i).join();
        }
        assertThat(back.seen).as("round robin uses it again").anyMatch(s -> s.uri().contains("again"));
    }

    @Test
    void aNodeThatSendsClientsElsewhereIsSkippedUntilItsStatusSaysItServesAgain() throws Exception {
        AtomicBoolean member = new AtomicBoolean(false);
        FakeNode left = node((r, n) -> member.get() ? echo().answer(r, n)
                : answer(503, "this node is not a member of the cluster", "Retry-After", "0"));
        FakeNode serving = node(echo());
        // A retry after the policy's backoff would miss each call's deadline: only one at once succeeds.
        KvorumClient kv = client(KvorumClient.builder().endpoints(left.uri(), serving.uri())
                .probeInterval(Duration.ofMillis(100)).retryPolicy(new RetryPolicy(2, Duration.ofSeconds(5), Duration.ofSeconds(5))));
        for (int i = 0; i < 20; i++) {
            assertThat(kv.get("k" + i, Options.DEFAULT.withTimeout(Duration.ofSeconds(2))).join()).as("call %d", i).isPresent();
        }
        assertThat(left.seen).filteredOn(s -> s.uri().startsWith("/v0/entity")).as("calls the left node was sent").hasSize(1);
        assertThat(kv.routing().endpoints().get(0).healthy()).isFalse();
        await().atMost(Duration.ofSeconds(10)).until(() -> left.seen.stream().anyMatch(s -> s.uri().equals("/v0/status")));
        assertThat(kv.routing().endpoints().get(0).healthy()).as("its status answers 503 too").isFalse();

        member.set(true);
        await().atMost(Duration.ofSeconds(10)).until(() -> kv.routing().endpoints().get(0).healthy());
        for (int i = 0; i < 20; i++) {
            kv.get("again" + i).join();
        }
        assertThat(left.seen).as("round robin uses it again").anyMatch(s -> s.uri().contains("again"));
    }

    @Test
    void withEveryEndpointDownACallFailsWithAConnectExceptionThatNamesEveryOneTried() throws Exception {
        int first = closedPort();
        int second = closedPort();
        KvorumClient kv = client(KvorumClient.builder().endpoints(URI.create("http://127.0.0.1:" + first),
                        URI.create("http://127.0.0.1:" + second))
                .retryPolicy(new RetryPolicy(2, Duration.ofMillis(1), Duration.ofMillis(5))));
        Throwable failure = failure(kv.get("k"));
        assertThat(failure).isInstanceOf(ConnectException.class);
        assertThat(failure.getSuppressed()).as("the other endpoint's failure").hasSize(1);
        assertThat(failure.getMessage() + failure.getSuppressed()[0].getMessage())
                .contains(":" + first).contains(":" + second);
        assertThat(kv.isReady().join()).isFalse();
    }

    @Test
    void aNodeThatHangsIsSkippedOnceACallTimedOutOnItAndItsStatusDidToo() throws Exception {
        FakeNode hung = node((r, n) -> FakeNode.SILENCE); // accepts connections, never answers: stopped, paused
        FakeNode serving = node(echo());
        KvorumClient kv = client(KvorumClient.builder().endpoints(hung.uri(), serving.uri())
                .requestTimeout(Duration.ofMillis(300)).probeInterval(Duration.ofSeconds(30)));
        int failed = 0;
        for (int i = 0; i < 20; i++) {
            failed += kv.get("k" + i).handle((v, e) -> e == null ? 0 : 1).join();
        }
        assertThat(failed).as("the call that found it hanging; not every other call").isEqualTo(1);
        assertThat(kv.routing().endpoints().get(0).healthy()).isFalse();
        assertThat(hung.seen).extracting(FakeNode.Seen::uri).contains("/v0/status");
    }

    @Test
    void aNodeThatWasOnlySlowForOneCallStaysUp() throws Exception {
        FakeNode slow = node((r, n) -> r.uri().startsWith("/v0/status") ? answer(200, "{}") : FakeNode.SILENCE);
        KvorumClient kv = client(KvorumClient.builder().endpoints(slow.uri()).requestTimeout(Duration.ofMillis(300))
                .probeInterval(Duration.ofSeconds(30))); // marked down, it would stay down for the test
        assertThat(failure(kv.get("k"))).isInstanceOf(KvorumTimeoutException.class)
                .hasMessageContaining("waiting for 127.0.0.1:" + slow.port());
        await().atMost(Duration.ofSeconds(10)).until(() -> slow.seen.stream().anyMatch(s -> s.uri().equals("/v0/status"))
                && kv.routing().endpoints().get(0).healthy());
        // A probe that got no answer would mark it down 300 ms after it was sent: it stays up throughout.
        await().during(Duration.ofMillis(800)).atMost(Duration.ofSeconds(5))
                .until(() -> kv.routing().endpoints().get(0).healthy());
    }

    @Test
    void aRequestWhoseDeadlinePassedClosesItsConnectionSoThoseBehindItAreRetried() throws Exception {
        // Both requests of the first connection go unanswered, as behind a request a node never answers.
        // The status probe that follows the overdue call is answered, so that it holds up no retry
        // pipelined behind it on the new connection.
        AtomicBoolean secondSeen = new AtomicBoolean();
        FakeNode node = node((r, n) -> r.uri().equals("/v0/status") ? answer(200, "{}")
                : r.uri().endsWith("id=first") || r.uri().endsWith("id=second") && !secondSeen.getAndSet(true)
                ? FakeNode.SILENCE : echo().answer(r, n));
        KvorumClient kv = client(KvorumClient.builder().endpoints(node.uri()).connectionsPerEndpoint(1)
                .requestTimeout(Duration.ofSeconds(20)).retryPolicy(new RetryPolicy(2, Duration.ofMillis(1), Duration.ofMillis(5))));
        kv.get("warm").join(); // the connection is open: the overdue call's 200 ms are not spent opening it
        CompletableFuture<Optional<byte[]>> overdue = kv.get("first", Options.DEFAULT.withTimeout(Duration.ofMillis(200)));
        await().atMost(Duration.ofSeconds(10)).until(() -> node.seen.size() == 2);
        CompletableFuture<Optional<byte[]>> behind = kv.get("second");

        assertThat(failure(overdue)).isInstanceOf(KvorumTimeoutException.class);
        assertThat(behind.get(10, TimeUnit.SECONDS)).as("retried on a new connection, long before its own deadline")
                .hasValue("second".getBytes(UTF_8));
        assertThat(node.connections).hasValue(2);
    }

    @Test
    void anAnswerOverMaxResponseBytesFailsOnceAndSaysSo() throws Exception {
        FakeNode node = node((r, n) -> r.uri().contains("big") ? answer(200, "x".repeat(2000)) : echo().answer(r, n));
        KvorumClient kv = client(KvorumClient.builder().endpoints(node.uri()).maxResponseBytes(1000)
                .retryPolicy(new RetryPolicy(3, Duration.ofMillis(1), Duration.ofMillis(5))));

        assertThat(failure(kv.get("big"))).isInstanceOf(ResponseTooLargeException.class)
                .hasMessageContaining("maxResponseBytes (1000 bytes)");
        assertThat(node.seen).as("not fetched again: it would be as large").hasSize(1);
        assertThat(kv.sync().get("small")).hasValue("small".getBytes(UTF_8));
    }

    @Test
    void aRangeHasItsOwnTimeoutWhenGivenOne() throws Exception {
        FakeNode node = node((r, n) -> FakeNode.SILENCE);
        KvorumClient kv = client(KvorumClient.builder().endpoints(node.uri()).requestTimeout(Duration.ofSeconds(30)));
        long started = System.nanoTime();
        assertThatThrownBy(() -> kv.sync().range("a", null, Duration.ofMillis(200))).isInstanceOf(KvorumTimeoutException.class);
        assertThat(Duration.ofNanos(System.nanoTime() - started)).as("not the 30 s request timeout").isLessThan(Duration.ofSeconds(10));
        assertThatThrownBy(() -> kv.range("a", null, Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aTimeoutTooLongForNanosecondsMeansNoTimeout() throws Exception {
        FakeNode node = node(echo());
        KvorumClient kv = client(KvorumClient.builder().endpoints(node.uri()).requestTimeout(Duration.ofSeconds(Long.MAX_VALUE)));
        assertThat(kv.get("a").get(10, TimeUnit.SECONDS)).hasValue("a".getBytes(UTF_8));
        assertThat(kv.get("b", Options.DEFAULT.withTimeout(Duration.ofMillis(Long.MAX_VALUE))).get(10, TimeUnit.SECONDS))
                .hasValue("b".getBytes(UTF_8));
    }

    @Test
    void a503IsRetriedAfterItsRetryAfterCappedByThePolicyThenSucceeds() throws Exception {
        FakeNode node = node((r, n) -> n == 0 ? answer(503, "Overloaded", "Retry-After", "5") : answer(200, "v"));
        KvorumClient kv = client(KvorumClient.builder().endpoints(node.uri())
                .retryPolicy(new RetryPolicy(3, Duration.ofMillis(1), Duration.ofMillis(300))));
        assertThat(kv.sync().get("k")).hasValue("v".getBytes(UTF_8));
        assertThat(node.seen).hasSize(2);
        long gapMillis = (node.seen.get(1).nanos() - node.seen.get(0).nanos()) / 1_000_000;
        assertThat(gapMillis).as("waited the Retry-After, capped at maxBackoff").isBetween(290L, 4000L);
    }

    @Test
    void a503IsGivenUpAfterMaxAttempts() throws Exception {
        FakeNode node = node((r, n) -> answer(503, "Overloaded", "Retry-After", "0"));
        KvorumClient kv = client(KvorumClient.builder().endpoints(node.uri())
                .retryPolicy(new RetryPolicy(3, Duration.ofMillis(1), Duration.ofMillis(10))));
        assertThat(failure(kv.put("k", new byte[1]))).isInstanceOf(OverloadedException.class);
        assertThat(node.seen).hasSize(3);
    }

    @Test
    void noRetryIsScheduledPastTheDeadline() throws Exception {
        FakeNode node = node((r, n) -> answer(503, "Overloaded", "Retry-After", "1"));
        KvorumClient kv = client(KvorumClient.builder().endpoints(node.uri())
                .retryPolicy(new RetryPolicy(5, Duration.ofMillis(1), Duration.ofSeconds(1))));
        assertThat(failure(kv.get("k", Options.DEFAULT.withTimeout(Duration.ofMillis(500)))))
                .as("the 503 itself, not a timeout: no retry could finish in time").isInstanceOf(OverloadedException.class);
        assertThat(node.seen).hasSize(1);
    }

    @Test
    void aLostConnectionIsRetriedOnlyWhenThePolicyAllows() throws Exception {
        FakeNode node = node((r, n) -> n == 0 ? FakeNode.HANG_UP : answer(202, ""));
        KvorumClient once = client(KvorumClient.builder().endpoints(node.uri()).retryPolicy(RetryPolicy.NONE));
        assertThat(failure(once.delete("k"))).isInstanceOf(KvorumConnectionException.class);

        FakeNode other = node((r, n) -> n == 0 ? FakeNode.HANG_UP : answer(202, ""));
        KvorumClient retrying = client(KvorumClient.builder().endpoints(other.uri())
                .retryPolicy(new RetryPolicy(2, Duration.ofMillis(1), Duration.ofMillis(5))));
        retrying.sync().delete("k");
        assertThat(other.seen).hasSize(2);
    }

    @Test
    void aPerCallTimeoutFiresOnANodeThatNeverAnswers() throws Exception {
        FakeNode node = node((r, n) -> FakeNode.SILENCE);
        KvorumClient kv = client(KvorumClient.builder().endpoints(node.uri()).requestTimeout(Duration.ofSeconds(30)));
        long started = System.nanoTime();
        assertThat(failure(kv.get("k", Options.DEFAULT.withTimeout(Duration.ofMillis(200)))))
                .isInstanceOf(KvorumTimeoutException.class).isInstanceOf(java.net.http.HttpTimeoutException.class);
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(10));

        KvorumClient shortDefault = client(KvorumClient.builder().endpoints(node.uri()).requestTimeout(Duration.ofMillis(200)));
        assertThatThrownBy(() -> shortDefault.sync().put("k", new byte[1])).isInstanceOf(KvorumTimeoutException.class);
    }

    /**
     * A node that answers each request only once the test {@linkplain Semaphore#release released}
     * an answer: a stage attached to a future that is already complete runs on the attaching
     * thread, whatever the client does, so tests about where stages run attach them first.
     */
    private FakeNode heldNode(Semaphore answers, FakeNode.Script script) throws InterruptedException {
        return node((r, n) -> {
            try {
                if (!answers.tryAcquire(10, TimeUnit.SECONDS)) {
                    throw new AssertionError("the test released no answer for " + r.uri());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return script.answer(r, n);
        });
    }

    @Test
    void futuresCompleteOnTheEventLoopOrOnTheCallbackExecutorNeverOnTheCommonPool() throws Exception {
        Semaphore answers = new Semaphore(0);
        FakeNode node = heldNode(answers, (r, n) -> r.uri().contains("id=gone") ? FakeNode.HANG_UP : answer(200, "v"));
        AtomicReference<String> thread = new AtomicReference<>();
        KvorumClient plain = client(KvorumClient.builder().endpoints(node.uri()));
        CompletableFuture<Void> stage = plain.get("k").thenRun(() -> thread.set(Thread.currentThread().getName()));
        answers.release();
        stage.join();
        assertThat(thread.get()).startsWith("kvorum-client");

        ExecutorService callbacks = Executors.newSingleThreadExecutor(r -> new Thread(r, "user-callbacks"));
        closing(callbacks::shutdownNow);
        KvorumClient withExecutor = client(KvorumClient.builder().endpoints(node.uri()).callbackExecutor(callbacks)
                .retryPolicy(RetryPolicy.NONE));
        stage = withExecutor.get("k").thenRun(() -> thread.set(Thread.currentThread().getName()));
        answers.release();
        stage.join();
        assertThat(thread.get()).isEqualTo("user-callbacks");

        CompletableFuture<Throwable> failed = withExecutor.get("gone")
                .whenComplete((v, e) -> thread.set(Thread.currentThread().getName())).handle((v, e) -> e);
        answers.release();
        assertThat(failed.join()).isInstanceOf(CompletionException.class).hasCauseInstanceOf(IOException.class);
        assertThat(thread.get()).as("failures too").isEqualTo("user-callbacks");
    }

    @Test
    void aBlockingCallFromACallbackIsRefused() throws Exception {
        Semaphore answers = new Semaphore(0);
        FakeNode node = heldNode(answers, (r, n) -> answer(200, "v"));
        KvorumClient kv = client(KvorumClient.builder().endpoints(node.uri()));
        CompletableFuture<Optional<byte[]>> nested = kv.get("k").thenApply(v -> {
            try {
                return kv.sync().get("k");
            } catch (IOException e) {
                throw new AssertionError(e);
            }
        });
        answers.release();
        assertThat(failure(nested)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void theSelectorSeesTheKeyAndOnlyCandidates() throws Exception {
        FakeNode a = node((r, n) -> answer(200, "a"));
        FakeNode b = node((r, n) -> answer(200, "b"));
        List<String> keys = new java.util.concurrent.CopyOnWriteArrayList<>();
        KvorumClient kv = client(KvorumClient.builder().endpoints(a.uri(), b.uri()).endpointSelector((key, candidates) -> {
            keys.add(key == null ? "<none>" : new String(key, UTF_8));
            return candidates.get(candidates.size() - 1);
        }));
        assertThat(kv.sync().get("k1")).hasValue("b".getBytes(UTF_8));
        assertThat(kv.sync().isReady()).isTrue();
        assertThat(keys).containsExactly("k1", "<none>");

        KvorumClient wrong = client(KvorumClient.builder().endpoints(a.uri())
                .endpointSelector((key, candidates) -> URI.create("http://example.invalid:1")));
        assertThat(failure(wrong.get("k"))).isInstanceOf(IllegalStateException.class).hasMessageContaining("selector");
    }

    @Test
    void closeStopsTheEventLoopsAndLaterCallsAreRefused() throws Exception {
        FakeNode node = node((r, n) -> n == 0 ? answer(200, "v") : FakeNode.SILENCE);
        long before = clientThreads();
        KvorumClient kv = KvorumClient.builder().endpoints(node.uri()).ioThreads(2).build();
        kv.get("k").join();
        CompletableFuture<Optional<byte[]>> pending = kv.get("never answered");
        assertThat(clientThreads()).isGreaterThan(before);

        kv.close();
        assertThat(failure(pending)).isInstanceOf(KvorumConnectionException.class);
        await().atMost(Duration.ofSeconds(10)).until(() -> clientThreads() == before);
        assertThatThrownBy(() -> kv.get("k")).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> kv.range("a", null)).isInstanceOf(IllegalStateException.class);
        kv.close(); // idempotent
    }

    /**
     * close(): "Calls still in progress fail with KvorumConnectionException", the calls whose retry
     * comes after close() began too (the connections close() shuts fail their requests, which
     * schedules retries while close() is still failing the calls one by one).
     */
    @Test
    void everyCallInProgressAtCloseFailsAsAConnectionFailure() throws Exception {
        FakeNode node = node((r, n) -> FakeNode.SILENCE);
        KvorumClient kv = KvorumClient.builder().endpoints(node.uri()).requestTimeout(Duration.ofSeconds(30))
                .retryPolicy(new RetryPolicy(5, Duration.ZERO, Duration.ZERO)).build();
        List<CompletableFuture<?>> calls = new ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            calls.add(i % 2 == 0 ? kv.get("k" + i) : kv.put("k" + i, new byte[] {1}));
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> node.seen.size() >= 100); // requests on the wire

        kv.close();

        Map<String, Long> outcomes = calls.stream().collect(Collectors.groupingBy(
                f -> failure(f).getClass().getSimpleName(), TreeMap::new, Collectors.counting()));
        assertThat(outcomes).as("how the calls in progress ended").containsOnlyKeys("KvorumConnectionException");
    }

    private static long clientThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("kvorum-client") && t.isAlive()).count();
    }

    @Test
    void aBuilderRefusesCredentialsPortZeroFragmentsAndTheSameEndpointTwice() {
        assertThatThrownBy(() -> KvorumClient.builder().endpoints(URI.create("http://admin:s3cret@h:8080")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("bearerToken")
                .hasMessageNotContaining("s3cret");
        assertThatThrownBy(() -> KvorumClient.builder().endpoints(URI.create("http://h:0")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("port");
        assertThatThrownBy(() -> KvorumClient.builder().endpoints(URI.create("http://h:8080#x")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("fragment");
        assertThatThrownBy(() -> KvorumClient.builder().endpoints(URI.create("http://h:8080"), URI.create("HTTP://h:8080/")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("given twice");
    }

    @Test
    void aBuilderNeedsAnHttpOrHttpsEndpointWithoutPath() {
        assertThatThrownBy(() -> KvorumClient.builder().build()).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> KvorumClient.builder().endpoints(URI.create("ftp://h:1")))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> KvorumClient.builder().endpoints(URI.create("https://h:1/v0")))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> KvorumClient.builder().endpoints(URI.create("http://h:1/v0")))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new RetryPolicy(0, Duration.ZERO, Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aLargeRangeEntryArrivingInManyReadsIsStillOneEntry() throws Exception {
        byte[] big = new byte[300_000];
        java.util.Arrays.fill(big, (byte) 'x');
        big[big.length - 1] = '\n';
        String entry = "big\n" + new String(big, java.nio.charset.StandardCharsets.ISO_8859_1);
        String answer = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                + Integer.toHexString(entry.length()) + "\r\n" + entry + "\r\n" + "3\r\na\nb\r\n0\r\n\r\n";
        try (OneShotServer server = OneShotServer.answering(answer);
             KvorumClient kv = KvorumClient.create(server.base(), Duration.ofSeconds(10));
             RangeReader reader = kv.range("a", null)) {
            assertThat(reader.stream().toList()).containsExactly(
                    new RangeReader.Entry("big".getBytes(UTF_8), big), new RangeReader.Entry("a".getBytes(UTF_8), "b".getBytes(UTF_8)));
        }
    }

    @Test
    void aRangeEntryOverTheLimitIsAnErrorNotTwoEntries() throws Exception {
        String entry = "k\n" + "v".repeat(2000); // over 10 value bytes + a key of up to 1024
        String answer = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                + Integer.toHexString(entry.length()) + "\r\n" + entry + "\r\n0\r\n\r\n";
        try (OneShotServer server = OneShotServer.answering(answer);
             KvorumClient kv = KvorumClient.builder().endpoints(server.base()).maxResponseBytes(10).build();
             RangeReader reader = kv.range("a", null)) {
            assertThatThrownBy(reader::next).isInstanceOf(ResponseTooLargeException.class).hasMessageContaining("larger than")
                    .hasMessageContaining("maxResponseBytes");
        }
    }
}
