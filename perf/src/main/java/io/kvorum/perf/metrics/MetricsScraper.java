package io.kvorum.perf.metrics;

import io.kvorum.perf.cluster.ClusterSecurity;
import io.kvorum.testkit.PrometheusText;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Reads every node's {@code GET /metrics} once per interval, into memory, on one thread of its own
 * ({@code metrics-scrape}), from {@link #start} until {@link #stop}. A node that answers anything
 * but a parsable {@code 200} (an older node without {@code /metrics} answers {@code 400}) is
 * noted with the reason and left out of {@link ScrapeLog#scrapes()} for that instant; the run
 * goes on either way.
 *
 * <p>Each scrape waits at most its timeout, and a round that runs late delays the next one instead
 * of piling requests up; rates are computed from the instants the answers arrived, so uneven
 * intervals are fine.
 */
public final class MetricsScraper implements AutoCloseable {

    private final Map<String, URI> nodes;
    private final HttpClient http;
    private final ClusterSecurity security;
    private final Duration interval;
    private final Duration timeout;
    private final ScheduledExecutorService thread;
    private final Map<String, List<Scrape>> scrapes = new LinkedHashMap<>();
    private final Map<String, String> problems = new LinkedHashMap<>();

    private MetricsScraper(Map<String, URI> nodes, Duration interval, Duration timeout, ClusterSecurity security) {
        this.nodes = new LinkedHashMap<>(nodes);
        this.interval = interval;
        this.timeout = timeout;
        this.security = security;
        this.http = security.httpClient().connectTimeout(timeout).build();
        this.thread = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "metrics-scrape");
            t.setDaemon(true);
            return t;
        });
        nodes.keySet().forEach(id -> scrapes.put(id, new ArrayList<>()));
    }

    /**
     * Starts scraping {@code nodes} (id to the node's base URL, in report order) every
     * {@code interval}, the first time at once, waiting at most {@code timeout} for each answer.
     */
    public static MetricsScraper start(Map<String, URI> nodes, Duration interval, Duration timeout) {
        return start(nodes, interval, timeout, ClusterSecurity.none());
    }

    /** {@link #start(Map, Duration, Duration)} of nodes secured as {@code security} says (HTTPS, a token). */
    public static MetricsScraper start(Map<String, URI> nodes, Duration interval, Duration timeout,
                                       ClusterSecurity security) {
        MetricsScraper scraper = new MetricsScraper(nodes, interval, timeout, security);
        scraper.thread.scheduleAtFixedRate(scraper::scrapeAll, 0, interval.toMillis(), TimeUnit.MILLISECONDS);
        return scraper;
    }

    /** Scrapes once more (the end of the window), stops, and returns what was read. */
    public ScrapeLog stop() throws InterruptedException {
        thread.shutdown();
        if (!thread.awaitTermination(timeout.toMillis() * (nodes.size() + 1) + 1000, TimeUnit.MILLISECONDS)) {
            thread.shutdownNow();
        }
        scrapeAll();
        synchronized (this) {
            Map<String, List<Scrape>> copy = new LinkedHashMap<>();
            scrapes.forEach((id, list) -> copy.put(id, List.copyOf(list)));
            return new ScrapeLog(copy, new LinkedHashMap<>(problems));
        }
    }

    @Override
    public void close() {
        thread.shutdownNow();
    }

    private void scrapeAll() {
        nodes.forEach((id, base) -> {
            try {
                HttpResponse<String> answer = http.send(security.authorize(HttpRequest.newBuilder(base.resolve("/metrics"))).timeout(timeout).build(),
                        HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
                if (answer.statusCode() != 200) {
                    noteProblem(id, "GET /metrics answered " + answer.statusCode());
                    return;
                }
                Scrape scrape = new Scrape(System.currentTimeMillis(), PrometheusText.parse(answer.body()).samples());
                synchronized (this) {
                    scrapes.get(id).add(scrape);
                }
            } catch (IOException | IllegalArgumentException e) {
                noteProblem(id, "GET /metrics failed: " + e.getMessage());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
    }

    /** Keeps the first problem of each node: the one that explains the rest. */
    private synchronized void noteProblem(String id, String problem) {
        problems.putIfAbsent(id, problem);
    }
}
