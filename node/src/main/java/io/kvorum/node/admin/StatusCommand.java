package io.kvorum.node.admin;

import com.google.gson.Gson;
import com.google.gson.JsonParseException;
import io.kvorum.client.TrustedCa;
import io.kvorum.node.http.NodeStatus;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.UnknownHostException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.channels.UnresolvedAddressException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.cert.CertPathBuilderException;
import java.time.Duration;
import java.util.List;
import javax.net.ssl.SSLHandshakeException;

/**
 * {@code java -jar kvorum-node.jar status [URL]} ({@code ./kvorum status}): asks one node for
 * {@code GET /v0/status} and prints the cluster as that node sees it ({@link ClusterSummary}).
 *
 * <p>Exit status: {@value #EXIT_ALL_UP} when every member is up, {@value #EXIT_MEMBER_DOWN} when a
 * member is down or not yet known, {@value #EXIT_NO_STATUS} with one line on stderr when the node
 * cannot be reached or does not answer a status (another status code, a body that is not one), or
 * the arguments are wrong.
 */
public final class StatusCommand {

    public static final String NAME = "status";
    public static final String DEFAULT_URL = "http://127.0.0.1:8080";
    static final String USAGE = "usage: kvorum status [URL] [--ca FILE] (default " + DEFAULT_URL
            + "; --ca, or KVORUM_CA, trusts the CA of a cluster that serves HTTPS)";
    static final int EXIT_ALL_UP = 0;
    static final int EXIT_MEMBER_DOWN = 1;
    static final int EXIT_NO_STATUS = 2;
    static final Duration TIMEOUT = Duration.ofSeconds(5);
    private static final Gson JSON = new Gson();
    /** The most of a refusal's first line that is printed. */
    private static final int MAX_REASON = 300;

    private StatusCommand() {
    }

    /**
     * Runs the command.
     *
     * @param args      the arguments after {@code status}: the node's base URL (optional), and
     *                  {@code --ca FILE} to trust the CA of a cluster that serves HTTPS
     * @param nowMillis the current time (epoch ms) for "since" and "ago"
     * @return the exit status
     */
    public static int run(List<String> args, PrintStream out, PrintStream err, long nowMillis) {
        return run(args, System.getenv("KVORUM_CA"), out, err, nowMillis);
    }

