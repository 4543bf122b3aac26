package io.kvorum.node.transport.memory;

import io.kvorum.node.cluster.ClusterIdentity;
import io.kvorum.node.config.NodeConfig;
import io.kvorum.node.time.RequestTimer;
import io.kvorum.node.transport.PeerTransport;
import io.kvorum.node.util.EventLoops;
import io.kvorum.node.util.NamedThreadFactory;
import java.time.Duration;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A network in memory for the nodes of one test cluster (after Ratis {@code SimulatedRpc}): each
 * node's {@link PeerTransport} ({@link SimulatedTransport}) registers its services under its
 * {@code --cluster} address, and every message between two nodes crosses the directed link between
 * them, which the test may change at any time:
 * <ul>
 *   <li>{@link #cut} (one way) or {@link #partition} (both ways): messages are lost, so calls time
 *       out, as across a real partition (no connection is refused);</li>
 *   <li>{@link #delay}: each message waits that long plus a random jitter below it, so messages
 *       on a delayed link may also be reordered;</li>
 *   <li>{@link #dropNext}: the next messages are lost; {@link #dropRate}: each is lost with a
 *       probability; {@link #duplicate}: each is delivered twice;</li>
 *   <li>{@link #heal} and {@link #healAll}: back to a perfect link.</li>
 * </ul>
 * A message to an address where nothing is registered (the node is down) fails at once, as a
 * refused connection does. Receivers check the sender's cluster id, as the gRPC services do.
 *
 * <p>Randomness comes from one seeded {@link Random}, so a schedule of faults can be replayed;
 * thread scheduling still varies between runs. Deliveries run on the network's own threads
 * ({@code sim-net}), never on the sender's.
 */
public final class SimulatedNetwork implements PeerTransport.Factory, AutoCloseable {

    /** What a message carries, for faults aimed at one kind ({@link #dropNext(String, String, Kind, int)}). */
    public enum Kind {
        READ, WRITE, PING, RANGE, ANSWER,
        /** A membership change asked of a member (the coordinator), and that change's answer. */
        CHANGE
    }

    private final Map<String, SimulatedTransport> endpoints = new ConcurrentHashMap<>();
    private final Map<String, LinkState> links = new ConcurrentHashMap<>();
    private final ScheduledThreadPoolExecutor executor =
            new ScheduledThreadPoolExecutor(2, new NamedThreadFactory("sim-net"));
    private final Random random;
    private final java.util.concurrent.atomic.AtomicLong dropped = new java.util.concurrent.atomic.AtomicLong();

    public SimulatedNetwork(long seed) {
        this.random = new Random(seed);
        executor.setRemoveOnCancelPolicy(true);
    }

    /** Range scans served to peers over simulated networks in this JVM right now (tests of cancellation). */
    public static int activeScans() {
        return SimulatedTransport.ACTIVE_SCANS.get();
    }

    @Override
    public PeerTransport create(NodeConfig config, ScheduledExecutorService scheduler, RequestTimer deadlines,
                                EventLoops loops) { // no sockets: the loops are not used
        return new SimulatedTransport(this, config, scheduler, deadlines);
    }

    // ---- faults, by node id: from -> to ----

    /** Messages from {@code from} to {@code to} are lost until {@link #heal}. */
    public void cut(String from, String to) {
        link(from, to).cut = true;
    }

    /** Both directions between {@code a} and {@code b} are cut. */
    public void partition(String a, String b) {
        cut(a, b);
        cut(b, a);
    }

    /** Each message from {@code from} to {@code to} waits {@code base} plus a random jitter below it. */
    public void delay(String from, String to, Duration base) {
        link(from, to).delayMillis = base.toMillis();
    }

    /** The next {@code n} messages from {@code from} to {@code to} are lost. */
    public void dropNext(String from, String to, int n) {
        link(from, to).dropNext.addAndGet(n);
    }

    /** The next {@code n} messages of one kind from {@code from} to {@code to} are lost; others pass. */
    public void dropNext(String from, String to, Kind kind, int n) {
        link(from, to).dropNextOfKind.computeIfAbsent(kind, k -> new AtomicInteger()).addAndGet(n);
    }

    /** Messages lost on purpose so far (cut, dropped), over every link: lets a test see its fault was hit. */
    public long dropped() {
        return dropped.get();
    }

    /** Each message from {@code from} to {@code to} is lost with probability {@code p}. */
    public void dropRate(String from, String to, double p) {
        link(from, to).dropRate = p;
    }

    /** Each message from {@code from} to {@code to} is delivered twice. */
    public void duplicate(String from, String to, boolean on) {
        link(from, to).duplicate = on;
    }

    /** The link from {@code from} to {@code to} is perfect again. */
    public void heal(String from, String to) {
        links.remove(key(from, to));
    }

    /** Every link is perfect again. */
    public void healAll() {
        links.clear();
    }

    // ---- for the transports ----

    void register(String address, SimulatedTransport transport) throws java.net.BindException {
        if (endpoints.putIfAbsent(address, transport) != null) {
            throw new java.net.BindException("address already in use: " + address);
        }
    }

    void unregister(String address, SimulatedTransport transport) {
        endpoints.remove(address, transport);
    }

    /** The node registered at {@code address}, or null: nothing listens there. */
    SimulatedTransport endpoint(String address) {
        return endpoints.get(address);
    }

    /**
     * Carries {@code delivery} from node {@code from} to node {@code to} under the link's faults:
     * runs it (maybe twice, maybe late) on a network thread, or never when the message is lost.
     */
    void send(String from, String to, Kind kind, Runnable delivery) {
        LinkState link = links.get(key(from, to));
        long delay = 0;
        boolean twice = false;
        if (link != null) {
            synchronized (random) {
                AtomicInteger ofKind = link.dropNextOfKind.get(kind);
                if (link.cut || (link.dropNext.get() > 0 && link.dropNext.getAndDecrement() > 0)
                        || (ofKind != null && ofKind.get() > 0 && ofKind.getAndDecrement() > 0)
                        || (link.dropRate > 0 && random.nextDouble() < link.dropRate)) {
                    dropped.incrementAndGet();
                    return;
                }
                if (link.delayMillis > 0) {
                    delay = link.delayMillis + (long) (random.nextDouble() * link.delayMillis);
                }
            }
            twice = link.duplicate;
        }
        try {
            executor.schedule(delivery, delay, TimeUnit.MILLISECONDS);
            if (twice) {
                executor.schedule(delivery, delay, TimeUnit.MILLISECONDS);
            }
        } catch (RejectedExecutionException e) {
            // the network is closed: the message is lost
        }
    }

    /** Whether messages from {@code from} to {@code to} are lost (for streams, which neither delay nor reorder). */
    boolean isCut(String from, String to) {
        LinkState link = links.get(key(from, to));
        return link != null && link.cut;
    }

    /** Runs a task on a network thread (or never, once the network is closed). */
    void execute(Runnable task) {
        try {
            executor.execute(task);
        } catch (RejectedExecutionException e) {
            // closed
        }
    }

    private LinkState link(String from, String to) {
        return links.computeIfAbsent(key(from, to), k -> new LinkState());
    }

    private static String key(String from, String to) {
        return from + "->" + to;
    }

    @Override
    public void close() {
        executor.shutdownNow();
    }

    /** One directed link's faults; absent from {@link #links} means perfect. */
    private static final class LinkState {
        volatile boolean cut;
        volatile long delayMillis;
        volatile double dropRate;
        volatile boolean duplicate;
        final AtomicInteger dropNext = new AtomicInteger();
        final Map<Kind, AtomicInteger> dropNextOfKind = new ConcurrentHashMap<>();
    }
}
