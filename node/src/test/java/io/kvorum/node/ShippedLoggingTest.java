package io.kvorum.node;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.joran.JoranConfigurator;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.util.LogbackMDCAdapter;
import ch.qos.logback.core.AppenderBase;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2Exception;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogManager;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;
import org.slf4j.bridge.SLF4JBridgeHandler;

/**
 * The logging configuration the node jar ships ({@code src/main/resources/logback.xml}, which the
 * tests' own configuration hides from the class path's first look): one line per event, and no
 * transport logger that writes payloads, whatever {@code KVORUM_LOG_LEVEL} asks for.
 */
class ShippedLoggingTest {

    @Test
    void atTraceEachEventIsOneLineAndTheTransportsFrameLoggersStaySilent() throws Exception {
        String out = logAtTrace(context -> {
            context.getLogger("io.kvorum.node.Example").warn("peer unreachable: io exception\nChannel Pipeline: [SslHandler#0]");
            context.getLogger("io.grpc.netty.NettyClientHandler").debug("INBOUND DATA: bytes=4b45594d41524b");
            context.getLogger("io.netty.handler.codec.http2.Http2FrameLogger").debug("OUTBOUND DATA: 56414c5545");
            context.getLogger("io.kvorum.node.Example").trace("traced");
        });

        assertThat(out.lines()).hasSize(2);
        assertThat(out).contains("peer unreachable: io exception Channel Pipeline: [SslHandler#0]")
                .contains("traced").doesNotContain("4b45594d41524b").doesNotContain("56414c5545");
    }

    @Test
    void theAuditLogKeepsItsInfoLinesWhenTheNodeLogsOnlyWarnings() throws Exception {
        String out = logAt("WARN", context -> {
            context.getLogger("kvorum.audit").info("token=ops client=10.0.0.9:53122 \"POST /v0/repair HTTP/1.1\" 200 41ms");
            context.getLogger("io.kvorum.node.Example").info("an INFO line of the node");
        });

        assertThat(out).contains("kvorum.audit - token=ops").doesNotContain("an INFO line of the node");
    }

    /**
     * docs/operations.md#audit-log's Logback configuration, as the page gives it (its log folder
     * aside): the audit lines go to their own file and leave stdout, and nothing else goes there.
     */
    @Test
    void theAuditConfigurationOfTheOperationsPageSendsTheAuditLogToAFileOfItsOwn(@TempDir Path dir) throws Exception {
        String page = Files.readString(NodeOptionTest.repositoryRoot().resolve("docs/operations.md"), StandardCharsets.UTF_8);
        Matcher xml = Pattern.compile("```xml\n(<configuration>.*?</configuration>)\n```", Pattern.DOTALL).matcher(page);
        String snippet = null;
        while (xml.find()) {
            if (xml.group(1).contains("kvorum.audit")) {
                snippet = xml.group(1);
            }
        }
        assertThat(snippet).as("the audit log's configuration on the operations page").isNotNull()
                .contains("/var/log/kvorum/");
        Path configuration = Files.writeString(dir.resolve("logback.xml"),
                snippet.replace("/var/log/kvorum/", dir.toString() + "/"));

        String out = logWith(configuration.toUri().toURL(), "WARN", context -> {
            context.getLogger("kvorum.audit").info("token=ops client=10.0.0.9:53122 \"POST /v0/repair HTTP/1.1\" 200 41ms");
            context.getLogger("io.kvorum.node.Example").warn("a node's warning");
        });

        assertThat(Files.readString(dir.resolve("audit.log"), StandardCharsets.UTF_8)).as("the audit file")
                .contains("token=ops client=10.0.0.9:53122 \"POST /v0/repair HTTP/1.1\" 200 41ms")
                .doesNotContain("a node's warning");
        assertThat(out).as("stdout").contains("a node's warning").doesNotContain("token=ops");
    }

    @Test
    void aWriteToAStreamThePeerCancelledIsNotWarnedAboutButOtherStreamErrorsAre() throws Exception {
        String out = logAtTrace(context -> {
            org.slf4j.Logger handler = context.getLogger("io.grpc.netty.NettyServerHandler");
            handler.warn("Stream Error", Http2Exception.streamError(3, Http2Error.STREAM_CLOSED,
                    "Stream closed before write could take place"));
            handler.warn("Stream Error", Http2Exception.streamError(5, Http2Error.PROTOCOL_ERROR, "a malformed frame"));
        });

        assertThat(out).doesNotContain("Stream closed before write could take place").contains("a malformed frame");
    }

    @Test
    void javaUtilLoggingRecordsJoinTheNodesLogUnderItsLevels() {
        java.util.logging.Logger julRoot = LogManager.getLogManager().getLogger("");
        Handler[] before = julRoot.getHandlers();
        ch.qos.logback.classic.Logger grpc = (ch.qos.logback.classic.Logger) LoggerFactory.getLogger("io.grpc");
        List<ILoggingEvent> events = new CopyOnWriteArrayList<>();
        AppenderBase<ILoggingEvent> capture = new AppenderBase<>() {
            @Override
            protected void append(ILoggingEvent event) {
                events.add(event);
            }
        };
        capture.setContext(grpc.getLoggerContext());
        capture.start();
        grpc.addAppender(capture);
        try {
            Main.routeJavaUtilLogging();
            java.util.logging.Logger core = java.util.logging.Logger.getLogger("io.grpc.internal.Example");
            core.warning("Failed to resolve name");
            core.info("an INFO line of gRPC's core, under io.grpc's WARN");

            assertThat(julRoot.getHandlers()).as("JUL's console handler is gone").hasSize(1)
                    .allMatch(h -> h instanceof SLF4JBridgeHandler);
            assertThat(events).extracting(e -> e.getLevel() + " " + e.getLoggerName() + ": " + e.getFormattedMessage())
                    .containsExactly("WARN io.grpc.internal.Example: Failed to resolve name");
        } finally {
            grpc.detachAppender(capture);
            SLF4JBridgeHandler.uninstall();
            for (Handler h : before) {
                julRoot.addHandler(h);
            }
        }
    }

    private interface Logging {
        void logTo(LoggerContext context);
    }

    /** What the shipped configuration prints to stdout at {@code KVORUM_LOG_LEVEL=TRACE}. */
    private static String logAtTrace(Logging logging) throws Exception {
        return logAt("TRACE", logging);
    }

    /** What the shipped configuration prints to stdout at {@code KVORUM_LOG_LEVEL=level}. */
    private static String logAt(String level, Logging logging) throws Exception {
        return logWith(Path.of("src/main/resources/logback.xml").toUri().toURL(), level, logging);
    }

    /** What the configuration at {@code shipped} prints to stdout at {@code KVORUM_LOG_LEVEL=level}. */
    private static String logWith(URL shipped, String level, Logging logging) throws Exception {
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        PrintStream stdout = System.out;
        LoggerContext context = new LoggerContext();
        context.setMDCAdapter(new LogbackMDCAdapter());
        System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            context.putProperty("KVORUM_LOG_LEVEL", level);
            JoranConfigurator configurator = new JoranConfigurator();
            configurator.setContext(context);
            configurator.doConfigure(shipped);
            logging.logTo(context);
        } finally {
            context.stop();
            System.setOut(stdout);
        }
        return captured.toString(StandardCharsets.UTF_8);
    }
}
