package io.kvorum.perf;

import io.kvorum.perf.baseline.BaselineServer;
import io.kvorum.perf.baseline.NginxServer;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Optional;
import picocli.CommandLine.Command;

/**
 * {@code ./kvorum perf nginx}: the yardstick the targets are ratios to, a constant-response nginx
 * (one worker per core) under the same load as {@code perf run}.
 */
@Command(name = "nginx", mixinStandardHelpOptions = true, versionProvider = PerfMain.Version.class,
        description = "The nginx baseline: wrk (--saturation) or wrk2 (--rate) against a constant-response nginx.")
final class NginxCommand extends BaselineCommand {

    @Override
    String server() {
        return "nginx";
    }

    @Override
    Optional<String> unavailable() {
        return NginxServer.find(System.getenv()).isPresent() ? Optional.empty() : Optional.of(NginxServer.MISSING);
    }

    @Override
    BaselineServer start(Path runDir) throws IOException {
        return NginxServer.start(NginxServer.find(System.getenv()).orElseThrow(), runDir, bodyBytes);
    }

    @Override
    String describe(BaselineServer server) {
        return "`" + server.commandLine() + "` ([nginx.conf](nginx.conf)): every request answered 200 with " + bodyBytes + " bytes";
    }
}
