package io.kvorum.node.transport.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.kvorum.node.backup.BackupException;
import io.kvorum.node.backup.BackupException.Reason;
import io.kvorum.node.backup.BackupPart;
import io.kvorum.node.backup.BackupParticipant;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * How {@link GrpcBackupPeer} tells a member's own refusal of a backup (passed on as the member made
 * it: a disk it cannot write is not an unreachable member) from a failure to reach the member.
 */
@Timeout(30)
class GrpcBackupPeerTest {

    private Server server;
    private ManagedChannel channel;

    @AfterEach
    void stop() {
        if (channel != null) {
            channel.shutdownNow();
        }
        if (server != null) {
            server.shutdownNow();
        }
    }

    /** A member whose every call is refused with {@code refusal}. */
    private static BackupParticipant refusingWith(BackupException refusal) {
        return new BackupParticipant() {
            @Override
            public CompletableFuture<Void> prepare(String id, List<String> members) {
                return CompletableFuture.failedFuture(refusal);
            }

            @Override
            public CompletableFuture<Void> start(String id) {
                return CompletableFuture.failedFuture(refusal);
            }

            @Override
            public CompletableFuture<Void> cancel(String id, String reason) {
                return CompletableFuture.failedFuture(refusal);
            }

            @Override
            public CompletableFuture<List<BackupPart>> parts() {
                return CompletableFuture.failedFuture(refusal);
            }
        };
    }

    private GrpcBackupPeer peerRefusingWith(BackupException refusal) throws Exception {
        String name = InProcessServerBuilder.generateName();
        server = InProcessServerBuilder.forName(name).directExecutor()
                .addService(new BackupGrpcService(refusingWith(refusal))).build().start();
        return peerOn(name);
    }

    private GrpcBackupPeer peerOn(String name) {
        channel = InProcessChannelBuilder.forName(name).directExecutor().build();
        return new GrpcBackupPeer(new PeerChannel("n2", "n1", "cluster", channel), Duration.ofSeconds(5));
    }

    private static Throwable failureOf(CompletableFuture<?> call) {
        Throwable t = catchThrowable(call::join);
        assertThat(t).isInstanceOf(CompletionException.class);
        return t.getCause();
    }

    @Test
    void aMemberThatCannotTakePartIsRefusedWithItsOwnReasonNotAsUnreachable() throws Exception {
        GrpcBackupPeer n2 = peerRefusingWith(new BackupException(Reason.UNAVAILABLE,
                "n2 cannot create /backups/20261207-120000-abcdef/n2: Permission denied"));

        Throwable e = failureOf(n2.prepare("20261207-120000-abcdef", List.of("n1", "n2")));

        assertThat(e).isInstanceOf(BackupException.class)
                .hasMessage("n2 cannot create /backups/20261207-120000-abcdef/n2: Permission denied");
        assertThat(((BackupException) e).reason()).isEqualTo(Reason.UNAVAILABLE);
    }

    @Test
    void anotherBackupInProgressStaysAConflict() throws Exception {
        GrpcBackupPeer n2 = peerRefusingWith(new BackupException(Reason.IN_PROGRESS, "backup x is in progress on n2"));

        Throwable e = failureOf(n2.start("20261207-120000-abcdef"));

        assertThat(e).isInstanceOf(BackupException.class).hasMessage("backup x is in progress on n2");
        assertThat(((BackupException) e).reason()).isEqualTo(Reason.IN_PROGRESS);
    }

    @Test
    void aMemberThatCannotBeReachedIsNamedUnreachable() {
        GrpcBackupPeer n2 = peerOn(InProcessServerBuilder.generateName()); // nothing listens there

        Throwable e = failureOf(n2.prepare("20261207-120000-abcdef", List.of("n1", "n2")));

        assertThat(e).isNotInstanceOf(BackupException.class);
        assertThat(e.getMessage()).startsWith("n2 is unreachable (UNAVAILABLE");
    }
}
