package io.kvorum.node;

import io.kvorum.node.config.ConfigException;
import io.kvorum.node.config.NodeConfig;
import io.kvorum.node.config.NodeOption;
import io.kvorum.node.time.Clock;
import io.kvorum.node.util.NodeThreads;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Compiles a starting node's request path before the node serves (docs/operations.md, "Start-up
 * and readiness"). A JVM runs new code interpreted and compiles it only once it is hot, so a cold
 * node spends its first second on the compilers and on interpreted code: its first burst of quorum
 * writes waited up to 2 s for answers the coordinator gives up on after 1 s.
 *
 * <p>The warm-up starts a throwaway cluster of two nodes in this JVM ({@link KvorumNode}s of this
 * build, on loopback ports the system picks, with their stores in {@value #FOLDER} of the data
 * dir), sends them {@code --warm-up} quorum writes, reads and deletes from a few connections at
 * once, then stops them and deletes their folder. Compiled code belongs to the classes, so the
 * node that starts next runs it from its first request. Nothing of the rig reaches the node: the
 * rig has its own stores, metrics registries, ports and cluster name, and its keys never touch the
 * node's store, ranges, Merkle trees or request counts.
 *
 * <p>Bounded: by the number of requests and by {@link #TIME_BOUND}; a signal (an interrupt) cuts it
 * short. A rig that cannot start (a port taken meanwhile, say) is skipped with a line in the log:
 * the warm-up makes a start faster for clients, never fail.
 */
final class RequestPathWarmup {

    private static final Logger log = LoggerFactory.getLogger(RequestPathWarmup.class);

    /** The folder of the data dir that holds the rig's stores while it runs. */
    static final String FOLDER = "warm-up";
    /** The most a warm-up takes, the rig's start and stop included. */
    static final Duration TIME_BOUND = Duration.ofSeconds(30);
    /** How long a failed warm-up waits for a rig node still starting, before it deletes their folder. */
    private static final Duration ABANDONED_START_WAIT = Duration.ofSeconds(3);
    /** Connections that send requests at once. */
    private static final int CONNECTIONS = 8;
    /** Requests on one connection before it is replaced, so that accepting connections gets warm too. */
    private static final int REQUESTS_PER_CONNECTION = 50;
    /** Keys each connection cycles through: reads find most of them, some deleted. */
    private static final int KEYS_PER_CONNECTION = 32;
    /** The rig's request timeout: a cold rig must answer, not time out, to run the path that succeeds. */
    private static final Duration RIG_REQUEST_TIMEOUT = Duration.ofSeconds(10);
    private static final String RIG_CLUSTER_NAME = "kvorum-warm-up";
    /** The period over which the compilers' busy time is sampled after the requests. */
    private static final Duration SETTLE_WINDOW = Duration.ofMillis(200);
    /** The compilers are settled when busy under this share of a window (one thread of several). */
    private static final int SETTLED_BUSY_PERCENT = 10;

    private final NodeConfig node;
    private final int requests;
    private final Path folder;

    private RequestPathWarmup(NodeConfig node, int requests) {
        this.node = node;
        this.requests = requests;
        this.folder = node.dataDir().resolve(FOLDER);
    }

    /** What a warm-up did. */
    record Outcome(int sent, long millis, String stoppedBecause) {
    }

    /**
     * Warms the request path of the node {@code config} describes with {@code config.warmUpRequests()}
     * requests; returns at once when that is 0.
     *
     * @throws InterruptedException when interrupted (a stop was asked for); the rig is stopped first
     */
    static Outcome run(NodeConfig config) throws InterruptedException {
        if (config.warmUpRequests() == 0) {
            return new Outcome(0, 0, "turned off");
        }
        return new RequestPathWarmup(config, config.warmUpRequests()).run();
    }

    private Outcome run() throws InterruptedException {
        long start = System.nanoTime();
        long deadline = start + TIME_BOUND.toNanos();
        log.info("warming the request path with {} requests to a throwaway cluster on loopback ({})",
                requests, folder);
        List<KvorumNode> rig = new ArrayList<>();
        AtomicInteger sent = new AtomicInteger();
        String stoppedBecause;
        long rigStartMillis = 0;
        Quiet.enter();
        try {
            try {
                deleteFolder(); // left by a start that was killed while it warmed up
                rig.addAll(startRig(deadline));
                rigStartMillis = elapsedMillis(start);
                stoppedBecause = send(rig, deadline, sent);
            } finally {
                killAll(rig); // nothing in it is worth a graceful stop; its folder goes next
            }
        } catch (KvorumNode.StartupException | ConfigException | IOException | RuntimeException e) {
            // The warm-up makes a start faster, never fail: whatever went wrong, the node starts.
            stoppedBecause = "the throwaway cluster failed: " + e;
        } finally {
            Quiet.exit();
            try {
                deleteFolder();
            } catch (IOException | UncheckedIOException e) {
                log.warn("cannot delete the warm-up's folder {}: {}", folder, e.toString());
            }
        }
        long compiling = awaitCompilersSettled(deadline);
        Outcome outcome = new Outcome(Math.min(sent.get(), requests), elapsedMillis(start), stoppedBecause);
        if (stoppedBecause != null) {
            log.info("warm-up ended early after {} of {} requests in {} ms: {}", outcome.sent(), requests,
                    outcome.millis(), stoppedBecause);
        } else {
            log.info("request path warmed in {} ms: {} ms to start a throwaway cluster, {} requests, and the JIT "
                    + "compilers finished {} ms after the last", outcome.millis(), rigStartMillis, outcome.sent(), compiling);
        }
        return outcome;
    }

    /**
     * Waits until the JIT compilers have caught up with what the warm-up made hot: requests that
     * compile what they run are the cold start this class is against. Settled means the compilers
     * spent under {@link #SETTLED_BUSY_PERCENT}% of a {@link #SETTLE_WINDOW} window compiling.
     *
     * @return how long it waited, in milliseconds
     */
    private static long awaitCompilersSettled(long deadline) throws InterruptedException {
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        long start = System.nanoTime();
        if (jit == null || !jit.isCompilationTimeMonitoringSupported()) {
            return 0;
        }
        long windowMillis = SETTLE_WINDOW.toMillis();
        long before = jit.getTotalCompilationTime();
        while (System.nanoTime() < deadline) {
            Thread.sleep(windowMillis); // a sampling period, not a wait for a condition that could be polled
            long now = jit.getTotalCompilationTime();
            if ((now - before) * 100 < windowMillis * SETTLED_BUSY_PERCENT) {
                break;
            }
            before = now;
        }
        return elapsedMillis(start);
    }

    /**
     * Starts the rig's nodes together (each waits in its start for the others to answer): two, or
     * one for a node that has no peers, whose requests never cross gRPC. A start that completes
     * after the others failed or the deadline passed stops its node itself.
     */
    private List<KvorumNode> startRig(long deadline) throws KvorumNode.StartupException, ConfigException, IOException,
            InterruptedException {
        int size = node.topology().size() > 1 ? 2 : 1;
        int[] ports = freeLoopbackPorts(2 * size);
        List<String> members = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            members.add("w" + (i + 1) + "=127.0.0.1:" + ports[2 * i] + ":" + ports[2 * i + 1]);
        }
        List<NodeConfig> configs = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            configs.add(rigConfig(String.join(",", members), "w" + (i + 1)));
        }
        ThreadPoolExecutor starter = NodeThreads.bounded("warm-up-start", size, size);
        Object lock = new Object();
        boolean[] abandoned = {false}; // guarded by lock
        List<Future<KvorumNode>> starts = new ArrayList<>();
        List<KvorumNode> started = new ArrayList<>();
        boolean complete = false;
        try {
            for (NodeConfig config : configs) {
                starts.add(starter.submit(() -> {
                    KvorumNode n = KvorumNode.start(config, KvorumNode.OWN_ENTRY_PORT, Clock.SYSTEM);
                    synchronized (lock) {
                        if (abandoned[0]) {
                            n.kill();
                            return null;
                        }
                    }
                    return n;
                }));
            }
            for (Future<KvorumNode> start : starts) {
                try {
                    started.add(start.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS));
                } catch (ExecutionException e) {
                    throw e.getCause() instanceof KvorumNode.StartupException s
                            ? s : new KvorumNode.StartupException(String.valueOf(e.getCause()));
                } catch (TimeoutException e) {
                    throw new KvorumNode.StartupException("it did not start in the warm-up's time bound");
                }
            }
            complete = true;
            return started;
        } finally {
            starter.shutdown();
            if (!complete) { // stop what did start, and what still starts once it has
                synchronized (lock) {
                    abandoned[0] = true;
                }
                starts.forEach(f -> f.cancel(true));
                killAll(started);
                starts.stream().filter(f -> f.isDone() && !f.isCancelled()).forEach(f -> {
                    try {
                        KvorumNode n = f.get();
                        if (n != null && !started.contains(n)) {
                            n.kill();
                        }
                    } catch (ExecutionException | InterruptedException | CancellationException e) {
                        // it did not start: nothing to stop
                    }
                });
                // Before the folder is deleted: a start still under way writes into it. Briefly: a
                // stop asked for meanwhile must still end the process within its bound.
                boolean ended = false;
                try {
                    ended = starter.awaitTermination(ABANDONED_START_WAIT.toMillis(), TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                if (!ended) {
                    log.warn("a node of the warm-up's throwaway cluster is still starting; its folder may stay behind "
                            + "until the next start");
                }
            }
        }
    }

    private static void killAll(List<KvorumNode> nodes) {
        for (KvorumNode n : nodes) {
            try {
                n.kill();
            } catch (RuntimeException e) {
                log.debug("stopping a node of the warm-up's throwaway cluster", e);
            }
        }
    }

    private NodeConfig rigConfig(String cluster, String id) throws ConfigException {
        Map<NodeOption, String> raw = new EnumMap<>(NodeOption.class);
        raw.put(NodeOption.CLUSTER, cluster);
        raw.put(NodeOption.CLUSTER_NAME, RIG_CLUSTER_NAME);
        raw.put(NodeOption.NODE_ID, id);
        raw.put(NodeOption.DATA_DIR, folder.resolve(id).toString());
        raw.put(NodeOption.BIND, "127.0.0.1");
        raw.put(NodeOption.ANTI_ENTROPY_INTERVAL, "0");
        raw.put(NodeOption.REQUEST_TIMEOUT, Long.toString(RIG_REQUEST_TIMEOUT.toMillis()));
        raw.put(NodeOption.WARM_UP, "0");
        // The node's own choices where they shape the path: its threads, its queue, its durability.
        raw.put(NodeOption.FSYNC, Boolean.toString(node.fsync()));
        raw.put(NodeOption.HTTP_THREADS, Integer.toString(node.httpThreads()));
        raw.put(NodeOption.STORAGE_QUEUE, Integer.toString(node.storageQueue()));
        raw.put(NodeOption.STORAGE_READERS, Integer.toString(node.storageReaders()));
        raw.put(NodeOption.MIN_FREE_DISK, Long.toString(node.minFreeDisk()));
        return NodeConfig.fromRaw(raw);
    }

    /**
     * Sends the requests from {@link #CONNECTIONS} threads at once, each to the rig's nodes in turn.
     *
     * @return null when every request was sent, else why the warm-up stopped early
     */
    private String send(List<KvorumNode> rig, long deadline, AtomicInteger sent) throws InterruptedException {
        AtomicBoolean stop = new AtomicBoolean();
        ExecutorService senders = NodeThreads.bounded("warm-up-sender", CONNECTIONS, CONNECTIONS);
        List<Future<?>> connections = new ArrayList<>();
        String failure = null;
        try {
            for (int c = 0; c < CONNECTIONS; c++) {
                int connection = c;
                connections.add(senders.submit(() -> {
                    sendFrom(connection, rig, deadline, stop, sent);
                    return null;
                }));
            }
            for (Future<?> f : connections) {
                try {
                    f.get();
                } catch (ExecutionException e) {
                    stop.set(true); // the others end after their current request
                    failure = failure != null ? failure : String.valueOf(e.getCause());
                }
            }
        } finally {
            stop.set(true); // on an interrupt: the senders end after their current request
            senders.shutdown();
        }
        if (failure != null) {
            return failure;
        }
        return sent.get() < requests ? "its time bound of " + TIME_BOUND.toSeconds() + " s passed" : null;
    }

    /** One connection's share: writes, reads of present and absent keys, and deletes, in a fixed cycle. */
    private void sendFrom(int connection, List<KvorumNode> rig, long deadline, AtomicBoolean stop,
                          AtomicInteger sent) throws IOException {
        byte[] small = value(100, connection);
        byte[] large = value(4096, connection);
        String quorum = rig.size() > 1 ? "&ack=2&from=2" : "";
        WarmupConnection http = null;
        try {
            for (int i = 0; !stop.get() && System.nanoTime() < deadline; i++) {
                int n = sent.getAndIncrement();
                if (n >= requests) {
                    break;
                }
                if (i % REQUESTS_PER_CONNECTION == 0) {
                    if (http != null) {
                        http.close();
                    }
                    KvorumNode coordinator = rig.get((connection + i / REQUESTS_PER_CONNECTION) % rig.size());
                    long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                    http = new WarmupConnection(coordinator.httpAddress(),
                            (int) Math.max(1, Math.min(RIG_REQUEST_TIMEOUT.toMillis() * 2, left)));
                }
                String key = "/v0/entity?id=warm-up%2F" + connection + "%2F" + (i % KEYS_PER_CONNECTION);
                switch (i % 8) {
                    case 0, 4 -> http.exchange("PUT", key + quorum, small);
                    case 1, 5 -> http.exchange("GET", key, null);
                    case 2 -> http.exchange("PUT", key, large);
                    case 3 -> http.exchange("GET", key + (rig.size() > 1 ? "&ack=1&from=2" : ""), null);
                    case 6 -> http.exchange("DELETE", key + quorum, null);
                    default -> http.exchange("GET", key + "-absent", null);
                }
            }
        } finally {
            if (http != null) {
                http.close();
            }
        }
    }

    private static byte[] value(int size, int seed) {
        byte[] v = new byte[size];
        Arrays.fill(v, (byte) ('a' + seed % 26));
        return v;
    }

    private void deleteFolder() throws IOException {
        try (Stream<Path> paths = Files.walk(folder)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (NoSuchFileException e) {
            // nothing left from an earlier start
        }
    }

    /** Ports free on loopback now (the rig binds them a moment later: a port taken meanwhile skips the warm-up). */
    private static int[] freeLoopbackPorts(int count) throws IOException {
        List<ServerSocket> held = new ArrayList<>();
        try {
            int[] ports = new int[count];
            for (int i = 0; i < count; i++) {
                ServerSocket s = new ServerSocket();
                held.add(s);
                s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
                ports[i] = s.getLocalPort();
            }
            return ports;
        } finally {
            for (ServerSocket s : held) {
                s.close();
            }
        }
    }

    private static long elapsedMillis(long startNanos) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    }

    /**
     * Raises the loggers of Kvorum, gRPC and Netty to ERROR while a rig runs, so that its nodes'
     * own lines (serving, membership seeded, stopping) do not read as this node's; the process's
     * own loggers (signals, this class) keep their level. Counted: warm-ups that overlap (nodes
     * started together in one JVM, in tests) share it, and the last to leave restores the levels.
     */
    static final class Quiet {
        private static final List<String> QUIETED = List.of("io.kvorum", "io.grpc", "io.netty");
        private static final List<Class<?>> KEPT = List.of(RequestPathWarmup.class, ShutdownSignals.class, Main.class);
        private static final List<Runnable> restores = new ArrayList<>(); // guarded by Quiet.class
        private static int users; // guarded by Quiet.class

        static synchronized void enter() {
            if (users++ > 0) {
                return;
            }
            for (Class<?> kept : KEPT) {
                if (LoggerFactory.getLogger(kept) instanceof ch.qos.logback.classic.Logger logger) {
                    set(logger, logger.getEffectiveLevel());
                }
            }
            for (String name : QUIETED) {
                if (LoggerFactory.getLogger(name) instanceof ch.qos.logback.classic.Logger logger) {
                    set(logger, ch.qos.logback.classic.Level.ERROR);
                }
            }
        }

        static synchronized void exit() {
            if (--users > 0) {
                return;
            }
            restores.forEach(Runnable::run);
            restores.clear();
        }

        private static void set(ch.qos.logback.classic.Logger logger, ch.qos.logback.classic.Level level) {
            ch.qos.logback.classic.Level before = logger.getLevel();
            logger.setLevel(level);
            restores.add(() -> logger.setLevel(before));
        }
    }
}
