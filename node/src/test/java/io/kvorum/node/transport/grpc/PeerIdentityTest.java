package io.kvorum.node.transport.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.kvorum.node.LogCapture;
import io.kvorum.node.cluster.ClusterMembership;
import io.kvorum.node.cluster.Membership;
import io.kvorum.node.cluster.MembershipStore;
import io.kvorum.node.cluster.Topology;
import io.kvorum.node.security.LiveTls;
import io.kvorum.node.security.TlsFiles;
import io.kvorum.testkit.KvorumCerts;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Peer identity over mutual TLS (docs/operations.md#security), one refusal at a time: member n1's
 * gRPC server takes a call only when the caller's certificate names the member its header claims,
 * a channel takes answers only from a server whose certificate names the member it dialled, and a
 * membership is proposed only by the change coordinator.
 */
@Timeout(120)
class PeerIdentityTest {

    @TempDir
    static Path pki;
    @TempDir
    Path data;

    private final ExecutorService executor = Executors.newSingleThreadExecutor();
    private final List<ManagedChannel> channels = new ArrayList<>();
    private final LogCapture logs = new LogCapture();
    private Server server;
    private ClusterMembership n1;
    private Membership first;

    @BeforeAll
    static void certificates() throws Exception {
        KvorumCerts.make(pki, "n1", "n2", "n9");
    }

    private static LiveTls tlsOf(String id) throws Exception {
        return LiveTls.open(new TlsFiles(pki.resolve(id + ".pem"), pki.resolve(id + ".key"), pki.resolve("ca.pem")));
    }

    @BeforeEach
    void memberN1() throws Exception {
        logs.attach();
        first = Membership.first("kvorum", Topology.parse(
                "n1=127.0.0.1:8081:9081,n2=127.0.0.1:8082:9082,n3=127.0.0.1:8083:9083"), 3);
        n1 = new ClusterMembership("n1", first, new MembershipStore(data), executor);
        server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0), GrpcTls.server(tlsOf("n1")))
                .addService(new MembershipGrpcService(n1))
                .intercept(new ClusterCheck(new ForeignClusterLog(first.identity()), n1, true))
                .build().start();
    }

    @AfterEach
    void stop() {
        channels.forEach(ManagedChannel::shutdownNow);
        server.shutdownNow();
        executor.shutdownNow();
        logs.detach();
    }

    /** The membership service of the server, as {@code claimed} reaches it with {@code certificate}'s files, dialling {@code expected}. */
    private GrpcMembershipPeer peer(String certificate, String claimed, String expected) throws Exception {
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", server.getPort(),
                GrpcTls.client(tlsOf(certificate), expected)).build();
        channels.add(channel);
        return new GrpcMembershipPeer(new PeerChannel(expected, claimed, first.identity(), channel),
                Duration.ofSeconds(10), Duration.ofSeconds(10));
    }

    private static Throwable failureOf(java.util.concurrent.CompletableFuture<?> call) {
        Throwable t = catchThrowable(() -> call.get(20, TimeUnit.SECONDS));
        assertThat(t).as("the call fails").isNotNull();
        return t instanceof java.util.concurrent.ExecutionException || t instanceof CompletionException ? t.getCause() : t;
    }

    @Test
    void aMemberWhoseCertificateNamesItIsServed() throws Exception {
        assertThat(peer("n2", "n2", "n1").fetch().get(20, TimeUnit.SECONDS)).isEqualTo(first);
        assertThat(logs.problems()).isEmpty();
    }

    @Test
    void aCertificateOfTheCaForAnotherIdCannotSpeakForAMember() {
        Throwable refused = failureOf(assertDoesNotThrow(() -> peer("n9", "n2", "n1")).fetch());

        assertThat(refused).hasMessageContaining("PERMISSION_DENIED").hasMessageContaining("does not name n2")
                .hasMessageNotContaining(first.identity());
        assertThat(logs.problems()).anySatisfy(line -> assertThat(line).contains("claim to come from member 'n2'")
                .contains("CN=n9"));
    }

    @Test
    void aServerWhoseCertificateNamesAnotherMemberIsNotBelieved() {
        Throwable refused = failureOf(assertDoesNotThrow(() -> peer("n2", "n2", "n3")).fetch());

        assertThat(refused).hasMessageContaining("UNAVAILABLE");
        assertThat(logs.problems()).anySatisfy(line -> assertThat(line).contains("(CN=n1) names localhost, n1, not member n3"));
    }

    @Test
    void aMembershipProposedByAMemberThatDoesNotCoordinateChangesIsRefused() throws Exception {
        Membership forged = first.withRemoved("n3");

        Throwable refused = failureOf(peer("n2", "n2", "n1").propose(forged));

        assertThat(refused).hasMessageContaining("only the change coordinator");
        assertThat(n1.membership()).isEqualTo(first);
        assertThat(Files.list(data).toList()).as("nothing stored").isEmpty();
    }

    private static <T> T assertDoesNotThrow(java.util.concurrent.Callable<T> call) {
        try {
            return call.call();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
