package io.kvorum.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Server;
import io.grpc.netty.NettyServerBuilder;
import io.kvorum.node.util.EventLoops;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import org.junit.jupiter.api.Test;

/** docs/operations.md#starting-nodes: a port that cannot be bound is one line that says why, for the gRPC port as for HTTP. */
class BindFailureMessageTest {

    @Test
    void grpcsBindFailureIsSaidByTheSocketsReasonNotByItsWrapper() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
             EventLoops loops = EventLoops.create(1)) {
            Server server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", taken.getLocalPort()))
                    .bossEventLoopGroup(loops.acceptor()).workerEventLoopGroup(loops.io())
                    .channelType(loops.serverChannel()).build();
            assertThatThrownBy(server::start).isInstanceOfSatisfying(IOException.class, e -> {
                assertThat(e.getMessage()).as("grpc-java's own words").startsWith("Failed to bind");
                assertThat(KvorumNode.bindFailure(e)).containsIgnoringCase("address already in use")
                        .doesNotContain("Failed to bind");
            });
        }
    }
}
