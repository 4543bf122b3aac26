package io.kvorum.perf.baseline;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The server in a JVM of its own, as perf netty runs it. */
@Timeout(90)
class NettyServerTest {

    @TempDir
    Path runDir;

    @Test
    void servesTheBodyFromAJvmOfItsOwnUntilClosed() throws Exception {
        NettyServer server = NettyServer.start(runDir, 7, "64m");
        try {
            assertThat(server.commandLine()).contains("-Xmx64m", "-XX:+UseZGC", NettyServerMain.class.getName());
            HttpClient http = HttpClient.newHttpClient();
            HttpResponse<String> answer = http.send(HttpRequest.newBuilder(server.uri().resolve("/v0/entity?id=k")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(answer.statusCode()).isEqualTo(200);
            assertThat(answer.body()).isEqualTo("xxxxxxx");
            assertThat(Files.readString(runDir.resolve("netty.log"))).contains("listening on 127.0.0.1:" + server.uri().getPort());
        } finally {
            server.close();
        }
        assertThat(server.isAlive()).isFalse();
    }
}
