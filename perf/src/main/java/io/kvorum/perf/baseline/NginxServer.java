package io.kvorum.perf.baseline;

import io.kvorum.testkit.Ports;
import io.kvorum.testkit.Readiness;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The yardstick of the targets: an nginx that answers every request with the same 200 and a body
 * of a given size, the least an HTTP server can do per request, on a free loopback port with its
 * configuration, pid and error log in the run folder. Stopped (and killed if need be) on close.
 */
public final class NginxServer implements BaselineServer {

    public static final String MISSING = "nginx is not installed; apt-get install nginx-light (or set NGINX to its binary)";

    private final Process process;
    private final URI uri;
    private final List<String> command;

    private NginxServer(Process process, URI uri, List<String> command) {
        this.process = process;
        this.uri = uri;
        this.command = command;
    }

    /** nginx from env NGINX, else /usr/sbin/nginx, else "nginx" on PATH. */
    public static Optional<Path> find(Map<String, String> env) {
        String configured = env.get("NGINX");
        if (configured != null && !configured.isBlank()) {
            return Optional.of(Path.of(configured)).filter(Files::isExecutable);
        }
        Path debian = Path.of("/usr/sbin/nginx");
        if (Files.isExecutable(debian)) {
            return Optional.of(debian);
        }
        for (String dir : env.getOrDefault("PATH", "").split(":")) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, "nginx"))) {
                return Optional.of(Path.of(dir, "nginx"));
            }
        }
        return Optional.empty();
    }

    /**
     * The configuration: one worker per CPU, no access log, keep-alive without a request limit (wrk
     * would otherwise reconnect every 1,000 requests) and every path answered 200 with
     * {@code bodyBytes} bytes of 'x'. Temporary files stay in {@code dir}.
     */
    static String config(Path dir, int port, int bodyBytes) {
        String d = dir.toAbsolutePath().toString();
        return """
                worker_processes auto;
                daemon off;
                pid %1$s/nginx.pid;
                error_log %1$s/nginx-error.log warn;
                events { worker_connections 4096; }
                http {
                    access_log off;
                    client_body_temp_path %1$s/nginx-tmp/body;
                    proxy_temp_path %1$s/nginx-tmp/proxy;
                    fastcgi_temp_path %1$s/nginx-tmp/fastcgi;
                    uwsgi_temp_path %1$s/nginx-tmp/uwsgi;
                    scgi_temp_path %1$s/nginx-tmp/scgi;
                    keepalive_requests 100000000;
                    keepalive_timeout 300s;
                    server {
                        listen 127.0.0.1:%2$d;
                        location / { default_type application/octet-stream; return 200 "%3$s"; }
                    }
                }
                """.formatted(d, port, "x".repeat(bodyBytes));
    }

    /** Starts nginx and waits (at most 10 s) until it answers. */
    public static NginxServer start(Path binary, Path dir, int bodyBytes) throws IOException {
        int port = Ports.freePort();
        Files.createDirectories(dir.resolve("nginx-tmp"));
        Path conf = dir.resolve("nginx.conf").toAbsolutePath();
        Files.writeString(conf, config(dir, port, bodyBytes), StandardCharsets.UTF_8);
        List<String> command = List.of(binary.toString(), "-c", conf.toString(), "-p", dir.toAbsolutePath().toString());
        Process process = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(dir.resolve("nginx.out").toFile()).start();
        NginxServer server = new NginxServer(process, URI.create("http://127.0.0.1:" + port), command);
        try {
            Readiness.awaitStatus200("nginx", server.uri.resolve("/v0/status"), Duration.ofSeconds(10), () -> {
                if (!process.isAlive()) {
                    throw new AssertionError("nginx exited with " + process.exitValue() + "; see " + dir.resolve("nginx.out"));
                }
            }, () -> "");
        } catch (RuntimeException | AssertionError e) {
            server.close();
            throw e;
        }
        return server;
    }

    @Override
    public URI uri() {
        return uri;
    }

    @Override
    public String commandLine() {
        return String.join(" ", command);
    }

    @Override
    public long pid() {
        return process.pid();
    }

    /** SIGTERM (nginx's fast shutdown), then SIGKILL to it and its workers after 5 s. */
    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
