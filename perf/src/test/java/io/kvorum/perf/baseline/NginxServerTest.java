package io.kvorum.perf.baseline;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NginxServerTest {

    @TempDir
    Path tmp;

    @Test
    void theConfigAnswersEveryPathWithTheBodyAndKeepsConnectionsOpen() {
        String config = NginxServer.config(tmp, 18080, 5);

        assertThat(config).contains("listen 127.0.0.1:18080;")
                .contains("return 200 \"xxxxx\";")
                .contains("access_log off;")
                .contains("keepalive_requests 100000000;")
                .contains("pid " + tmp.toAbsolutePath() + "/nginx.pid;")
                .contains("daemon off;");
    }

    @Test
    void theBinaryIsTakenFromNginxWhenSetAndMustBeExecutable() throws Exception {
        Path fake = Files.createFile(tmp.resolve("nginx"));
        assertThat(NginxServer.find(Map.of("NGINX", fake.toString()))).isEmpty();

        fake.toFile().setExecutable(true);
        assertThat(NginxServer.find(Map.of("NGINX", fake.toString()))).contains(fake);
    }
}
