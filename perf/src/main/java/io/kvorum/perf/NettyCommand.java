package io.kvorum.perf;

import io.kvorum.perf.baseline.BaselineServer;
import io.kvorum.perf.baseline.NettyServer;
import java.nio.file.Path;
import java.util.Optional;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code ./kvorum perf netty}: the floor of the node's own stack, a constant-response server on
 * Netty's HTTP codec and epoll loops in a JVM with the nodes' flags ({@link io.kvorum.perf.baseline.NettyServerMain}),
 * under the same load as {@code perf run}. Between nginx and a node, it tells what the JVM and
 * Netty cost from what Kvorum's request path costs.
 */
@Command(name = "netty", mixinStandardHelpOptions = true, versionProvider = PerfMain.Version.class,
        description = "The Netty baseline: wrk (--saturation) or wrk2 (--rate) against a constant-response server "
                + "on the node's HTTP stack (Netty's codec, epoll, one loop per core, ZGC).")
final class NettyCommand extends BaselineCommand {

    @Option(names = "--heap", defaultValue = "1g", description = "The server's heap, -Xms = -Xmx, as perf run's nodes (default ${DEFAULT-VALUE}).")
    String heap;

    @Override
    String server() {
        return "netty";
    }

    @Override
    Optional<String> invalidOptions() {
        return heap.matches("[1-9][0-9]*[kKmMgG]?") ? Optional.empty()
                : Optional.of("--heap takes a JVM heap size such as 512m or 1g, not '" + heap + "'");
    }

    @Override
    Optional<String> unavailable() {
        return Optional.empty();
    }

    @Override
    BaselineServer start(Path runDir) {
        return NettyServer.start(runDir, bodyBytes, heap);
    }

    @Override
    String describe(BaselineServer server) {
        // not a link: *.log is ignored by git, so a committed report would link a missing file
        return "`" + server.commandLine() + "` (its output: netty.log): Netty's HTTP codec on epoll, one event loop per core, "
                + "every request answered 200 with " + bodyBytes + " bytes";
    }
}