    /** {@link #run(List, PrintStream, PrintStream, long)} with the value of {@code KVORUM_CA} (null when unset). */
    static int run(List<String> args, String caFromEnvironment, PrintStream out, PrintStream err, long nowMillis) {
        if (args.equals(List.of("--help")) || args.equals(List.of("-h"))) {
            out.println(USAGE);
            return EXIT_ALL_UP;
        }
        String url = null;
        String ca = caFromEnvironment;
        for (int i = 0; i < args.size(); i++) {
            String a = args.get(i);
            if (a.equals("--ca") && i + 1 < args.size()) {
                ca = args.get(++i);
            } else if (a.startsWith("--ca=")) {
                ca = a.substring("--ca=".length());
            } else if (a.startsWith("-") || url != null) {
                err.println(USAGE);
                return EXIT_NO_STATUS;
            } else {
                url = a;
            }
        }
        HttpClient http;
        try {
            http = client(ca);
        } catch (IOException | GeneralSecurityException e) {
            err.println("kvorum status: cannot use the CA file " + ca + ": " + e.getMessage());
            return EXIT_NO_STATUS;
        }
        URI base;
        try {
            base = URI.create(url == null ? DEFAULT_URL : url);
            if (base.getHost() == null || !(base.getScheme().equals("http") || base.getScheme().equals("https"))
                    || base.getPort() > 65535) { // URI takes any digits for a port; the HTTP client would throw
                throw new IllegalArgumentException("not an http URL");
            }
        } catch (IllegalArgumentException e) {
            err.println("kvorum status: " + url + " is not a node's URL such as " + DEFAULT_URL);
            return EXIT_NO_STATUS;
        }
        URI statusUri = base.resolve("/v0/status");
        HttpResponse<String> answer;
        try {
            answer = http.send(HttpRequest.newBuilder(statusUri).timeout(TIMEOUT).build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            err.println("kvorum status: cannot reach " + statusUri + ": " + describe(e, statusUri));
            return EXIT_NO_STATUS;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            err.println("kvorum status: interrupted while asking " + statusUri);
            return EXIT_NO_STATUS;
        }
        if (answer.statusCode() != 200) {
            err.println("kvorum status: " + statusUri + " answered " + answer.statusCode() + " instead of a status"
                    + reasonIn(answer.body()));
            return EXIT_NO_STATUS;
        }
        NodeStatus status;
        try {
            status = JSON.fromJson(answer.body(), NodeStatus.class);
        } catch (JsonParseException | IllegalArgumentException | NullPointerException e) {
            status = null; // malformed JSON, or a shape NodeStatus's records refuse
        }
        if (!ClusterSummary.isStatus(status)) {
            err.println("kvorum status: " + statusUri + " did not answer a Kvorum status (malformed or unexpected JSON)");
            return EXIT_NO_STATUS;
        }
        ClusterSummary summary = new ClusterSummary(status, base.getAuthority(), nowMillis);
        summary.lines().forEach(out::println);
        return summary.allUp() ? EXIT_ALL_UP : EXIT_MEMBER_DOWN;
    }

    /**
     * The node's own words for a refusal (a node that left says which members to ask instead): the
     * first line of its body, cut to {@value #MAX_REASON} characters; empty when there is none.
     */
    private static String reasonIn(String body) {
        String first = body == null ? "" : body.strip().lines().findFirst().orElse("");
        if (first.isEmpty()) {
            return "";
        }
        return ": " + (first.length() > MAX_REASON ? first.substring(0, MAX_REASON) + "..." : first);
    }

    /** A client that trusts the CA certificates of {@code caFile} alone, or the JDK's defaults when it is null. */
    private static HttpClient client(String caFile) throws IOException, GeneralSecurityException {
        HttpClient.Builder builder = HttpClient.newBuilder().connectTimeout(TIMEOUT);
        if (caFile == null) {
            return builder.build();
        }
        return builder.sslContext(TrustedCa.clientContext(Path.of(caFile))).build();
    }

    /**
     * Why the node could not be asked, in words: the two mistakes of a secured cluster named with
     * their remedy, a host name that does not resolve, else the first message along the cause chain (the JDK client's
     * ConnectException for a refused connection has none).
     */
    private static String describe(IOException e, URI statusUri) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof SSLHandshakeException || t instanceof CertPathBuilderException) {
                return "its certificate is not trusted (" + firstLine(t) + "); give the cluster's CA with --ca FILE or KVORUM_CA";
            }
            if (t instanceof UnresolvedAddressException || t instanceof UnknownHostException) {
                return "the host name " + statusUri.getHost() + " does not resolve to an address";
            }
        }
        if (statusUri.getScheme().equals("http") && String.valueOf(e.getMessage()).contains("received no bytes")) {
            return "it answered nothing over plain HTTP; if it serves HTTPS, ask " + statusUri.toString()
                    .replaceFirst("^http:", "https:");
        }
        return describe(e);
    }

    private static String firstLine(Throwable t) {
        String message = String.valueOf(t.getMessage());
        int cut = message.indexOf(':');
        return cut > 0 && message.startsWith("PKIX") ? message.substring(0, cut) : message;
    }

    /** The first message along the cause chain; the JDK client's ConnectException for a refused connection has none. */
    private static String describe(IOException e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t.getMessage() != null && !t.getMessage().isBlank()) {
                return t.getMessage();
            }
        }
        return e instanceof java.net.ConnectException ? "connection refused" : e.getClass().getSimpleName();
    }
}
