package io.kvorum.perf.ycsb;

import io.kvorum.client.KvorumClient;
import io.kvorum.client.KvorumClient.Options;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeoutException;

/**
 * Waits until every node accepts a write with the run's quorum. A node answers {@code /v0/status}
 * before its peers' streams are up, and on a busy machine its first replicated writes can miss
 * the request timeout (504): YCSB's load would count those as failures and stop the threads that
 * hit them. The probe keys live outside YCSB's tables and are deleted afterwards.
 */
final class QuorumProbe {

    private static final Duration PAUSE = Duration.ofMillis(200);

    private QuorumProbe() {
    }

    /**
     * Returns once a write through each URL succeeded.
     *
     * @throws TimeoutException naming the node and its last failure when {@code within} passes first
     */
    static void await(List<URI> urls, Options options, Duration within, ClientSecurity security)
            throws TimeoutException, InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        for (URI url : urls) {
            String key = "kvorum-perf-ycsb-probe:" + url.getPort();
            try (KvorumClient client = security.client(url, Duration.ofSeconds(5))) {
                String last = null;
                while (true) {
                    try {
                        client.put(key, "probe".getBytes(StandardCharsets.UTF_8), options).join();
                        client.delete(key, options).join();
                        break;
                    } catch (CompletionException e) {
                        last = String.valueOf(e.getCause());
                    }
                    if (System.nanoTime() - deadline > 0) {
                        throw new TimeoutException(url + " did not accept a write within " + within.toSeconds()
                                + " s; last answer: " + last);
                    }
                    Thread.sleep(PAUSE.toMillis()); // between attempts of a bounded poll, not instead of one
                }
            }
        }
    }
}
