package io.kvorum.it;

import io.kvorum.testkit.Await;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A node whose data disk fills up. Before {@code --min-free-disk}, the write that filled it killed
 * the process: LevelDB appends its log through a memory map, and a page the file system cannot back
 * is a SIGBUS. Now the node refuses writes with 503 once they would leave less than the reserve
 * free, serves every value it acknowledged, and takes writes again as soon as space is freed.
 *
 * <p>The data directory is a 384 MiB tmpfs with a reserve of 256 MiB, the least the node takes; a
 * 40 MiB file of the test's own stands for whatever else fills a disk, and truncating it frees the space.
 */
@Timeout(180)
class DiskFullIT {

    private static final long TMPFS_BYTES = 384L << 20;
    private static final long RESERVE_BYTES = 256L << 20;
    private static final int FILLER_BYTES = 40 << 20;
    private static final int VALUE_BYTES = 256 * 1024;
    /** More than the disk holds: the test fails if no write is ever refused. */
    private static final int MAX_WRITES = (int) (TMPFS_BYTES / VALUE_BYTES) + 100;

    @RegisterExtension
    final ClusterExtension clusters = new ClusterExtension();

    private final HttpClient http = HttpClient.newHttpClient();

    @Test
    void aFullDiskCostsWritesNotTheNodeAndFreedSpaceBringsThemBack() throws Exception {
        KvorumCluster cluster = clusters.start(KvorumCluster.withNodes(1).dataTmpfs(TMPFS_BYTES)
                .env("KVORUM_MIN_FREE_DISK", Long.toString(RESERVE_BYTES)));
        ClusterNode node = cluster.node("n1");
        clusterUri = node.uri();
        assertThat(node.exec("/bin/bash", "-c", "printf '%*s' " + FILLER_BYTES + " '' > /data/filler")).isZero();

        int stored = 0;
        HttpResponse<String> refused = null;
        while (refused == null && stored < MAX_WRITES) {
            HttpResponse<String> put = put("k" + stored, value(stored));
            if (put.statusCode() == 201) {
                stored++;
            } else {
                refused = put;
            }
        }
        assertThat(refused).as("a write refused before %d were stored", MAX_WRITES).isNotNull();
        assertThat(refused.statusCode()).isEqualTo(503);
        assertThat(refused.headers().firstValue("Retry-After")).contains("1");
        assertThat(refused.body()).contains("n1: the data disk has", "under --min-free-disk " + RESERVE_BYTES);
        assertThat(stored).as("what fitted above the reserve").isGreaterThan(100);
        assertThat(node.isRunning()).isTrue();
        // Said by the next reading of the free space (every 250 ms), which the refusals may precede.
        Await.until("the node to log that it refuses writes", Duration.ofSeconds(10),
                () -> node.logs().contains("writes are refused (503) until space is freed"), () -> node.tail(10));

        for (int i = 0; i < stored; i++) {
            HttpResponse<byte[]> get = http.send(request("k" + i).GET().build(), HttpResponse.BodyHandlers.ofByteArray());
            assertThat(get.statusCode()).as("GET k%d", i).isEqualTo(200);
            assertThat(get.body()).isEqualTo(value(i));
        }

        assertThat(node.exec("/bin/bash", "-c", ": > /data/filler")).isZero();
        Await.until("writes to be taken again once space is freed", Duration.ofSeconds(10),
                () -> putQuietly("after", value(1)) == 201, () -> node.tail(10));
        Await.until("the node to log that it takes writes again", Duration.ofSeconds(10),
                () -> node.logs().contains("writes are accepted"), () -> node.tail(10));
    }

    private HttpRequest.Builder request(String key) {
        return HttpRequest.newBuilder(URI.create(clusterUri + "/v0/entity?id=" + key)).timeout(Duration.ofSeconds(10));
    }

    private URI clusterUri;

    private HttpResponse<String> put(String key, byte[] value) throws IOException, InterruptedException {
        return http.send(request(key).PUT(HttpRequest.BodyPublishers.ofByteArray(value)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private int putQuietly(String key, byte[] value) {
        try {
            return put(key, value).statusCode();
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    /** Random bytes, so that LevelDB's compression cannot shrink them; the same for the same {@code i}. */
    private static byte[] value(int i) {
        byte[] v = new byte[VALUE_BYTES];
        new Random(i).nextBytes(v);
        return v;
    }
}
