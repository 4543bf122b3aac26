package io.kvorum.perf.peers;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.kvorum.testkit.Ports;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * etcd 3.4 as {@code perf peers} runs it: N members on free loopback ports started together (a new
 * etcd cluster needs its members at once to elect a leader), flags from {@link EtcdSettings}, driven
 * through jetcd with its default reads, which are linearizable (the leader confirms it still leads
 * before answering), and writes, which commit through Raft on a majority with fsync.
 */
public final class EtcdPeer implements PeerCluster {

    static final Duration START_TIMEOUT = Duration.ofSeconds(60);

    private final PeerProcesses processes;
    private final List<EtcdSettings.Member> members;

    private EtcdPeer(PeerProcesses processes, List<EtcdSettings.Member> members) {
        this.processes = processes;
        this.members = members;
    }

    /**
     * Starts the members and waits until each answers {@code /health} with a leader.
     *
     * @param etcd the etcd binary (Debian's etcd-server package installs /usr/bin/etcd)
     */
    public static EtcdPeer start(int nodes, String etcd, Path runDir) throws IOException, InterruptedException {
        Files.createDirectories(runDir);
        int[] ports = Ports.freePorts(2 * nodes);
        List<EtcdSettings.Member> members = new ArrayList<>();
        for (int i = 0; i < nodes; i++) {
            members.add(new EtcdSettings.Member("n" + (i + 1), ports[2 * i], ports[2 * i + 1]));
        }
        PeerProcesses processes = new PeerProcesses(Files.createTempDirectory("kvorum-perf-etcd-"));
        EtcdPeer cluster = new EtcdPeer(processes, members);
        try {
            List<Process> started = new ArrayList<>();
            for (EtcdSettings.Member m : members) {
                Path log = runDir.resolve("etcd-" + m.name() + ".log");
                started.add(processes.start(m.name(), EtcdSettings.command(etcd, m, members,
                        processes.dataRoot().resolve(m.name())), log));
            }
            HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
            long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
            for (int i = 0; i < nodes; i++) {
                awaitHealthy(http, started.get(i), members.get(i), runDir.resolve("etcd-" + members.get(i).name() + ".log"),
                        deadline);
            }
            return cluster;
        } catch (IOException | InterruptedException | RuntimeException e) {
            cluster.close();
            throw e;
        }
    }

    /** Polls the member's {@code GET /health} until it says {@code "health":"true"} (it has a leader). */
    private static void awaitHealthy(HttpClient http, Process process, EtcdSettings.Member m, Path log, long deadline)
            throws IOException, InterruptedException {
        URI health = URI.create(m.clientUrl() + "/health");
        while (true) {
            if (!process.isAlive()) {
                throw new IOException("etcd " + m.name() + " exited with status " + process.exitValue() + "; the end of "
                        + log + ":\n" + PeerProcesses.tail(log, 30));
            }
            try {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(health).timeout(Duration.ofSeconds(2)).build(),
                        HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 200 && r.body().replace(" ", "").contains("\"health\":\"true\"")) {
                    return;
                }
            } catch (IOException notYet) {
                // not listening yet
            }
            if (System.nanoTime() > deadline) {
                throw new IOException("etcd " + m.name() + " was not healthy within " + START_TIMEOUT.toSeconds()
                        + " s; the end of " + log + ":\n" + PeerProcesses.tail(log, 30));
            }
            Thread.sleep(250); // the poll interval of a bounded wait
        }
    }

    @Override
    public List<Long> pids() {
        return processes.pids();
    }

    @Override
    public List<String> commandLines() {
        return processes.commandLines();
    }

    @Override
    public KeyValueTarget connect() {
        // Requests spread over the members, as the other systems' clients spread theirs; a follower
        // forwards a write to the leader and asks it to confirm a read, as etcd's clients expect.
        Client client = Client.builder().endpoints(members.stream().map(EtcdSettings.Member::clientUrl).toArray(String[]::new))
                .loadBalancerPolicy("round_robin")
                .build();
        KV kv = client.getKVClient();
        return new KeyValueTarget() {
            @Override
            public CompletableFuture<?> put(byte[] key, byte[] value) {
                return kv.put(ByteSequence.from(key), ByteSequence.from(value))
                        .orTimeout(KvorumPeer.REQUEST_TIMEOUT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
            }

            @Override
            public CompletableFuture<?> get(byte[] key) {
                return kv.get(ByteSequence.from(key))
                        .orTimeout(KvorumPeer.REQUEST_TIMEOUT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
            }

            @Override
            public void close() {
                client.close();
            }
        };
    }

    @Override
    public void close() {
        processes.close();
    }
}
