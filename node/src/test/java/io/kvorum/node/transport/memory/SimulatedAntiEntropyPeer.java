package io.kvorum.node.transport.memory;

import io.kvorum.node.cluster.ClusterMember;
import io.kvorum.node.antientropy.AntiEntropyInitiator;
import io.kvorum.node.antientropy.AntiEntropyMessage;
import io.kvorum.node.antientropy.AntiEntropyPeer;
import io.kvorum.node.antientropy.AntiEntropyResponder;
import io.kvorum.node.antientropy.AntiEntropySession;
import io.kvorum.node.antientropy.AntiEntropyStream;
import io.kvorum.node.antientropy.RepairException;
import io.kvorum.node.antientropy.RepairException.Reason;
import java.util.ArrayDeque;
import java.util.Deque;

/**
 * Anti-entropy rounds over the {@link SimulatedNetwork}: a round is a pair of connected stream
 * ends, one per node, with the flow control of {@link AntiEntropyStream} (a message is delivered
 * only once requested; a sender is ready while the receiver holds fewer than {@link #WINDOW}
 * undelivered messages). A stream is ordered and never duplicates, like the TCP connection under a
 * gRPC call; a cut link loses its messages, so the round stalls and fails by its idle timeout.
 */
final class SimulatedAntiEntropyPeer implements AntiEntropyPeer {

    private static final int WINDOW = 8;

    private final SimulatedNetwork network;
    private final SimulatedTransport self;
    private final ClusterMember peer;

    SimulatedAntiEntropyPeer(SimulatedNetwork network, SimulatedTransport self, ClusterMember peer) {
        this.network = network;
        this.self = self;
        this.peer = peer;
    }

    @Override
    public String nodeId() {
        return peer.id();
    }

    @Override
    public void open(AntiEntropyInitiator round) {
        SimulatedTransport target = network.endpoint(SimulatedTransport.addressOf(peer));
        if (target == null) {
            round.onPeerFailed(new RepairException(Reason.UNREACHABLE, peer.id() + " is unreachable"));
            return;
        }
        End initiatorEnd = new End(self.selfId(), peer.id());
        End responderEnd = new End(peer.id(), self.selfId());
        initiatorEnd.other = responderEnd;
        responderEnd.other = initiatorEnd;
        initiatorEnd.session = round;
        responderEnd.opener = open -> {
            if (!target.accepts(self.clusterId())) {
                responderEnd.abort(new RepairException(Reason.REFUSED, peer.id() + " belongs to another cluster"));
                return;
            }
            AntiEntropyResponder responder;
            try {
                responder = target.local().antiEntropy().openResponder(self.selfId(), open);
            } catch (RepairException e) {
                responderEnd.abort(e);
                return;
            }
            responderEnd.session = responder;
            responder.start(responderEnd);
        };
        responderEnd.request(1); // the open message
        round.start(initiatorEnd);
    }

    /** Marks in an inbound queue: the other side completed or aborted. */
    private record Closed() {
    }

    private record Failed(RepairException error) {
    }

    /** One node's end of a round's stream: what it sends goes to {@link #other}'s inbound queue. */
    private final class End implements AntiEntropyStream {
        private final String owner;
        private final String peerId;
        private final Deque<Object> inbound = new ArrayDeque<>(); // guarded by this
        private End other;
        private volatile AntiEntropySession session;
        private java.util.function.Consumer<AntiEntropyMessage.Open> opener; // responder's end until opened
        private int credits; // guarded by this
        private boolean draining; // guarded by this
        private volatile boolean ended;

        End(String owner, String peerId) {
            this.owner = owner;
            this.peerId = peerId;
        }

        @Override
        public boolean isReady() {
            synchronized (other) {
                return other.inbound.size() < WINDOW;
            }
        }

        @Override
        public void send(AntiEntropyMessage message) {
            if (!ended && !network.isCut(owner, peerId)) {
                other.enqueue(message);
            }
        }

        @Override
        public void request(int count) {
            synchronized (this) {
                credits += count;
            }
            scheduleDrain();
        }

        @Override
        public void complete() {
            if (!ended) {
                ended = true;
                if (!network.isCut(owner, peerId)) {
                    other.enqueue(new Closed());
                }
            }
        }

        @Override
        public void abort(RepairException error) {
            if (!ended) {
                ended = true;
                other.enqueue(new Failed(error)); // a reset reaches the other side even across a cut
            }
        }

        private void enqueue(Object item) {
            synchronized (this) {
                inbound.add(item);
            }
            scheduleDrain();
        }

        private void scheduleDrain() {
            synchronized (this) {
                if (draining) {
                    return;
                }
                draining = true;
            }
            network.execute(this::drain);
        }

        /** Delivers what was requested, in order, on one network thread at a time. */
        private void drain() {
            while (true) {
                Object item;
                synchronized (this) {
                    Object head = inbound.peek();
                    boolean deliverable = head != null
                            && (credits > 0 || head instanceof Closed || head instanceof Failed);
                    if (!deliverable) {
                        draining = false;
                        break;
                    }
                    item = inbound.poll();
                    if (item instanceof AntiEntropyMessage) {
                        credits--;
                    }
                }
                deliver(item);
            }
            AntiEntropySession sender = other.session;
            if (sender != null && other.isReady()) {
                sender.onReady();
            }
        }

        private void deliver(Object item) {
            if (item instanceof Failed f) {
                AntiEntropySession s = session;
                if (s != null) {
                    s.onPeerFailed(f.error());
                }
                return;
            }
            if (item instanceof Closed) {
                AntiEntropySession s = session;
                if (s != null) {
                    s.onPeerClosed();
                }
                return;
            }
            AntiEntropyMessage message = (AntiEntropyMessage) item;
            if (opener != null) {
                var open = opener;
                opener = null;
                if (message instanceof AntiEntropyMessage.Open o) {
                    open.accept(o);
                } else {
                    abort(new RepairException(Reason.PROTOCOL, "a round must begin with open"));
                }
                return;
            }
            session.onMessage(message);
        }
    }
}
